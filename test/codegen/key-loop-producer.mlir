// A key loop's producer warpgroup (warp_specialize on a kernel whose products
// read prefetched operands): the last 4 of num_warps copy k and v by TMA
// into rings of num_stages stages; the other warps compute, waiting on each
// stage's `full` mbarrier and arriving on its `empty` one after their
// wgmma, their barriers named barrier 1 over them alone.
//
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[32,4096,128]' --arg 'k=bf16[32,4096,128]' --arg 'v=bf16[32,4096,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda | FileCheck %s
// CHECK: launch: 1024 programs of 384 threads
// CHECK: #define KITE_COMPUTE_THREADS 256
// CHECK: __launch_bounds__(384) kite_attention({{.*}}, const __grid_constant__ KiteTensorMap [[MK:tma[0-9]+]], const __grid_constant__ KiteTensorMap [[MV:tma[0-9]+]])
// CHECK: const TmaRing<2> [[RK:kite_ring[0-9]+]]{
// CHECK-NEXT: unsigned [[UK:kite_used[0-9]+]] = 0, [[FK:kite_filled[0-9]+]] = 0;
// CHECK: const TmaRing<2> [[RV:kite_ring[0-9]+]]{
// CHECK-NEXT: unsigned [[UV:kite_used[0-9]+]] = 0, [[FV:kite_filled[0-9]+]] = 0;
// CHECK: [[RK]].init(256);
// CHECK: __syncthreads(); // the rings' mbarriers are set up
// The producer: one thread, the key loop's count, two 64-column boxes per tile.
// CHECK: if (threadIdx.x >= 256) {
// CHECK-NEXT: if (threadIdx.x == 256) {
// CHECK: for (i64 [[T:t[0-9]+]] = 0;
// CHECK: const int [[S:st[0-9]+]] = [[RK]].acquire([[FK]]++, 32768);
// CHECK: tma_load<3>({{pb[0-9]+}} + 0, &[[MK]], [[RK]].full([[S]]), 0, (int)([[B:b[0-9]+]]), (int)({{b[0-9]+}}));
// CHECK-NEXT: tma_load<3>({{pb[0-9]+}} + 8192, &[[MK]], [[RK]].full([[S]]), 0 + 64, (int)([[B]]), (int)({{b[0-9]+}}));
// CHECK: [[RV]].acquire([[FV]]++, 32768);
// The computing threads: no block barrier, no cp.async, full tiles not zeroed.
// CHECK: } else {
// CHECK-NOT: __syncthreads
// CHECK-NOT: cp_async
// CHECK: [[RK]].await([[UK]]);
// CHECK-NOT: sw128_index<128>(r, c)
// CHECK: [[RK]].release([[UK]]); ++[[UK]];
// CHECK: [[RV]].await([[UV]]);
// CHECK: [[RV]].release([[UV]]); ++[[UV]];
//
// NVRTC compiles it: TMA copies, mbarrier waits, the named barrier.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[32,4096,128]' --arg 'k=bf16[32,4096,128]' --arg 'v=bf16[32,4096,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=ptx | FileCheck %s --check-prefix=PTX
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared::cta.b64
// PTX-DAG: bar.sync 1, 256;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
//
// Causal: the key loop split in two (full tiles, then the diagonal's) shares
// one ring and one tensor map per operand, in order; the diagonal's partial
// tiles (S = 300) are zeroed past their extent after the wait.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: kite_causal_attention({{.*}}, const __grid_constant__ KiteTensorMap [[MK:tma[0-9]+]], const __grid_constant__ KiteTensorMap [[MV:tma[0-9]+]]) {
// CAUSAL-COUNT-2: const TmaRing<2>
// CAUSAL-NOT: const TmaRing
// CAUSAL: for (i64
// CAUSAL: tma_load<3>({{.*}}, &[[MK]], [[RK:kite_ring[0-9]+]].full(
// CAUSAL: for (i64
// CAUSAL: tma_load<3>({{.*}}, &[[MK]], [[RK]].full(
// CAUSAL: } else {
// CAUSAL: [[RK]].await(
// CAUSAL-NOT: sw128_index<128>(r, c)
// CAUSAL: [[RK]].release(
// CAUSAL: const int {{st[0-9]+}} = [[RK]].await(
// CAUSAL: if (([[N:n[0-9]+]]) < 128) {
// CAUSAL: if (r >= ([[N]])) reinterpret_cast<unsigned short*>({{sb[0-9]+}})[sw128_index<128>(r, c)] = 0;
// CAUSAL: fence_proxy_async();
// CAUSAL-NEXT: kite_sync();
//
// Configs a producer does not fit: every one says why.
// RUN: not kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":4,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=WARPS
// WARPS: num_warps = 4 with warp_specialize: a key loop's producer warpgroup takes 4 warps and one or two warpgroups compute, so num_warps is 8 or 12
// RUN: not kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=OVERLAP
// OVERLAP: the config does not fit: warp_specialize: a key loop's producer does not combine with overlap_products
// RUN: not kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":false,"warp_specialize":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=MMA
// MMA: num_warps = 12 (a producer and two consumer warpgroups) needs tensor_cores, wgmma and warp_specialize
