// `kite inspect --trace` (and the plan `kite bench --timeline` runs): the
// kernel's entry, each program's start and end, and the loops directly in a
// program's body are bracketed with trace_event calls, numbered alike by
// the computing threads and the producer; without --trace there are none.
//
// Causal attention with a producer: the key loop split in two (the tiles
// below the diagonal, then the diagonal one) is loops 0 and 1.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[8,1024,128]' --arg 'k=bf16[8,1024,128]' --arg 'v=bf16[8,1024,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true}' --trace --emit=cuda | FileCheck %s --check-prefix=TRACE
// TRACE: #define KITE_COMPUTE_THREADS 256
// TRACE-NEXT: #define KITE_TRACE {{[0-9]+}}
// TRACE-NEXT: #include "kite_device.cuh"
// TRACE: trace_event(0, -1);
// The producer's slice.
// TRACE: if (threadIdx.x == 256) {
// TRACE: trace_event(1, kite_pid);
// TRACE: trace_event(2, kite_pid);
// TRACE: for (i64
// TRACE-NEXT: trace_event(64, kite_pid);
// TRACE: tma_load
// TRACE: trace_event(3, kite_pid);
// TRACE: trace_event(4, kite_pid);
// TRACE: trace_event(5, kite_pid);
// TRACE-NEXT: trace_event(31, kite_pid);
// The computing threads.
// TRACE: setmaxnreg_inc
// TRACE: trace_event(1, kite_pid);
// TRACE: trace_event(2, kite_pid);
// TRACE: WgmmaOp
// The overlapped loop's first iteration is peeled off: events at the top of
// the others.
// TRACE: for (i64 {{t[0-9]+}} = 1;
// TRACE-NEXT: trace_event(64, kite_pid);
// TRACE: trace_event(3, kite_pid);
// TRACE-NEXT: trace_event(4, kite_pid);
// TRACE: trace_event(5, kite_pid);
// TRACE: store_16
// TRACE: trace_event(31, kite_pid);
// TRACE-NOT: trace_event
//
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[8,1024,128]' --arg 'k=bf16[8,1024,128]' --arg 'v=bf16[8,1024,128]' --emit=cuda | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: KITE_TRACE
// PLAIN-NOT: trace_event
//
// A persistent softmax: the events sit inside the loop over program ids.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=f32[64,1000]' --config '{"block_sizes":[1],"pid_type":"persistent_interleaved"}' --trace --emit=cuda | FileCheck %s --check-prefix=PERSIST
// PERSIST: trace_event(0, -1);
// PERSIST: for (i64 kite_pid = blockIdx.x;
// PERSIST: trace_event(1, kite_pid);
// PERSIST: trace_event(31, kite_pid);
//
// An xyz grid's kite_pid is 0: its events carry the block's linear index.
// RUN: kite inspect %kite_src/examples/add.kite.cpp --kernel add --arg 'x=f32[64,256]' --arg 'y=f32[64,256]' --config '{"block_sizes":[8,32],"pid_type":"xyz"}' --trace --emit=cuda | FileCheck %s --check-prefix=XYZ
// XYZ: trace_event(1, (long long)((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x));
// XYZ: trace_event(31, (long long)((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x));
