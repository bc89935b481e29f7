// `kite inspect --emit=resources`: ptxas's figures through NVRTC (no GPU)
// and the theoretical occupancy on sm_90a.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --emit=resources | FileCheck %s
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[256,256]' --arg 'y=bf16[256,256]' --config '{"block_sizes": [64, 64, 32]}' --emit=resources | FileCheck %s --check-prefix=MATMUL
// CHECK: kernel         kite_softmax (sm_90a)
// CHECK: launch         16 programs of 128 threads
// CHECK: registers      {{[0-9]+}} per thread
// CHECK: spills         0 bytes stored, 0 bytes loaded
// CHECK: shared memory  {{[0-9]+}} bytes static + {{[0-9]+}} bytes dynamic per program
// CHECK: occupancy      {{[0-9]+}} of 64 warps per SM ({{[0-9]+}}%), {{[0-9]+}} programs per SM, limited by {{registers|warps|shared memory|blocks}}
// The matmul stages its tiles in dynamic shared memory.
// MATMUL: kernel         kite_matmul (sm_90a)
// MATMUL: shared memory  {{[0-9]+}} bytes static + {{[1-9][0-9]*}} bytes dynamic per program
// A persistent pid_type launches as many programs as the SMs hold at once.
// RUN: kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[1024,1024]' --arg 'y=f32[1024,1024]' --config '{"block_sizes": [8, 32], "pid_type": "persistent_interleaved"}' --emit=resources | FileCheck %s --check-prefix=PERSIST
// PERSIST: launch         persistent programs of 128 threads, {{[1-9][0-9]*}} per SM, looping over 4096 program ids
