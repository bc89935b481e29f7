// RUN: kite-opt %s --split-input-file --verify-diagnostics

func.func @size_out_of_range(%x: !kite.tensor<?x?xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for a tensor of rank 2}}
  %n = kite.size %x[2] : !kite.tensor<?x?xf32>
  return
}

// -----

func.func @bad_dtype() {
  // expected-error @+1 {{dtype must be one of f16, bf16, f32, f64, i8, i32, i64, i1, f8E4M3FN, f8E5M2; got 'i16'}}
  %d = kite.dtype_const i16
  return
}

// -----

// expected-error @+1 {{element type must be a kite dtype}}
func.func @bad_element_type(%t: !kite.tile<?xi16>) {
  return
}

// -----

func.func @empty_rank(%m: i64, %d: !kite.dtype) {
  // expected-error @+1 {{has 1 sizes but its result type '!kite.tensor<?x?x?>' has rank 2}}
  %e = kite.empty [%m], %d : !kite.tensor<?x?x?>
  return
}

// -----

func.func @too_many_subscripts(%x: !kite.tensor<?x?xf32>, %i: i64) {
  %c0 = arith.constant 0 : i64
  %b = kite.block_size 0 : i64
  kite.tile_for (%t) = (%c0) to (%i) block (%b) {
    // expected-error @+1 {{has 3 subscripts for a tensor of rank 2}}
    %v = kite.load %x[%t, %i, all] : !kite.tensor<?x?xf32>[!kite.span, i64] -> !kite.tile<?xf32>
  }
  return
}

// -----

func.func @load_rank(%x: !kite.tensor<?x?xf32>, %i: i64) {
  %c0 = arith.constant 0 : i64
  %b = kite.block_size 0 : i64
  kite.tile_for (%t) = (%c0) to (%i) block (%b) {
    // expected-error @+1 {{result should have rank 2, but has type '!kite.tile<?xf32>'}}
    %v = kite.load %x[%t, all] : !kite.tensor<?x?xf32>[!kite.span] -> !kite.tile<?xf32>
  }
  return
}

// -----

func.func @load_dtype(%x: !kite.tensor<?xf32>, %i: i64) {
  %c0 = arith.constant 0 : i64
  %b = kite.block_size 0 : i64
  kite.tile_for (%t) = (%c0) to (%i) block (%b) {
    // expected-error @+1 {{result element type should be 'f32', but is 'bf16'}}
    %v = kite.load %x[%t] : !kite.tensor<?xf32>[!kite.span] -> !kite.tile<?xbf16>
  }
  return
}

// -----

func.func @bad_index_type(%x: !kite.tensor<?xf32>, %f: f32) {
  // expected-error @+1 {{index #0 has type 'f32'; expected !kite.span, an integer, or a tile of integers}}
  %v = kite.load %x[%f] : !kite.tensor<?xf32>[f32] -> !kite.tile<f32>
  return
}

// -----

func.func @store_rank(%x: !kite.tensor<?xf32>, %v: !kite.tile<?x?xf32>, %i: i64) {
  // expected-error @+1 {{stores a value of rank 2 into a subscript of rank 0}}
  kite.store %v, %x[%i] : !kite.tile<?x?xf32>, !kite.tensor<?xf32>[i64]
  return
}

// -----

func.func @reduce_dim(%v: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for a tile of rank 2}}
  %r = kite.reduce sum %v {dim = 2 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @reduce_keepdim(%v: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{result should have rank 2}}
  %r = kite.reduce sum %v {dim = 1 : i64, keepdim} : !kite.tile<?x?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @reduce_local_keepdim(%v: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{a local reduction needs keepdim and a kind other than mean, argmax and argmin}}
  %r = kite.reduce amax %v {dim = 1 : i64, local} : !kite.tile<?x?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @reduce_local_argmax(%v: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{a local reduction needs keepdim and a kind other than mean, argmax and argmin}}
  %r = kite.reduce argmax %v {dim = 1 : i64, keepdim, local} : !kite.tile<?x?xf32> -> !kite.tile<?x1xi64>
  return
}

// -----

