// Dynamic shapes (Options::static_shapes = false, `kite inspect
// --dynamic-shapes`): a size of a contiguous tensor becomes a kernel
// parameter where the kernel only loops over it, indexes it with tiles or
// sizes outputs by it; the grid is computed at launch, and a stride that
// depends on such a size is a product of parameters.
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
// NORM: kernel{{ +}}rmsnorm (x=bf16[?*,4096]:align16:idx32 weight=bf16[4096]:align16 eps=f64)
// The roofline counts the launch's sizes, not the plan's 1s.
// NORM: bytes{{ +}}16.39 MB
// NORM-NOT: sizes taken at launch count as 1
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --arg 'x=bf16[1000,4096]' --arg 'weight=bf16[4096]' --arg eps=f64 --dynamic-shapes --emit=resources | FileCheck %s --check-prefix=NORMGRID
// NORMGRID: launch{{ +}}max(ceildiv(x.size(0), 1), 0) programs
// A row spanned whole (softmax's x[tn, all]) of a length taken at launch:
// its length is bucketed (ArgSpec::size_bound: a power of two from 128 to
// 16384), and the row is held whole as one tile of the bucket's length,
// masked past the length: read once, as a static plan of that length reads
// it, with 16-byte vectors where the class allows. A row that meets another
// tensor's whole dim (rmsnorm's weight) stays static, as above.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[1000,1000]' --dynamic-shapes --emit=roofline | FileCheck %s --check-prefix=ROWSPEC
// ROWSPEC: kernel{{ +}}softmax (x=bf16[?*,?8<=1024]:align16:idx32)
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[1000,1000]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=ROW
// ROW: "reduction_loops":[]
// ROW: kite_softmax(bf16* __restrict__ a0, const i64 a0_n0, const i64 a0_n1, bf16* __restrict__ o0)
// ROW-NOT: for (i64
// ROW: bf16 v{{[0-9]+}}[{{[0-9]+}}]; // (4, 1024)
// ROW: < ((int)a0_n1) - (c0_t1 * 8)) load_vec<8>(&v{{.*}}, &a0[(int)(b{{[0-9]+}}{{.*}}) * (int)a0_n1 + (int)(
// ROW: MaxOp::combine
// ROW: < ((int)a0_n1) - (c0_t1 * 8)) store_vec<8>(&o0[(int)(b{{[0-9]+}}{{.*}}) * (int)a0_n1 + (int)(
// A row past the largest bucket (or a spec without one) loops over chunks
// to its length (online softmax).
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[100,40000]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=LONGROW
// LONGROW: "reduction_loops":[2048]
// LONGROW: const i64 c{{[0-9]+}} = ((i64)(a0_n1) - (i64)(0LL) + 2047) / 2048;
// LONGROW: load_vec<8>(&v{{.*}}, &a0[(int)(b{{[0-9]+}}{{.*}}) * (int)a0_n1 + (int)(b
// LONGROW: store_vec<8>(&o0[(int)(b{{[0-9]+}}{{.*}}) * (int)a0_n1 + (int)(b
// A config may still chunk a bucketed row: the chunks run to the length.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[?8,?8<=8192]' --config '{"block_sizes":[1],"reduction_loops":[1024]}' --emit=cuda | FileCheck %s --check-prefix=BUCKETCHUNK
// BUCKETCHUNK: const i64 c{{[0-9]+}} = ((i64)(a0_n1) - (i64)(x{{[0-9]+}}) + 1023) / 1024;
// RUN: not kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[?8,?8<=8000]' 2>&1 | FileCheck %s --check-prefix=BADBUCKET
// BADBUCKET: '?8<=8000' in the sizes of 'x' has no valid bucket ('<=B' with B a power of two from 128 to 16384, or '>16384')
// ROWCHUNK: reduction_loops[0] must be a chunk: the reduction dimension's size is taken at launch

// A product's grid: M and N are bucketed (the tiles that fit the SMs
// depend on them), M's class cannot change the code (any size, `?*`), and
// the default config picks tiles for the bucket's upper end: few tiles
// at M up to 128, as a static plan for M = 128 does.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --arg 'x=bf16[100,4096]' --arg 'y=bf16[4096,4096]' --dynamic-shapes --emit=roofline | FileCheck %s --check-prefix=MMSPEC
// MMSPEC: kernel{{ +}}matmul (x=bf16[?*<=128,4096]:align16:idx32 y=bf16[4096,?8<=4096]:align16:idx32)
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --arg 'x=bf16[?*<=128,4096]' --arg 'y=bf16[4096,?16<=4096]' --emit=config | FileCheck %s --check-prefix=MMCONFIG
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --arg 'x=bf16[128,4096]' --arg 'y=bf16[4096,4096]' --emit=config | FileCheck %s --check-prefix=MMCONFIG
// MMCONFIG: "block_sizes":[64,128,64]{{.*}}"num_stages":6
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --arg 'x=bf16[?*<=4096,4096]' --arg 'y=bf16[4096,?16<=4096]' --emit=config | FileCheck %s --check-prefix=MMBIG
// MMBIG: "block_sizes":[128,256,64]

