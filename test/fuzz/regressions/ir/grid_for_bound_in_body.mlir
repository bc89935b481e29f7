func.func @fwd(%n: i64) {
  %c0 = arith.constant 0 : i64
  kite.grid_for (%t) = (%c0) to (%u) {
    %u = arith.constant 4 : i64
  }
  return
}
