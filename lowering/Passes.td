//===- Passes.td - kite lowering passes -------------------*- tablegen -*-===//
//
// The passes between captured IR and CUDA. `buildKiteLoweringPipeline` in
// Pipeline.cpp lists them in order; each is defined in the file named after
// it.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_PASSES_TD
#define KITE_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def KiteSpecialize : Pass<"kite-specialize", "::mlir::ModuleOp"> {
  let summary = "Specialize a kernel to its launch arguments";
  let description = [{
    Makes the kernel's tensor parameters concrete (dtype, sizes, strides,
    alignment), folds the host prologue's size and dtype queries to
    constants, replaces `kite.specialize`d scalars (given a value) by
    constants, and infers every value's type: PyTorch's dtype promotion and
    broadcasting, tile shapes from block sizes (static once the config is
    applied). Kernels other than `kernel` are erased.

    Assumes: captured IR (dynamically typed). Guarantees: every tensor type
    is static; every tile's element type and rank are known; dims are static
    except those sized by a symbolic `kite.block_size`.

    ```mlir
    // args="x=bf16[1024,4096]"
    %n = kite.size %x[0] : !kite.tensor<*x?>          // before
    %n = arith.constant 1024 : i64                     // after
    ```

    Test: test/lowering/kite-specialize.mlir
  }];
  let options = [
    Option<"kernel", "kernel", "std::string", /*default=*/"\"\"",
           "The kernel to keep (default: the only one)">,
    Option<"args", "args", "std::string", /*default=*/"\"\"",
           "Arguments, space-separated, as on the command line: "
           "x=bf16[1024,4096] eps=f32 n=i64:7">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KiteApplyConfig : Pass<"kite-apply-config", "::mlir::ModuleOp"> {
  let summary = "Apply a config: block sizes and launch strategy";
  let description = [{
    Replaces each `kite.block_size` by the config's `block_sizes[id]` and
    re-infers tile shapes, which become static. Keys that steer later passes
    (`num_warps`, `pid_type`, `loop_orders`, `reduction_loops`, ...) are
    recorded as the `kite.config` attribute of the kernel. A config that
    does not fit the kernel (wrong number of block sizes, a non-power-of-two
    block size, too many threads) is an error naming the key.

    Assumes: specialized IR. Guarantees: no `kite.block_size` remains; every
    tile type is static.

    Test: test/lowering/kite-apply-config.mlir
  }];
  let options = [
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "The config as JSON (empty: the default config)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KitePrintCuda : Pass<"kite-print-cuda", "::mlir::ModuleOp"> {
  let summary = "Print the CUDA C++ of a lowered kernel";
  let description = [{
    Runs CUDA emission (lowering/EmitCuda.h) on the kernel and prints the
    source to standard output, or the errors at the user's lines. The IR is
    left unchanged. Use after `kite-lower`:
    `kite-opt k.mlir --kite-lower="args='x=f32[8,8]'" --kite-print-cuda -o /dev/null`.

    Assumes: a specialized, configured kernel.

    Test: test/codegen/*.mlir
  }];
  let options = [
    Option<"lineDirectives", "line-directives", "bool", /*default=*/"false",
           "Emit #line directives pointing at the kernel's source">
  ];
}

#endif // KITE_LOWERING_PASSES_TD
