// RUN: kite compile %s --kernel second | FileCheck %s --check-prefix=ONE
// RUN: kite compile %s --emit=ir -o %t.mlir && FileCheck %s --check-prefix=ALL < %t.mlir
// RUN: kite compile %s -I %S/Inputs -DKITE_TEST_SCALE=3 | FileCheck %s --check-prefix=INC
// RUN: kite compile --help | FileCheck %s --check-prefix=HELP
// RUN: not kite compile %s --emit=ptx 2>&1 | FileCheck %s --check-prefix=USAGE
// RUN: not kite compile 2>&1 | FileCheck %s --check-prefix=MISSING

// The command line: --kernel, -o, -I/-D, --help, usage errors (exit 2).

#include <kite/kite.hpp>
#if __has_include("scale.h")
#include "scale.h"
#else
inline int kite_test_scale() { return 2; }
#endif
using namespace kite;

// ONE-NOT: func.func @first
// ONE: func.func @second(
// ONE-NOT: func.func @first

// ALL: func.func @first(
// ALL: func.func @second(

// INC-LABEL: func.func @first(
// INC: arith.constant 3 : i32

// HELP: Usage: kite compile [OPTIONS] file
// HELP: --kernel
// HELP: --emit
// HELP: --debug-locations

// USAGE: --emit: ptx not in {ir,registration}
// MISSING: file is required

KITE_KERNEL void first(Tensor x) {
  for (auto t : tile(x.size(0)))
    x[t] = x[t] * kite_test_scale();
}

KITE_KERNEL void second(Tensor x) {
  for (auto t : tile(x.size(0)))
    x[t] = 0.0f;
}
