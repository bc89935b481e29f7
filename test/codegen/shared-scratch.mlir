// Scratch shared memory (layout conversions, cross-warp reductions) shares
// the space of products' staging buffers outside the loops that own them:
// it starts at offset 0 there, with a barrier between a scratch use and
// the loop that next writes the buffers, and between the loop and the
// next scratch use after it.
//
// RUN: kite inspect %S/Inputs/pooled_products.kite.cpp --kernel pooled --arg 'q=bf16[2,64,64]' --arg 'k=bf16[2,64,64]' --arg 'v=bf16[2,64,64]' --config '{"block_sizes":[1,32],"num_warps":4,"num_stages":1,"tensor_cores":true}' --emit=cuda | FileCheck %s --check-prefix=POOL
// The two single buffers (k and v, 32 rows of 64 + 8 bf16 each) are all
// the kernel needs: q's conversion and the reduction fit below them.
// POOL: // launch: 2 programs of 128 threads, 9216 bytes of dynamic shared memory
// q's conversion to the products' layout, at 0, before the loop:
// POOL: bf16* {{s[0-9]+}} = reinterpret_cast<bf16*>(kite_smem);
// POOL: __syncthreads(); // scratch below the staging buffers is free
// POOL: {{pb[0-9]+}} = reinterpret_cast<bf16*>(kite_smem + 0)
// POOL: for (i64 [[T:t[0-9]+]] = 0;
// POOL: reinterpret_cast<bf16*>(kite_smem + 4608) + (int)([[T]] % 1) * 2304;
// The reduction over the query rows, across warps, at 0 after the loop:
// POOL: __syncthreads(); // every thread is done with the staging buffers
// POOL-NEXT: float* [[S:s[0-9]+]] = reinterpret_cast<float*>(kite_smem);
// POOL: block_reduce<SumOp, 4, 32>({{a[0-9]+}}, [[S]]);
//
// In a persistent program the loop runs again after the reduction: it
// waits for the reduction's scratch even when nothing came before it.
// RUN: kite inspect %S/Inputs/pooled_products.kite.cpp --kernel pooled --arg 'q=bf16[2,64,64]' --arg 'k=bf16[2,64,64]' --arg 'v=bf16[2,64,64]' --config '{"block_sizes":[1,32],"num_warps":4,"num_stages":1,"tensor_cores":true,"pid_type":"persistent_interleaved"}' --emit=cuda | FileCheck %s --check-prefix=PERSIST
// PERSIST: for (i64 kite_pid = blockIdx.x;
// PERSIST: __syncthreads(); // scratch below the staging buffers is free
// PERSIST: for (i64 {{t[0-9]+}} = 0;
// PERSIST: __syncthreads(); // every thread is done with the staging buffers
