// Compiler bugs the differential tester found (test/difftest/regressions),
// checked without a GPU: two miscompiles on the H200, seen in the generated
// CUDA, and a valid kernel that did not compile.
//
// A range loop whose end is not a multiple of the vector width: its tiles'
// valid extents are odd, and a vector masked by its first element stored one
// element past the range (out[n-1] of tile(range(2, n - 1))).
// RUN: kite inspect %kite_src/test/difftest/regressions/range_end_vector_store.kite.cpp --arg 'x=f32[20]' --emit=cuda | FileCheck %s --check-prefix=RANGE
// RANGE-NOT: load_vec
// RANGE-NOT: store_vec
// RANGE: kite_pid
// Loops whose end is a multiple of the width keep their vectors.
// RUN: kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[64,256]' --arg 'y=f32[64,256]' --emit=cuda | FileCheck %s --check-prefix=EVEN
// EVEN: load_vec<4

// A store through one layout (transposed) read back by a load of the same
// elements in another: other threads wrote them, so a barrier comes first.
// RUN: kite inspect %kite_src/test/difftest/regressions/store_then_load_transposed.kite.cpp --arg 'x=f32[300,31]' --emit=cuda | FileCheck %s --check-prefix=HAZARD
// HAZARD: o0[
// HAZARD: __syncthreads(); // this program wrote o0 above
// HAZARD: load_vec<{{.*}}&o0[

// An output from empty({...}) whose sizes fold only after the first round
// of type inference, stored through `all`: the store was checked against
// the not-yet-known sizes and refused.
// RUN: kite inspect %kite_src/test/difftest/regressions/empty_sizes_whole_row_store.kite.cpp --kernel whole_row --arg 'x=f32[500,375]' --emit=cuda | FileCheck %s --check-prefix=EMPTY
// RUN: kite inspect %kite_src/test/difftest/regressions/empty_sizes_whole_row_store.kite.cpp --kernel grid_row --arg 'x=f32[500,375]' --emit=cuda | FileCheck %s --check-prefix=EMPTY
// EMPTY: __global__
