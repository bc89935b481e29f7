func.func @f() {
  scf.if %c {
    %c = arith.constant true
  }
  return
}
