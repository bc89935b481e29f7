// 8-bit floats (e4m3, e5m2): conversions that round to nearest even without
// saturating, and products with a K-major right operand as kernel code or
// on the TMA main loop (wgmma m64nNk32 on 128-byte K stages). NVRTC
// compiles them for sm_90a.
//
// The default config of examples/scaled_matmul.kite.cpp: 128 x 256 x 128
// tiles (a K tile is one 128-byte stage), two consumer warpgroups, the loop
// as kernel code in persistent programs (generic_mainloop): the producer's
// TMA boxes take 128 bytes of K for both operands (x a 64-row block a box,
// w 256 rows of 128 elements), and each consumer's 4 wgmmas a stage step
// 32 bytes (k32) along the swizzled rows; B K-major.
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e4m3[4096,256]' --arg 'w=e4m3[4096,256]' --arg scale_x=f32 --arg scale_w=f32 --emit=cuda | FileCheck %s --check-prefix=DEF
// DEF: "block_sizes":[128,256,128],"generic_mainloop":true,"indexing":"tma"{{.*}}"num_warps":12,"pid_type":"persistent_interleaved"
// DEF-NOT: _mainloop<
// DEF: tma_load<5>([[A:pb[0-9]+]] + 0, {{.*}}
// DEF-NEXT: tma_load<5>([[A]] + 8192, {{.*}}
// DEF: for (int [[KS:ks[0-9]+]] = 0; [[KS]] < 4; ++[[KS]]) {
// DEF-NEXT: const unsigned long long [[DB:db[0-9]+]] = wgmma_desc({{sb[0-9]+}} + ([[KS]] / 4) * 32768 + ([[KS]] % 4) * 32, 16, 1024);
// DEF: wgmma_ss<256, true, e4m3, e4m3>({{c[0-9]+}}[[[MI:mi[0-9]+]]], wgmma_desc({{sa[0-9]+}} + ((int)threadIdx.x / 128 * 1 + [[MI]]) * 8192 + ([[KS]] / 4) * 8192 + ([[KS]] % 4) * 32, 16, 1024), [[DB]]);
// The same on the TMA main loop (generic_mainloop off).
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e4m3[4096,256]' --arg 'w=e4m3[4096,256]' --arg scale_x=f32 --arg scale_w=f32 --config '{"block_sizes":[128,256,128],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=cuda | FileCheck %s --check-prefix=MAIN
// MAIN: kite_scaled_matmul(e4m3* __restrict__ a0, e4m3* __restrict__ a1, float a2, float a3, bf16* __restrict__ o0, const __grid_constant__ KiteTensorMap [[MA:tma[0-9]+]], const __grid_constant__ KiteTensorMap [[MB:tma[0-9]+]])
// MAIN: wgmma_tma_mainloop<128, 256, 2, 4, 2, e4m3, e4m3, true>({{sg[0-9]+}}, &[[MA]], &[[MB]],
// Without a producer (no warp_specialize) an 8-bit loop outside the main
// loop is no tensor-core product: the CUDA cores take it.
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e4m3[512,256]' --arg 'w=e4m3[384,256]' --arg scale_x=f32 --arg scale_w=f32 --config '{"block_sizes":[64,64,128],"num_warps":4,"num_stages":2,"tensor_cores":true,"wgmma":true,"generic_mainloop":true}' --emit=cuda | FileCheck %s --check-prefix=NOPRODUCER
// NOPRODUCER: kite_scaled_matmul(
// NOPRODUCER-NOT: wgmma
// NOPRODUCER-NOT: mma_pack
// NOPRODUCER: cvt<float>(
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e4m3[4096,256]' --arg 'w=e4m3[4096,256]' --arg scale_x=f32 --arg scale_w=f32 --emit=ptx | FileCheck %s --check-prefix=PTX
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.arrive.expect_tx.shared::cta.b64
//
// Mixed operand types, row-wise scales, one consumer.
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul_rowwise --arg 'x=e4m3[512,256]' --arg 'w=e5m2[384,256]' --arg 'scale_x=f32[512]' --arg 'scale_w=f32[384]' --config '{"block_sizes":[128,128,128],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=ptx | FileCheck %s --check-prefix=MIXED
// MIXED: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2
//
// A K tile other than 128 elements leaves the product to the CUDA cores
// (the main loop says why).
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e4m3[512,256]' --arg 'w=e4m3[384,256]' --arg scale_x=f32 --arg scale_w=f32 --config '{"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=cuda | FileCheck %s --check-prefix=BK64
// BK64-NOT: wgmma_tma_mainloop
// BK64: cvt<float>(sa{{[0-9]+}}[
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e5m2[100,77]' --arg 'w=e5m2[65,77]' --arg scale_x=f32 --arg scale_w=f32 --emit=cuda | FileCheck %s --check-prefix=ODD
// Rows of 77 bytes are no 16-byte multiple: both operands are staged
// (copied into padded rows at launch), then read by TMA.
// ODD: "indexing":"tma"
// ODD: #define KITE_STAGED_OPERANDS
// ODD: wgmma_tma_mainloop<128, 128, 2, 4, 2, e5m2, e5m2, true>(
//
// An 8-bit product with B MN-major (y[tk, tn]): no 8-bit tensor-core form
// takes it.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=e4m3[512,256]' --arg 'y=e4m3[256,384]' --emit=cuda | FileCheck %s --check-prefix=MN
// MN: e4m3* __restrict__ a0, e4m3* __restrict__ a1, e4m3* __restrict__ o0
// MN-NOT: mainloop
//
// Conversions: float to e4m3 by cvt<e4m3> (kite_device.cuh's float_to_fp8:
// the hardware's saturating conversion, then NaN past 464), e4m3 to float
// by the hardware's conversion to f16.
// RUN: kite inspect %S/Inputs/fp8_cast.kite.cpp --kernel quantize --arg 'x=bf16[256,256]' --arg scale=f32 --emit=cuda | FileCheck %s --check-prefix=QCUDA
// QCUDA: kite_quantize(bf16* __restrict__ a0, float a1, e4m3* __restrict__ o0)
// QCUDA: = cvt<e4m3>(
// QCUDA: store_vec<8>(&o0[{{.*}}Vec<e4m3, 8>
// RUN: kite inspect %S/Inputs/fp8_cast.kite.cpp --kernel quantize --arg 'x=bf16[256,256]' --arg scale=f32 --emit=ptx | FileCheck %s --check-prefix=QPTX
// QPTX: cvt.rn.satfinite.e4m3x2.f32
// RUN: kite inspect %S/Inputs/fp8_cast.kite.cpp --kernel dequantize --arg 'q=e4m3[256,256]' --arg scale=f32 --emit=ptx | FileCheck %s --check-prefix=DPTX
// DPTX: cvt.rn.f16x2.e4m3x2
//
// Sorts and top-k take 8-bit keys.
// RUN: kite inspect %S/Inputs/fp8_cast.kite.cpp --kernel top8 --arg 'x=e5m2[64,256]' --emit=resources | FileCheck %s --check-prefix=TOPK
// TOPK: registers
//
// Atomics into tensors no GPU atomic updates (8-bit floats, i8) are an error
// that says so, not an NVRTC failure.
// RUN: not kite inspect %S/Inputs/fp8_cast.kite.cpp --kernel scatter_add --arg 'idx=i64[1000]' --arg 'src=e4m3[1000]' --emit=cuda 2>&1 | FileCheck %s --check-prefix=ATOMIC
// ATOMIC: error: atomics into tensors of dtype e4m3 do not run on the GPU (they take f16, bf16, f32, f64, i32 and i64 tensors)
// RUN: not kite inspect %S/Inputs/fp8_cast.kite.cpp --kernel scatter_add --arg 'idx=i64[1000]' --arg 'src=i8[1000]' --emit=cuda 2>&1 | FileCheck %s --check-prefix=ATOMIC8
// ATOMIC8: error: atomics into tensors of dtype i8 do not run on the GPU
//
// The tuner's space holds only the 128-element K tile for an 8-bit product
// on sm_90a (any other runs it on the CUDA cores).
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e4m3[4096,256]' --arg 'w=e4m3[4096,256]' --arg scale_x=f32 --arg scale_w=f32 --emit=config-space | FileCheck %s --check-prefix=SPACE
// SPACE: "doc":"K tile of the 8-bit product loop at scaled_matmul.kite.cpp:{{[0-9]+}} (one 128-byte main-loop stage)","index":2,"key":"block_sizes","values":[128]}

// One row (a decode step): the main loop's consumer still takes a 64-row
// tile (its rows past M zero-filled, not stored), 8 warps, within the
// shared memory an SM has; few tiles, so 64 x 128 ones with 6 stages (K
// is too short to split).
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e4m3[1,272]' --arg 'w=e4m3[200,272]' --arg scale_x=f32 --arg scale_w=f32 --emit=cuda | FileCheck %s --check-prefix=DECODE
// DECODE: launch: 2 programs of 256 threads, 148576 bytes of dynamic shared memory
// DECODE: "block_sizes":[64,128,128]
// DECODE-NOT: split_k
// DECODE: wgmma_tma_mainloop<64, 128, 1, 6, 2, e4m3, e4m3, true>(
//
// The roofline of an 8-bit product takes the tensor cores' 8-bit peak.
// RUN: kite inspect %kite_src/examples/scaled_matmul.kite.cpp --kernel scaled_matmul --arg 'x=e4m3[512,256]' --arg 'w=e4m3[384,256]' --arg scale_x=f32 --arg scale_w=f32 --emit=roofline | FileCheck %s --check-prefix=ROOF
// ROOF: peak math 1979 TFLOP/s (sm_90a)
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --emit=roofline | FileCheck %s --check-prefix=ROOF16
// ROOF16: peak math 989 TFLOP/s (sm_90a)
