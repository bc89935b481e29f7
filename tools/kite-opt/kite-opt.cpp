//===- kite-opt.cpp - the kite optimizer driver ---------------------------===//
//
// mlir-opt with the kite dialect and kite's passes registered: round trips
// and runs the exact pipeline the runtime runs (`--kite-lower`, later), with
// MLIR's `--mlir-print-ir-after-all` and `--mlir-timing`.
//
//===----------------------------------------------------------------------===//

#include "ir/KiteDialect.h"
#include "lowering/Pipeline.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  kite::registerKiteLoweringPasses();
  mlir::DialectRegistry registry;
  registry.insert<kite::KiteDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kite optimizer driver\n", registry));
}
