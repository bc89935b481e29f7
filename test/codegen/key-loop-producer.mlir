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
// The roles split once: the producer warpgroup gives registers back, its
// first thread runs the programs' copies (the key loop's count, two
// 64-column boxes a tile); the computing warpgroups take the registers.
// CHECK: if (threadIdx.x >= 256) {
// CHECK-NEXT: setmaxnreg_dec<40>();
// CHECK-NEXT: if (threadIdx.x == 256) {
// CHECK-NEXT: const i64 kite_pid = blockIdx.x;
// CHECK: for (i64 [[T:t[0-9]+]] = 0;
// CHECK: const int [[S:st[0-9]+]] = [[RK]].acquire([[FK]]++, 32768);
// CHECK: tma_load<3>({{pb[0-9]+}} + 0, &[[MK]], [[RK]].full([[S]]), 0, (int)([[B:b[0-9]+]]), (int)({{b[0-9]+}}));
// CHECK-NEXT: tma_load<3>({{pb[0-9]+}} + 8192, &[[MK]], [[RK]].full([[S]]), 0 + 64, (int)([[B]]), (int)({{b[0-9]+}}));
// CHECK: [[RV]].acquire([[FV]]++, 32768);
// The computing threads: no block barrier; q copied into its shared buffer
// once before the key loop, then no cp.async; full tiles not zeroed.
// CHECK: } else {
// CHECK-NEXT: setmaxnreg_inc<232>();
// CHECK-NEXT: const i64 kite_pid = blockIdx.x;
// CHECK-NOT: __syncthreads
// CHECK: cp_async16(&{{sa[0-9]+}}[
// CHECK: cp_async_wait<0>();
// CHECK-NOT: __syncthreads
// CHECK-NOT: cp_async
// CHECK: [[RK]].await([[UK]]);
// CHECK-NOT: sw128_index<128>(r, c)
// CHECK: [[RK]].release([[UK]]); ++[[UK]];
// CHECK: [[RV]].await([[UV]]);
// CHECK: [[RV]].release([[UV]]); ++[[UV]];
//
// With overlap_products: the late product's stage (v's) is awaited in the
// late stage only where it reads one (not before the first tile), and given
// back after its wait at the iteration's end; no cp.async group is
// committed but q's, before the loop.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[32,4096,128]' --arg 'k=bf16[32,4096,128]' --arg 'v=bf16[32,4096,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true}' --emit=cuda | FileCheck %s --check-prefix=OVERLAP
// OVERLAP: } else {
// OVERLAP: cp_async_wait<0>();
// OVERLAP-NOT: cp_async
// OVERLAP: if ([[C:c[0-9]+]] > 0) {
// OVERLAP: [[RK:kite_ring[0-9]+]].await(
// OVERLAP-NOT: .await(
// OVERLAP: [[RK]].release(
// OVERLAP: for (i64 {{t[0-9]+}} = 1; {{t[0-9]+}} < [[C]];
// OVERLAP: [[RK]].await(
// OVERLAP: [[RV:kite_ring[0-9]+]].await(
// OVERLAP: wgmma_drain<1, 1, 128>(
// OVERLAP: [[RK]].release(
// OVERLAP: wgmma_drain<0, 1, 128>(
// OVERLAP: [[RV]].release(
// OVERLAP: if ([[C]] > 0) {
// OVERLAP: [[RV]].await(
// OVERLAP: [[RV]].release(
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[32,4096,128]' --arg 'k=bf16[32,4096,128]' --arg 'v=bf16[32,4096,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true}' --emit=resources | FileCheck %s --check-prefix=OVERLAPRES
// OVERLAPRES: spills 0 bytes stored, 0 bytes loaded
//
// pingpong: the two computing warpgroups take turns issuing an iteration's
// products (the early one and the late one spliced after it; the first
// tile's early product alone, the last tile's late product alone), the
// second warpgroup giving the first its first turn, the first taking the
// last pass back.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[32,4096,128]' --arg 'k=bf16[32,4096,128]' --arg 'v=bf16[32,4096,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}' --emit=cuda | FileCheck %s --check-prefix=PING
// PING: kite_turn_start<2>();
// PING: if ([[C:c[0-9]+]] > 0) {
// PING: kite_turn_wait<2>();
// PING-NEXT: wgmma_fence();
// PING: wgmma_commit();
// PING-NEXT: kite_turn_pass<2>();
// PING: for (i64 {{t[0-9]+}} = 1;
// PING: kite_turn_wait<2>();
// PING-NEXT: wgmma_fence();
// PING: wgmma_commit();
// PING-NOT: kite_turn
// PING: .await(
// PING-NOT: kite_turn
// PING: wgmma_commit();
// PING-NEXT: kite_turn_pass<2>();
// PING: if ([[C]] > 0) {
// PING: kite_turn_wait<2>();
// PING: kite_turn_pass<2>();
// PING: kite_turn_end<2>();
// At S = 300 the loop over full tiles takes turns and the partial last
// tile's loop keeps its order; the partial tile's rows past S lie past the
// tensors, where TMA filled zeros, so nothing zeroes them by hand. The
// second loop's buffers are the same rings and q's staging, so no barrier
// comes between the loops, and the turns' sequence stays open until the
// program's end; pingpong without what it needs is an error that says so.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}' --emit=cuda | FileCheck %s --check-prefix=PINGPARTIAL
// PINGPARTIAL: kite_turn_start<2>();
// PINGPARTIAL: for (i64 {{t[0-9]+}} = 1;
// PINGPARTIAL: kite_turn_wait<2>();
// PINGPARTIAL: kite_turn_pass<2>();
// PINGPARTIAL: kite_turn_wait<2>();
// PINGPARTIAL: kite_turn_pass<2>();
// PINGPARTIAL-NOT: kite_turn
// PINGPARTIAL-NOT: kite_sync
// PINGPARTIAL-NOT: < 128) {
// PINGPARTIAL: for (i64 {{t[0-9]+}} = 1;
// PINGPARTIAL-NOT: kite_turn
// PINGPARTIAL-NOT: < 128) {
// PINGPARTIAL: wgmma_drain<0
// PINGPARTIAL-NOT: kite_turn
// PINGPARTIAL: store_16(
// PINGPARTIAL: kite_turn_end<2>();
// PINGPARTIAL-NOT: kite_turn
// RUN: not kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"pingpong":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=PINGBAD
// PINGBAD: pingpong takes turns between two computing warpgroups' products: it needs warp_specialize on a key loop (tensor_cores, wgmma), overlap_products and num_warps = 12
//
// NVRTC compiles it: TMA copies, mbarrier waits, the named barrier.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[32,4096,128]' --arg 'k=bf16[32,4096,128]' --arg 'v=bf16[32,4096,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=ptx | FileCheck %s --check-prefix=PTX
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared::cta.b64
// PTX-DAG: bar.sync 1, 256;
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40;
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 232;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
//
// Causal: the key loop split in two (full tiles, then the diagonal's) shares
// one ring and one tensor map per operand, in order; the diagonal's partial
// tiles (S = 300) are zeroed past their extent after the wait. The query
// tile, staged in shared memory for the first loop, stays there for the
// second (nothing else is placed over it with a producer).
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: kite_causal_attention({{.*}}, const __grid_constant__ KiteTensorMap [[MK:tma[0-9]+]], const __grid_constant__ KiteTensorMap [[MV:tma[0-9]+]]) {
// CAUSAL-COUNT-2: const TmaRing<2>
// CAUSAL-NOT: const TmaRing
// CAUSAL: for (i64
// CAUSAL: tma_load<3>({{.*}}, &[[MK]], [[RK:kite_ring[0-9]+]].full(
// CAUSAL: for (i64
// CAUSAL: tma_load<3>({{.*}}, &[[MK]], [[RK]].full(
// CAUSAL: } else {
// CAUSAL: cp_async16({{.*}}&a0[
// CAUSAL: [[RK]].await(
// CAUSAL-NOT: sw128_index<128>(r, c)
// CAUSAL: [[RK]].release(
// The diagonal's loop reads q as the first loop staged it: no reload.
// CAUSAL-NOT: &a0[
// CAUSAL: // the shared left operand: as staged before the loop above
// CAUSAL-NOT: &a0[
// CAUSAL: const int {{st[0-9]+}} = [[RK]].await(
// CAUSAL: if (([[N:n[0-9]+]]) < 128) {
// CAUSAL: if (r >= ([[N]])) reinterpret_cast<unsigned short*>({{sb[0-9]+}})[sw128_index<128>(r, c)] = 0;
// CAUSAL: fence_proxy_async();
// CAUSAL-NEXT: kite_sync();
//
// Persistent programs: the producer copies q too, so that the next
// program's tile lands while this one reads its own: a ring of two stages
// for q, filled before the key loop's copies, in the order of the wgmma A
// fragments' rows (buffer rows 8..15 of warpgroup 0 hold the tile's rows
// 64..71: its threads hold rows 0..63 at register row 0, 64..127 at 1),
// a 64-row block and 64 columns a box through a map over the rows folded
// with the batch (the tile's first row 4096 b + m0), or, where that first
// row is not a multiple of 8, in boxes of 8 rows, into q's buffer past k's
// and v's rings (64 KB each);
// the computing threads wait for it (a full tile: nothing zeroed), read it
// at their program's stage and give it back at the program's end.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[32,4096,128]' --arg 'k=bf16[32,4096,128]' --arg 'v=bf16[32,4096,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"pid_type":"persistent_interleaved"}' --emit=cuda | FileCheck %s --check-prefix=PERSIST
// PERSIST: kite_attention({{.*}}, const __grid_constant__ KiteTensorMap [[MK:tma[0-9]+]], const __grid_constant__ KiteTensorMap [[MV:tma[0-9]+]], const __grid_constant__ KiteTensorMap [[MQ:tma[0-9]+]], const __grid_constant__ KiteTensorMap [[MQB:tma[0-9]+]])
// PERSIST-COUNT-2: const TmaRing<2>
// PERSIST: const TmaRing<2> [[RQ:kite_ring[0-9]+]]{
// PERSIST-NEXT: unsigned [[UQ:kite_used[0-9]+]] = 0, [[FQ:kite_filled[0-9]+]] = 0;
// PERSIST: for (i64 kite_pid = blockIdx.x;
// PERSIST: const int [[SQ:st[0-9]+]] = [[RQ]].acquire([[FQ]]++, 32768);
// PERSIST-NEXT: bf16* [[PQ:pb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + ((1024 - (smem_addr(kite_smem) & 1023)) & 1023) + 131072) + [[SQ]] * 16384;
// PERSIST-NEXT: const i64 [[ROW:row[0-9]+]] = (i64)(int)([[BQ:b[0-9]+]]) + (i64)(int)({{b[0-9]+}}) * (524288LL / 128LL);
// PERSIST-NEXT: if ([[ROW]] % 8 == 0) {
// PERSIST-NEXT: tma_load<5>([[PQ]] + 0, &[[MQB]], [[RQ]].full([[SQ]]), 0, 0, 0, 0, (int)(([[ROW]] + 0) / 8));
// PERSIST-NEXT: tma_load<5>([[PQ]] + 4096, &[[MQB]], [[RQ]].full([[SQ]]), 0 + 64, 0, 0, 0, (int)(([[ROW]] + 0) / 8));
// PERSIST-NEXT: tma_load<5>([[PQ]] + 8192, &[[MQB]], [[RQ]].full([[SQ]]), 0, 0, 0, 0, (int)(([[ROW]] + 32) / 8));
// PERSIST-NEXT: tma_load<5>([[PQ]] + 12288, &[[MQB]], [[RQ]].full([[SQ]]), 0 + 64, 0, 0, 0, (int)(([[ROW]] + 32) / 8));
// PERSIST-NEXT: } else {
// PERSIST-NEXT: tma_load<3>([[PQ]] + 0, &[[MQ]], [[RQ]].full([[SQ]]), 0, (int)([[BQ]]), (int)({{b[0-9]+}}));
// PERSIST-NEXT: tma_load<3>([[PQ]] + 4096, &[[MQ]], [[RQ]].full([[SQ]]), 0 + 64, (int)([[BQ]]), (int)({{b[0-9]+}}));
// PERSIST-NEXT: tma_load<3>([[PQ]] + 512, &[[MQ]], [[RQ]].full([[SQ]]), 0, (int)([[BQ]]) + 64, (int)({{b[0-9]+}}));
// PERSIST-COUNT-29: tma_load<3>({{.*}}&[[MQ]]
// PERSIST: for (i64
// PERSIST: tma_load<3>({{.*}}&[[MK]]
// PERSIST: } else {
// PERSIST-NOT: cp_async
// PERSIST: [[RQ]].await([[UQ]]);
// PERSIST-NOT: cp_async
// PERSIST: const bf16* {{sa[0-9]+}} = (reinterpret_cast<bf16*>(kite_smem + {{.*}} + 131072) + ([[UQ]] % 2) * 16384);
// PERSIST: [[RQ]].release([[UQ]]); ++[[UQ]];
// PERSIST-NEXT: }
// PERSIST-NEXT: }
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[32,4096,128]' --arg 'k=bf16[32,4096,128]' --arg 'v=bf16[32,4096,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"pid_type":"persistent_interleaved"}' --emit=resources | FileCheck %s --check-prefix=PERSISTRES
// PERSISTRES: spills 0 bytes stored, 0 bytes loaded
// PERSISTRES: shared memory 0 bytes static + 197728 bytes dynamic per program
//
// Causal, persistent, at S = 300: q's partial last tile ends at the
// tensor's end, so its rows past the extent arrive as TMA's zeros and are
// not zeroed again (Inputs/prefix_matmul.kite.cpp in generic-mainloop.mlir
// has rows that are); the diagonal loop reads q where the first loop did.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"pid_type":"persistent_interleaved"}' --emit=cuda | FileCheck %s --check-prefix=PCAUSAL
// PCAUSAL: } else {
// PCAUSAL-NOT: cp_async16
// PCAUSAL: [[RQ:kite_ring[0-9]+]].await(
// PCAUSAL-NOT: const int row =
// PCAUSAL: // the shared left operand: as staged before the loop above
// PCAUSAL-NOT: &a0[
// PCAUSAL: [[RQ]].release(
//
// Configs a producer does not fit: every one says why.
// RUN: not kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":4,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=WARPS
// WARPS: num_warps = 4 with warp_specialize: a key loop's producer warpgroup takes 4 warps and one or two warpgroups compute, so num_warps is 8 or 12
// RUN: not kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":false,"warp_specialize":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=MMA
// MMA: num_warps = 12 (a producer and two consumer warpgroups) needs tensor_cores, wgmma and warp_specialize
