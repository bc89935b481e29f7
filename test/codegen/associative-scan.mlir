// associative_scan with a user's combine function: the element is a
// struct of one field per scanned tile, wrapped in Maybe (none: masked
// lanes and the first thread's empty prefix); the combine function is a
// lambda in the kernel with its region emitted on one-element arrays; the
// scan across the row's threads shares thread_scan_exclusive with cumsum.
// RUN: kite inspect %kite_src/examples/cumsum.kite.cpp --kernel linear_recurrence --arg 'a=bf16[13,1000]' --arg 'b=f32[13,1000]' --config '{"block_sizes":[1],"num_warps":4}' --emit=cuda | FileCheck %s
// CHECK: struct [[V:sv[0-9]+]] {
// CHECK-NEXT: float v0;
// CHECK-NEXT: float v1;
// CHECK: auto [[F:sf[0-9]+]] = [&](const [[V]] &x, const [[V]] &y) -> [[V]] {
// CHECK: float [[A0:ca[0-9]+]][1] = {x.v0};
// CHECK: float [[B0:ca[0-9]+]][1] = {x.v1};
// CHECK: float [[A1:ca[0-9]+]][1] = {y.v0};
// CHECK: float [[B1:ca[0-9]+]][1] = {y.v1};
// CHECK: = cvt<float>(cvt<float>([[A0]][0]) * cvt<float>([[A1]][0]));
// CHECK: return [[V]]{
// CHECK: const CombineOp<decltype([[F]])> [[OP:cop[0-9]+]]{[[F]]};
// CHECK: Maybe<[[V]]> {{e[0-9]+}} = {{.*}} < {{.*}} ? Maybe<[[V]]>{[[V]]{
// CHECK-SAME: : Maybe<[[V]]>{};
// CHECK: thread_scan_exclusive<decltype([[OP]]), 1, 128>({{.*}}, [[OP]]);
// CHECK: __syncthreads();

// A tile of the row used inside the combine function is an error.
// RUN: not kite inspect %S/Inputs/associative_scan_errors.kite.cpp --kernel outside --arg 'x=f32[10,100]' --arg 'y=f32[10,100]' 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// OUTSIDE: error: the combine function of associative_scan uses a tile of rank 2 from outside it; it may use only its arguments, scalars and one-element tiles
// A combine function that changes the dtype is an error.
// RUN: not kite inspect %S/Inputs/associative_scan_errors.kite.cpp --kernel widen --arg 'x=f32[10,100]' --arg 'y=f32[10,100]' 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: the combine function of associative_scan returns 'f64' for tensor 0, whose dtype is 'f32'; cast it back (.to(...)) in the combine function