// A size used in arithmetic stays static (the rows); the columns, which a
// top-level loop runs over, do not.
// RUN: kite inspect %S/Inputs/dynamic_shapes.kite.cpp --kernel first_half --arg 'x=f32[100,64]' --dynamic-shapes --emit=roofline | FileCheck %s --check-prefix=HALF
// HALF: (x=f32[100,?16]:align16:idx32)
// Two tensors' rows: each gets its parameter; scale's rows are checked at
// launch, not masked per element.
// RUN: kite inspect %S/Inputs/dynamic_shapes.kite.cpp --kernel scale_rows --arg 'x=f32[100,64]' --arg 'scale=f32[100]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=ROWS
// ROWS: checks at launch that x.size(0) <= scale.size(0)
// ROWS: kite_scale_rows(float* __restrict__ a0, const i64 a0_n0, const i64 a0_n1, float* __restrict__ a1, const i64 a1_n0, float* __restrict__ o0)
// ROWS-NOT: (unsigned long long)a1_n0

// An output sized by a run-time scalar, static shapes or not: its size is a
// launch expression, and accesses are checked against the scalar.
// RUN: kite inspect %S/Inputs/dynamic_shapes.kite.cpp --kernel bincount --arg 'x=i32[1000]' --arg bins=i64 --emit=cuda | FileCheck %s --check-prefix=BINS
// BINS: kite_bincount(int* __restrict__ a0, i64 a1, int* __restrict__ o0)
// BINS: < (unsigned long long)a1) atomic_add(&o0[

// Sizes inside a tensor: the row stride is the column count's parameter,
// 16-byte vectors stay where the class says rows start 16-byte aligned, and
// single elements where it does not.
// RUN: kite inspect %kite_src/examples/add.kite.cpp --arg 'x=bf16[?16,?16]' --arg 'y=bf16[?16,?16]' --emit=cuda | FileCheck %s --check-prefix=INNER
// INNER: checks at launch that x.size(0) <= y.size(0); checks at launch that x.size(1) <= y.size(1)
// INNER: kite_add(bf16* __restrict__ a0, const i64 a0_n0, const i64 a0_n1, bf16* __restrict__ a1, const i64 a1_n0, const i64 a1_n1, bf16* __restrict__ o0)
// INNER: load_vec<8>(&v{{[0-9]+}}[k{{[0-9]+}} * 8], &a0[(i64)(b{{[0-9]+}} + (k{{[0-9]+}} * 16 + c0_t0)) * a0_n1 + (i64)(b
// INNER: store_vec<8>(&o0[(i64)(b{{[0-9]+}} + (k{{[0-9]+}} * 16 + c0_t0)) * a0_n1 + (i64)(b
// RUN: kite inspect %kite_src/examples/add.kite.cpp --arg 'x=bf16[?16,?]' --arg 'y=bf16[?16,?]' --emit=cuda | FileCheck %s --check-prefix=ODD
// ODD-NOT: load_vec
// ODD: ? a0[(i64)(b{{[0-9]+}} + (k{{[0-9]+}} * {{[0-9]+}} + c0_t0)) * a0_n1 + (i64)(b
// ODD-NOT: load_vec

