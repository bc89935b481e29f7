// Top-level tiles whose nested loops run longer start first: where the
// nested loops' bounds are known at compile time and the last tile of a dim
// runs more of their tiles than its first, that dim's tiles are numbered
// from the end, so that the shortest fill the last wave.
//
// Causal attention: query tile i runs i + 1 key tiles; the query tiles run
// in reverse.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,4096,128]' --arg 'k=bf16[2,4096,128]' --arg 'v=bf16[2,4096,128]' --config '{"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true}' --emit=cuda | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: const i64 [[I:i[0-9]+]] = kite_rest % 64;
// CAUSAL: const i64 [[R:i[0-9]+]] = 64 - 1 - [[I]];
// CAUSAL: const i64 {{b[0-9]+}} = 0 + [[R]] * 64;
//
// Attention without a mask: every query tile runs all key tiles, in order.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,4096,128]' --arg 'k=bf16[2,4096,128]' --arg 'v=bf16[2,4096,128]' --config '{"block_sizes":[1,64,64],"num_warps":4,"tensor_cores":true,"wgmma":true}' --emit=cuda | FileCheck %s --check-prefix=FULL
// FULL-NOT: - 1 - i
//
// A loop from the row tile's begin to the end runs fewer tiles for later
// rows: in order. A causal kernel with its sizes taken at launch: unknown,
// in order.
// RUN: kite inspect %S/../correctness/kernels/masked_loops.kite.cpp --kernel upper_sum --arg 'x=bf16[1024,1024]' --config '{"block_sizes":[16,64]}' --emit=cuda | FileCheck %s --check-prefix=SUFFIX
// SUFFIX-NOT: - 1 - i
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,4096,128]' --arg 'k=bf16[2,4096,128]' --arg 'v=bf16[2,4096,128]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=DYN
// DYN-NOT: - 1 - i
