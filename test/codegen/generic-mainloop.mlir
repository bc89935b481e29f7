// generic_mainloop: a plain product K loop as ordinary kernel code instead
// of kite_gemm.cuh's main loop. With a producer, both operands stream
// through TMA rings: the right one in 64-column panels, the left one
// (x[tm, tk], loaded in the loop's body) in the wgmma A fragments' row
// order (at [128, 256] on two computing warpgroups, thread row k of warp j
// holds tile rows 8 j + g + 64 k, so the 8 rows after a 64-row block's
// first 8 are tile rows 64 to 71), which the wgmmas read by descriptor: a
// block a box, through a map that views the rows as 8 x 2 x 4 of strides
// 1, 64 and 8 rows (the second block starts at tile row 32), where the tile
// is whole and starts on a multiple of 8 rows; 8-row boxes otherwise. The
// loop's carried value only
// the product accumulates into: its sums live in registers across the loop,
// each iteration's wgmmas are waited for in the next (at most one in
// flight), which then gives their stages back; the last wait follows the
// loop, and the result leaves from registers (exchange stores), with no
// round trip through shared memory.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"}' --emit=cuda | FileCheck %s
// CHECK-NOT: _mainloop<
// CHECK: if (threadIdx.x == 256) {
// CHECK: const int [[ST:st[0-9]+]] = [[RA:kite_ring[0-9]+]].acquire({{.*}}, 16384);
// CHECK: const i64 [[ROW:row[0-9]+]] = (i64)(int)([[M:b[0-9]+]]);
// CHECK-NEXT: if ([[ROW]] % 8 == 0) {
// CHECK-NEXT: tma_load<5>([[PB:pb[0-9]+]] + 0, &[[BLOCKS:tma[0-9]+]], [[RA]].full([[ST]]), (int)([[K:b[0-9]+]]), 0, 0, 0, (int)(([[ROW]] + 0) / 8));
// CHECK-NEXT: tma_load<5>([[PB]] + 4096, &[[BLOCKS]], [[RA]].full([[ST]]), (int)([[K]]), 0, 0, 0, (int)(([[ROW]] + 32) / 8));
// CHECK-NEXT: } else {
// CHECK-NEXT: tma_load<2>([[PB]] + 0, &[[MAPA:tma[0-9]+]], [[RA]].full([[ST]]), (int)([[K]]), (int)([[M]]));
// CHECK-NEXT: tma_load<2>([[PB]] + 512, &[[MAPA]], [[RA]].full([[ST]]), (int)([[K]]), (int)([[M]]) + 64);
// CHECK-NEXT: tma_load<2>([[PB]] + 1024, &[[MAPA]], [[RA]].full([[ST]]), (int)([[K]]), (int)([[M]]) + 8);
// CHECK: [[RB:kite_ring[0-9]+]].acquire({{.*}}, 32768);
// CHECK: setmaxnreg_inc<232>();
// CHECK: float [[SUMS:c[0-9]+]][1][128];
// CHECK: for (i64 [[IV:t[0-9]+]] = 0;
// CHECK: [[RB]].await([[UB:kite_used[0-9]+]]);
// CHECK: const int [[SA:st[0-9]+]] = [[RA]].await([[UA:kite_used[0-9]+]]);
// CHECK-NEXT: bf16* [[BA:sa[0-9]+]] = {{.*}} + [[SA]] * 8192;
// CHECK-NOT: wgmma_drain<0
// CHECK: WgmmaOp<256, bf16>::run<1>([[SUMS]][{{.*}}], wgmma_desc([[BA]] + {{.*}}, 16, 1024), {{.*}});
// CHECK: wgmma_commit();
// CHECK-NEXT: wgmma_drain<1, 1, 256>([[SUMS]]);
// CHECK-NEXT: if ([[IV]] > 0) [[RB]].release([[UB]] - 1);
// CHECK-NEXT: ++[[UB]];
// CHECK-NEXT: if ([[IV]] > 0) [[RA]].release([[UA]] - 1);
// CHECK-NEXT: ++[[UA]];
// CHECK: wgmma_drain<0, 1, 256>([[SUMS]]);
// CHECK-NEXT: if ({{c[0-9]+}} > 0) [[RB]].release([[UB]] - 1);
// CHECK-NEXT: if ({{c[0-9]+}} > 0) [[RA]].release([[UA]] - 1);
// CHECK: exchange_segments<4>
// CHECK-NOT: gemm_sum_index
//
// Partial tiles: past a tile's extent, a loop that runs to its tensor
// dim's size reads past the tensor, where TMA fills zeros; one over a
// prefix (Inputs/prefix_matmul.kite.cpp) reads data there, which the
// computing threads zero after the wait: y's rows past K's extent and its
// columns past N's, x's rows past M's (each buffer row mapped to its tile
// row as the boxes placed it) and its columns past K's.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[300,264]' --arg 'y=bf16[264,136]' --config '{"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"}' --emit=cuda | FileCheck %s --check-prefix=WHOLE
// WHOLE: kite_ring0.await(
// WHOLE-NOT: fence_proxy_async();
// WHOLE: wgmma_drain<0
// RUN: kite inspect %S/Inputs/prefix_matmul.kite.cpp --kernel prefix_matmul --arg 'x=bf16[300,264]' --arg 'y=bf16[264,136]' --config '{"block_sizes":[128,128,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved"}' --emit=cuda | FileCheck %s --check-prefix=PREFIX
// PREFIX: setmaxnreg_inc<232>();
// PREFIX: const i64 [[M:n[0-9]+]] = min((i64)128, (i64)(297) - {{b[0-9]+}});
// PREFIX: const i64 [[N:n[0-9]+]] = min((i64)128, (i64)(129) - {{b[0-9]+}});
// PREFIX: const i64 [[K:n[0-9]+]] = min((i64)64, (i64)(259LL) - {{b[0-9]+}});
// PREFIX: if (([[K]]) < 64 || ([[N]]) < 128) {
// PREFIX: if (r >= ([[K]]) || c >= ([[N]])) reinterpret_cast<unsigned short*>({{sb[0-9]+}})[sw128_index<64>(r, c)] = 0;
// PREFIX: fence_proxy_async();
// PREFIX: if (([[M]]) < 128 || ([[K]]) < 64) {
// PREFIX: const int row = k / 1 * 64 + t / 4 % 64 * 1 + k % 1;
// PREFIX-NEXT: if (row >= ([[M]]) || c >= ([[K]])) {{sa[0-9]+}}[b * 4096 + sw128_index<64>(r % 64, c)] = 0;
// PREFIX: fence_proxy_async();
