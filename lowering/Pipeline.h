//===- Pipeline.h - the lowering pipeline -----------------------*- C++ -*-===//
//
// This file declares the pipeline from captured IR to CUDA and its options.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_PIPELINE_H
#define KITE_LOWERING_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kite {

struct LoweringOptions : mlir::PassPipelineOptions<LoweringOptions> {
  Option<std::string> kernel{*this, "kernel",
                             llvm::cl::desc("The kernel to lower")};
  Option<std::string> args{
      *this, "args",
      llvm::cl::desc("Launch arguments: x=bf16[1024,4096] eps=f32 ...")};
  Option<std::string> config{*this, "config",
                             llvm::cl::desc("The config (JSON); empty: default")};
  Option<std::string> arch{*this, "arch", llvm::cl::desc("The GPU target (sm_90a, sm_80)"),
                           llvm::cl::init("sm_90a")};
  Option<bool> speculative{
      *this, "speculative",
      llvm::cl::desc("Without a config, the default may hold choices emission can still "
                     "turn down (false: the plain default)"),
      llvm::cl::init(true)};
};

/// Adds the passes that take captured IR to CUDA-ready IR, in order. The
/// runtime and `kite-opt --kite-lower` run exactly this.
void buildKiteLoweringPipeline(mlir::OpPassManager &pm,
                               const LoweringOptions &options);

/// Registers the passes and the `kite-lower` pipeline with MLIR's registry.
void registerKiteLoweringPasses();

} // namespace kite

#endif // KITE_LOWERING_PIPELINE_H