// Attention over a sequence length taken at launch ([B*H, S, D] with D
// specialized): the batch and the sequence are parameters, the batch
// stride is D times S, and the key loop runs to S at launch; k's and v's
// sequences are checked once at launch. Tensors of fewer than 2^29
// elements (`:idx32`, the plan's class) take 32-bit offsets, and a batch
// tile of one needs no mask.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --arg 'q=bf16[128,1000,128]' --arg 'k=bf16[128,1000,128]' --arg 'v=bf16[128,1000,128]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=ATTN
// ATTN: launch: max(ceildiv(q.size(0), 1), 0) * max(ceildiv(q.size(1), 128), 0) programs of 384 threads
// ATTN-SAME: checks at launch that q.size(1) <= k.size(1)
// ATTN-SAME: checks at launch that q.size(1) <= v.size(1)
// ATTN: kite_attention(bf16* __restrict__ a0, const i64 a0_n0, const i64 a0_n1, bf16* __restrict__ a1, const i64 a1_n0, const i64 a1_n1, bf16* __restrict__ a2, const i64 a2_n0, const i64 a2_n1, bf16* __restrict__ o0, const __grid_constant__ KiteTensorMap tma
// The producer's key loop, k's tiles by TMA at 32-bit coordinates.
// ATTN: for (i64 t{{[0-9]+}} = 0; t{{[0-9]+}} < c{{[0-9]+}}; ++t
// ATTN-NOT: 0 < n
// ATTN: tma_load<3>({{.*}}, 0, (int)(b{{[0-9]+}}), (int)(b
// ATTN: cp_async16({{.*}}&a0[(int)(b{{[0-9]+}}) * (int)(128LL * a0_n1) + (int)(b
// ATTN: store_16(&o0[(int)(b{{[0-9]+}}) * (int)(128LL * a0_n1) + (int)(b
// A tensor too large for 32-bit offsets keeps 64-bit ones.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --arg 'q=bf16[?*,?*,128]' --arg 'k=bf16[?*,?*,128]' --arg 'v=bf16[?*,?*,128]' --emit=cuda | FileCheck %s --check-prefix=ATTN64
// ATTN64: cp_async16({{.*}}&a0[(i64)(b{{[0-9]+}}) * (128LL * a0_n1) + (i64)(b
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=bf16[?3,4]' --arg 'y=bf16[16,4]' 2>&1 | FileCheck %s --check-prefix=CLASS
// CLASS: '?3' in the sizes of 'x' is not a dynamic size ('?', or '?N' with N 2, 4, 8 or 16)
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=bf16[?,4]:strides[1,4]' --arg 'y=bf16[16,4]' 2>&1 | FileCheck %s --check-prefix=STRIDED
// STRIDED: 'x' has dynamic sizes and strides; a tensor with dynamic sizes is contiguous

// Causal attention: the keys run to the query tile's end, which is at most
// q's sequence length, so k's and v's sequences are taken at launch too;
// the split key loops' ends are clamped to that end, so k's and v's
// lengths are checked once at launch, not per element.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --arg 'q=bf16[128,1000,128]' --arg 'k=bf16[128,1000,128]' --arg 'v=bf16[128,1000,128]' --dynamic-shapes --emit=roofline | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: (q=bf16[?*<=128,?*<=1024,128]:align16:idx32 k=bf16[?*,?*,128]:align16:idx32 v=bf16[?*,?*,128]:align16:idx32)
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --arg 'q=bf16[128,1000,128]' --arg 'k=bf16[128,1000,128]' --arg 'v=bf16[128,1000,128]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=CAUSALCU
// CAUSALCU: checks at launch that q.size(1) <= k.size(1); {{.*}}checks at launch that q.size(1) <= v.size(1)
// CAUSALCU-NOT: (unsigned long long)a1_n1
// CAUSALCU-NOT: (unsigned long long)a2_n1

// A product: M and N are taken at launch; K, the end of a nested loop
// only, stays static, and so do y's rows, indexed by that loop's tiles; the
// producer keeps its TMA copies (the maps are encoded at launch), x's in
// 64-row blocks where a tile is whole (M - m0 >= 128, from the size taken
// at launch) and 8-row boxes at the last partial one.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --dynamic-shapes --emit=cuda | FileCheck %s --check-prefix=MATMUL
// MATMUL: launch: max(ceildiv(x.size(0), 128), 0) * max(ceildiv(y.size(1), 256), 0) programs
// MATMUL-NOT: checks at launch
// MATMUL: kite_matmul(bf16* __restrict__ a0, const i64 a0_n0, bf16* __restrict__ a1, const i64 a1_n1, bf16* __restrict__ o0, const __grid_constant__ KiteTensorMap
// MATMUL: const i64 [[M:n[0-9]+]] = min((i64)128, (i64)(a0_n0) - [[B:b[0-9]+]]);
// MATMUL: if (([[M]]) >= 128 && {{row[0-9]+}} % 8 == 0) {
// MATMUL-NEXT: tma_load<5>(
//
// The roofline of a launch through a class plan counts the launch's sizes
// (the plan's IR takes them at run time): as the static plan's.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[4096,5000]' --dynamic-shapes --emit=roofline | FileCheck %s --check-prefix=ROOF
// ROOF: kernel         softmax (x=bf16[?*,?8<=8192]:align16:idx32)
// ROOF: bytes          81.92 MB
// ROOF: flops          102.40 MFLOP
