func.func @fwd(%n: index) {
  %c0 = arith.constant 0 : index
  scf.for %i = %c0 to %u step %c0 {
    %u = arith.constant 4 : index
  }
  return
}
