// RUN: kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config | FileCheck %s --check-prefix=DEFAULT
// RUN: kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"block_sizes\": [8], \"num_warps\": 2}'" | FileCheck %s --check-prefix=GIVEN
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"block_sizes\": [6]}'" 2>&1 | FileCheck %s --check-prefix=POW2
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"block_sizes\": [8, 8]}'" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"blok_sizes\": [8]}'" 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"num_warps\": 3}'" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"block_sizes\": [8], \"l2_hints\": \"reuse\"}'" | FileCheck %s --check-prefix=HINTS
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"l2_hints\": \"evict_last\"}'" 2>&1 | FileCheck %s --check-prefix=HINTVALUE
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"l2_hints\": true}'" 2>&1 | FileCheck %s --check-prefix=HINTTYPE
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"early_loads\": 1}'" 2>&1 | FileCheck %s --check-prefix=EARLYTYPE
// RUN: kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"block_sizes\": [8], \"num_warps\": 8, \"min_programs_per_sm\": 4}'" | FileCheck %s --check-prefix=MINPROGRAMS
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"num_warps\": 16, \"min_programs_per_sm\": 5}'" 2>&1 | FileCheck %s --check-prefix=MINPROGRAMSFIT
// RUN: kite-opt %s --kite-lower="args='x=f32[1000,64]' config='{\"block_sizes\": [8], \"num_warps\": 8, \"min_programs_per_sm\": 4}'" --kite-print-cuda | FileCheck %s --check-prefix=BOUNDS
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"split_k\": 0}'" 2>&1 | FileCheck %s --check-prefix=SPLITK
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"cluster_size\": 4}'" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"cluster_size\": 2}'" 2>&1 | FileCheck %s --check-prefix=CLUSTERWS
// RUN: not kite-opt %s --kite-specialize="args='x=f32[1000,64]'" --kite-apply-config="config='{\"cluster_size\": 2, \"wgmma\": true, \"warp_specialize\": true, \"pid_type\": \"persistent_dynamic\"}'" 2>&1 | FileCheck %s --check-prefix=CLUSTERPID

// The default gives a row tile of about 4096 elements: 64 rows of 64.
// DEFAULT: kite.config = "{\22block_sizes\22:[64]
// DEFAULT: kite.tile_for {{.*}} block (%c64_i64)
// DEFAULT: kite.load {{.*}} -> !kite.tile<64x64xf32>
// GIVEN: \22num_warps\22:2
// GIVEN: kite.load {{.*}} -> !kite.tile<8x64xf32>
// POW2: error: config does not fit kernel 'rows': block_sizes[0] = 6 must be a power of two
// COUNT: error: config does not fit kernel 'rows': block_sizes has 2 entries, but the kernel has 1 tunable block sizes
// KEY: error: bad config: unknown config key 'blok_sizes'
// HINTS: \22l2_hints\22:\22reuse\22
// HINTVALUE: error: config does not fit kernel 'rows': l2_hints = 'evict_last' must be none, reuse or keep_loads
// HINTTYPE: error: bad config: {{.*}}l2_hints
// EARLYTYPE: error: bad config: config key 'early_loads' has the wrong type: 1
// MINPROGRAMS: \22min_programs_per_sm\22:4
// SPLITK: error: config does not fit kernel 'rows': split_k = 0 must be 1 to 16
// CLUSTER: error: config does not fit kernel 'rows': cluster_size = 4 must be 1 or 2
// CLUSTERWS: error: config does not fit kernel 'rows': cluster_size = 2 needs warp_specialize and wgmma
// CLUSTERPID: error: config does not fit kernel 'rows': cluster_size = 2 needs pid_type flat or persistent_interleaved {{.*}}not 'persistent_dynamic'
// MINPROGRAMSFIT: error: config does not fit kernel 'rows': min_programs_per_sm = 5 must be at least 1, and at most 2048 threads an SM (4 programs of 16 warps)
// BOUNDS: __launch_bounds__(256, 4)
// WARPS: error: config does not fit kernel 'rows': num_warps = 3 must be a power of two from 1 to 32
func.func @rows(%x: !kite.tensor<*x?> {kite.name = "x"}) attributes {kite.kernel} {
  %n = kite.size %x[0] : !kite.tensor<*x?>
  %c0 = arith.constant 0 : i64
  %bs = kite.block_size 0 extent %n : i64
  kite.tile_for (%t) = (%c0) to (%n) block (%bs) {
    %r = kite.load %x[%t, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %e = kite.unary exp %r : !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %e, %x[%t, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
  }
  return
}
