//===- Scalars.cpp - scalar values and arith ops ----------------------------===//
//
// This file implements the emission of scalar values: kernel parameters,
// constants, and arith/math ops on scalars.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

std::string Emitter::scalar(Value v) {
  auto it = scalars.find(v);
  if (it != scalars.end())
    return it->second;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return std::to_string(*c) + (v.getType().isInteger(64) ? "LL" : "");
  return "<missing scalar>";
}

/// A named variable holding scalar `v` (so it can be addressed).
std::string Emitter::scalarVar(Value v) {
  std::string expr = scalar(v);
  std::string name = fresh("x");
  line(llvm::formatv("const {0} {1} = {2};", cType(v.getType()), name, expr));
  return name;
}

LogicalResult Emitter::emitScalarOp(Operation *op) {
  auto bin = [&](StringRef sym) -> LogicalResult {
    std::string name = fresh("x");
    line(llvm::formatv("const {0} {1} = {2} {3} {4};", cType(op->getResult(0).getType()),
                       name, scalar(op->getOperand(0)), sym, scalar(op->getOperand(1))));
    scalars[op->getResult(0)] = name;
    return success();
  };
  auto call = [&](StringRef fn) -> LogicalResult {
    std::string name = fresh("x");
    std::string args;
    for (Value v : op->getOperands())
      args += (args.empty() ? "" : ", ") + scalar(v);
    line(llvm::formatv("const {0} {1} = {2}({3});", cType(op->getResult(0).getType()),
                       name, fn, args));
    scalars[op->getResult(0)] = name;
    return success();
  };
  auto cast = [&]() -> LogicalResult {
    std::string name = fresh("x");
    Type to = op->getResult(0).getType();
    line(llvm::formatv("const {0} {1} = cvt<{0}>({2});", cType(to), name,
                       scalar(op->getOperand(0))));
    scalars[op->getResult(0)] = name;
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp c) -> LogicalResult {
        Attribute v = c.getValue();
        std::string text;
        if (auto i = dyn_cast<IntegerAttr>(v)) {
          if (c.getType().isInteger(1))
            text = i.getValue().isZero() ? "false" : "true";
          else
            text = std::to_string(i.getValue().getSExtValue()) +
                   (c.getType().isInteger(64) ? "LL" : "");
        } else if (auto f = dyn_cast<FloatAttr>(v)) {
          text = floatLiteral(f.getValueAsDouble());
          if (c.getType().isF32())
            text = "(float)" + text;
        } else {
          return c.emitError() << "unsupported constant " << v;
        }
        scalars[c.getResult()] = text;
        return success();
      })
      .Case<arith::AddIOp, arith::AddFOp>([&](auto) { return bin("+"); })
      .Case<arith::SubIOp, arith::SubFOp>([&](auto) { return bin("-"); })
      .Case<arith::MulIOp, arith::MulFOp>([&](auto) { return bin("*"); })
      .Case<arith::DivSIOp, arith::DivFOp>([&](auto) { return bin("/"); })
      .Case<arith::RemSIOp>([&](auto) { return bin("%"); })
      .Case<arith::AndIOp>([&](auto) { return bin("&"); })
      .Case<arith::OrIOp>([&](auto) { return bin("|"); })
      .Case<arith::XOrIOp>([&](auto) { return bin("^"); })
      .Case<arith::ShLIOp>([&](auto) { return bin("<<"); })
      .Case<arith::ShRSIOp>([&](auto) { return bin(">>"); })
      .Case<arith::RemFOp>([&](auto) { return call("fmod"); })
      .Case<arith::MaxSIOp, arith::MaximumFOp, arith::MaxNumFOp>(
          [&](auto) { return call("k_maximum"); })
      .Case<arith::MinSIOp, arith::MinimumFOp, arith::MinNumFOp>(
          [&](auto) { return call("k_minimum"); })
      .Case<arith::CeilDivSIOp>([&](auto) {
        std::string name = fresh("x");
        line(llvm::formatv("const i64 {0} = ({1} + {2} - 1) / {2};", name,
                           scalar(op->getOperand(0)), scalar(op->getOperand(1))));
        scalars[op->getResult(0)] = name;
        return success();
      })
      .Case<arith::FloorDivSIOp>([&](auto) {
        std::string name = fresh("x");
        std::string a = scalar(op->getOperand(0)), b = scalar(op->getOperand(1));
        line(llvm::formatv("const {0} {1} = ({2} / {3}) - ((({2} % {3}) != 0) && "
                           "(({2} < 0) != ({3} < 0)));",
                           cType(op->getResult(0).getType()), name, a, b));
        scalars[op->getResult(0)] = name;
        return success();
      })
      .Case<arith::NegFOp>([&](auto) {
        std::string name = fresh("x");
        line(llvm::formatv("const {0} {1} = -{2};", cType(op->getResult(0).getType()),
                           name, scalar(op->getOperand(0))));
        scalars[op->getResult(0)] = name;
        return success();
      })
      .Case([&](arith::CmpIOp c) {
        static const char *syms[] = {"==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="};
        return bin(syms[(int)c.getPredicate()]);
      })
      .Case([&](arith::CmpFOp c) -> LogicalResult {
        StringRef sym;
        switch (c.getPredicate()) {
        case arith::CmpFPredicate::OEQ: case arith::CmpFPredicate::UEQ: sym = "=="; break;
        case arith::CmpFPredicate::ONE: case arith::CmpFPredicate::UNE: sym = "!="; break;
        case arith::CmpFPredicate::OLT: case arith::CmpFPredicate::ULT: sym = "<"; break;
        case arith::CmpFPredicate::OLE: case arith::CmpFPredicate::ULE: sym = "<="; break;
        case arith::CmpFPredicate::OGT: case arith::CmpFPredicate::UGT: sym = ">"; break;
        case arith::CmpFPredicate::OGE: case arith::CmpFPredicate::UGE: sym = ">="; break;
        default:
          return c.emitError() << "unsupported float comparison";
        }
        return bin(sym);
      })
      .Case([&](arith::SelectOp s) {
        std::string name = fresh("x");
        line(llvm::formatv("const {0} {1} = {2} ? {3} : {4};",
                           cType(s.getType()), name, scalar(s.getCondition()),
                           scalar(s.getTrueValue()), scalar(s.getFalseValue())));
        scalars[s.getResult()] = name;
        return success();
      })
      .Case<arith::SIToFPOp, arith::FPToSIOp, arith::ExtFOp, arith::TruncFOp,
            arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp,
            arith::UIToFPOp>([&](auto) { return cast(); })
      .Case<math::SqrtOp>([&](auto) { return call("k_sqrt"); })
      .Case<math::RsqrtOp>([&](auto) { return call("k_rsqrt"); })
      .Case<math::ExpOp>([&](auto) { return call("k_exp"); })
      .Case<math::Exp2Op>([&](auto) { return call("k_exp2"); })
      .Case<math::LogOp>([&](auto) { return call("k_log"); })
      .Case<math::Log2Op>([&](auto) { return call("k_log2"); })
      .Case<math::SinOp>([&](auto) { return call("k_sin"); })
      .Case<math::CosOp>([&](auto) { return call("k_cos"); })
      .Case<math::TanhOp>([&](auto) { return call("k_tanh"); })
      .Case<math::ErfOp>([&](auto) { return call("k_erf"); })
      .Case<math::AbsFOp, math::AbsIOp>([&](auto) { return call("k_abs"); })
      .Case<math::FloorOp>([&](auto) { return call("k_floor"); })
      .Case<math::CeilOp>([&](auto) { return call("k_ceil"); })
      .Case<math::PowFOp, math::IPowIOp, math::FPowIOp>([&](auto) { return call("k_pow"); })
      .Default([&](Operation *other) {
        return other->emitError() << "kite cannot generate CUDA for '"
                                  << other->getName() << "' yet";
      });
}
