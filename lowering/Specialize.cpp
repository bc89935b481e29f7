//===- Specialize.cpp - specialize a kernel to its arguments --------------===//
//
// This file implements `kite-specialize` (see Passes.td): launch arguments
// become types and constants, and every value's type is inferred.
//
//===----------------------------------------------------------------------===//

#include "lowering/LaunchArg.h"
#include "lowering/Passes.h"
#include "lowering/TypeInference.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kite {
#define GEN_PASS_DEF_KITESPECIALIZE
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

FailureOr<func::FuncOp> kite::findKernel(ModuleOp module, StringRef name) {
  SmallVector<func::FuncOp> kernels;
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr(kKernelAttrName))
      kernels.push_back(f);
  for (func::FuncOp f : kernels)
    if (f.getSymName() == name)
      return f;
  if (name.empty() && kernels.size() == 1)
    return kernels.front();
  InFlightDiagnostic d = module.emitError();
  if (name.empty())
    d << "the module has " << kernels.size() << " kernels; name one:";
  else
    d << "no kernel named '" << name << "'; the module has:";
  for (func::FuncOp f : kernels)
    d << " " << f.getSymName();
  return failure();
}

namespace {

/// Replaces size and dtype queries whose answer the types now know by
/// constants; true if anything changed.
bool foldKnownQueries(func::FuncOp func) {
  bool changed = false;
  IRRewriter rewriter(func.getContext());
  func.walk([&](Operation *op) {
    if (auto size = dyn_cast<SizeOp>(op)) {
      auto type = cast<kite::TensorType>(size.getTensor().getType());
      if (!type.hasRank())
        return;
      int64_t rank = type.getRank();
      int64_t d = size.getDim() < 0 ? size.getDim() + rank : size.getDim();
      if (d < 0 || d >= rank || ShapedType::isDynamic(type.getShape()[d]))
        return;
      rewriter.setInsertionPoint(size);
      rewriter.replaceOpWithNewOp<arith::ConstantIntOp>(size, type.getShape()[d],
                                                        64);
      changed = true;
    } else if (auto spec = dyn_cast<SpecializeOp>(op)) {
      // Sizes are specialized already: specialize() of a constant is a no-op.
      if (!matchPattern(spec.getValue(), m_Constant()))
        return;
      rewriter.replaceOp(spec, spec.getValue());
      changed = true;
    } else if (auto dt = dyn_cast<DTypeOfOp>(op)) {
      Type elem = getElementTypeOrNull(dt.getValue().getType());
      if (!elem)
        return;
      rewriter.setInsertionPoint(dt);
      rewriter.replaceOpWithNewOp<DTypeConstOp>(dt, TypeAttr::get(elem));
      changed = true;
    }
  });
  return changed;
}

struct SpecializePass : kite::impl::KiteSpecializeBase<SpecializePass> {
  using KiteSpecializeBase::KiteSpecializeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> found = findKernel(module, kernel);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = *found;
    std::string error;
    FailureOr<std::vector<LaunchArg>> specs =
        parseLaunchArgs(&getContext(), args, error);
    if (failed(specs)) {
      func.emitError() << "bad argument spec: " << error;
      return signalPassFailure();
    }
    std::string kernelName = func.getSymName().str();
    if (func->hasAttr(kRankFormsAttrName)) {
      FailureOr<func::FuncOp> form = rankForm(func, *specs);
      if (failed(form))
        return signalPassFailure();
      func = *form;
    }
    for (auto other : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (other != func)
        other.erase();
    if (func.getSymName() != kernelName) {
      // A rank form becomes the kernel, under the kernel's name.
      func->setAttr(kKernelAttrName, UnitAttr::get(&getContext()));
      func.setSymName(kernelName);
    }
    if (failed(applySpecs(func, *specs)))
      return signalPassFailure();

    // Sizes feed shapes feed sizes (a reshape of an output, say): alternate
    // inference, folding and arith folding until nothing changes.
    for (int round = 0; round < 8; ++round) {
      if (failed(inferTypes(func, /*strict=*/false)))
        return signalPassFailure();
      bool changed = foldKnownQueries(func);
      RewritePatternSet patterns(&getContext());
      for (RegisteredOperationName op : getContext().getRegisteredOperations())
        if (op.getDialectNamespace() == "arith")
          op.getCanonicalizationPatterns(patterns, &getContext());
      bool folded = false;
      (void)applyPatternsAndFoldGreedily(func, std::move(patterns),
                                         GreedyRewriteConfig(), &folded);
      if (!changed && !folded)
        break;
    }
    if (failed(inferTypes(func)))
      return signalPassFailure();
    // Casts the frontend put between a carried variable's captured types are
    // now identities.
    func.walk([&](UnrealizedConversionCastOp c) {
      if (c.getNumOperands() == 1 && c.getNumResults() == 1 &&
          c.getOperand(0).getType() == c.getResult(0).getType()) {
        c.getResult(0).replaceAllUsesWith(c.getOperand(0));
        c.erase();
      }
    });
  }

