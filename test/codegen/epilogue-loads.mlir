// Loads read straight into the layout their one elementwise user reads:
// a product's epilogue adds a bias and a residual to the f32 sums in the
// accumulator layout (4 lanes of bf16 pairs along a row), so both are
// loaded in it (4-byte loads, 16 bytes of a row per warp instruction)
// instead of in a row layout and converted through shared memory, which
// took a 64 KB scratch tile (the default 4-stage config then no longer
// fit) and barriers around it.
// RUN: kite inspect %kite_src/examples/matmul_bias_relu.kite.cpp --kernel matmul_epilogue --arg 'x=bf16[4096,4096]' --arg 'y=bf16[4096,4096]' --arg 'bias=bf16[4096]' --arg 'residual=bf16[4096,4096]' --arg scale=f64 --emit=cuda | FileCheck %s
// CHECK: // launch: 512 programs of 384 threads, 197760 bytes of dynamic shared memory
// CHECK: load_vec<2>(&v{{[0-9]+}}[(k{{[0-9]+}} * 2)], &a2[(int)(b{{[0-9]+}} + (k{{[0-9]+}} * 8 + c{{[0-9]+}}_t1 * 2))]);
// CHECK-NOT: kite_sync
// CHECK: load_vec<2>(&v{{[0-9]+}}[{{.*}}], &a3[(int)(b{{[0-9]+}} + (k{{[0-9]+}} * 64 + c{{[0-9]+}}_t0)) * 4096 + (int)(b{{[0-9]+}} + (k{{[0-9]+}} * 8 + c{{[0-9]+}}_t1 * 2))]);
// CHECK-NOT: kite_sync
// CHECK: store_16(&o0[
//
