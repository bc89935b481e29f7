// Loads and stores move 16 bytes at a time where the row is contiguous and
// the pointer, the row stride, the span begins and the valid extent are
// multiples of the vector; narrower vectors where only a smaller power of
// two divides them; element by element otherwise.
//
// bf16, 1000 columns (2000-byte rows): 8-element vectors.
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --kernel rmsnorm --arg 'x=bf16[64,1000]' --arg 'weight=bf16[1000]' --arg eps=f64 --emit=cuda | FileCheck %s --check-prefix=BF16
// BF16: load_vec<8>({{.*}}&a0[
// BF16: load_vec<8>({{.*}}&a1[
// BF16: store_vec<8>(&o0[
//
// f32: 16 bytes are 4 elements.
// RUN: kite inspect %kite_src/examples/add.kite.cpp --kernel add --arg 'x=f32[64,1000]' --arg 'y=f32[64,1000]' --emit=cuda | FileCheck %s --check-prefix=F32
// F32: load_vec<4>({{.*}}&a0[
// F32: load_vec<4>({{.*}}&a1[
// F32: store_vec<4>(&o0[
//
// 1004 columns: 1004 = 4 * 251, so 4-element (8-byte) vectors.
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --kernel rmsnorm --arg 'x=bf16[64,1004]' --arg 'weight=bf16[1004]' --arg eps=f64 --emit=cuda | FileCheck %s --check-prefix=NARROW
// NARROW: load_vec<4>({{.*}}&a0[
// NARROW-NOT: load_vec<8>
//
// 4097 columns: rows start at odd elements; no vectors.
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --kernel rmsnorm --arg 'x=bf16[64,4097]' --arg 'weight=bf16[4097]' --arg eps=f64 --emit=cuda | FileCheck %s --check-prefix=ODD
// ODD-NOT: _vec<
// ODD: = cvt<bf16>(
//
// A pointer aligned to 4 bytes only: 2-element vectors for x, 8 for weight.
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --kernel rmsnorm --arg 'x=bf16[64,1000]:align4' --arg 'weight=bf16[1000]' --arg eps=f64 --emit=cuda | FileCheck %s --check-prefix=ALIGN
// ALIGN: load_vec<2>({{.*}}&a0[
// ALIGN: load_vec<8>({{.*}}&a1[
//
// A transposed view (column stride 64): the last dim is not contiguous.
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --kernel rmsnorm --arg 'x=bf16[64,1000]:strides[1,64]' --arg 'weight=bf16[1000]' --arg eps=f64 --emit=cuda | FileCheck %s --check-prefix=STRIDED
// STRIDED-NOT: load_vec<{{.*}}&a0[
// STRIDED: load_vec<8>({{.*}}&a1[
//
// inner_threads 32 with 4 rows of 1024 and 4 warps: a warp per row, each
// lane four 16-byte vectors, reductions by shuffles only (no shared memory).
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[4096,1024]' --config '{"block_sizes":[4],"num_warps":4,"inner_threads":32}' --emit=cuda | FileCheck %s --check-prefix=WARP
// WARP: 0 bytes of dynamic shared memory
// WARP: const int c0_t0 = (threadIdx.x / 32) % 4;
// WARP: const int c0_t1 = threadIdx.x % 32;
// WARP: load_vec<8>(
// WARP: warp_reduce<MaxOp, 1, 32>
// WARP-NOT: block_reduce
// WARP: warp_reduce<SumOp, 1, 32>
// WARP-NOT: block_reduce
//
// A bad inner_threads is refused with its reason.
// RUN: not kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[4096,1024]' --config '{"inner_threads":48}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: inner_threads = 48 must be a power of two from 1 to 1024 (or null)

// streaming: the same 16-byte accesses with the streaming cache operator
// (evict first), loads and stores.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,8192]' --config '{"block_sizes":[1],"num_warps":8,"streaming":true}' --emit=ptx | FileCheck %s --check-prefix=STREAM
// STREAM-DAG: ld.global.cs.v4.u32
// STREAM-DAG: st.global.cs.v4.u32
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,8192]' --config '{"block_sizes":[1],"num_warps":8}' --emit=ptx | FileCheck %s --check-prefix=NOSTREAM
// NOSTREAM-NOT: .cs.
