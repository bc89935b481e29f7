// Layouts of examples/attention.kite.cpp (unchanged source) at its default
// config, B4 H32 S4096 D128 bf16: both products run on the tensor cores from
// registers (kite.mma), and nothing inside the key loop changes layout.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --emit=lowered | FileCheck %s
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --emit=cuda | FileCheck %s --check-prefix=CUDA
//
// The tensor cores' layout (mma.sync m16n8k16: 4 lanes of a row with 2
// adjacent columns each, rows over threads / 4) of the [64, 32] scores, of
// the [64, 128] accumulator and of q as the first product's left operand;
// the row statistics are the scores' layout without the key dim.
// CHECK-DAG: #[[ROW:blocked[0-9]*]] = #kite.blocked<shape = [1, 64, 32], vec = [1, 1, 2], threads = [1, 32, 4], dims = [-1, 1]>
// CHECK-DAG: #[[ACC:blocked[0-9]*]] = #kite.blocked<shape = [1, 64, 128], vec = [1, 1, 2], threads = [1, 32, 4], dims = [-1, 1, 2]>
// CHECK-DAG: #[[S:blocked[0-9]*]] = #kite.blocked<shape = [1, 64, 32], vec = [1, 1, 2], threads = [1, 32, 4], dims = [-1, 1, 2]>
// CHECK-DAG: #[[COL:blocked[0-9]*]] = #kite.blocked<shape = [1, 64, 32], vec = [1, 1, 2], threads = [1, 32, 4], dims = [-1, 1, -1]>
//
// q converts once, before the key loop; m_i, l_i and acc are carried in
// the layouts the loop computes them in.
// CHECK: %[[Q:.*]] = kite.convert_layout {{.*}} -> !kite.tile<1x64x128xbf16, #[[ACC]]>
// CHECK: kite.tile_for {{.*}} iter_args({{.*}}) -> (!kite.tile<1x64xf32, #[[ROW]]>, !kite.tile<1x64x128xf32, #[[ACC]]>, !kite.tile<1x64xf32, #[[ROW]]>)
// CHECK-NOT: kite.convert_layout
// CHECK: %[[QK:.*]] = kite.bmm %[[Q]], %{{.*}} {kite.mma} : !kite.tile<1x64x128xbf16, #[[ACC]]>, !kite.tile<1x128x32xbf16, #{{.*}}> -> !kite.tile<1x64x32xbf16, #[[S]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.reduce amax {{.*}} -> !kite.tile<1x64xbf16, #[[ROW]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.binary sub {{.*}} : !kite.tile<1x64x32xbf16, #[[S]]>, !kite.tile<1x64x1xf32, #[[COL]]> -> !kite.tile<1x64x32xf32, #[[S]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.reduce sum {{.*}} -> !kite.tile<1x64xf32, #[[ROW]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.binary mul {{.*}} : !kite.tile<1x64x128xf32, #[[ACC]]>, !kite.tile<1x64x1xf32, #[[COL]]> -> !kite.tile<1x64x128xf32, #[[ACC]]>
// CHECK-NOT: kite.convert_layout
// CHECK: %[[P:.*]] = kite.cast {{.*}} -> !kite.tile<1x64x32xbf16, #[[S]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.baddbmm %{{.*}}, %[[P]], %{{.*}} {kite.mma} : !kite.tile<1x64x128xf32, #[[ACC]]>, !kite.tile<1x64x32xbf16, #[[S]]>, !kite.tile<1x32x128xbf16, #{{.*}}> -> !kite.tile<1x64x128xf32, #[[ACC]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.yield
//
// In the CUDA, the key loop's only shared memory is the staging of k and v,
// each in a buffer of its own, written and read by ldmatrix, with one
// barrier each: the other product's barrier separates a buffer's reads from
// its next staging.
// CUDA: for (i64 {{t[0-9]+}} = 0; {{t[0-9]+}} < {{c[0-9]+}}; ++{{t[0-9]+}}) {
// CUDA-NOT: kite_smem
// CUDA-NOT: __syncthreads
// CUDA: bf16* [[KS:sb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + {{[0-9]+}});
// CUDA-NOT: kite_smem
// CUDA: __syncthreads();
// CUDA-NOT: __syncthreads
// CUDA: mma_b_x4<136, true>({{bf[0-9]+}}, [[KS]],
// CUDA-NOT: kite_smem
// CUDA-NOT: __syncthreads
// CUDA: bf16* [[VS:sb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + {{[0-9]+}});
// CUDA-NOT: kite_smem
// CUDA: __syncthreads();
// CUDA-NOT: __syncthreads
// CUDA: mma_b_x4<136, false>({{bf[0-9]+}}, [[VS]],
// CUDA-NOT: kite_smem
// CUDA-NOT: __syncthreads
// CUDA: store_vec<2>(&o
