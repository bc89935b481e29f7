// The CUDA for softmax: four rows of 1024 per program by default, a block reduction
// across 4 warps, masks where 1000 columns pad to 1024, 16-byte loads and stores
// (1000 is a multiple of 8 bf16 elements, so a mask holds for a whole vector).
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --emit=cuda | FileCheck %s
// CHECK: // launch: 16 programs of 128 threads
// CHECK: extern "C" __global__ void __launch_bounds__(128) kite_softmax(bf16* __restrict__ a0, bf16* __restrict__ o0)
// CHECK: bf16 [[ROW:v[0-9]+]][32]; // (4, 1024) in context 0
// CHECK: < 1000) load_vec<8>({{.*}}, &a0[{{.*}}]); else zero_vec<8>(
// CHECK: block_reduce<MaxOp, 1, 128>
// CHECK: k_exp(
// CHECK: block_reduce<SumOp, 1, 128>
// CHECK: store_vec<8>(&o0[{{.*}}], Vec<bf16, 8>{{[{][{]}}cvt<bf16>(

// A config: two rows per program, 8 warps.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --config '{"block_sizes":[2],"num_warps":8}' --emit=cuda | FileCheck %s --check-prefix=CONFIG
// CONFIG: // launch: 32 programs of 256 threads
// CONFIG: __launch_bounds__(256)
// CONFIG: (2, 1024) in context 0

// The lowered IR has static tile types, each with its layout (36 columns
// padded to 64: 16 threads of 4 floats along a row, 8 rows at a time).
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=f32[7,36]' --emit=lowered | FileCheck %s --check-prefix=LOWERED
// LOWERED: #[[ROWS:blocked[0-9]*]] = #kite.blocked<shape = [8, 64], vec = [1, 4], threads = [8, 16], dims = [0, 1]>
// LOWERED: kite.load {{.*}} -> !kite.tile<8x36xf32, #[[ROWS]]>

// Rows of 33 floats admit no vector access: one float a thread, so that a
// warp's scalar loads and stores touch consecutive elements.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=f32[7,33]' --emit=lowered | FileCheck %s --check-prefix=ODDROWS
// ODDROWS: #[[ROWS:blocked[0-9]*]] = #kite.blocked<shape = [8, 64], vec = [1, 1], threads = [2, 64], dims = [0, 1]>
// ODDROWS: kite.load {{.*}} -> !kite.tile<8x33xf32, #[[ROWS]]>

// PTX for sm_90a.
// RUN: kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[100,100]' --arg 'y=f32[100,100]' --emit=ptx | FileCheck %s --check-prefix=PTX
// PTX: .target sm_90a
// PTX: .entry kite_add(

// Errors name what is wrong.
// RUN: not kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --config '{"block_sizes":[3]}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=BADCONFIG
// BADCONFIG: error: config does not fit kernel 'softmax': block_sizes[0] = 3 must be a power of two
// RUN: not kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64]' --emit=cuda 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: softmax.kite.cpp:{{[0-9]+}}:{{[0-9]+}}: error: too many subscripts
