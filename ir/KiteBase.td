//===- KiteBase.td - the kite dialect ---------------------*- tablegen -*-===//
//
// The dialect definition and the enums shared by its ops.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_BASE_TD
#define KITE_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Kite_Dialect : Dialect {
  let name = "kite";
  let cppNamespace = "::kite";
  let summary = "Loop-level tile kernels captured from C++";
  let description = [{
    The kite dialect holds kernels as the user wrote them: a host prologue
    (sizes, scalar math, allocation), then top-level `kite.tile_for` /
    `kite.grid_for` loops that map onto the launch grid, with loads, stores
    and PyTorch-like operations on tiles inside them. Element types and
    ranks may be unknown (`?`, `*`) in captured IR; specialization fills them
    in from the launch arguments. `docs/dialect.md` gives the semantics.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect"];
}

class Kite_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kite_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Kite_UnaryKind : I32EnumAttr<"UnaryKind", "elementwise unary operation", [
  I32EnumAttrCase<"neg", 0>, I32EnumAttrCase<"exp", 1>,
  I32EnumAttrCase<"exp2", 2>, I32EnumAttrCase<"log", 3>,
  I32EnumAttrCase<"log2", 4>, I32EnumAttrCase<"sqrt", 5>,
  I32EnumAttrCase<"rsqrt", 6>, I32EnumAttrCase<"abs", 7>,
  I32EnumAttrCase<"sin", 8>, I32EnumAttrCase<"cos", 9>,
  I32EnumAttrCase<"tanh", 10>, I32EnumAttrCase<"erf", 11>,
  I32EnumAttrCase<"sigmoid", 12>, I32EnumAttrCase<"relu", 13>,
  I32EnumAttrCase<"silu", 14>, I32EnumAttrCase<"gelu", 15>,
  I32EnumAttrCase<"floor", 16>, I32EnumAttrCase<"ceil", 17>,
  I32EnumAttrCase<"not_", 18, "not">]> {
  let cppNamespace = "::kite";
}

def Kite_BinaryKind : I32EnumAttr<"BinaryKind", "elementwise binary operation", [
  I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>,
  I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"div", 3>,
  I32EnumAttrCase<"mod", 4>, I32EnumAttrCase<"pow", 5>,
  I32EnumAttrCase<"maximum", 6>, I32EnumAttrCase<"minimum", 7>,
  I32EnumAttrCase<"and_", 8, "and">, I32EnumAttrCase<"or_", 9, "or">,
  I32EnumAttrCase<"xor_", 10, "xor">]> {
  let cppNamespace = "::kite";
}

def Kite_CompareKind : I32EnumAttr<"CompareKind", "elementwise comparison", [
  I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
  I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
  I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::kite";
}

def Kite_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
  I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
  I32EnumAttrCase<"amax", 2>, I32EnumAttrCase<"amin", 3>,
  I32EnumAttrCase<"prod", 4>, I32EnumAttrCase<"argmax", 5>,
  I32EnumAttrCase<"argmin", 6>]> {
  let cppNamespace = "::kite";
}

def Kite_ScanKind : I32EnumAttr<"ScanKind", "inclusive scan", [
  I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"prod", 1>,
  I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>]> {
  let cppNamespace = "::kite";
}

def Kite_RandomKind : I32EnumAttr<"RandomKind", "counter-based random draw", [
  I32EnumAttrCase<"uniform", 0>, I32EnumAttrCase<"normal", 1>,
  I32EnumAttrCase<"bits", 2>]> {
  let cppNamespace = "::kite";
}

def Kite_AtomicKind : I32EnumAttr<"AtomicKind", "atomic read-modify-write", [
  I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>,
  I32EnumAttrCase<"min", 2>]> {
  let cppNamespace = "::kite";
}

def Kite_SpanField : I32EnumAttr<"SpanField", "a scalar property of a tile", [
  I32EnumAttrCase<"begin", 0>, I32EnumAttrCase<"end", 1>,
  I32EnumAttrCase<"block_size", 2>, I32EnumAttrCase<"id", 3>,
  I32EnumAttrCase<"count", 4>]> {
  let cppNamespace = "::kite";
}

#endif // KITE_BASE_TD
