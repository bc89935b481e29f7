// Layouts of examples/attention.kite.cpp (unchanged source), B4 H32 S4096
// D128 bf16, at [1, 64, 32] tiles: both products run on the tensor cores
// from registers (kite.mma: wgmma on sm_90a, the default there, or
// mma.sync, in the same layouts), and nothing inside the key loop changes
// layout. The default on sm_90a is wgmma with key tiles of 64; before it,
// mma.sync with key tiles of 32.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --emit=config | FileCheck %s --check-prefix=DEF90
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --arch sm_80 --emit=config | FileCheck %s --check-prefix=DEF80
// DEF90: {"block_sizes":[1,128,128],{{.*}}"num_stages":2,"num_warps":12,"overlap_products":true,{{.*}}"pingpong":true,{{.*}}"tensor_cores":true,"warp_specialize":true,"wgmma":true}
// Sequences shorter than a 128-row tile keep the default without a
// producer; so does a head dim of 96, whose k and v tiles are not 128-byte
// panels for TMA (emission turns the producer down, and the compiler falls
// back to the plain default).
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[8,100,128]' --arg 'k=bf16[8,100,128]' --arg 'v=bf16[8,100,128]' --emit=config | FileCheck %s --check-prefix=SHORT
// SHORT: {"block_sizes":[1,64,64],{{.*}}"num_stages":1,"num_warps":4,{{.*}}"tensor_cores":true,"wgmma":true}
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[8,1024,96]' --arg 'k=bf16[8,1024,96]' --arg 'v=bf16[8,1024,96]' --emit=config | FileCheck %s --check-prefix=D96
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[8,1024,96]' --arg 'k=bf16[8,1024,96]' --arg 'v=bf16[8,1024,96]' --emit=config-space | FileCheck %s --check-prefix=D96
// D96: {"block_sizes":[1,64,64],{{.*}}"num_stages":1,"num_warps":4,{{.*}}"tensor_cores":true,{{.*}}"wgmma":true}
// DEF80: {"block_sizes":[1,64,32],{{.*}}"num_stages":2,"num_warps":4,{{.*}}"tensor_cores":true}
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --config '{"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2}' --emit=lowered | FileCheck %s --check-prefixes=CHECK,WG
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --config '{"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":false,"num_stages":2}' --emit=lowered | FileCheck %s --check-prefixes=CHECK,SYNC
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --config '{"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":false,"num_stages":2}' --emit=cuda | FileCheck %s --check-prefix=CUDA
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --config '{"block_sizes":[1,64,32],"num_warps":4,"tensor_cores":true,"wgmma":true,"num_stages":2}' --emit=cuda | FileCheck %s --check-prefix=WGCUDA
//
// The tensor cores' layout (mma.sync m16n8k16: 4 lanes of a row with 2
// adjacent columns each, rows over threads / 4) of the [64, 32] scores, of
// the [64, 128] accumulator and of q as the first product's left operand;
// the row statistics are the scores' layout without the key dim.
// CHECK-DAG: #[[ROW:blocked[0-9]*]] = #kite.blocked<shape = [1, 64, 32], vec = [1, 1, 2], threads = [1, 32, 4], dims = [-1, 1]>
// CHECK-DAG: #[[ACC:blocked[0-9]*]] = #kite.blocked<shape = [1, 64, 128], vec = [1, 1, 2], threads = [1, 32, 4], dims = [-1, 1, 2]>
// CHECK-DAG: #[[S:blocked[0-9]*]] = #kite.blocked<shape = [1, 64, 32], vec = [1, 1, 2], threads = [1, 32, 4], dims = [-1, 1, 2]>
// CHECK-DAG: #[[COL:blocked[0-9]*]] = #kite.blocked<shape = [1, 64, 32], vec = [1, 1, 2], threads = [1, 32, 4], dims = [-1, 1, -1]>
//
// q converts once, before the key loop; m_i, l_i and acc are carried in
// the layouts the loop computes them in.
// CHECK: %[[Q:.*]] = kite.convert_layout {{.*}} -> !kite.tile<1x64x128xbf16, #[[ACC]]>
// CHECK: kite.tile_for {{.*}} iter_args({{.*}}) -> (!kite.tile<1x64xf32, #[[ROW]]>, !kite.tile<1x64x128xf32, #[[ACC]]>, !kite.tile<1x64xf32, #[[ROW]]>)
// CHECK-NOT: kite.convert_layout
// WG: %[[QK:.*]] = kite.bmm %[[Q]], %{{.*}} {kite.mma = "wgmma", kite.shared_lhs, out_dtype = f32} : !kite.tile<1x64x128xbf16, #[[ACC]]>, !kite.tile<1x128x32xbf16, #{{.*}}> -> !kite.tile<1x64x32xf32, #[[S]]>
// SYNC: %[[QK:.*]] = kite.bmm %[[Q]], %{{.*}} {kite.mma = "mma_sync", out_dtype = f32} : !kite.tile<1x64x128xbf16, #[[ACC]]>, !kite.tile<1x128x32xbf16, #{{.*}}> -> !kite.tile<1x64x32xf32, #[[S]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.reduce amax {{.*}} -> !kite.tile<1x64xf32, #[[ROW]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.binary sub {{.*}} : !kite.tile<1x64x32xf32, #[[S]]>, !kite.tile<1x64x1xf32, #[[COL]]> -> !kite.tile<1x64x32xf32, #[[S]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.reduce sum {{.*}} -> !kite.tile<1x64xf32, #[[ROW]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.binary mul {{.*}} : !kite.tile<1x64x128xf32, #[[ACC]]>, !kite.tile<1x64x1xf32, #[[COL]]> -> !kite.tile<1x64x128xf32, #[[ACC]]>
// CHECK-NOT: kite.convert_layout
// CHECK: %[[P:.*]] = kite.cast {{.*}} -> !kite.tile<1x64x32xbf16, #[[S]]>
// CHECK-NOT: kite.convert_layout
// WG: kite.baddbmm %{{.*}}, %[[P]], %{{.*}} {kite.mma = "wgmma"} : !kite.tile<1x64x128xf32, #[[ACC]]>, !kite.tile<1x64x32xbf16, #[[S]]>, !kite.tile<1x32x128xbf16, #{{.*}}> -> !kite.tile<1x64x128xf32, #[[ACC]]>
// SYNC: kite.baddbmm %{{.*}}, %[[P]], %{{.*}} {kite.mma = "mma_sync"} : !kite.tile<1x64x128xf32, #[[ACC]]>, !kite.tile<1x64x32xbf16, #[[S]]>, !kite.tile<1x32x128xbf16, #{{.*}}> -> !kite.tile<1x64x128xf32, #[[ACC]]>
// CHECK-NOT: kite.convert_layout
// CHECK: kite.yield
//
// In the CUDA (mma.sync), the key loop's only shared memory is the staging
// of k and v, each in a ring of two buffers of its own that cp.async fills
// one key tile ahead (the first tiles before the loop), with one barrier
// each: it follows the wait for this tile's copy, and precedes the copy of
// the next tile into the buffer the previous iteration's product read.
// CUDA: cp_async16(
// CUDA: cp_async_commit();
// CUDA: cp_async16(
// CUDA: cp_async_commit();
// CUDA: for (i64 [[T:t[0-9]+]] = 0; {{t[0-9]+}} < {{c[0-9]+}}; ++{{t[0-9]+}}) {
// CUDA-NOT: __syncthreads
// CUDA: cp_async_wait<1>();
// CUDA-NEXT: __syncthreads();
// CUDA-NEXT: bf16* [[KS:sb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + 0) + (int)([[T]] % 2) * 4352;
// CUDA-NOT: __syncthreads
// CUDA: cp_async16(&{{pb[0-9]+}}[{{.*}} * 136 + {{.*}}], &a1[
// CUDA-NOT: __syncthreads
// CUDA: mma_b_x4<136, true>({{bf[0-9]+}}, [[KS]],
// CUDA-NOT: __syncthreads
// CUDA: cp_async_wait<1>();
// CUDA-NEXT: __syncthreads();
// CUDA-NEXT: bf16* [[VS:sb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + 17408) + (int)([[T]] % 2) * 4352;
// CUDA-NOT: __syncthreads
// CUDA: cp_async16(&{{pb[0-9]+}}[{{.*}} * 136 + {{.*}}], &a2[
// CUDA-NOT: __syncthreads
// CUDA: mma_b_x4<136, false>({{bf[0-9]+}}, [[VS]],
// CUDA-NOT: kite_smem
// CUDA-NOT: __syncthreads
// CUDA: store_16(&o
//
// On wgmma (the default tiles with "wgmma": true) the same, in 128-byte
// swizzled buffers (1024-byte aligned),
// made visible to the async proxy before the barrier, read by descriptor.
// WGCUDA: for (i64 [[T:t[0-9]+]] = 0; {{t[0-9]+}} < {{c[0-9]+}}; ++{{t[0-9]+}}) {
// WGCUDA-NOT: __syncthreads
// WGCUDA: cp_async_wait<1>();
// WGCUDA-NEXT: fence_proxy_async();
// WGCUDA-NEXT: __syncthreads();
// WGCUDA-NEXT: bf16* [[KS:sb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + {{.*}} + 0) + (int)([[T]] % 2) * 4096;
// WGCUDA-NOT: __syncthreads
// WGCUDA: cp_async16(&{{pb[0-9]+}}[sw128_index<32>(
// WGCUDA-NOT: __syncthreads
// WGCUDA: wgmma_desc([[KS]] +
// WGCUDA: WgmmaOp<32, bf16>::run<0>(
// WGCUDA-NOT: __syncthreads
// WGCUDA: cp_async_wait<1>();
// WGCUDA-NEXT: fence_proxy_async();
// WGCUDA-NEXT: __syncthreads();
// WGCUDA-NEXT: bf16* [[VS:sb[0-9]+]] = reinterpret_cast<bf16*>(kite_smem + {{.*}} + 16384) + (int)([[T]] % 2) * 4096;
// WGCUDA-NOT: __syncthreads
// WGCUDA: cp_async16(&{{pb[0-9]+}}[sw128_index<32>(
// WGCUDA-NOT: __syncthreads
// WGCUDA: wgmma_desc([[VS]] +
// WGCUDA: WgmmaRegA<128, bf16>::run<1>(
// WGCUDA-NOT: kite_smem
// WGCUDA-NOT: __syncthreads
// WGCUDA: store_16(&o
//
// Causal (examples/causal_attention.kite.cpp): the key loop ends at the
// query tile's end, and the mask, an index comparison of the two tiles,
// is computed in the layout the scores' `where` reads (kite-assign-layouts
// makes the index ranges and the comparison again there rather than
// converting them): nothing in the key loop changes layout.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[128,4096,128]' --arg 'k=bf16[128,4096,128]' --arg 'v=bf16[128,4096,128]' --emit=lowered | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: %[[END:.*]] = kite.span_query end
// CAUSAL: kite.tile_for (%{{.*}}) = (%{{.*}}) to (%[[END]]) block
// CAUSAL-NOT: kite.convert_layout
// CAUSAL: kite.bmm {{.*}} {kite.mma = "wgmma", kite.shared_lhs, out_dtype = f32}
// CAUSAL-NOT: kite.convert_layout
// CAUSAL: kite.span_index
// CAUSAL-NOT: kite.convert_layout
// CAUSAL: kite.compare ge
// CAUSAL-NOT: kite.convert_layout
// CAUSAL: kite.where
// CAUSAL-NOT: kite.convert_layout
// CAUSAL: kite.baddbmm {{.*}}kite.mma = "wgmma"
// CAUSAL-NOT: kite.convert_layout
// CAUSAL: kite.yield
