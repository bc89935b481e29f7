// tensor_cores: a K loop that only accumulates addmm(acc, x[tm, tk],
// y[tk, tn]) on bf16 runs as mma_mainloop (kite_gemm.cuh: cp.async copies
// into a ring of shared-memory stages, ldmatrix, mma.sync m16n8k16 with f32
// sums in registers); the loop's result reads the sums from shared memory.
// NVRTC compiles it for sm_90a. Without the key, the CUDA-core loop.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,128,32],"num_warps":8,"num_stages":3,"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=CUDA
// CUDA: // launch: 12 programs of 256 threads, 69632 bytes of dynamic shared memory
// CUDA: #include "kite_gemm.cuh"
// CUDA: mma_mainloop<128, 128, 32, 2, 4, 3, kCopyAsync, kCopyAsync, bf16>(kite_smem, a0 + (i64)([[M:b[0-9]+]]) * 256LL + (i64)(0LL) * 1LL, 256LL, 1LL, a1 + (i64)(0LL) * 384LL + (i64)([[N:b[0-9]+]]) * 1LL, 384LL, 1LL,
// CUDA: reinterpret_cast<const float*>(kite_smem)
// CUDA-NOT: mma_tile
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[64,64,32],"num_warps":4,"num_stages":4,"tensor_cores":true}' --emit=ptx | FileCheck %s --check-prefix=PTX
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[64,64,32],"num_warps":4}' --emit=cuda | FileCheck %s --check-prefix=SIMT
// SIMT-NOT: mma_
// SIMT: for (int kk{{[0-9]+}} = 0;
//
// The default config of a bf16 matmul whose K loop only accumulates, with
// rows of 16-byte multiples: 128 x 256 x 64 tiles, TMA copies by a producer
// warpgroup for two consumer warpgroups (12 warps), L2 groups of 8, the
// loop as ordinary kernel code (generic_mainloop: both operands stream in
// place) in persistent programs.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,512]' --arg 'y=bf16[512,4096]' --emit=cuda | FileCheck %s --check-prefix=DEF
// DEF: "block_sizes":[128,256,64],"generic_mainloop":true,"indexing":"tma","l2_groupings":[8]{{.*}}"num_warps":12,"pid_type":"persistent_interleaved",{{.*}}"tensor_cores":true,"warp_specialize":true,"wgmma":true
// DEF-NOT: _mainloop<
// DEF: for (i64 kite_pid = blockIdx.x; kite_pid < 512; kite_pid += gridDim.x) {
// DEF: tma_load<5>(
// DEF: WgmmaOp<256, bf16>::run<1>(
// Fewer 128 x 256 tiles than the SMs (12 here): 64 x 128 tiles on one
// consumer with 6 stages.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --emit=cuda | FileCheck %s --check-prefix=DEFFEW
// DEFFEW: "block_sizes":[64,128,64],{{.*}}"num_stages":6,"num_warps":8,
// DEFFEW: wgmma_tma_mainloop<64, 128, 1, 6, 2, bf16, bf16, false>(
// y's rows (4095 elements) are not 16-byte multiples: by default TMA
// copies them from a padded copy that the launch makes first (a staged map:
// the module holds kite_stage_rows), x's in place, on the usual 128 x 256
// tiles of generic_mainloop (the producer's maps cover the padded copy,
// the left operand's row-block map too); the main loop reads the same copy.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4097,4096]' --arg 'y=bf16[4096,4095]' --emit=cuda | FileCheck %s --check-prefix=DEFSHIFT
// DEFSHIFT: "block_sizes":[128,256,64],"generic_mainloop":true,"indexing":"tma",{{.*}}"pid_type":"persistent_interleaved"
// DEFSHIFT: #define KITE_STAGED_OPERANDS
// DEFSHIFT-NOT: _mainloop<
// DEFSHIFT: tma_load<5>(
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4097,4096]' --arg 'y=bf16[4096,4095]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=cuda | FileCheck %s --check-prefix=MAINSHIFT
// MAINSHIFT: #define KITE_STAGED_OPERANDS
// MAINSHIFT: wgmma_tma_mainloop<128, 256, 2, 4, 2, bf16, bf16, false>(
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4097,4096]' --arg 'y=bf16[4096,4095]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"pid_type":"persistent_interleaved"}' --emit=cuda | FileCheck %s --check-prefix=GENSHIFT
// GENSHIFT: #define KITE_STAGED_OPERANDS
// GENSHIFT-NOT: _mainloop<
// GENSHIFT: tma_load<5>(
// With indexing "pointer", the producer's threads copy y's rows by aligned
// 16-byte loads shifted into place.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4097,4096]' --arg 'y=bf16[4096,4095]' --config '{"block_sizes":[256,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"pointer"}' --emit=cuda | FileCheck %s --check-prefix=PTRSHIFT
// PTRSHIFT-NOT: KITE_STAGED_OPERANDS
// PTRSHIFT: wgmma_ws_mainloop<256, 128, 2, 4, kCopyAsync, kCopyShifted, bf16>(
// Rows that are not 16-byte multiples (odd sizes): by default both
// operands staged; with indexing "pointer", the same tiles, each operand's
// rows read by aligned 16-byte loads shifted into place.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[300,77]' --arg 'y=bf16[77,65]' --emit=cuda | FileCheck %s --check-prefix=DEFODD
// DEFODD: "generic_mainloop":true
// DEFODD: #define KITE_STAGED_OPERANDS
// DEFODD-NOT: _mainloop<
// DEFODD: store_16_realigned(
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[300,77]' --arg 'y=bf16[77,65]' --config '{"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"pointer"}' --emit=cuda | FileCheck %s --check-prefix=PTRODD
// PTRODD: wgmma_ws_mainloop<128, 128, 2, 4, kCopyShifted, kCopyShifted, bf16>(
// Too few rows for two consumers: one consumer (8 warps) on a 64-row tile,
// its rows past M zero-filled by TMA and not stored.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[7,64]' --arg 'y=bf16[64,40]' --emit=cuda | FileCheck %s --check-prefix=DEFSMALL
// DEFSMALL: "block_sizes":[64,64,64]{{.*}}"num_warps":8
// DEFSMALL: wgmma_tma_mainloop<64, 64, 1, 4, 2, bf16, bf16, false>(
// Columns too few for a main-loop tile (N = 8): the tile keeps its rows,
// and the loop runs as kernel code.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[7,64]' --arg 'y=bf16[64,8]' --emit=cuda | FileCheck %s --check-prefix=DEFNARROW
// DEFNARROW: "block_sizes":[8,8,64]{{.*}}"num_warps":8
// DEFNARROW-NOT: _mainloop<
// Decode shapes (M = 1 to 64 rows against N = K = 4096): 64-row tiles of
// 128 columns (32 of them), K split 4 ways so that 128 programs fill the
// SMs; with w K-major (linear) as well.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[1,4096]' --arg 'y=bf16[4096,4096]' --emit=cuda | FileCheck %s --check-prefix=DECODE
// RUN: kite inspect %kite_src/examples/linear.kite.cpp --kernel linear --arg 'x=bf16[16,4096]' --arg 'w=bf16[4096,4096]' --arg 'bias=bf16[4096]' --emit=cuda | FileCheck %s --check-prefix=DECODE
// DECODE: launch: 128 programs of 256 threads
// DECODE: "block_sizes":[64,128,64]{{.*}}"num_stages":6,"num_warps":8,"pid_type":"flat",{{.*}}"split_k":4,
// DECODE: _mainloop<64, 128, 1, 6, 2, bf16, bf16,
// DECODE: split_k_reduce<64, 128,
// A transposed view as linear's w (its K not contiguous): no TMA main loop
// takes that K-major operand, and split_k splits a main loop only, so the
// default does not split, and compiles.
// RUN: kite inspect %kite_src/examples/linear.kite.cpp --kernel linear --arg 'x=bf16[1,4096]' --arg 'w=bf16[4096,4096]:strides[1,4096]' --arg 'bias=bf16[4096]' --emit=cuda | FileCheck %s --check-prefix=DECODEVIEW
// DECODEVIEW: "block_sizes":[64,128,64]
// DECODEVIEW-NOT: split_k
// DECODEVIEW: kite_linear(
//
// warp_specialize with pointer indexing: a producer warpgroup of cp.async
// copies signalling mbarriers, a consumer warpgroup of wgmma.mma_async
// m64n128k16.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda | FileCheck %s --check-prefix=WS
// WS: wgmma_ws_mainloop<128, 128, 1, 4, kCopyAsync, kCopyAsync, bf16>(
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=ptx | FileCheck %s --check-prefix=WSPTX
// WSPTX-DAG: mbarrier.init.shared::cta.b64
// WSPTX-DAG: mbarrier.try_wait.parity.shared::cta.b64
// WSPTX-DAG: cp.async.mbarrier.arrive.noinc.shared::cta.b64
// WSPTX-DAG: fence.proxy.async.shared::cta
// WSPTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
//
// 12 warps: a producer and two consumer warpgroups, each with 64 rows and
// all 256 columns (m64n256k16); the epilogue's layout takes 256 of the 384
// threads.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda | FileCheck %s --check-prefix=WS2
// WS2: // launch: 8 programs of 384 threads
// WS2: __launch_bounds__(384)
// WS2: wgmma_ws_mainloop<128, 256, 2, 4, kCopyAsync, kCopyAsync, bf16>(
// WS2: if (threadIdx.x < 256
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=ptx | FileCheck %s --check-prefix=WS2PTX
// WS2PTX: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
//
// indexing "tma": tensor-map parameters the runtime encodes at launch, and
// one producer thread issuing cp.async.bulk.tensor boxes that complete on
// the stage mbarriers.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=cuda | FileCheck %s --check-prefix=TMA
// TMA: const __grid_constant__ KiteTensorMap [[MA:tma[0-9]+]], const __grid_constant__ KiteTensorMap [[MB:tma[0-9]+]])
// TMA: wgmma_tma_mainloop<128, 256, 2, 4, 2, bf16, bf16, false>({{sg[0-9]+}}, &[[MA]], &[[MB]],
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=ptx | FileCheck %s --check-prefix=TMAPTX
// TMAPTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// TMAPTX-DAG: mbarrier.arrive.expect_tx.shared::cta.b64
// TMAPTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// TMAPTX-NOT: cp.async.cg.shared.global
//
// Rows that are not 16-byte multiples cannot be TMA boxes in place: x's
// rows (300 elements) are staged (TMA from a padded copy), y's read in
// place.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=cuda | FileCheck %s --check-prefix=NOTMA
// NOTMA: #define KITE_STAGED_OPERANDS
// NOTMA: KiteTensorMap
// NOTMA: wgmma_tma_mainloop<128, 128, 1, 4, 2, bf16, bf16, false>(
// Rows of 16-byte multiples at an address that is not 16-byte aligned:
// staged too.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,320]:align4' --arg 'y=bf16[320,200]' --config '{"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=cuda | FileCheck %s --check-prefix=MISALIGNED
// MISALIGNED: #define KITE_STAGED_OPERANDS
// MISALIGNED: wgmma_tma_mainloop<128, 128, 1, 4, 2, bf16, bf16, false>(
// A right operand read with a stride along its rows is not staged: the
// cp.async producer copies it element by element.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,320]' --arg 'y=bf16[320,200]:strides[1,320]' --config '{"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}' --emit=cuda | FileCheck %s --check-prefix=NOSTAGE
// NOSTAGE-NOT: KITE_STAGED_OPERANDS
// NOSTAGE: wgmma_ws_mainloop<128, 128, 1, 4, kCopyAsync, kCopyElements, bf16>(
//
// 12 warps and warp_specialize on a K loop the main loop does not take
// (BK = 32): a key loop's producer warpgroup copies its right operand
// (MN-major: 32 K rows of two 64-column boxes) into a ring by TMA, and two
// warpgroups compute (key-loop-producer.mlir).
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,128,32],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=W12
// W12: #define KITE_COMPUTE_THREADS 256
// W12-NOT: mainloop
// W12: tma_load<2>({{pb[0-9]+}} + 0, &{{tma[0-9]+}}, {{kite_ring[0-9]+}}.full({{st[0-9]+}}), (int)({{b[0-9]+}}), (int)({{b[0-9]+}}));
// W12-NEXT: tma_load<2>({{pb[0-9]+}} + 2048,
// A kernel without products has nothing for a producer to copy: an error
// that says why.
// RUN: not kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[512,256]' --config '{"block_sizes":[1],"num_warps":12,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=W12NONE
// W12NONE: the config does not fit: warp_specialize: the kernel has no operand tile a key loop prefetches
// RUN: not kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,128,64],"num_warps":12}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=W12CFG
// W12CFG: num_warps = 12 (a producer and two consumer warpgroups) needs tensor_cores, wgmma and warp_specialize
//
// wgmma without warp specialization: 8 warps are 2 warpgroups of 64 rows,
// each with all 256 columns.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --config '{"block_sizes":[128,256,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true}' --emit=ptx | FileCheck %s --check-prefix=WG
// WG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// WG-NOT: mbarrier.try_wait
//
// For an architecture without wgmma, the same config runs mma.sync.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[512,256]' --arg 'y=bf16[256,384]' --arch sm_80 --emit=ptx | FileCheck %s --check-prefix=SM80
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SM80-NOT: wgmma
//
// Batched products with a batch tile of 1 take the main loop too; f16 as
// well as bf16.
// RUN: kite inspect %kite_src/examples/bmm.kite.cpp --kernel bmm --arg 'a=f16[3,100,64]' --arg 'b=f16[3,64,72]' --config '{"block_sizes":[1,32,32,32],"num_warps":4,"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=BMM
// BMM: mma_mainloop<32, 32, 32, 2, 2, 2, kCopyAsync, kCopyAsync, f16>(
//
// A product inside a loop that does more than accumulate it runs on the
// tensor cores from registers (kite-assign-layouts marks it kite.mma): its
// left operand's registers are the A fragments (K lanes past the valid
// extent as zeros), the right operand is staged in rows padded by 8
// elements and read by ldmatrix, and the sums stay in registers. With one
// stage (the default of a partial config) the right operand is prefetched
// into one buffer: tile 0 before the loop, and tile t + 1 right after
// tile t's product, behind a barrier (out-of-range rows zero-filled).
// RUN: kite inspect %kite_src/test/lowering/kite-matmul-mainloop.mlir --kernel scaled --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[64,64,32],"num_warps":4,"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=REG
// REG: cp_async16(&{{pb[0-9]+}}[{{.*}} * 72 + {{.*}}], ({{.*}} < ({{n[0-9]+}}) - ({{.*}}) && {{.*}}) ? &a1[{{.*}}] : a1, {{.*}} ? 16 : 0);
// REG: cp_async_commit();
// REG: for (i64 [[T:t[0-9]+]] = 0;
// REG: cp_async_wait<0>();
// REG-NEXT: __syncthreads();
// REG-NEXT: bf16* [[SB:sb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + 0) + (int)([[T]] % 1) * 2304;
// REG-NOT: cp_async16
// REG: [[AF:af[0-9]+]][{{mi[0-9]+}}][0] = mma_pack({{.*}} < {{n[0-9]+}} ? {{v[0-9]+}}[{{.*}}] : cvt<bf16>(0)),
// REG: mma_b_x4<72, false>([[BF:bf[0-9]+]], [[SB]], {{ks[0-9]+}} * 16,
// REG: MmaInstr<bf16>::run({{d[0-9]+}}, [[AF]][{{mi[0-9]+}}], {[[BF]][0], [[BF]][1]});
// REG: __syncthreads();
// REG-NEXT: if ([[T]] + 1 < {{c[0-9]+}}) {
// REG: cp_async16(
// REG: cp_async_commit();
// REG-NOT: mma_tile
// REG-NOT: mma_mainloop
//
// A right operand that cannot be prefetched (k: the kernel writes its
// tensor) is stored to its staging buffer at the product, 16 bytes a store.
// RUN: kite inspect %kite_src/test/lowering/kite-prefetch-operands.mlir --kernel written --arg 'q=bf16[256,64]' --arg 'k=bf16[256,64]' --arg 'v=bf16[256,64]' --config '{"block_sizes":[64,32],"num_warps":4,"tensor_cores":true,"num_stages":1}' --emit=cuda | FileCheck %s --check-prefix=STAGED
// STAGED: store_vec<8>(&[[SB:sb[0-9]+]][{{.*}} * 72 + {{.*}}], Vec<bf16, 8>{{[{][{]}}
// STAGED: mma_b_x4<72, true>({{bf[0-9]+}}, [[SB]],
//
// Where a warp would own fewer than 16 rows (a 16-row tile on 4 warps) the
// product stages both operands and runs mma_tile.
// RUN: kite inspect %kite_src/test/lowering/kite-matmul-mainloop.mlir --kernel scaled --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[16,64,32],"num_warps":4,"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=STEP
// STEP: store_vec<8>(&[[SA:sa[0-9]+]][{{.*}} * 40 + {{.*}}], Vec<bf16, 8>{{[{][{]}}{{.*}} < {{n[0-9]+}}) ? {{.*}} : cvt<bf16>(0)
// STEP: mma_tile<16, 64, 32, 4, bf16, 40, 72, 72, false>([[SA]],
// STEP: const float4 {{f[0-9]+}} = *reinterpret_cast<const float4*>(
// STEP-NOT: mma_mainloop
//
// A thread holding four vector runs along a masked K (staged for mma_tile):
// each element's mask takes its own K coordinate, (k + e) / 8 and
// (k + e) % 8, not k + e / 8.
// RUN: kite inspect %kite_src/test/lowering/kite-matmul-mainloop.mlir --kernel scaled --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[16,64,64],"num_warps":4,"tensor_cores":true,"inner_threads":2}' --emit=cuda | FileCheck %s --check-prefix=RUNS
// RUNS: store_vec<8>(&{{sa[0-9]+}}[{{.*}}], Vec<bf16, 8>{{[{][{]}}{{.*}} : cvt<bf16>(0), ((((([[K:k[0-9]+]] * 8) + 1) / 8) * 16 + c{{[0-9]+}}_t1 * 8 + ((([[K]] * 8) + 1) % 8)) < n{{[0-9]+}}) ? v{{[0-9]+}}[([[K]] * 8) + 1]
//
// Batched products with a batch tile of 1 run from registers too;
// attention's k^T, whose threads hold runs along K, is staged transposed
// (N rows of K), v as K rows of N. Tensor cores are the default for kernels
// with 16-bit products, on mma.sync.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[12,100,64]' --arg 'k=bf16[12,100,64]' --arg 'v=bf16[12,100,64]' --config '{"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=ATTN
// ATTN: "tensor_cores":true
// ATTN-NOT: "wgmma"
// ATTN: cp_async16(&{{pb[0-9]+}}[{{.*}} * 72 + {{.*}}],
// ATTN: bf16* [[SB:sb[0-9]+]] =
// ATTN: mma_b_x4<72, true>({{bf[0-9]+}}, [[SB]],
// ATTN: mma_b_x4<72, false>(
// ATTN-NOT: mma_tile
//
// With "wgmma" (sm_90a) they run on wgmma: q, defined outside the key
// loop, is copied once before it from global memory (cp.async, each
// thread the rows of its A fragments, in 16-byte runs; rows past the tile
// zero-filled) into a swizzled K-major buffer that the first product reads
// by descriptor; p,
// computed in the loop, is the second's A from registers. k^T staged
// K-major (N rows of 64-element swizzled rows: K steps of 32 bytes), v
// MN-major (transposed by the instruction), each made visible to the async
// proxy before the barrier; the sums wait before they are read. k and v
// are copied a key tile ahead with num_stages 2, masked rows as zeros;
// with num_stages 1 (the default's) into one buffer each, refilled right
// after its product.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[12,100,64]' --arg 'k=bf16[12,100,64]' --arg 'v=bf16[12,100,64]' --config '{"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2}' --emit=cuda | FileCheck %s --check-prefixes=WGATTN,WGPRE,WGTWO
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[12,100,64]' --arg 'k=bf16[12,100,64]' --arg 'v=bf16[12,100,64]' --config '{"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":true}' --emit=cuda | FileCheck %s --check-prefixes=WGATTN,WGPRE,WGONE
// WGTWO: "num_stages":2
// WGONE: "num_stages":1
// WGATTN: "tensor_cores":true,"wgmma":true
// WGATTN: bf16* [[QS:sa[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + ((1024 - (smem_addr(kite_smem) & 1023)) & 1023) + [[QOFF:[0-9]+]]);
// WGATTN: cp_async16(&[[QS]][((int)threadIdx.x / 128 * 1 + ([[R:k[0-9]+]]) / 2) * 4096 + sw128_index<64>((int)threadIdx.x / 32 % 4 * 16 + (int)threadIdx.x % 32 / 4 + ([[R]]) % 2 * 8, ({{k[0-9]+}} * 32 + {{c[0-9]+_t[0-9]+}} * 8))], ({{.*}}) ? &a0[{{.*}}] : a0, ({{.*}}) ? 16 : 0);
// WGATTN: cp_async_wait<0>();
// WGATTN-NEXT: fence_proxy_async();
// WGATTN-NEXT: __syncthreads();
// WGPRE: cp_async16(&{{pb[0-9]+}}[sw128_index<32>({{.*}}, ({{.*}} < ({{n[0-9]+}}) - ({{.*}})) ? &a1[{{.*}}] : a1, ({{.*}} < ({{n[0-9]+}}) - ({{.*}})) ? 16 : 0);
// WGPRE: cp_async_wait<1>();
// WGPRE-NEXT: fence_proxy_async();
// WGPRE-NEXT: __syncthreads();
// WGPRE-NEXT: bf16* [[KS:sb[0-9]+]] =
// WGATTN: const bf16* [[QA:sa[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + ((1024 - (smem_addr(kite_smem) & 1023)) & 1023) + [[QOFF]]);
// WGATTN-NOT: wgmma_touch_a(
// WGATTN: wgmma_fence();
// WGATTN: wgmma_desc([[KS]] + ({{ks[0-9]+}} / 4) * 2048 + ({{ks[0-9]+}} % 4) * 16, 16, 1024)
// WGATTN: WgmmaOp<32, bf16>::run<0>({{c[0-9]+}}[{{mi[0-9]+}}], wgmma_desc([[QA]] + ((int)threadIdx.x / 128 * 1 + {{mi[0-9]+}}) * 4096 + ({{ks[0-9]+}} / 4) * 4096 + ({{ks[0-9]+}} % 4) * 16, 16, 1024), {{db[0-9]+}});
// WGATTN: wgmma_drain<0, 1, 32>(
// WGATTN-NOT: wgmma_touch_a(
// WGONE: __syncthreads();
// WGONE-NEXT: if ({{t[0-9]+}} + 1 < {{c[0-9]+}}) {
// WGONE: cp_async16(&{{pb[0-9]+}}[sw128_index<32>(
// WGONE: cp_async_commit();
// WGPRE: bf16* [[VS:sb[0-9]+]] =
// WGATTN: wgmma_touch_a(
// WGATTN-NEXT: wgmma_fence();
// WGATTN: wgmma_desc([[VS]] + {{ks[0-9]+}} * 1024, 4096, 1024)
// WGATTN: WgmmaRegA<64, bf16>::run<1>(
// WGATTN: wgmma_drain<0, 1, 64>(
// WGATTN-NEXT: wgmma_touch_a(
// WGATTN-NOT: mma_b_x
// The fused MLP's x tile is loop-invariant too: read from shared memory
// with K = 64; with K = 32 (short of a swizzle row) it would stay in
// registers across every wgmma of the hidden loop, so that product runs on
// mma.sync, and the second (A computed in the loop) on wgmma.
// RUN: kite inspect %kite_src/examples/mlp.kite.cpp --arg 'x=bf16[129,64]' --arg 'w1=bf16[64,200]' --arg 'w2=bf16[200,48]' --config '{"block_sizes":[64,64],"num_warps":4,"tensor_cores":true,"wgmma":true}' --emit=lowered | FileCheck %s --check-prefix=MLPWG
// MLPWG: kite.matmul {{.*}} {kite.mma = "wgmma", kite.shared_lhs}
// MLPWG: kite.addmm {{.*}} {kite.mma = "wgmma"} :
// RUN: kite inspect %kite_src/examples/mlp.kite.cpp --arg 'x=bf16[129,32]' --arg 'w1=bf16[32,200]' --arg 'w2=bf16[200,48]' --config '{"block_sizes":[64,64],"num_warps":4,"tensor_cores":true,"wgmma":true}' --emit=lowered | FileCheck %s --check-prefix=MLPK32
// MLPK32: kite.matmul {{.*}} {kite.mma = "mma_sync"}
// MLPK32: kite.addmm {{.*}} {kite.mma = "wgmma"} :
// With "wgmma": false they stay on mma.sync.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[12,100,64]' --arg 'k=bf16[12,100,64]' --arg 'v=bf16[12,100,64]' --config '{"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":false}' --emit=cuda | FileCheck %s --check-prefix=ATTN
//
// Tiles that do not divide into 16x8x16 steps keep the CUDA-core loop.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --config '{"block_sizes":[8,64,32],"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=SMALL
// SMALL-NOT: mma_
//
// The config space offers it to kernels with f16/bf16 products only, with
// the pipeline's stages.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[500,300]' --arg 'y=bf16[300,200]' --emit=config-space | FileCheck %s --check-prefix=SPACE
// SPACE: "key":"tensor_cores","values":[false,true]
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=f32[500,300]' --arg 'y=f32[300,200]' --emit=config-space | FileCheck %s --check-prefix=F32
// F32-NOT: tensor_cores
//
// split_k: a tile's K loop over 2 programs (kite_split), each its share of
// whole K tiles; the sums go through split_k_reduce, after which only the
// tile's last program stores. The launch runs twice the tiles.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[128,8192]' --arg 'y=bf16[8192,8192]' --config '{"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","split_k":2}' --emit=cuda | FileCheck %s --check-prefix=SPLITK
// SPLITK: // launch: 128 programs of 384 threads
// SPLITK: unsigned char* __restrict__ kite_partials, unsigned char* __restrict__ kite_counters)
// SPLITK: const i64 kite_pid = blockIdx.x / 2;
// SPLITK-NEXT: const int kite_split = blockIdx.x % 2;
// SPLITK: const i64 [[CHUNK:kchunk[0-9]+]] = ((i64)(8192LL) - (i64)(0LL) + 128 - 1) / 128 * 64;
// SPLITK: const i64 [[LO:klo[0-9]+]] = (i64)(0LL) + kite_split * [[CHUNK]];
// SPLITK: wgmma_tma_mainloop<128, 128, 2, 4, 2, bf16, bf16, false>({{.*}}, (int)([[LO]]), 0,
// SPLITK-NEXT: if (!split_k_reduce<128, 128, 136>(
// SPLITK-NEXT: return;
// SPLITK: store_vec<8>(&o0[
// A persistent program runs several tiles: split_k is refused for it, and
// for kernels without a main loop.
// RUN: not kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[128,8192]' --arg 'y=bf16[8192,8192]' --config '{"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"split_k":2,"pid_type":"persistent_interleaved"}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=SPLITPERSISTENT
// SPLITPERSISTENT: error: the config does not fit: split_k = 2 needs flat program ids
// RUN: not kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[128,1024]' --config '{"block_sizes":[1],"split_k":2}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=SPLITNONE
// SPLITNONE: error: the config does not fit: split_k = 2 needs exactly one product K loop that runs as a pipelined main loop (this kernel has 0)
