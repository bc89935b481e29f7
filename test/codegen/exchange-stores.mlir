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
// Rows whose starts are not all 16-byte aligned (137 bf16 columns: 274
// bytes a row) are realigned: each lane also takes the segment before its
// own on the row (from the lane that holds it, or for lane 0 the last
// lane's previous segment, carried), and stores the aligned 16 bytes that
// end inside its segment; the row's ends go element by element.
// RUN: kite inspect %kite_src/test/correctness/kernels/stores.kite.cpp --kernel product_bf16 --arg 'x=bf16[129,64]' --arg 'y=bf16[64,137]' --emit=cuda | FileCheck %s --check-prefix=ODD
// ODD: const int [[R:xr[0-9]+]] = c1_t1 % 4; // this lane's place in its group of 4
// ODD-NEXT: uint4 [[C:xc[0-9]+]] = make_uint4(0u, 0u, 0u, 0u); // the last lane's previous segment
// ODD-NEXT: const int [[P:xp[0-9]+]] = c1_t1 >= 4 ? c1_t1 - 4 : [[R]] > 0 ? -1 + [[R]] : 3;
// ODD: const uint4 [[S:xs[0-9]+]] = exchange_segments<4>([[S]]p, [[R]]);
// ODD-NEXT: const uint4 [[S]]b = shfl_16(c1_t1 == 3 ? [[C]] : [[S]], [[P]], 4);
// ODD-NEXT: [[C]] = [[S]];
// ODD-NEXT: if ({{.*}}) store_16_realigned(&o0[{{.*}} * 137 + {{.*}} + [[R]] * 6], [[S]]b, [[S]], ((k{{[0-9]+}} * 32 + c1_t1 * 2) + [[R]] * 6) * 2, (int)(n{{[0-9]+}}) * 2);
// ODD-NOT: o0[{{.*}}] = cvt
//
// In its PTX, 16-byte stores, the shuffles, and no local memory.
// RUN: kite inspect %kite_src/test/correctness/kernels/stores.kite.cpp --kernel product_bf16 --arg 'x=bf16[129,64]' --arg 'y=bf16[64,137]' --emit=ptx | FileCheck %s --check-prefix=ODDPTX
// ODDPTX-NOT: .local
// ODDPTX: shfl.sync.idx.b32
// ODDPTX: st.global.v4.u32
// ODDPTX-NOT: .local
//
// f32 pairs (groups of 2 lanes, each pair of groups along a row in turn):
// the segment before lane g * 2 + r's is lane (g - 1) * 2 + r's, and for
// the first group, lane 3 - 2 + r - 1's or lane 3's previous one.
// RUN: kite inspect %kite_src/test/correctness/kernels/stores.kite.cpp --kernel product_f32 --arg 'x=bf16[129,64]' --arg 'y=bf16[64,137]' --emit=cuda | FileCheck %s --check-prefix=ODDF32
// ODDF32: const int [[P:xp[0-9]+]] = c1_t1 >= 2 ? c1_t1 - 2 : [[R:xr[0-9]+]] > 0 ? 1 + [[R]] : 3;
// ODDF32: store_16_realigned(&o0[{{.*}} * 137 + {{.*}} + [[R]] * 6], {{.*}} * 4, (int)(n{{[0-9]+}}) * 4);
//
// Aligned rows whose tile's columns end inside it (136 of a 64-wide tile)
// take the same path: the row's last segment holding valid columns stores
// what it has.
// RUN: kite inspect %kite_src/test/correctness/kernels/stores.kite.cpp --kernel product_bf16 --arg 'x=bf16[129,64]' --arg 'y=bf16[64,136]' --emit=cuda | FileCheck %s --check-prefix=PARTIAL
// PARTIAL: exchange_segments<4>
// PARTIAL: store_16_realigned(&o0[
// PARTIAL-NOT: store_vec<2>(&o0[
//
// Stores of 16-byte chunks (softmax's rows) need none.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1024]' --emit=cuda | FileCheck %s --check-prefix=WIDE
// WIDE-NOT: exchange_segments
// WIDE: store_vec<8>(&o0[