func.func @argmax_type(%v: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{result element type should be 'i64', but is 'f32'}}
  %r = kite.reduce argmax %v {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @broadcast(%a: !kite.tile<4x8xf32>, %b: !kite.tile<4x16xf32>) {
  // expected-error @+1 {{operand shapes do not broadcast}}
  %r = kite.binary add %a, %b : !kite.tile<4x8xf32>, !kite.tile<4x16xf32> -> !kite.tile<4x8xf32>
  return
}

// -----

func.func @scalar_binary(%a: f32, %b: f32) {
  // expected-error @+1 {{needs at least one tile operand}}
  %r = kite.binary add %a, %b : f32, f32 -> !kite.tile<f32>
  return
}

// -----

func.func @bitwise_float(%a: !kite.tile<?xf32>) {
  // expected-error @+1 {{'and' needs boolean or integer operands}}
  %r = kite.binary and %a, %a : !kite.tile<?xf32>, !kite.tile<?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @compare_type(%a: !kite.tile<?xf32>) {
  // expected-error @+1 {{result element type should be 'i1'}}
  %r = kite.compare lt %a, %a : !kite.tile<?xf32>, !kite.tile<?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @where_cond(%a: !kite.tile<?xf32>) {
  // expected-error @+1 {{condition must be boolean}}
  %r = kite.where %a, %a, %a : !kite.tile<?xf32>, !kite.tile<?xf32>, !kite.tile<?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @dot_rank(%a: !kite.tile<?x?x?xf32>) {
  // expected-error @+1 {{operands must have rank 2}}
  %r = kite.dot %a, %a : !kite.tile<?x?x?xf32>, !kite.tile<?x?x?xf32> -> !kite.tile<?x?xf32>
  return
}

// -----

func.func @addmm_acc(%acc: !kite.tile<?x?xf32>, %a: !kite.tile<?x?xbf16>) {
  // expected-error @+1 {{result element type should be 'f32', but is 'bf16'}}
  %r = kite.addmm %acc, %a, %a : !kite.tile<?x?xf32>, !kite.tile<?x?xbf16>, !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>
  return
}

// -----

func.func @squeeze_size(%a: !kite.tile<?x4xf32>) {
  // expected-error @+1 {{squeezes dimension 1 of size 4 (must be 1)}}
  %r = kite.squeeze %a {dim = 1 : i64} : !kite.tile<?x4xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @permute(%a: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{dims must be a permutation of 0..1}}
  %r = kite.permute %a {dims = array<i64: 0, 0>} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
  return
}

// -----

func.func @full_rank(%t: i64, %z: f32, %d: !kite.dtype) {
  // expected-error @+1 {{result should have rank 1}}
  %r = kite.full [%t], %z, %d : [i64], f32 -> !kite.tile<?x?xf32>
  return
}

// -----

func.func @top_level_carry(%n: i64, %init: !kite.tile<?xf32>) {
  %c0 = arith.constant 0 : i64
  %b = kite.block_size 0 : i64
  // expected-error @+1 {{is a top-level loop (mapped onto the launch grid) and cannot carry values}}
  %r = kite.tile_for (%t) = (%c0) to (%n) block (%b) iter_args(%a = %init) -> (!kite.tile<?xf32>) {
    kite.yield %a : !kite.tile<?xf32>
  }
  return
}

// -----

func.func @loop_dims(%n: i64) {
  %c0 = arith.constant 0 : i64
  %b = kite.block_size 0 : i64
  // expected-error @+1 {{has 2 dimensions but 1 block sizes}}
  kite.tile_for (%t, %u) = (%c0, %c0) to (%n, %n) block (%b) {
  }
  return
}

// -----

func.func @yield_type(%n: i64, %init: !kite.tile<?xf32>, %other: !kite.tile<?xbf16>) {
  %c0 = arith.constant 0 : i64
  kite.grid_for (%i) = (%c0) to (%n) {
    %b = kite.block_size 0 : i64
    %r = kite.tile_for (%t) = (%c0) to (%n) block (%b) iter_args(%a = %init) -> (!kite.tile<?xf32>) {
      // expected-error @+1 {{value #0 has type '!kite.tile<?xbf16>', loop carries '!kite.tile<?xf32>'}}
      kite.yield %other : !kite.tile<?xbf16>
    }
  }
  return
}

// -----

func.func @block_size_bounds() {
  // expected-error @+1 {{min 64 exceeds max 16}}
  %b = kite.block_size 0 {min = 64, max = 16} : i64
  return
}

// -----

func.func @subscript_layout(%x: !kite.tensor<?xf32>, %i: i64) {
  // expected-error @+1 {{subscript layout must name index operands once each, in order}}
  %v = "kite.load"(%x, %i) {layout = array<i32: 1>, operandSegmentSizes = array<i32: 1, 1, 0>} : (!kite.tensor<?xf32>, i64) -> !kite.tile<f32>
  return
}

// -----

// A negative id once passed the verifier (read unsigned) and then indexed
// the config's block_sizes out of bounds.
func.func @block_size_negative_id() {
  // expected-error @+1 {{id must be in [0, 1023], got -1}}
  %b = kite.block_size -1 : i64
  return
}

// -----

func.func @block_size_huge_id() {
  // expected-error @+1 {{id must be in [0, 1023], got 100000000}}
  %b = kite.block_size 100000000 : i64
  return
}

// -----

func.func @block_size_id_above_bound() {
  // expected-error @+1 {{id must be in [0, 1023], got 1024}}
  %b = kite.block_size 1024 : i64
  return
}

// -----

// A loop bound defined in the loop's own body: the parser once resolved it
// as a forward reference that the body's definition freed (a segfault).
func.func @tile_for_bound_defined_in_body() {
  %c0 = arith.constant 0 : i64
  %b = kite.block_size 0 : i64
  // expected-error @+1 {{use of undeclared SSA value name}}
  kite.tile_for (%t) = (%c0) to (%u) block (%b) {
    %u = arith.constant 4 : i64
  }
  return
}

// -----

func.func @tile_for_block_defined_in_body(%n: i64) {
  %c0 = arith.constant 0 : i64
  // expected-error @+1 {{use of undeclared SSA value name}}
  kite.tile_for (%t) = (%c0) to (%n) block (%b) {
    %b = kite.block_size 0 : i64
  }
  return
}

// -----

func.func @grid_for_bound_defined_in_body() {
  %c0 = arith.constant 0 : i64
  // expected-error @+1 {{use of undeclared SSA value name}}
  kite.grid_for (%i) = (%c0) to (%u) {
    %u = arith.constant 4 : i64
  }
  return
}

// -----

func.func @grid_for_init_defined_in_body(%n: i64) {
  %c0 = arith.constant 0 : i64
  // expected-error @+1 {{use of undeclared SSA value name}}
  %r = kite.grid_for (%i) = (%c0) to (%n) iter_args(%a = %v) -> (i64) {
    %v = arith.constant 1 : i64
    kite.yield %v : i64
  }
  return
}

// -----

// expected-error @+1 {{#kite.blocked dim 1: shape, vec and threads must be powers of two (got 48, 4, 8)}}
func.func @layout_not_pow2(%x: !kite.tile<4x48xf32, #kite.blocked<shape = [4, 48], vec = [1, 4], threads = [4, 8], dims = [0, 1]>>) {
  return
}

// -----

// expected-error @+1 {{#kite.blocked dim 1: 64 threads with runs of 4 exceed its size 128}}
func.func @layout_too_many_threads(%x: !kite.tile<4x128xf32, #kite.blocked<shape = [4, 128], vec = [1, 4], threads = [2, 64], dims = [0, 1]>>) {
  return
}

// -----

// expected-error @+1 {{#kite.blocked dims must be distinct context dims in [0, 2) or -1, got 1}}
func.func @layout_dims_repeat(%x: !kite.tile<4x4xf32, #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [1, 1]>>) {
  return
}

// -----

// expected-error @+1 {{does not fit the tile's shape}}
func.func @layout_wrong_shape(%x: !kite.tile<4x200xf32, #kite.blocked<shape = [4, 128], vec = [1, 4], threads = [4, 32], dims = [0, 1]>>) {
  return
}

// -----

func.func @convert_changes_shape(%x: !kite.tile<4x256xf32, #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>>) {
  // expected-error @+1 {{changes only the layout}}
  %y = kite.convert_layout %x : !kite.tile<4x256xf32, #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>> -> !kite.tile<4x128xf32, #kite.blocked<shape = [4, 128], vec = [1, 4], threads = [4, 32], dims = [0, 1]>>
  return
}

// -----

func.func @scan_dim(%v: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{dimension -3 is out of range for a tile of rank 2}}
  %r = kite.scan sum %v {dim = -3 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
  return
}

// -----

func.func @scan_rank(%v: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{result should have rank 2}}
  %r = kite.scan max %v {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @random_float_offsets(%seed: i64, %v: !kite.tile<?xf32>) {
  // expected-error @+1 {{offsets must be integers}}
  %r = kite.random uniform %seed, %v : i64, !kite.tile<?xf32> -> !kite.tile<?xf32>
  return
}

// -----

func.func @random_bits_dtype(%seed: i64, %v: !kite.tile<?xi64>) {
  // expected-error @+1 {{result element type}}
  %r = kite.random bits %seed, %v : i64, !kite.tile<?xi64> -> !kite.tile<?xf32>
  return
}

// -----

func.func @scan_sum_indices(%v: !kite.tile<?x?xf32>) {
  // expected-error @+1 {{only max and min scans give indices}}
  %r, %i = kite.scan sum %v {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>, !kite.tile<?x?xi64>
  return
}

// -----

func.func @bmm_out_dtype(%a: !kite.tile<?x?x?xf32>) {
  // expected-error @+1 {{out_dtype 'bf16' is not supported for 'f32' and 'f32' inputs; it can be f32 for 16- or 8-bit float inputs, or the inputs' dtype}}
  %c = kite.bmm %a, %a {out_dtype = bf16} : !kite.tile<?x?x?xf32>, !kite.tile<?x?x?xf32> -> !kite.tile<?x?x?xbf16>
  return
}

// -----

func.func @bmm_out_dtype_result(%a: !kite.tile<?x?x?xbf16>) {
  // expected-error @+1 {{result element type}}
  %c = kite.bmm %a, %a {out_dtype = f32} : !kite.tile<?x?x?xbf16>, !kite.tile<?x?x?xbf16> -> !kite.tile<?x?x?xbf16>
  return
}
