// `kite inspect --emit=passes`: the IR after every pass of the pipeline, in
// order, ending with what --emit=lowered prints.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --emit=passes | FileCheck %s --check-prefix=PASSES
// PASSES: // ----- captured IR -----
// PASSES: !kite.tile<*x?>
// PASSES: // ----- after kite-specialize -----
// PASSES: !kite.tensor<64x1000xbf16>
// PASSES: // ----- after kite-apply-config -----
// PASSES: kite.config =
// PASSES: // ----- after kite-reduction-loops -----
// PASSES: // ----- after kite-split-masked-loops -----
// PASSES: // ----- after canonicalize -----
// PASSES: // ----- after cse -----
// PASSES: // ----- after kite-cache-hints -----
// PASSES: // ----- after kite-matmul-mainloop -----
// PASSES: // ----- after kite-early-loads -----
//
// --emit=roofline without a GPU: bytes and FLOPs from the IR, and why the
// rest is missing. softmax over 64 x 1000 bf16: 128000 bytes read and
// written; exp, sub, max, sum and the reciprocal multiply per element.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --emit=roofline | FileCheck %s --check-prefix=ROOF
// ROOF: kernel         softmax (x=bf16[64,1000])
// ROOF: bytes          256.00 KB (every input read once, every output written once)
// ROOF: flops          {{[0-9.]+}} KFLOP
// ROOF: intensity      {{[0-9.]+}} FLOP/byte
// ROOF: peak math      67 TFLOP/s (sm_90a)
// ROOF: note           no GPU here
//
// A matrix product counts 2*M*N*K and is measured against tensor-core peak.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[256,512]' --arg 'y=bf16[512,128]' --emit=roofline | FileCheck %s --check-prefix=MM
// MM: flops          33.5{{[0-9]}} MFLOP
// MM: peak math      989 TFLOP/s (sm_90a)
// The problem's FLOPs, not the padded tiles': one row against 4096 x 4096
// on the default's 64-row tiles is 2 x 4096 x 4096 (and the bias add), one
// FLOP a byte, memory-bound.
// RUN: kite inspect %kite_src/examples/linear.kite.cpp --kernel linear --arg 'x=bf16[1,4096]' --arg 'w=bf16[4096,4096]' --arg 'bias=bf16[4096]' --emit=roofline | FileCheck %s --check-prefix=DECODE
// DECODE: flops          33.5{{[0-9]}} MFLOP
// DECODE: intensity      0.99{{[0-9]}} FLOP/byte
//
// --emit=sass says what it needs when the CUDA toolkit's disassemblers are
// not installed (this machine has NVRTC only); with them, it prints SASS.
// RUN: env PATH=/nonexistent %kite_src/test/codegen/Inputs/sass-or-reason.sh kite %kite_src/examples/add.kite.cpp | FileCheck %s --check-prefix=SASS
// SASS: {{(SASS needs nvdisasm or cuobjdump|kite_add)}}
//
// `kite bench` times a kernel on the GPU; without one it says so and fails.
// RUN: not kite bench %kite_src/examples/add.kite.cpp --kernel add --arg 'x=f32[64,64]' --arg 'y=f32[64,64]' 2>&1 | FileCheck %s --check-prefix=BENCH
// BENCH: kite bench: error: timing needs a CUDA GPU
// RUN: not kite bench %kite_src/examples/cross_entropy.kite.cpp --arg 'logits=bf16[8,100]' --arg 'target=i64[8]' --fill target=5..5 2>&1 | FileCheck %s --check-prefix=FILLBAD
// FILLBAD: kite bench: error: --fill target=5..5: expected NAME=LO..HI (integers, LO < HI, HI exclusive)
//
// Captured IR (.mlir, what `kite compile --emit=ir` writes) works wherever a
// .kite.cpp does, so a GPU host without a C++ toolchain can inspect, bench
// and tune.
// RUN: kite compile %kite_src/examples/softmax.kite.cpp --emit=ir -o %t.softmax.mlir
// RUN: kite inspect %t.softmax.mlir --kernel softmax --arg 'x=bf16[64,1000]' --emit=cuda | FileCheck %s --check-prefix=FROMIR
// FROMIR: extern "C" __global__ void __launch_bounds__({{[0-9]+}}) kite_softmax(
// RUN: not kite inspect %t.softmax.mlir --kernel nope --arg 'x=bf16[64,1000]' 2>&1 | FileCheck %s --check-prefix=NOPE
// NOPE: has no kernel 'nope'
