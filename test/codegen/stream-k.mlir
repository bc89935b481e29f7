// stream_k: the product loop run as kernel code in persistent programs
// walks a stream-K schedule (StreamK): units of a tile and a range of its
// K tiles, the same in the producer's slice and the computing threads';
// each unit's K loop runs from tile kite_kb, kite_ke - kite_kb of them; a
// unit that does not start the loop sums from zero; after the loop
// StreamK::finish keeps the rest of the body (the epilogue) to the tile's
// last part, with two workspace slots a program (2 x 128 sums x 256
// threads x 4 bytes) and a zeroed counter. The grid is as many programs
// as the SMs hold (capped by the tiles' K iterations: 512 x 64), not the
// tiles.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"pid_type":"persistent_interleaved","l2_groupings":[8],"stream_k":true}' --emit=cuda | FileCheck %s
// CHECK: launch: 32768 programs of 384 threads
// CHECK: // config: {{.*}}"pid_type":"persistent_interleaved",{{.*}}"stream_k":true,
// CHECK: unsigned char* __restrict__ kite_partials, unsigned char* __restrict__ kite_counters)
// CHECK: if (threadIdx.x == 256) {
// CHECK: StreamK kite_sk(512, 64);
// CHECK: while (kite_sk.next_unit(kite_pid, kite_kb, kite_ke)) {
// CHECK: const i64 [[PC:c[0-9]+]] = kite_ke - kite_kb;
// CHECK-NEXT: for (i64 [[PT:t[0-9]+]] = 0; [[PT]] < [[PC]]; ++[[PT]]) {
// CHECK-NEXT: const i64 {{b[0-9]+}} = (i64)((i64)(0LL) + kite_kb * 64) + [[PT]] * 64;
// CHECK: setmaxnreg_inc<232>();
// CHECK: StreamK kite_sk(512, 64);
// CHECK: if (kite_kb != 0) {
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int q = 0; q < 128; ++q) [[ACC:acc[0-9]+]][q] = 0.0f;
// CHECK: const i64 [[C:c[0-9]+]] = kite_ke - kite_kb;
// CHECK: wgmma_drain<0, 1, 256>(
// CHECK: if (kite_sk.finish([[ACC]], reinterpret_cast<float*>(kite_partials), reinterpret_cast<unsigned*>(kite_counters), kite_pid, kite_kb, kite_ke)) {
// CHECK: store_16(

// Configs stream_k does not fit are turned down with the reason.
// RUN: not kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"stream_k":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=FLAT
// FLAT: error: the config does not fit: stream_k needs pid_type persistent_interleaved
// RUN: not kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","pid_type":"persistent_interleaved","stream_k":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=MAIN
// MAIN: error: the config does not fit: stream_k needs the product loop run as kernel code (generic_mainloop
// RUN: not kite inspect %kite_src/examples/mlp.kite.cpp --arg 'x=bf16[256,128]' --arg 'w1=bf16[128,256]' --arg 'w2=bf16[256,128]' --config '{"block_sizes":[128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true,"pid_type":"persistent_interleaved","stream_k":true}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=MLP
// MLP: error: the config does not fit: stream_k needs exactly one product K loop

// A plan of sizes taken at launch: the tiles' count is computed at launch,
// and the grid (capped at 2^30) is as many programs as the SMs hold.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --dynamic-shapes --config '{"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma","generic_mainloop":true,"pid_type":"persistent_interleaved","stream_k":true}' --emit=cuda | FileCheck %s --check-prefix=DYN
// DYN: launch: min(max(ceildiv(x.size(0), 128), 0) * max(ceildiv(y.size(1), 256), 0) * 64, 1073741824) programs
// DYN: const i64 [[T:kite_programs[0-9]+]] =
// DYN: StreamK kite_sk([[T]], 64);
// DYN: StreamK kite_sk([[T]], 64);
