// Long and deeply nested code. Capture runs on a thread with a large stack,
// so 20,000-term expressions and 20,000 nested unary minuses compile (they
// once overflowed the stack in Clang's parser and CFG builder); past what
// that stack holds, the parse stops with a located error.
//
// RUN: python3 %S/Inputs/big_kernel.py sum 20000 > %t.sum.kite.cpp
// RUN: kite compile %t.sum.kite.cpp --emit=ir | FileCheck %s --check-prefix=OK
// RUN: python3 %S/Inputs/big_kernel.py neg 20000 > %t.neg.kite.cpp
// RUN: kite compile %t.neg.kite.cpp --emit=ir | FileCheck %s --check-prefix=OK
// OK: func.func @big(
// OK: kite.store
//
// More than 50,000 operators in one statement.
// RUN: python3 %S/Inputs/big_kernel.py sum 60000 > %t.long.kite.cpp
// RUN: not kite compile %t.long.kite.cpp --emit=ir 2>&1 | FileCheck %s --check-prefix=LONG -DFILE=%t.long.kite.cpp
// LONG: [[FILE]]:8:200008: fatal error: statement too long for kite's frontend: more than 50000 operators in one statement; split it into several statements
// LONG: 1 error generated.
//
// Recursion in the parser without operators: the stack runs low (where
// depends on the build's frame sizes).
// RUN: python3 %S/Inputs/big_kernel.py sizeof 150000 > %t.deep.kite.cpp
// RUN: not kite compile %t.deep.kite.cpp --emit=ir 2>&1 | FileCheck %s --check-prefix=DEEP -DFILE=%t.deep.kite.cpp
// DEEP: [[FILE]]:8:{{[0-9]+}}: fatal error: code nested too deeply for kite's frontend (the parse used {{[0-9]+}} MiB of stack); split the expression or statement into smaller ones
// DEEP: 1 error generated.
//
// Nested statements become nested regions in the IR, which MLIR's parser,
// verifier and printer recurse through on the runtime's stack: at most 256.
// RUN: python3 %S/Inputs/big_kernel.py elif 300 > %t.elif.kite.cpp
// RUN: not kite compile %t.elif.kite.cpp --emit=ir 2>&1 | FileCheck %s --check-prefix=NEST -DFILE=%t.elif.kite.cpp
// NEST: [[FILE]]:263:10: error: statements nested too deeply: kite kernels nest if, for and tile loops (each 'else if' counts) at most 256 levels deep
