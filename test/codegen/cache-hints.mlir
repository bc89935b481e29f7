// l2_hints in CUDA: kite-cache-hints' marks become load_vec/load_one cache
// policies, and those an L2 cache-hint policy in the PTX.
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --arg 'x=bf16[64,8192]' --arg 'weight=bf16[8192]' --arg eps=f64 --config '{"block_sizes":[1],"num_warps":8,"reduction_loops":[4096],"l2_hints":"reuse"}' --emit=cuda | FileCheck %s
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --arg 'x=bf16[64,8192]' --arg 'weight=bf16[8192]' --arg eps=f64 --config '{"block_sizes":[1],"num_warps":8,"reduction_loops":[4096],"l2_hints":"reuse"}' --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: kite inspect %kite_src/examples/cross_entropy.kite.cpp --arg 'logits=bf16[64,1000]' --arg 'target=i64[64]' --config '{"block_sizes":[1],"num_warps":4,"reduction_loops":[256],"l2_hints":"keep_loads"}' --emit=cuda | FileCheck %s --check-prefix=ONE
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --arg 'x=bf16[64,8192]' --arg 'weight=bf16[8192]' --arg eps=f64 --config '{"block_sizes":[1],"num_warps":8,"reduction_loops":[4096],"streaming":true}' --emit=cuda | FileCheck %s --check-prefix=STREAM

// The first pass keeps the row in L2 for the second; the second reads it
// for the last time; the weight stays.
// CHECK: load_vec<8, CacheEvictLast>(&{{v[0-9]+}}[{{.*}}], &a0[
// CHECK: load_vec<8, CacheEvictFirst>(&{{v[0-9]+}}[{{.*}}], &a0[
// CHECK: load_vec<8, CacheEvictLast>(&{{v[0-9]+}}[{{.*}}], &a1[

// PTX: createpolicy.fractional.L2::evict_last
// PTX: ld.global.L2::cache_hint.v4.u32
// PTX: createpolicy.fractional.L2::evict_first

// Single elements (the target index, the gathered logit) through load_one.
// ONE: load_one<CacheEvictLast>(&a1[
// ONE: load_one<CacheEvictLast>(&a0[

// streaming alone: the .cs loads.
// STREAM: load_vec<8, CacheStream>(
// STREAM-NOT: CacheEvict
