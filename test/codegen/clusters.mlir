// cluster_size 2: programs 2c and 2c + 1 form a cluster (__cluster_dims__)
// and take neighbouring tiles of the loop's fastest-varying dim (here, with
// l2_groupings, the row tiles: tile i of the cluster's order becomes row
// tiles 2i and 2i + 1). The tile both read, y's, arrives by multicast: each
// producer copies every other 64-column box into both programs' stages,
// and the ring's stages are free once both programs' warps are done (a
// TmaRing of the cluster); x's tile is each program's own, as before. The
// mbarriers are set up, and the programs end, under a cluster barrier.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","l2_groupings":[8],"cluster_size":2}' --emit=cuda | FileCheck %s
// CHECK: // launch: 512 programs of 384 threads, {{.*}} in clusters of 2
// CHECK: __cluster_dims__(2, 1, 1) kite_matmul(
// CHECK: const TmaRing<4> [[RA:kite_ring[0-9]+]]{
// CHECK: const TmaRing<4, 2> [[RB:kite_ring[0-9]+]]{
// CHECK: cluster_sync(); // the cluster's rings are set up
// CHECK: if (threadIdx.x == 256) {
// CHECK-NEXT: const unsigned kite_cta = cluster_rank();
// CHECK: i64 kite_rest = (kite_pid - 0) / 2;
// CHECK: const i64 [[GSZ:gsz[0-9]+]] = min((i64)8, (i64)16 - {{.*}});
// CHECK: const i64 [[I:i[0-9]+]] = {{.*}} % [[GSZ]];
// CHECK: const i64 [[ROWS:i[0-9]+]] = 2 * [[I]] + (kite_pid & 1);
// CHECK-NEXT: const i64 {{b[0-9]+}} = 0 + [[ROWS]] * 128;
// CHECK: [[RA]].acquire({{.*}}, 16384);
// CHECK-NOT: multicast
// CHECK: const int [[ST:st[0-9]+]] = [[RB]].acquire({{.*}}, 32768);
// CHECK: if (kite_cta == 0) tma_load_multicast<2>({{pb[0-9]+}} + 0, &{{tma[0-9]+}}, [[RB]].full([[ST]]), 0x3,
// CHECK-NEXT: if (kite_cta == 1) tma_load_multicast<2>({{pb[0-9]+}} + 4096,
// CHECK-NEXT: if (kite_cta == 0) tma_load_multicast<2>({{pb[0-9]+}} + 8192,
// CHECK-NEXT: if (kite_cta == 1) tma_load_multicast<2>({{pb[0-9]+}} + 12288,
// CHECK: [[RB]].release(
// CHECK: cluster_sync(); // no program leaves
// CHECK-NEXT: }

// Causal attention's key loops end at the query tile's end: pairing
// neighbouring query tiles, no k or v tile is the same for both programs.
// RUN: not kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[8,1024,64]' --arg 'k=bf16[8,1024,64]' --arg 'v=bf16[8,1024,64]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"cluster_size":2}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: error: the config does not fit: cluster_size 2: every operand tile the producer copies depends on the dim whose neighbouring tiles a cluster's programs take, so none can be multicast

// An odd number of tiles along that dim (3 row tiles) cannot pair.
// RUN: not kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[300,256]' --arg 'y=bf16[256,256]' --config '{"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"loop_orders":[[0,1]],"cluster_size":2}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=ODD
// ODD: error: the config does not fit: cluster_size 2: the top-level loop's dim 0 (whose neighbouring tiles a cluster's programs take) has 3 tiles, not a multiple of 2

// kite_gemm.cuh's main loop (no generic_mainloop) has no producer slice to
// multicast from.
// RUN: not kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[256,256]' --arg 'y=bf16[256,256]' --config '{"block_sizes":[128,128,64],"num_warps":12,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"cluster_size":2}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=MAINLOOP
// MAINLOOP: error: the config does not fit: cluster_size 2: it needs a key loop's producer
