// tile(x.sizes()) of a parameter of unknown rank: the capture holds one
// form per rank (a declaration names those that captured), and a launch
// compiles its rank's form under the kernel's name.
// RUN: kite compile %kite_src/examples/any_rank.kite.cpp --emit=ir | FileCheck %s --check-prefix=FORMS
// FORMS: func.func private @add_any(!kite.tensor<*x?> {kite.name = "x"}, !kite.tensor<*x?> {kite.name = "y"}) -> !kite.tensor<*x?> attributes {kite.kernel, kite.rank_forms = {param = 0 : i64, ranks = array<i64: 1, 2, 3, 4, 5, 6>}}
// FORMS: func.func @add_any.rank1(%arg0: !kite.tensor<?x?> {kite.name = "x"}
// FORMS: func.func @add_any.rank6(%arg0: !kite.tensor<?x?x?x?x?x?x?> {kite.name = "x"}

// RUN: kite inspect %kite_src/examples/any_rank.kite.cpp --arg 'x=f32[3,5,7]' --arg 'y=f32[3,5,7]' --emit=lowered | FileCheck %s
// CHECK: func.func @add_any(
// CHECK-NOT: func.func
// CHECK: kite.tile_for (%{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}) =

// A rank with no form is an error that lists the ranks there are.
// RUN: not kite inspect %kite_src/examples/any_rank.kite.cpp --arg 'x=f32[1,1,1,1,1,1,2]' --arg 'y=f32[1,1,1,1,1,1,2]' 2>&1 | FileCheck %s --check-prefix=RANK7
// RANK7: error: kernel 'add_any' tiles the sizes of 'x', and was captured for ranks 1 2 3 4 5 6; x=f32[1,1,1,1,1,1,2] has rank 7
