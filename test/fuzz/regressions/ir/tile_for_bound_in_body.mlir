func.func @fwd(%n: i64) {
  %c0 = arith.constant 0 : i64
  %b = kite.block_size 0 : i64
  kite.tile_for (%t) = (%c0) to (%u) block (%b) {
    %u = arith.constant 4 : i64
  }
  return
}
