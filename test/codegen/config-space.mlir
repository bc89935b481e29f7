// The config space kite derives from a kernel's IR for given shapes.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,65536]' --emit=config-space | FileCheck %s --check-prefix=SOFTMAX
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,512]' --arg 'y=bf16[512,2048]' --emit=config-space | FileCheck %s --check-prefix=MATMUL
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[4096,512]' --arg 'y=bf16[512,2048]' --arch sm_80 --emit=config-space | FileCheck %s --check-prefix=MATMUL80
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=f32[2,64,512]' --arg 'k=f32[2,64,512]' --arg 'v=f32[2,64,512]' --emit=config-space | FileCheck %s --check-prefix=ATTENTION

// Rows of 65536 are looped in chunks of 4096 by default; the chunk is a
// parameter from 256 to half the row, or null (the whole row).
// SOFTMAX: {"default": {"block_sizes":[1],{{.*}}"reduction_loops":[4096],"streaming":false},
// SOFTMAX: {"default":0,{{.*}}"key":"block_sizes","values":[1,2,4,8,16,32,64]}
// SOFTMAX: "key":"num_warps","values":[1,2,4,8,16,32]}
// SOFTMAX: "key":"streaming","values":[false,true]}
// SOFTMAX: "key":"pid_type","values":["flat","persistent_blocked","persistent_interleaved","persistent_dynamic","xyz"]}
// SOFTMAX-NOT: "key":"early_loads"
// SOFTMAX: {"default":4,"doc":"chunk of the reduction over the dimension of size 65536 (null: the whole row at once)","index":0,"key":"reduction_loops","values":[256,512,1024,2048,4096,8192,16384,32768,null]}

// A bf16 matmul: three block sizes (K's up to the 512 of the reduction),
// the order of the 2-D output loop and its L2 grouping, the tensor-core
// keys; no reduction loops. Its K loop only accumulates, so the default is
// a pipelined, warp-specialized wgmma loop on 128 x 256 tiles, with TMA
// copies, two consumer warpgroups and L2 groups of 8, as ordinary kernel
// code in persistent programs (generic_mainloop), which the tuner may also
// turn off (the hand-written main loop).
// MATMUL: "default": {"block_sizes":[128,256,64],"generic_mainloop":true,"indexing":"tma","l2_groupings":[8],{{.*}}"num_stages":4,"num_warps":12,"pid_type":"persistent_interleaved",{{.*}}"tensor_cores":true,"warp_specialize":true,"wgmma":true}
// MATMUL: "index":0,"key":"block_sizes","values":[1,2,4,8,16,32,64,128,256,512,1024]}
// MATMUL: "index":2,"key":"block_sizes","values":[1,2,4,8,16,32,64,128,256,512]}
// MATMUL: "key":"num_warps","values":[1,2,4,8,12,16,32]}
// MATMUL: "key":"generic_mainloop","values":[false,true]}
// MATMUL: "key":"indexing","values":["pointer","tma"]}
// MATMUL-NOT: "key":"cluster_size"
// MATMUL: "index":0,"key":"loop_orders","values":{{\[\[0,1\],\[1,0\]\]}}}
// MATMUL: "default":3,{{.*}}"index":0,"key":"l2_groupings","values":[1,2,4,8,16,32,64]}
// MATMUL-NOT: reduction_loops","values

// Before sm_90a: mma.sync main loops on 128 x 128 x 32, no Hopper keys
// and no 12 warps.
// MATMUL80: "default": {"block_sizes":[128,128,32],{{.*}}"num_warps":8,
// MATMUL80: "key":"num_warps","values":[1,2,4,8,16,32]}
// MATMUL80: "key":"num_stages"
// MATMUL80-NOT: "key":"wgmma"
// MATMUL80-NOT: "key":"indexing"

// Attention's head dim feeds matrix products whole: it cannot be looped, so
// it is no parameter.
// ATTENTION: "default": {{.*}}"reduction_loops":[null]
// Its V tile's load can move above the score reductions: early_loads is a
// parameter (softmax's one load has nothing to move above).
// ATTENTION: "key":"early_loads","values":[false,true]}
// ATTENTION-NOT: "key":"reduction_loops"

// bf16 attention on sm_90a: its key loop's products read k and v loaded in
// it, so the producer keys are parameters (12 warps among the warp counts),
// and the default is a producer with overlap and pingpong on 128 x 128.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[8,1024,128]' --arg 'k=bf16[8,1024,128]' --arg 'v=bf16[8,1024,128]' --emit=config-space | FileCheck %s --check-prefix=KEYLOOP
// KEYLOOP: "default": {"block_sizes":[1,128,128],{{.*}}"num_warps":12,{{.*}}"pingpong":true,{{.*}}"warp_specialize":true
// KEYLOOP: "key":"num_warps","values":[1,2,4,8,12,16,32]}
// KEYLOOP: "key":"warp_specialize","values":[false,true]}
// KEYLOOP: "key":"pingpong","values":[false,true]}
// On sm_80 none of them.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[8,1024,128]' --arg 'k=bf16[8,1024,128]' --arg 'v=bf16[8,1024,128]' --arch sm_80 --emit=config-space | FileCheck %s --check-prefix=KEYLOOP80
// KEYLOOP80-NOT: "key":"warp_specialize"
// KEYLOOP80-NOT: "key":"pingpong"
