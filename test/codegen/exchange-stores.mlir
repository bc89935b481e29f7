// Exchange stores: where a store's threads hold 4- or 8-byte chunks along
// the tensor's contiguous dim and consecutive lanes hold consecutive
// chunks (a product's accumulator layout: pairs of columns, 4 lanes along
// a row), the lanes of a group exchange their chunks by shuffles
// (exchange_segments) and each stores 16 bytes, at its own column for the
// group's first chunk plus r * V * (T - 1) (r: its place in the group; V
// the chunk, T the lanes along the row).
//
// Attention's output (bf16 pairs, groups of 4 lanes), without bulk copies:
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}' --emit=cuda | FileCheck %s --check-prefix=ATTN
// ATTN: const int [[R:xr[0-9]+]] = c0_t2 % 4; // this lane's place in its group of 4
// ATTN: const Vec<bf16, 2> [[S:xs[0-9]+]]p[4] = {Vec<bf16, 2>{{[{][{]}}cvt<bf16>(
// ATTN-NEXT: const uint4 [[S]] = exchange_segments<4>([[S]]p, [[R]]);
// ATTN-NEXT: if ({{.*}}) store_16(&o0[{{.*}} + [[R]] * 6], [[S]]);
// ATTN-NOT: store_vec<2>(&o0
//
// The shuffles, and no local memory (selects among scalars, not an array
// indexed at run time):
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}' --emit=ptx | FileCheck %s --check-prefix=PTX
// PTX-NOT: .local
// PTX-COUNT-3: shfl.sync.bfly.b32
// PTX: st.global.v4.u32
// PTX-NOT: .local
//
// f32 pairs (8 bytes): groups of 2 lanes, one shuffle per word.
// RUN: kite inspect %kite_src/test/correctness/kernels/stores.kite.cpp --kernel product_f32 --arg 'x=bf16[129,64]' --arg 'y=bf16[64,128]' --emit=cuda | FileCheck %s --check-prefix=F32
// F32: const int [[R:xr[0-9]+]] = c1_t1 % 2; // this lane's place in its group of 2
// F32: const uint4 [[S:xs[0-9]+]] = exchange_segments<2>([[S]]p, [[R]]);
// F32-NEXT: if ({{.*}} < (n3) - (c1_t0)) store_16(&o0[{{.*}} + [[R]] * 6], [[S]]);
//
// Columns masked (137 of a 64-wide tile) keep the direct store.
// RUN: kite inspect %kite_src/test/correctness/kernels/stores.kite.cpp --kernel product_bf16 --arg 'x=bf16[129,64]' --arg 'y=bf16[64,136]' --emit=cuda | FileCheck %s --check-prefix=PARTIAL
// PARTIAL-NOT: exchange_segments
// PARTIAL: store_vec<2>(&o0[
//
// Stores of 16-byte chunks (softmax's rows) need none.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1024]' --emit=cuda | FileCheck %s --check-prefix=WIDE
// WIDE-NOT: exchange_segments
// WIDE: store_vec<8>(&o0[
