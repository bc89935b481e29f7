// `kite autotune` checks its command line before it needs a GPU, and says
// clearly when there is none (CI has none; the GPU run tunes for real).
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --arg 'x=bf16[64,1000]' --effort fast 2>&1 | FileCheck %s --check-prefix=EFFORT
// RUN: not kite autotune %kite_src/examples/cross_entropy.kite.cpp --arg 'logits=bf16[64,1000]' --arg 'target=i64[64]' --fill target=0-1000 2>&1 | FileCheck %s --check-prefix=FILL
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64' 2>&1 | FileCheck %s --check-prefix=ARG
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --arg 'x=bf16[64,1000]' 2>&1 | FileCheck %s --check-prefix=WHICH
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' 2>&1 | FileCheck %s --check-prefix=NOGPU
// RUN: kite autotune --help | FileCheck %s --check-prefix=HELP
// Several shapes: the parameters' --arg repeated per shape; with dynamic
// shapes, a shape of a class already given is tuned once.
// RUN: not kite autotune %kite_src/examples/add.kite.cpp --arg 'x=f32[64,64]' --arg 'y=f32[64,64]' --arg 'x=f32[64,64]' 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not kite autotune %kite_src/examples/add.kite.cpp --arg 'x=f32[64,64]' --arg 'y=f32[64,64]' --arg 'x=f32[32,64]' --arg 'y=f32[32' 2>&1 | FileCheck %s --check-prefix=SHAPE2
// RUN: not kite autotune %kite_src/examples/add.kite.cpp --dynamic-shapes --arg 'x=f32[64,4096]' --arg 'y=f32[64,4096]' --arg 'x=f32[64,1024]' --arg 'y=f32[64,1024]' --arg 'x=f32[64,1000]' --arg 'y=f32[64,1000]' 2>&1 | FileCheck %s --check-prefix=CLASSES

