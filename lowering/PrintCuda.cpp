//===- PrintCuda.cpp - print the CUDA of a lowered kernel -----------------===//
//
// This file implements `kite-print-cuda` (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "lowering/EmitCuda.h"
#include "lowering/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace kite {
#define GEN_PASS_DEF_KITEPRINTCUDA
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {
struct PrintCudaPass : kite::impl::KitePrintCudaBase<PrintCudaPass> {
  using KitePrintCudaBase::KitePrintCudaBase;
  void runOnOperation() override {
    FailureOr<func::FuncOp> kernel = findKernel(getOperation(), "");
    if (failed(kernel))
      return signalPassFailure();
    EmitOptions options;
    options.lineDirectives = lineDirectives;
    FailureOr<CudaKernel> cuda = emitCuda(*kernel, options);
    if (failed(cuda))
      return signalPassFailure();
    llvm::outs() << "// grid: " << cuda->numPrograms << " programs of "
                 << cuda->numThreads << " threads, " << cuda->sharedBytes
                 << " bytes of dynamic shared memory\n";
    llvm::outs() << cuda->source;
  }
};
} // namespace
