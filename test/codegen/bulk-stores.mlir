// bulk_stores: on sm_90 and later an unmasked store whose tile rows are
// whole, 16-byte aligned rows of its tensor goes through shared memory (rows
// padded by 16 bytes), one cp.async.bulk a row by the thread holding the
// row's first element, rows past the tile's extent skipped; the thread waits
// for its copies to read shared memory before the space is reused.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"bulk_stores":true}' --emit=lowered | FileCheck %s --check-prefix=MARK
// MARK: kite.store
// MARK-SAME: kite.bulk_store
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"bulk_stores":true}' --emit=cuda | FileCheck %s --check-prefix=ATTN
// ATTN: bf16* [[SB:sb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + {{[0-9]+}}); // the tile's rows, 272 bytes apart, for bulk copies
// ATTN-NEXT: kite_sync(); // the scratch space is free
// ATTN: store_vec<2>(&[[SB]][(({{.*}}) * 1) * 136 + ({{.*}})], Vec<bf16, 2>
// ATTN: fence_proxy_async();
// ATTN-NEXT: kite_sync();
// ATTN: if ((c0_t2 * 2) == 0 && {{.*}} < (n{{[0-9]+}}) - (c0_t1)) bulk_store<256>(&o0[
// ATTN: bulk_store_wait();
// ATTN-NEXT: kite_sync(); // the copies have read the tile's rows
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"bulk_stores":true}' --emit=ptx | FileCheck %s --check-prefix=PTX
// PTX: fence.proxy.async.shared::cta
// PTX: cp.async.bulk.global.shared::cta.bulk_group [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 256;
// PTX: cp.async.bulk.wait_group.read 0;
//
// Without bulk copies (sm_80) the store is not marked: lanes exchange their
// pairs and store 16 bytes each (exchange-stores.mlir).
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --arch sm_80 --config '{"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"bulk_stores":true}' --emit=cuda | FileCheck %s --check-prefix=SM80
// SM80-NOT: bulk_store<
// SM80: store_16(&o0[
//
// Rows that are not whole 16-byte rows keep the direct store: a tile of
// 32 columns of 129 (the last tile partial), and f32 rows of 33 elements.
// RUN: kite inspect %kite_src/examples/add.kite.cpp --kernel add --arg 'x=f32[100,129]' --arg 'y=f32[100,129]' --config '{"block_sizes":[8,32],"num_warps":2,"bulk_stores":true}' --emit=cuda | FileCheck %s --check-prefix=PARTIAL
// PARTIAL-NOT: bulk_store<
// PARTIAL: o0[
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=f32[64,33]' --config '{"block_sizes":[2],"num_warps":2,"bulk_stores":true}' --emit=cuda | FileCheck %s --check-prefix=ODD
// ODD-NOT: bulk_store<
// ODD: o0[
// Whole rows of a memory-bound kernel qualify too (softmax's x[tn, all]).
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1024]' --config '{"block_sizes":[2],"num_warps":4,"bulk_stores":true}' --emit=cuda | FileCheck %s --check-prefix=ROWS
// ROWS: bulk_store<2048>(&o0[
//
// The tuner offers it for kernels with key-loop products on sm_90a.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --emit=config-space | FileCheck %s --check-prefix=SPACE
// SPACE: bulk_stores
//
// A program that reads back rows it bulk-stored waits for the copies'
// global writes (cp.async.bulk.wait_group 0 and a proxy fence) before the
// barrier that a read after a write already takes.
// RUN: kite inspect %S/Inputs/store_then_load.kite.cpp --arg 'x=bf16[64,256]' --arg 'y=bf16[64,256]' --config '{"block_sizes":[4],"num_warps":4,"bulk_stores":true}' --emit=cuda | FileCheck %s --check-prefix=READBACK
// READBACK: bulk_store<512>(&a1[
// READBACK: bulk_store_wait();
// READBACK: bulk_store_drain();
// READBACK-NEXT: __syncthreads(); // this program wrote a1 above
// READBACK-NEXT: bf16 v{{[0-9]+}}[8];
// READBACK-NEXT: load_vec<8>(&v{{[0-9]+}}[0], &a1[
// RUN: kite inspect %S/Inputs/store_then_load.kite.cpp --arg 'x=bf16[64,256]' --arg 'y=bf16[64,256]' --config '{"block_sizes":[4],"num_warps":4,"bulk_stores":true}' --emit=ptx | FileCheck %s --check-prefix=DRAIN
// DRAIN: cp.async.bulk.wait_group 0;
// DRAIN: fence.proxy.async.global;
// Without bulk stores, the barrier alone.
// RUN: kite inspect %S/Inputs/store_then_load.kite.cpp --arg 'x=bf16[64,256]' --arg 'y=bf16[64,256]' --config '{"block_sizes":[4],"num_warps":4}' --emit=cuda | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: bulk_store_drain
// PLAIN: __syncthreads(); // this program wrote a1 above
