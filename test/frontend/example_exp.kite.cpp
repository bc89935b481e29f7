// RUN: kite compile %kite_src/examples/exp.kite.cpp --emit=ir | kite-opt | FileCheck %s
//
// exp.kite.cpp tiles `tile(x.sizes())` over a tensor whose rank is only
// known at launch. The dialect has no loop of unknown rank yet (see the
// frontend's report: a `kite.tile_for` over all dims of a tensor), so this
// is expected to fail until it does.
// XFAIL: *

// CHECK-LABEL: func.func @exp_kernel(
// CHECK: kite.tile_for
