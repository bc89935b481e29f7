// Cross-entropy with a looped reduction: the online statistics' chunk loop
// keeps a running max per thread (a local amax: the thread's own elements,
// no warp_reduce or block_reduce inside the loop); after the loop one
// cross-thread amax gives the row max and one cross-thread sum the rescaled
// sums.
// RUN: kite inspect %kite_src/examples/cross_entropy.kite.cpp --arg 'logits=bf16[64,32768]' --arg 'target=i64[64]' --config '{"block_sizes":[1],"num_warps":4,"reduction_loops":[1024]}' --emit=cuda | FileCheck %s
// CHECK: for (i64 [[T:t[0-9]+]] = 0; [[T]] <
// CHECK: load_vec<8>
// CHECK: MaxOp::combine
// CHECK-NOT: _reduce<
// CHECK: ++q) {{acc[0-9]+}}[q] = {{y[0-9]+}}[q];
// CHECK: ++q) {{acc[0-9]+}}[q] = {{y[0-9]+}}[q];
// CHECK: block_reduce<MaxOp, 1, 128>
// CHECK: k_exp(
// CHECK: block_reduce<SumOp, 1, 128>
// CHECK: k_log(