// EFFORT: kite autotune: error: --effort must be none, quick or full, not 'fast'
// FILL: kite autotune: error: --fill target=0-1000: expected NAME=LO..HI (integers, LO < HI, HI exclusive)
// ARG: kite autotune: error: --arg x=bf16[64:
// WHICH: kite autotune: error: {{.*}}softmax.kite.cpp has 2 kernels; name one with --kernel
// NOGPU: kite autotune: error: no CUDA GPU: {{.*}}(tuning times kernels on a GPU; kite inspect works without one)
// RUN: not kite autotune %kite_src/examples/add.kite.cpp --dynamic-shapes --arg 'x=f32[64,1..100]' --arg 'y=f32[64,1..100]' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not kite autotune %kite_src/examples/add.kite.cpp --dynamic-shapes --arg 'x=f32[1..100,64]' --arg 'y=f32[1..100,64]' 2>&1 | FileCheck %s --check-prefix=RANGEROWS
// RUN: not kite autotune %kite_src/examples/softmax.kite.cpp --kernel softmax --dynamic-shapes --arg 'x=bf16[4,100..300]' 2>&1 | FileCheck %s --check-prefix=RANGEROW
// RUN: not kite autotune %kite_src/examples/add.kite.cpp --arg 'x=f32[1..100,64]' --arg 'y=f32[1..100,64]' 2>&1 | FileCheck %s --check-prefix=RANGESTATIC
// RUN: not kite autotune %kite_src/examples/add.kite.cpp --dynamic-shapes --arg 'x=f32[9..3,64]' --arg 'y=f32[9..3,64]' 2>&1 | FileCheck %s --check-prefix=BADRANGE
// A range is one launch per class it holds (1, then per bucket a held
// row's length has, the largest size of each divisor class, longest
// first), the same range in two arguments one size; launches of one class
// are tuned once. Columns: a class per divisor.
// RANGE: kite autotune: 6 shapes, 6 to tune
// RANGE-NEXT: shape 1: x=f32[64,1]:align16 y=f32[64,1]:align16 (class x=f32[?*,1]:align16:idx32 y=f32[?*,1]:align16:idx32)
// RANGE-NEXT: shape 2: x=f32[64,100]:align16 y=f32[64,100]:align16 (class x=f32[?*,?4]:align16:idx32 y=f32[?*,?4]:align16:idx32)
// RANGE-NEXT: shape 3: x=f32[64,99]:align16 y=f32[64,99]:align16 (class x=f32[?*,?]:align16:idx32 y=f32[?*,?]:align16:idx32)
// RANGE-NEXT: shape 4: x=f32[64,98]:align16 y=f32[64,98]:align16 (class x=f32[?*,?2]:align16:idx32 y=f32[?*,?2]:align16:idx32)
// RANGE-NEXT: shape 5: x=f32[64,96]:align16 y=f32[64,96]:align16 (class x=f32[?*,?16]:align16:idx32 y=f32[?*,?16]:align16:idx32)
// RANGE-NEXT: shape 6: x=f32[64,88]:align16 y=f32[64,88]:align16 (class x=f32[?*,?8]:align16:idx32 y=f32[?*,?8]:align16:idx32)
// Rows, whose class cannot change add's code: 1, and any other size.
// RANGEROWS: kite autotune: 6 shapes, 2 to tune
// RANGEROWS-NEXT: shape 1: x=f32[1,64]:align16 y=f32[1,64]:align16 (class x=f32[1,?16]:align16:idx32 y=f32[1,?16]:align16:idx32)
// RANGEROWS-NEXT: shape 2: x=f32[100,64]:align16 y=f32[100,64]:align16 (class x=f32[?*,?16]:align16:idx32 y=f32[?*,?16]:align16:idx32)
// A row softmax holds whole: per bucket, a multiple of 8 and the rest.
// RANGEROW: kite autotune: 15 shapes, 6 to tune
// RANGEROW-NEXT: shape 1: x=bf16[4,300]:align16 (class x=bf16[?*,?<=512]:align16:idx32)
// RANGEROW-NEXT: shape 4: x=bf16[4,296]:align16 (class x=bf16[?*,?8<=512]:align16:idx32)
// RANGEROW-NEXT: shape 6: x=bf16[4,256]:align16 (class x=bf16[?*,?8<=256]:align16:idx32)
// RANGEROW-NEXT: shape 7: x=bf16[4,255]:align16 (class x=bf16[?*,?<=256]:align16:idx32)
// RANGEROW-NEXT: shape 11: x=bf16[4,128]:align16 (class x=bf16[?*,?8<=128]:align16:idx32)
// RANGEROW-NEXT: shape 12: x=bf16[4,127]:align16 (class x=bf16[?*,?<=128]:align16:idx32)
// RANGE: kite autotune: error: no CUDA GPU
// RANGESTATIC: kite autotune: error: a range of sizes (x=f32[1..100,64] y=f32[1..100,64]) tunes one plan per shape class: add --dynamic-shapes
// BADRANGE: kite autotune: error: --arg x=f32[9..3,64]: '9..3' is not a size range (LO..HI, integers, 1 <= LO <= HI, both included)
// COUNT: kite autotune: error: 3 --arg given for kernel 'add' of 2 parameters: give one per parameter, in order, and to tune several shapes repeat the set
// SHAPE2: kite autotune: error: shape 2: --arg y=f32[32:
// CLASSES: kite autotune: shape 2 (x=f32[64,1024]:align16 y=f32[64,1024]:align16) is in the class of shape 1 (x=f32[?*,?16]:align16:idx32 y=f32[?*,?16]:align16:idx32): tuned once
// CLASSES: kite autotune: 3 shapes, 2 to tune
// CLASSES: kite autotune: error: no CUDA GPU
// HELP: --effort
// HELP: --budget
// HELP: --fill
// HELP-NOT: inject-fault
