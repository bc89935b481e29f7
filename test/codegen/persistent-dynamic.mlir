// pid_type persistent_dynamic: as many programs as the SMs hold, each taking
// the next program id as it finishes one (its block's id first, then tickets
// from a counter the launch zeroes), so that programs of unequal work
// (causal attention's query tiles) share out as they complete.
//
// Without a producer: thread 0 takes the id into one of two slots, the
// others read it after a barrier.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=f32[64,1000]' --config '{"block_sizes":[1],"pid_type":"persistent_dynamic"}' --emit=cuda | FileCheck %s --check-prefix=PLAIN
// PLAIN: (program ids of persistent programs, as many as the SMs hold at once)
// PLAIN: kite_softmax(float* __restrict__ a0, float* __restrict__ o0, unsigned char* __restrict__ kite_tickets)
// PLAIN: __shared__ i64 kite_next[2];
// PLAIN-NEXT: for (unsigned kite_turn = 0;; ++kite_turn) {
// PLAIN-NEXT: if (threadIdx.x == 0) kite_next[kite_turn % 2] = kite_next_program(kite_tickets, kite_turn);
// PLAIN-NEXT: __syncthreads();
// PLAIN-NEXT: const i64 kite_pid = kite_next[kite_turn % 2];
// PLAIN-NEXT: if (kite_pid >= 64) break;
//
// With a key loop's producer: the producer's thread takes the ids and puts
// them in kite_pids' slots; the computing threads take them in the same
// order, and stop at the same id past the last.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[32,1024,128]' --arg 'k=bf16[32,1024,128]' --arg 'v=bf16[32,1024,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"pid_type":"persistent_dynamic"}' --emit=cuda | FileCheck %s --check-prefix=PRODUCER
// PRODUCER: unsigned char* __restrict__ kite_tickets
// PRODUCER: __shared__ i64 kite_next[2];
// PRODUCER: __shared__ unsigned long long kite_pid_bars[4];
// PRODUCER-NEXT: const PidRing kite_pids{kite_pid_bars};
// PRODUCER: kite_pids.init(256);
// PRODUCER: if (threadIdx.x == 256) {
// PRODUCER-NEXT: for (unsigned kite_turn = 0;; ++kite_turn) {
// PRODUCER-NEXT: const i64 kite_pid = kite_next_program(kite_tickets, kite_turn);
// PRODUCER-NEXT: kite_pids.put(kite_next, kite_turn, kite_pid);
// PRODUCER-NEXT: if (kite_pid >= 256) break;
// PRODUCER: setmaxnreg_inc<
// PRODUCER-NEXT: for (unsigned kite_turn = 0;; ++kite_turn) {
// PRODUCER-NEXT: const i64 kite_pid = kite_pids.take(kite_next, kite_turn);
// PRODUCER-NEXT: if (kite_pid >= 256) break;
//
// The query tiles still start longest first (reversed ids).
// PRODUCER: const i64 [[R:i[0-9]+]] = 8 - 1 - {{i[0-9]+}};
//
// The registers an overlapped key loop carries start zeroed inside the
// program loop (else the previous program's stay alive through it and
// spill; Overlap.cpp's emitOverlappedLoop). A flat program leaves them as they are.
// PRODUCER: float [[LATE:late[0-9]+]][64] = {};
// PRODUCER: float lc{{[0-9]+}}[1][64] = {};
// PRODUCER-NEXT: unsigned laf{{[0-9]+}}[8][1][4] = {};
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[32,1024,128]' --arg 'k=bf16[32,1024,128]' --arg 'v=bf16[32,1024,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}' --emit=cuda | FileCheck %s --check-prefix=FLAT
// FLAT: float lc{{[0-9]+}}[1][64];
// FLAT-NEXT: unsigned laf{{[0-9]+}}[8][1][4];
//
// An unknown pid_type is turned down with the list.
// RUN: not kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=f32[64,1000]' --config '{"pid_type":"persistent_greedy"}' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: pid_type = 'persistent_greedy' must be flat, xyz, persistent_blocked, persistent_interleaved or persistent_dynamic
