func.func @f() attributes {kite.kernel} {
  %b = kite.block_size 100000000 : i64
  return
}
