// `kite autotune` checks its command line before it needs a GPU, and says
// clearly when there is none (CI has none; the GPU run tunes for real).
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --arg 'x=bf16[64,1000]' --effort fast 2>&1 | FileCheck %s --check-prefix=EFFORT
// RUN: not kite autotune %kite_src/examples/cross_entropy.kite.cpp --arg 'logits=bf16[64,1000]' --arg 'target=i64[64]' --fill target=0-1000 2>&1 | FileCheck %s --check-prefix=FILL
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64' 2>&1 | FileCheck %s --check-prefix=ARG
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --arg 'x=bf16[64,1000]' 2>&1 | FileCheck %s --check-prefix=WHICH
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' 2>&1 | FileCheck %s --check-prefix=NOGPU
// RUN: kite autotune --help | FileCheck %s --check-prefix=HELP

// EFFORT: kite autotune: error: --effort must be none, quick or full, not 'fast'
// FILL: kite autotune: error: --fill target=0-1000: expected NAME=LO..HI (integers, LO < HI, HI exclusive)
// ARG: kite autotune: error: --arg x=bf16[64:
// WHICH: kite autotune: error: {{.*}}softmax.kite.cpp has 2 kernels; name one with --kernel
// NOGPU: kite autotune: error: no CUDA GPU: {{.*}}(tuning times kernels on a GPU; kite inspect works without one)
// HELP: --effort
// HELP: --budget
// HELP: --fill
// HELP-NOT: inject-fault
