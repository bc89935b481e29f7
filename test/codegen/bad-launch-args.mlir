// Arguments whose shapes would make a kernel read or write outside a tensor,
// and malformed argument specs and configs, are refused before anything is
// compiled or launched, with the kernel, tensor, dimension and sizes.
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[256,128]' --arg 'y=f32[64,192]' 2>&1 | FileCheck %s --check-prefix=ADD
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[256,128]' --arg 'y=f32[256,100]' 2>&1 | FileCheck %s --check-prefix=COLS
// RUN: not kite inspect %kite_src/examples/matmul.kite.cpp --arg 'x=bf16[256,128]' --arg 'y=bf16[64,192]' 2>&1 | FileCheck %s --check-prefix=MATMUL
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --emit=config-space --arg 'x=f32[256,128]' --arg 'y=f32[64,192]' 2>&1 | FileCheck %s --check-prefix=ADD
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[8,8]:align3' --arg 'y=f32[8,8]' 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'y=f32[8,8]' --arg 'x=f32[8,8]' 2>&1 | FileCheck %s --check-prefix=NAMES
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[9223372036854775807,2]' --arg 'y=f32[9223372036854775807,2]' 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[4,2]:strides[-1,1]' --arg 'y=f32[4,2]' 2>&1 | FileCheck %s --check-prefix=STRIDES
// RUN: not kite inspect %kite_src/examples/layernorm.kite.cpp --kernel layer_norm --arg 'x=bf16[4,8]' --arg 'weight=bf16[8]' --arg 'bias=bf16[8]' --arg 'eps=bf16:1' 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not kite inspect %kite_src/examples/layernorm.kite.cpp --kernel layer_norm --arg 'x=bf16[4,8]' --arg 'weight=bf16[8]' --arg 'bias=bf16[8]' --arg 'eps=i64:1.5' 2>&1 | FileCheck %s --check-prefix=INTVALUE
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[4,2]' --arg 'y=f32[4,2]' --config '{"num_warps":8.5}' 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[4,2]' --arg 'y=f32[4,2]' --config '{"block_sizes":[1e300,2]}' 2>&1 | FileCheck %s --check-prefix=HUGEBLOCK
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[4,2]' --arg 'y=f32[4,2]' --config '{"block_sizes":[1.5,2]}' 2>&1 | FileCheck %s --check-prefix=HUGEBLOCK
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[4,2]' --arg 'y=f32[4,2]' --config '{"block_sizes":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}' 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[4,2]' --arg 'y=f32[4,2]' --config '{"loop_orders":[[0,0]]}' 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[4,2]' --arg 'y=f32[4,2]' --config '{"block_sizes":[4611686018427387904,4611686018427387904]}' 2>&1 | FileCheck %s --check-prefix=BIGBLOCK
// RUN: not kite inspect %kite_src/examples/add.kite.cpp --arg 'x=f32[4,2]' --arg 'y=f32[4,2]' --config '{"l2_groupings":[100000000000]}' 2>&1 | FileCheck %s --check-prefix=GROUP

// ADD: add.kite.cpp:11:31: error: the tiles of [0, 256) are out of range for dimension 0 of size 64 of 'y' (f32[64,192]) in kernel 'add'
// COLS: add.kite.cpp:11:31: error: the tiles of [0, 128) are out of range for dimension 1 of size 100 of 'y' (f32[256,100]) in kernel 'add'
// MATMUL: matmul.kite.cpp:{{[0-9]+}}:{{[0-9]+}}: error: the tiles of [0, 128) are out of range for dimension 0 of size 64 of 'y' (bf16[64,192]) in kernel 'matmul'
// ALIGN: the alignment of 'x' must be a power of two from 1 to 4096 bytes, not '3'
// NAMES: argument 1 of kernel 'add' is 'x', but was given as 'y' (y=f32[8,8]); give one argument per parameter, in order
// HUGE: 'x' is larger than any GPU memory (x=f32[9223372036854775807,2])
// STRIDES: the strides of 'x' must not be negative (got -1)
// SCALAR: scalar argument 'eps' is of type f64 in the kernel, but was given as bf16 (eps=bf16:1)
// INTVALUE: the value of 'eps' must be an integer that fits in i64, not '1.5'
// WARPS: config key 'num_warps' has the wrong type: 8.5 (an integer expected)
// HUGEBLOCK: config key 'block_sizes' has the wrong type: [{{.*}}] (integers expected)
// DEEP: the config nests deeper than 16 levels
// ORDER: loop_orders[0] must order the 2 dims of top-level loop 0 (a permutation of 0..1)
// BIGBLOCK: block_sizes[0] = 4611686018427387904 must be a power of two from 1 to 16777216
// GROUP: l2_groupings entries must be from 1 to 16777216
