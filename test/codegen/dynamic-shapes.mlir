// Dynamic shapes (Options::static_shapes = false, `kite inspect
// --dynamic-shapes`): the outermost size of a contiguous tensor becomes a
// kernel parameter where the kernel only loops over it, indexes it with tiles
// or sizes outputs by it; the grid is computed at launch.
// RUN: kite inspect %kite_src/examples/add.kite.cpp --arg 'x=bf16[?16,4096]' --arg 'y=bf16[?16,4096]' --emit=cuda | FileCheck %s --check-prefix=ADD
// ADD: launch: max(ceildiv(x.size(0), 64), 0) * 64 programs of 128 threads, 0 bytes of dynamic shared memory; checks at launch that x.size(0) <= y.size(0)
// ADD: kite_add(bf16* __restrict__ a0, const i64 a0_n0, bf16* __restrict__ a1, const i64 a1_n0, bf16* __restrict__ o0)
// ADD: const i64 kite_programs{{[0-9]+}} = max((i64)0, ((i64)(a0_n0) - 0 + 64 - 1) / 64) * 64;
// ADD: if (kite_pid >= 0 && kite_pid < 0 + kite_programs
// ADD: min((i64)64, (i64)(a0_n0) - b
// The loop runs over x's rows, so x and the output need no check of their
// own, and y's rows are checked once at launch (as a static plan's compile
// checks them): no access is masked against a size.
// ADD-NOT: (unsigned long long)a
// ADD: load_vec<8>(&v{{[0-9]+}}[k{{[0-9]+}} * 8], &a0[(i64)(b
// ADD-NOT: (unsigned long long)a
// ADD: load_vec<8>(&v{{[0-9]+}}[k{{[0-9]+}} * 8], &a1[(i64)(b
// ADD-NOT: (unsigned long long)a

// The front door's analysis: which sizes a launch with dynamic shapes takes
// at launch. Rows of a norm: yes; its weight, spanned by `all`: no.
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --arg 'x=bf16[1000,4096]' --arg 'weight=bf16[4096]' --arg eps=f64 --dynamic-shapes --emit=roofline | FileCheck %s --check-prefix=NORM
// NORM: kernel{{ +}}rmsnorm (x=bf16[?8,4096]:align16 weight=bf16[4096]:align16 eps=f64)
// NORM: sizes taken at launch count as 1
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --arg 'x=bf16[1000,4096]' --arg 'weight=bf16[4096]' --arg eps=f64 --dynamic-shapes --emit=resources | FileCheck %s --check-prefix=NORMGRID
// NORMGRID: launch{{ +}}max(ceildiv(x.size(0), 1), 0) programs
// A size used in arithmetic stays static.
// RUN: kite inspect %S/Inputs/dynamic_shapes.kite.cpp --kernel first_half --arg 'x=f32[100,64]' --dynamic-shapes --emit=roofline | FileCheck %s --check-prefix=HALF
// HALF: (x=f32[100,64]:align16)
// Two tensors' rows: each gets its parameter; scale's rows are checked at
// launch, not masked per element.
// RUN: kite inspect %S/Inputs/dynamic_shapes.kite.cpp --kernel scale_rows --arg 'x=f32[100,64]' --arg 'scale=f32[100]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=ROWS
// ROWS: checks at launch that x.size(0) <= scale.size(0)
// ROWS: kite_scale_rows(float* __restrict__ a0, const i64 a0_n0, float* __restrict__ a1, const i64 a1_n0, float* __restrict__ o0)
// ROWS-NOT: (unsigned long long)a1_n0

// An output sized by a run-time scalar, static shapes or not: its size is a
// launch expression, and accesses are checked against the scalar.
// RUN: kite inspect %S/Inputs/dynamic_shapes.kite.cpp --kernel bincount --arg 'x=i32[1000]' --arg bins=i64 --emit=cuda | FileCheck %s --check-prefix=BINS
// BINS: kite_bincount(int* __restrict__ a0, i64 a1, int* __restrict__ o0)
// BINS: < (unsigned long long)a1) atomic_add(&o0[

// Errors: a dynamic size inside a tensor, a malformed class, an `all` over
// a dynamic dim.
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=bf16[16,?]' --arg 'y=bf16[16,?]' 2>&1 | FileCheck %s --check-prefix=INNER
// INNER: error: argument 'x' (x=bf16[16,?]) has a dynamic size in dim 1; only the outermost dim can be dynamic
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=bf16[?3,4]' --arg 'y=bf16[16,4]' 2>&1 | FileCheck %s --check-prefix=CLASS
// CLASS: '?3' in the sizes of 'x' is not a dynamic size ('?', or '?N' with N 2, 4, 8 or 16)
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=bf16[?,4]:strides[1,4]' --arg 'y=bf16[16,4]' 2>&1 | FileCheck %s --check-prefix=STRIDED
// STRIDED: 'x' has dynamic sizes and strides; a tensor with dynamic sizes is contiguous

// A product: M is taken at launch; y's rows (K) are indexed by the tiles of
// a loop with a static end, so they stay static, and the main loop keeps
// its TMA copies (the loop over x.size(0) covers x's rows).
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=MATMUL
// MATMUL: launch: max(ceildiv(x.size(0), 128), 0) * 16 programs
// MATMUL-NOT: checks at launch
// MATMUL: kite_matmul(bf16* __restrict__ a0, const i64 a0_n0, bf16* __restrict__ a1, bf16* __restrict__ o0, const __grid_constant__ KiteTensorMap
// MATMUL: wgmma_tma_mainloop<
