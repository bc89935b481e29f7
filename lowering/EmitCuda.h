//===- EmitCuda.h - CUDA C++ emission ---------------------------*- C++ -*-===//
//
// This file declares the last step of lowering: a specialized, configured
// kernel (every type static) becomes one CUDA C++ `__global__` function
// written against the device library (runtime/device/kite_device.cuh), plus
// what the host needs to launch it: outputs to allocate, the parameter
// order, the grid and block, and what the kernel returns.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_EMITCUDA_H
#define KITE_LOWERING_EMITCUDA_H

#include "ir/KiteDialect.h"
#include "lowering/LaunchArg.h"

#include <kite/launch_expr.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace kite {

struct CudaKernel {
  /// An output the host prologue allocates (contiguous).
  struct Output {
    std::string name;
    std::string dtype; // the language's name: f16 bf16 f32 f64 i8 i32 i64 bool
    llvm::SmallVector<int64_t> sizes; // ShapedType::kDynamic: computed at launch
    bool zeroed = false;
    /// One per dynamic size, in order: how the launch computes it.
    std::vector<LaunchExpr> sizeExprs;
  };
  /// A kernel parameter: the data pointer of argument/output `index`, the
  /// value of scalar argument `index`, or a tensor map (for TMA copies)
  /// over tensor argument `index`, which the runtime encodes at launch.
  struct Param {
    enum class Kind { ArgData, OutputData, ArgScalar, ArgTensorMap, ArgSize, Workspace } kind;
    unsigned index;
    /// ArgTensorMap: the parameter's name, the copy box (elements per dim,
    /// outermost first), the swizzle (0 none .. 3 128-byte), and whether
    /// it maps a padded copy of the tensor that the launch makes first
    /// (TensorMapSpec::staged; the kernel's module holds kite_stage_rows).
    std::string name = {};
    std::vector<int64_t> box = {};
    int swizzle = 0;
    bool staged = false;
    /// ArgTensorMap by row blocks (TensorMapSpec::rowSplits): per split its
    /// count and stride in rows, innermost first, and the blocks' step.
    std::vector<std::pair<int64_t, int64_t>> rowSplits = {};
    int64_t rowStep = 0;
    /// ArgSize: the dim of tensor argument `index` whose size (an i64) this
    /// is, named `name`.
    unsigned dim = 0;
    /// Workspace: `index` bytes of device memory per program, zeroed at
    /// each launch where `zeroed`, named `name` (an `unsigned char*`).
    bool zeroed = false;
  };
  /// A returned tensor: argument or output `index`.
  struct Result {
    enum class Kind { Arg, Output } kind;
    unsigned index;
  };

  std::string name;   // the kernel's source name
  std::string symbol; // the __global__ function's name
  std::string source; // CUDA C++
  int64_t numPrograms = 1;           // grid[0] * grid[1] * grid[2]
  std::array<int64_t, 3> grid = {1, 1, 1};
  /// Where the number of programs depends on sizes taken at launch: how the
  /// launch computes grid[0] (`grid` then holds [1, 1, 1]).
  std::optional<LaunchExpr> gridExpr;
  /// What a launch checks of its sizes (kite-check-bounds' launch checks).
  std::vector<LaunchCheck> checks;
  /// A persistent pid_type: the kernel loops over grid[0] program ids by
  /// gridDim.x, so any grid runs them all; a plan launches as many programs
  /// as the SMs hold at once (KernelPlan::persistent).
  bool persistent = false;
  /// Programs per thread-block cluster (the kernel's __cluster_dims__):
  /// grid[0], and a persistent launch's programs, are multiples of it.
  int64_t clusterSize = 1;
  int64_t numThreads = 128;
  int64_t sharedBytes = 0; // dynamic shared memory
  std::vector<Output> outputs;
  std::vector<Param> params;
  std::vector<Result> results;
};

struct EmitOptions {
  /// Emit `#line` directives pointing at the kernel's source.
  bool lineDirectives = false;
  /// Timeline events (kite_device::trace_event; `kite bench --timeline`):
  /// the kernel's entry, each program's start and end, the start and end of
  /// each loop directly in a program's body and the top of its iterations,
  /// recorded with the SM's clock by each warpgroup's first thread. Off in
  /// every plan but a traced one: the records cost an atomic each.
  bool trace = false;
};

/// The records a traced kernel keeps (KITE_TRACE); later events are dropped.
constexpr int64_t kTraceCapacity = 1 << 19;

/// Emits CUDA for `kernel`, which must be specialized and configured
/// (kite-specialize, kite-apply-config). Errors are emitted at the op's
/// location (the user's source line).
mlir::FailureOr<CudaKernel> emitCuda(mlir::func::FuncOp kernel,
                                     const EmitOptions &options = {});

} // namespace kite

#endif // KITE_LOWERING_EMITCUDA_H