  /// The form of `decl` (a kernel captured once per rank of a parameter)
  /// for the rank `specs` give that parameter.
  FailureOr<func::FuncOp> rankForm(func::FuncOp decl,
                                   ArrayRef<LaunchArg> specs) {
    auto forms = decl->getAttrOfType<DictionaryAttr>(kRankFormsAttrName);
    auto ranks = forms.getAs<DenseI64ArrayAttr>("ranks");
    int64_t p = rankFormParam(decl);
    if (p < 0 || !ranks || ranks.empty())
      return decl.emitError() << "malformed " << kRankFormsAttrName << " " << forms;
    // Without a tensor spec for the parameter, any form reports what is
    // wrong with the specs.
    int64_t rank = ranks[0];
    if (p < (int64_t)specs.size() && specs[p].isTensor)
      rank = specs[p].sizes.size();
    func::FuncOp form = rankFormOf(decl, rank);
    if (!form) {
      auto nameAttr = decl.getArgAttrOfType<StringAttr>(p, kArgNameAttrName);
      InFlightDiagnostic d = decl.emitError()
                             << "kernel '" << decl.getSymName() << "' tiles the sizes of '"
                             << (nameAttr ? nameAttr.getValue() : StringRef("?"))
                             << "', and was captured for ranks";
      for (int64_t r : ranks.asArrayRef())
        d << " " << r;
      d << "; " << specs[p].str() << " has rank " << rank;
      return failure();
    }
    return form;
  }

  LogicalResult applySpecs(func::FuncOp func, ArrayRef<LaunchArg> specs) {
    Block &entry = func.getBody().front();
    if (specs.size() != entry.getNumArguments())
      return func.emitError() << "kernel '" << func.getSymName() << "' takes "
                              << entry.getNumArguments() << " arguments, "
                              << specs.size() << " given";
    OpBuilder builder(func.getContext());
    builder.setInsertionPointToStart(&entry);
    for (auto [i, spec] : llvm::enumerate(specs)) {
      BlockArgument arg = entry.getArgument(i);
      auto nameAttr = func.getArgAttrOfType<StringAttr>(i, kArgNameAttrName);
      std::string name = nameAttr ? nameAttr.str() : "#" + std::to_string(i);
      // Arguments are positional; a name that is not the parameter's is a
      // mix-up (`--arg y=... --arg x=...`), not a rename.
      if (nameAttr && !spec.name.empty() && spec.name != name)
        return func.emitError() << "argument " << i + 1 << " of kernel '" << func.getSymName()
                                << "' is '" << name << "', but was given as '" << spec.name
                                << "' (" << spec.str() << "); give one argument per parameter, "
                                << "in order";
      if (auto tensor = dyn_cast<kite::TensorType>(arg.getType())) {
        if (!spec.isTensor)
          return func.emitError() << "argument '" << name
                                  << "' is a tensor, but was given as a scalar ("
                                  << spec.str() << ")";
        if (tensor.hasRank() && tensor.getRank() != (int64_t)spec.sizes.size())
          return func.emitError() << "argument '" << name << "' has rank "
                                  << tensor.getRank() << " in the kernel, but "
                                  << spec.str() << " has rank "
                                  << spec.sizes.size();
        arg.setType(kite::TensorType::get(
            func.getContext(), ArrayRef<int64_t>(spec.sizes), spec.dtype));
        // A tensor with sizes taken at launch is contiguous; a stride that
        // depends on such a size is computed in the kernel (kDynamic here).
        SmallVector<int64_t> strides(spec.strides);
        if (strides.empty()) {
          strides.resize(spec.sizes.size());
          int64_t s = 1;
          bool dynamic = false;
          for (int64_t d = spec.sizes.size() - 1; d >= 0; --d) {
            strides[d] = dynamic ? ShapedType::kDynamic : s;
            dynamic |= spec.isDynamic(d);
            if (d > 0 && !dynamic)
              s *= spec.sizes[d];
          }
        }
        if (!spec.divisors.empty())
          func.setArgAttr(i, "kite.divisors", builder.getDenseI64ArrayAttr(spec.divisors));
        if (!spec.bounds.empty())
          func.setArgAttr(i, "kite.bounds", builder.getDenseI64ArrayAttr(spec.bounds));
        if (spec.index32)
          func.setArgAttr(i, "kite.index32", builder.getUnitAttr());
        func.setArgAttr(i, "kite.strides", builder.getDenseI64ArrayAttr(strides));
        func.setArgAttr(i, "kite.align", builder.getI64IntegerAttr(spec.alignment));
        continue;
      }
      if (spec.isTensor)
        return func.emitError() << "argument '" << name << "' is a scalar of type "
                                << arg.getType() << ", but was given a tensor ("
                                << spec.str() << ")";
      if (spec.dtype != arg.getType())
        return func.emitError() << "scalar argument '" << name << "' is of type "
                                << dtypeName(arg.getType()) << " in the kernel, but was given as "
                                << dtypeName(spec.dtype) << " (" << spec.str() << ")";
      bool isBool = arg.getType().isInteger(1);
      if (isBool && !spec.value)
        return func.emitError() << "bool argument '" << name
                                << "' is a compile-time specialization: give its "
                                   "value (e.g. " << name << "=bool:1)";
      if (!spec.value)
        continue;
      // A specialized scalar: bools always, others where `specialize()` asks.
      Value constant;
      if (auto it = dyn_cast<IntegerType>(arg.getType()))
        constant = builder.create<arith::ConstantIntOp>(
            arg.getLoc(), (int64_t)*spec.value, it.getWidth());
      else
        constant = builder.create<arith::ConstantFloatOp>(
            arg.getLoc(), APFloat(*spec.value), cast<FloatType>(arg.getType()));
      if (isBool) {
        arg.replaceAllUsesWith(constant);
        continue;
      }
      for (OpOperand &use : llvm::make_early_inc_range(arg.getUses()))
        if (auto s = dyn_cast<SpecializeOp>(use.getOwner())) {
          s.replaceAllUsesWith(constant);
          s.erase();
        }
    }
    return success();
  }
};

} // namespace
