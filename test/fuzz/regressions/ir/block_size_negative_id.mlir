func.func @f() attributes {kite.kernel} {
  %b = kite.block_size -1 : i64
  return
}
