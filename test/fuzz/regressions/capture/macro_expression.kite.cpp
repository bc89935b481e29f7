// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
// A few lines of macros expand to a 65,536-term expression: the limit on
// one statement's operators counts the tokens the parser sees.
#include <kite/kite.hpp>
using namespace kite;

#define T4(x) x + x + x + x
#define T16(x) T4(T4(x))
#define T256(x) T16(T16(x))
#define T65536(x) T256(T256(x))

KITE_KERNEL Tensor expanded(Tensor x) {
  auto out = empty_like(x);
  for (auto t : tile(x.size(0))) {
    auto v = x[t];
    // CHECK: [[@LINE+1]]:14: fatal error: statement too long for kite's frontend: more than 50000 operators in one statement
    out[t] = T65536(v);
  }
  return out;
}
