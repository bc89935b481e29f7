// tensor_cores: a bf16 matrix product whose tile shapes allow 16x8x16 steps
// stages its operands (K lanes past the valid extent as zeros) and runs
// mma_tile (mma.sync m16n8k16, f32 accumulation); NVRTC compiles it for
// sm_90a. Without the key, the CUDA-core loop.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[64,64,32],"num_warps":4,"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=CUDA
// CUDA: "tensor_cores":true
// CUDA: < {{n[0-9]+}}) ? {{.*}} : cvt<bf16>(0);
// CUDA: mma_tile<64, 64, 32, 4, bf16>(
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[64,64,32],"num_warps":4,"tensor_cores":true}' --emit=ptx | FileCheck %s --check-prefix=PTX
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[64,64,32],"num_warps":4}' --emit=cuda | FileCheck %s --check-prefix=SIMT
// SIMT-NOT: mma_tile
// SIMT: for (int kk{{[0-9]+}} = 0;
//
// Tiles that do not divide into 16x8x16 steps keep the CUDA-core loop.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[8,64,32],"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=SMALL
// SMALL-NOT: mma_tile
//
// The config space offers it to kernels with f16/bf16 products only.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --emit=config-space | FileCheck %s --check-prefix=SPACE
// SPACE: "key":"tensor_cores","values":[false,true]
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=f32[500,300]' --arg 'y=f32[300,200]' --emit=config-space | FileCheck %s --check-prefix=F32
// F32-NOT: tensor_cores
