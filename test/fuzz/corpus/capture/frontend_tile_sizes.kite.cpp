// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// tile(t.sizes()) tiles every dimension of a tensor: one loop dimension per
// size when the rank is known (here from the allocation).

#include <kite/kite.hpp>
using namespace kite;

// CHECK-LABEL: func.func @known_rank(
// CHECK: %[[OUT:.*]] = kite.empty [%{{.*}}, %{{.*}}], %{{.*}} : !kite.tensor<?x?xf32>
// CHECK-DAG: %[[S0:.*]] = kite.size %[[OUT]][0] : !kite.tensor<?x?xf32>
// CHECK-DAG: %[[S1:.*]] = kite.size %[[OUT]][1] : !kite.tensor<?x?xf32>
// CHECK: kite.tile_for (%[[A:.*]], %[[B:.*]]) = ({{.*}}) to (%[[S0]], %[[S1]])
// CHECK:   kite.store %{{.*}}, %[[OUT]][%[[A]], %[[B]]]
KITE_KERNEL Tensor known_rank(Tensor x) {
  auto out = empty({x.size(0), x.size(1)}, f32);
  for (auto t : tile(out.sizes()))
    out[t] = x[t];
  return out;
}
