// Products whose right operand is read K-major (w[tn, tk].transpose(0, 1),
// torch.nn.Linear's weight: examples/linear.kite.cpp) pipeline as [K, N]
// ones do. On sm_90a by default, rows TMA reads in place: the loop as
// kernel code in persistent programs (generic_mainloop), w's tile one box
// of 256 rows x 64 columns a stage, which wgmma reads K-major (run<0>);
// rows of 77 elements: the TMA main loop with BKMajor, from the padded
// copies the launch makes.
// RUN: kite inspect %kite_src/examples/linear.kite.cpp --kernel linear --arg 'x=bf16[4096,4096]' --arg 'w=bf16[4096,4096]' --arg 'bias=bf16[4096]' --emit=cuda | FileCheck %s
// CHECK: "generic_mainloop":true
// CHECK-SAME: "pid_type":"persistent_interleaved"
// CHECK-NOT: _mainloop<
// CHECK: const int [[ST:st[0-9]+]] = [[RB:kite_ring[0-9]+]].acquire({{.*}}, 32768);
// CHECK-NEXT: bf16* [[PB:pb[0-9]+]] = {{.*}} + [[ST]] * 16384;
// CHECK-NEXT: tma_load<2>([[PB]] + 0, &{{tma[0-9]+}}, [[RB]].full([[ST]]), (int)({{b[0-9]+}}), (int)({{b[0-9]+}}));
// CHECK: WgmmaOp<256, bf16>::run<0>(
// CHECK: exchange_segments<
// RUN: kite inspect %kite_src/examples/linear.kite.cpp --kernel linear --arg 'x=bf16[300,77]' --arg 'w=bf16[99,77]' --arg 'bias=bf16[99]' --emit=cuda | FileCheck %s --check-prefix=STAGED
// STAGED: wgmma_tma_mainloop<128, 128, 2, 4, 2, bf16, bf16, true>(
// RUN: kite inspect %kite_src/examples/linear.kite.cpp --kernel bmm_nt --arg 'a=bf16[64,1024,1024]' --arg 'b=bf16[64,1024,1024]' --emit=config | FileCheck %s --check-prefix=BATCHED
// BATCHED: "block_sizes":[1,128,256,64]
// BATCHED-SAME: "generic_mainloop":true
