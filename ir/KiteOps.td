//===- KiteOps.td - kite operations -----------------------*- tablegen -*-===//
//
// The ops of the kite dialect, grouped as the language is: the host
// prologue, loops and tiles, memory, values, reductions, matmuls, creation
// and shape ops.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_OPS_TD
#define KITE_OPS_TD

include "KiteBase.td"
include "KiteTypes.td"
include "KiteAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Host prologue
//===----------------------------------------------------------------------===//

def Kite_SizeOp : Kite_Op<"size", [Pure]> {
  let summary = "the size of a tensor dimension";
  let description = [{
    `x.size(dim)`. A negative `dim` counts from the end.

    ```mlir
    %m = kite.size %x[0] : !kite.tensor<*x?>
    ```
  }];
  let arguments = (ins Kite_AnyTensor:$tensor, Kite_DimAttr:$dim);
  let results = (outs I64:$result);
  let assemblyFormat = "$tensor `[` $dim `]` attr-dict `:` type($tensor)";
  let hasVerifier = 1;
}

def Kite_DTypeOfOp : Kite_Op<"dtype_of", [Pure]> {
  let summary = "the dtype of a tensor or tile";
  let description = [{
    `x.dtype()`.

    ```mlir
    %dt = kite.dtype_of %x : !kite.tensor<*x?>
    ```
  }];
  let arguments = (ins AnyTypeOf<[Kite_AnyTensor, Kite_AnyTile]>:$value);
  let results = (outs Kite_DType:$result);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Kite_DTypeConstOp : Kite_Op<"dtype_const", [Pure, ConstantLike]> {
  let summary = "a constant dtype";
  let description = [{
    `kite::f32` and friends. `i1` is `boolean`.

    ```mlir
    %f32 = kite.dtype_const f32
    ```
  }];
  let arguments = (ins TypeAttr:$dtype);
  let results = (outs Kite_DType:$result);
  let assemblyFormat = "$dtype attr-dict";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kite_EmptyOp : Kite_Op<"empty"> {
  let summary = "allocate an output tensor";
  let description = [{
    `empty({m, n}, dtype)`, or `zeros(...)` with `zeroed`. Allocation happens
    on the host before the launch.

    ```mlir
    %out = kite.empty [%m, %n], %dt : !kite.tensor<?x?x?>
    ```
  }];
  let arguments = (ins Variadic<I64>:$sizes, Kite_DType:$dtype,
                       UnitAttr:$zeroed);
  let results = (outs Kite_AnyTensor:$result);
  let assemblyFormat = [{
    ` ` `[` $sizes `]` `,` $dtype (`zeroed` $zeroed^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Kite_EmptyLikeOp : Kite_Op<"empty_like"> {
  let summary = "allocate a tensor with another tensor's sizes and dtype";
  let description = [{
    `empty_like(x)`, or `zeros_like(x)` with `zeroed`. The result is
    contiguous.

    ```mlir
    %out = kite.empty_like %x : !kite.tensor<*x?> -> !kite.tensor<*x?>
    ```
  }];
  let arguments = (ins Kite_AnyTensor:$source, UnitAttr:$zeroed);
  let results = (outs Kite_AnyTensor:$result);
  let assemblyFormat = [{
    $source (`zeroed` $zeroed^)? attr-dict `:` type($source) `->` type($result)
  }];
}

def Kite_TensorReshapeOp : Kite_Op<"tensor_reshape", [Pure]> {
  let summary = "reshape or view a contiguous tensor";
  let description = [{
    `x.reshape({a, b})` or `x.view(...)` in the host prologue. One size may
    be -1. The tensor must be contiguous (checked at launch).

    ```mlir
    %y = kite.tensor_reshape %x [%a, %b] : !kite.tensor<*x?> -> !kite.tensor<?x?x?>
    ```
  }];
  let arguments = (ins Kite_AnyTensor:$source, Variadic<I64>:$sizes,
                       UnitAttr:$view);
  let results = (outs Kite_AnyTensor:$result);
  let assemblyFormat = [{
    $source ` ` `[` $sizes `]` (`view` $view^)? attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kite_SpecializeOp : Kite_Op<"specialize", [Pure, SameOperandsAndResultType]> {
  let summary = "make a scalar a compile-time constant";
  let description = [{
    `specialize(v)`: the value becomes part of the specialization key and a
    constant in the generated code.

    ```mlir
    %d = kite.specialize %d0 : i64
    ```
  }];
  let arguments = (ins Kite_Scalar:$value);
  let results = (outs Kite_Scalar:$result);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Kite_BlockSizeOp : Kite_Op<"block_size", [Pure]> {
  let summary = "a tunable block size";
  let description = [{
    One per tunable block size, numbered in source order: `id` is the index
    into the config's `block_sizes`. `register_block_size(n)` and every
    `tile()` dimension without an explicit block size give one, with the
    dimension's `extent` when it is known; `register_block_size(lo, hi)`
    gives `min` and `max`. Config application replaces it by a constant.
    Ids are at most `kMaxBlockSizeId` (1023): a config holds one block size
    per id, so the bound keeps a config (and its search space) small and
    rejects an id that would make one huge.

    ```mlir
    %bs = kite.block_size 0 extent %m : i64
    %bk = kite.block_size 1 {min = 16, max = 128} : i64
    ```
  }];
  let arguments = (ins Optional<I64>:$extent, I64Attr:$id,
                       OptionalAttr<I64Attr>:$min, OptionalAttr<I64Attr>:$max);
  let results = (outs I64:$result);
  let assemblyFormat = "$id (`extent` $extent^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loops and spans
//===----------------------------------------------------------------------===//

def Kite_TileForOp : Kite_Op<"tile_for", [
    AttrSizedOperandSegments, RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a loop over the tiles of an N-D iteration space";
  let description = [{
    `for (auto [tm, tn] : tile(m, n))`. Dimension `d` runs over
    `[lowerBounds[d], upperBounds[d])` in tiles of `blockSizes[d]`; the body
    sees one `!kite.span` per dimension, then the loop-carried values.

    A `tile_for` directly in the kernel function is a top-level loop: its
    iterations are independent and map onto the launch grid (several
    top-level loops share the program-id space). A nested one runs
    sequentially inside one program and may carry values.

    ```mlir
    kite.tile_for (%tm, %tn) = (%c0, %c0) to (%m, %n) block (%b0, %b1) {
      ...
    }
    %r = kite.tile_for (%tk) = (%c0) to (%k) block (%b2)
        iter_args(%acc = %init) -> (!kite.tile<?x?xf32>) {
      ...
      kite.yield %next : !kite.tile<?x?xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<I64>:$lowerBounds, Variadic<I64>:$upperBounds,
                       Variadic<I64>:$blockSizes, Variadic<AnyType>:$initArgs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ValueRange":$lowerBounds,
                   "::mlir::ValueRange":$upperBounds,
                   "::mlir::ValueRange":$blockSizes,
                   "::mlir::ValueRange":$initArgs)>
  ];
  let extraClassDeclaration = [{
    unsigned getNumDims() { return getLowerBounds().size(); }
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    ::mlir::Block::BlockArgListType getSpans() {
      return getBodyBlock()->getArguments().take_front(getNumDims());
    }
    ::mlir::Block::BlockArgListType getRegionIterArgs() {
      return getBodyBlock()->getArguments().drop_front(getNumDims());
    }
    bool isTopLevel() { return ::llvm::isa<::mlir::func::FuncOp>((*this)->getParentOp()); }
  }];
}

def Kite_GridForOp : Kite_Op<"grid_for", [
    AttrSizedOperandSegments, RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a loop over scalar indices of an N-D space";
  let description = [{
    `for (auto i : grid(n))`: a tile loop of block size 1 whose variables
    are `i64` indices. Top-level and nested as for `kite.tile_for`.

    ```mlir
    kite.grid_for (%i) = (%c0) to (%n) {
      ...
    }
    ```
  }];
  let arguments = (ins Variadic<I64>:$lowerBounds, Variadic<I64>:$upperBounds,
                       Variadic<AnyType>:$initArgs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ValueRange":$lowerBounds,
                   "::mlir::ValueRange":$upperBounds,
                   "::mlir::ValueRange":$initArgs)>
  ];
  let extraClassDeclaration = [{
    unsigned getNumDims() { return getLowerBounds().size(); }
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    ::mlir::Block::BlockArgListType getIndices() {
      return getBodyBlock()->getArguments().take_front(getNumDims());
    }
    ::mlir::Block::BlockArgListType getRegionIterArgs() {
      return getBodyBlock()->getArguments().drop_front(getNumDims());
    }
    bool isTopLevel() { return ::llvm::isa<::mlir::func::FuncOp>((*this)->getParentOp()); }
  }];
}

def Kite_YieldOp : Kite_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["TileForOp", "GridForOp", "AssociativeScanOp"]>]> {
  let summary = "the loop-carried values of the next iteration, or a combine's result";
  let description = [{
    Ends a tile or grid loop's body (the values carried to the next
    iteration) and an associative scan's combine function (its result).

    ```mlir
    kite.yield %acc : !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Kite_SpanQueryOp : Kite_Op<"span_query", [Pure]> {
  let summary = "a scalar property of a tile";
  let description = [{
    `t.begin()`, `t.end()` (clamped to the dimension's end),
    `t.block_size()`, `t.id()`, `t.count()` (tiles in the dimension).

    ```mlir
    %b = kite.span_query begin %tm
    ```
  }];
  let arguments = (ins Kite_SpanField:$field, Kite_Span:$span);
  let results = (outs I64:$result);
  let assemblyFormat = "$field $span attr-dict";
}

def Kite_SpanIndexOp : Kite_Op<"span_index", [Pure]> {
  let summary = "the indices of a tile as a 1-D tile";
  let description = [{
    `t.index()`: `begin, begin+1, ...`; masked past the dimension's end.

    ```mlir
    %idx = kite.span_index %tm : !kite.tile<?xi64>
    ```
  }];
  let arguments = (ins Kite_Span:$span);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = "$span attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// Subscripts: `indices` are the operands; `layout` has one entry per
// subscript position: k >= 0 is indices[k], -1 is `all`, -2 is `newaxis`.
// An index's kind is its type: !kite.span (a tile), an integer (a scalar
// index, the dimension is dropped), a tile of integers (a gather).
class Kite_SubscriptOp<string mnemonic, list<Trait> traits = []>
    : Kite_Op<mnemonic, !listconcat(traits, [AttrSizedOperandSegments])> {
  code subscriptDecls = [{
    /// The subscript positions, resolving `layout` against `indices`.
    ::llvm::SmallVector<::kite::Subscript> getSubscripts();
  }];
}

def Kite_LoadOp : Kite_SubscriptOp<"load", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "read a tile from a tensor";
  let description = [{
    `x[tm, all]`, or `load(x, {idx...}, mask)`. Lanes outside the tensor or
    off in `mask` read as 0 and never affect a result.

    ```mlir
    %row = kite.load %x[%tm, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %g = kite.load %w[%ids, all] : !kite.tensor<?x?x?>[!kite.tile<?xi64>] -> !kite.tile<?x?x?>
    ```
  }];
  let arguments = (ins Kite_AnyTensor:$tensor, Variadic<AnyType>:$indices,
                       Optional<AnyType>:$mask, DenseI32ArrayAttr:$layout);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = [{
    $tensor `[` custom<Subscripts>($indices, $layout) `]` (`mask` $mask^)? attr-dict
    `:` type($tensor) (`[` type($indices)^ `]`)? (`mask` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = subscriptDecls;
}

def Kite_StoreOp : Kite_SubscriptOp<"store", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "write a tile (or scalar) into a tensor";
  let description = [{
    `x[tm, tn] = v`, or `store(x, {idx...}, v, mask)`. The value is cast to
    the tensor's dtype and broadcast to the subscript's shape; lanes outside
    the tensor or off in `mask` are not written.

    ```mlir
    kite.store %v, %out[%tm, %tn] : !kite.tile<?x?xf32>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
    ```
  }];
  let arguments = (ins Kite_TileOrScalar:$value, Kite_AnyTensor:$tensor,
                       Variadic<AnyType>:$indices, Optional<AnyType>:$mask,
                       DenseI32ArrayAttr:$layout);
  let assemblyFormat = [{
    $value `,` $tensor `[` custom<Subscripts>($indices, $layout) `]` (`mask` $mask^)? attr-dict
    `:` type($value) `,` type($tensor) (`[` type($indices)^ `]`)? (`mask` type($mask)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = subscriptDecls;
}

def Kite_AtomicOp : Kite_SubscriptOp<"atomic", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "an atomic read-modify-write of tensor elements";
  let description = [{
    `atomic_add(x, {idx...}, v)` (and `max`, `min`). Every lane's update is
    applied, duplicates included.

    ```mlir
    kite.atomic add %v, %x[%ids] : !kite.tile<?x?>, !kite.tensor<?x?>[!kite.tile<?xi64>]
    ```
  }];
  let arguments = (ins Kite_AtomicKind:$kind, Kite_TileOrScalar:$value,
                       Kite_AnyTensor:$tensor, Variadic<AnyType>:$indices,
                       Optional<AnyType>:$mask, DenseI32ArrayAttr:$layout);
  let assemblyFormat = [{
    $kind $value `,` $tensor `[` custom<Subscripts>($indices, $layout) `]` (`mask` $mask^)? attr-dict
    `:` type($value) `,` type($tensor) (`[` type($indices)^ `]`)? (`mask` type($mask)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = subscriptDecls;
}

//===----------------------------------------------------------------------===//
// Elementwise values
//===----------------------------------------------------------------------===//

def Kite_UnaryOp : Kite_Op<"unary", [Pure]> {
  let summary = "an elementwise unary operation";
  let description = [{
    `exp(x)`, `-x`, `~b`, ... with PyTorch's dtype rules (integer inputs of
    transcendental functions compute in the default float type).

    ```mlir
    %e = kite.unary exp %x : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Kite_UnaryKind:$kind, Kite_AnyTile:$operand);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = "$kind $operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Kite_BinaryOp : Kite_Op<"binary", [Pure]> {
  let summary = "an elementwise binary operation with broadcasting";
  let description = [{
    `a + b`, `maximum(a, b)`, ... Either operand may be a scalar (a weak
    type, as a Python scalar in PyTorch); at least one is a tile. Shapes
    broadcast as in PyTorch.

    ```mlir
    %d = kite.binary sub %row, %max : !kite.tile<?x?xf32>, !kite.tile<?x1xf32> -> !kite.tile<?x?xf32>
    %s = kite.binary mul %acc, %scale : !kite.tile<?x?xf32>, f32 -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Kite_BinaryKind:$kind, Kite_TileOrScalar:$lhs,
                       Kite_TileOrScalar:$rhs);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = [{
    $kind $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kite_CompareOp : Kite_Op<"compare", [Pure]> {
  let summary = "an elementwise comparison";
  let description = [{
    ```mlir
    %m = kite.compare lt %idx, %n : !kite.tile<?xi64>, i64 -> !kite.tile<?xi1>
    ```
  }];
  let arguments = (ins Kite_CompareKind:$kind, Kite_TileOrScalar:$lhs,
                       Kite_TileOrScalar:$rhs);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = [{
    $kind $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kite_WhereOp : Kite_Op<"where", [Pure]> {
  let summary = "an elementwise select";
  let description = [{
    `where(cond, a, b)` with broadcasting.

    ```mlir
    %r = kite.where %c, %a, %b : !kite.tile<?xi1>, !kite.tile<?xf32>, f32 -> !kite.tile<?xf32>
    ```
  }];
  let arguments = (ins Kite_TileOrScalar:$condition, Kite_TileOrScalar:$trueValue,
                       Kite_TileOrScalar:$falseValue);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = [{
    $condition `,` $trueValue `,` $falseValue attr-dict `:` type($condition) `,`
    type($trueValue) `,` type($falseValue) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Kite_RandomOp : Kite_Op<"random", [Pure]> {
  let summary = "counter-based random numbers, one per offset";
  let description = [{
    `rand(seed, offsets)` (`uniform`, f32 in [0, 1)), `randn` (`normal`,
    f32), and the 63 uniform bits `randint` reduces into its range (`bits`,
    i64): Philox 4x32-10 of counter (offset, 0) under key `seed`, as
    kite/random.hpp computes it in reference mode, so a value depends only
    on (seed, offset).

    ```mlir
    %u = kite.random uniform %seed, %off : i64, !kite.tile<?x?xi64> -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Kite_RandomKind:$kind, AnyInteger:$seed, Kite_AnyTile:$offsets);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = [{
    $kind $seed `,` $offsets attr-dict `:` type($seed) `,` type($offsets) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kite_CastOp : Kite_Op<"cast", [Pure]> {
  let summary = "convert a tile to a dtype";
  let description = [{
    `v.to(dtype)`.

    ```mlir
    %f = kite.cast %row, %f32 : !kite.tile<?x?x?> -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$source, Kite_DType:$dtype);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = "$source `,` $dtype attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Kite_ConvertLayoutOp : Kite_Op<"convert_layout", [Pure]> {
  let summary = "move a tile to another layout";
  let description = [{
    The same elements in the layout of the result type. kite-assign-layouts
    inserts it wherever a value's layout differs from the one its user
    needs; it is the only op whose result layout differs from its operand's.
    How the data moves (register renaming, warp shuffles, shared memory) is
    emission's choice (`kite::layout::planConversion`).

    ```mlir
    %r = kite.convert_layout %x : !kite.tile<16xf32, #a> -> !kite.tile<16xf32, #b>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$source);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and matmuls
//===----------------------------------------------------------------------===//

def Kite_ReduceOp : Kite_Op<"reduce", [Pure]> {
  let summary = "a reduction over one dimension";
  let description = [{
    `sum(v, dim, keepdim)` and friends. Masked lanes do not take part.
    `argmax`/`argmin` give `i64` indices (the first extreme).

    `local` (with `keepdim`; made only by kite-reduction-loops): each
    thread combines just the elements it holds, with no exchange between
    threads, so threads that share a row may hold different results. Each
    is the reduction of a subset of the row that includes the thread's own
    elements (the full reduction is one valid answer). Online statistics
    use it for a per-thread running max, and combine across threads once,
    after their loop, with a full reduction.

    ```mlir
    %s = kite.reduce sum %e {dim = 1 : i64, keepdim} : !kite.tile<?x?xf32> -> !kite.tile<?x1xf32>
    ```
  }];
  let arguments = (ins Kite_ReduceKind:$kind, Kite_AnyTile:$operand,
                       Kite_DimAttr:$dim, UnitAttr:$keepdim, UnitAttr:$local);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = "$kind $operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Kite_ScanOp : Kite_Op<"scan", [Pure]> {
  let summary = "an inclusive scan along one dimension";
  let description = [{
    `cumsum(v, dim)`, `cumprod`, `cummax`, `cummin`: element i of the
    result combines elements 0..i of the operand along `dim`. Masked lanes
    past the dimension's extent do not take part (they only follow the
    valid ones). Sums and products of integers and booleans give `i64`;
    otherwise the result keeps the operand's dtype, and 16-bit floats
    accumulate in `f32`. `max`/`min` propagate NaN, as PyTorch's do, and
    may also give the i64 position of each running extreme (`indices`:
    torch.cummax's; a tie or a later NaN takes the later position).

    ```mlir
    %c = kite.scan sum %x {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
    %m, %i = kite.scan max %x {dim = 1 : i64}
        : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>, !kite.tile<?x?xi64>
    ```
  }];
  let arguments = (ins Kite_ScanKind:$kind, Kite_AnyTile:$operand, Kite_DimAttr:$dim);
  let results = (outs Kite_AnyTile:$result, Optional<Kite_AnyTile>:$indices);
  let assemblyFormat = [{
    $kind $operand attr-dict `:` type($operand) `->` type($result) (`,` type($indices)^)?
  }];
  let hasVerifier = 1;
}

def Kite_AssociativeScanOp : Kite_Op<"associative_scan", [Pure,
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "an inclusive scan along one dimension with a user's combine function";
  let description = [{
    `associative_scan(v, dim, combine)` and `associative_scan(std::tuple{v,
    w, ...}, dim, combine)`: element i of result j is the j-th value of
    combine(...combine(combine(e_0, e_1), e_2)..., e_i), where e_k is the
    tuple of the operands' elements at position k along `dim`. The
    operands have one shape; the body takes the 2N rank-0 tiles of two
    tuples (first the earlier one's N, then the later one's) and yields N
    rank-0 tiles of the operands' dtypes. `combine` must be associative: the
    GPU combines in a tree, not left to right. The body computes only
    elementwise, from its arguments and constants.

    ```mlir
    %a, %b = kite.associative_scan %x, %y {dim = 1 : i64}
        : !kite.tile<?x?xf32>, !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>, !kite.tile<?x?xf32> {
    ^bb0(%ex: !kite.tile<f32>, %ey: !kite.tile<f32>, %lx: !kite.tile<f32>, %ly: !kite.tile<f32>):
      %m = kite.binary mul %ex, %lx : !kite.tile<f32>, !kite.tile<f32> -> !kite.tile<f32>
      %t = kite.binary mul %ey, %lx : !kite.tile<f32>, !kite.tile<f32> -> !kite.tile<f32>
      %s = kite.binary add %t, %ly : !kite.tile<f32>, !kite.tile<f32> -> !kite.tile<f32>
      kite.yield %m, %s : !kite.tile<f32>, !kite.tile<f32>
    }
    ```
  }];
  let arguments = (ins Variadic<Kite_AnyTile>:$operands, Kite_DimAttr:$dim);
  let results = (outs Variadic<Kite_AnyTile>:$results);
  let regions = (region SizedRegion<1>:$combine);
  let assemblyFormat = [{
    $operands attr-dict `:` type($operands) `->` type($results) $combine
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The yield that ends the combine function.
    YieldOp getYield();
  }];
}

def Kite_SortOp : Kite_Op<"sort", [Pure]> {
  let summary = "a sort along one dimension, or its first k";
  let description = [{
    `sort(v, dim, descending)` and, with `k`, `topk(v, k, dim, largest)`
    (`descending` for the largest): the values in order and their i64
    positions along `dim` within the tile. The order is stable (equal
    values by position) and NaN is the largest value, as PyTorch orders
    them. Lanes past the dimension's extent sort after every valid one.
    With `k` (an i64 that specialization makes a constant: a literal or a
    `specialize`d argument), both results have `k` elements along `dim`.

    ```mlir
    %v, %i = kite.sort %x top %k {dim = 1 : i64, descending}
        : !kite.tile<4x1024xf32> -> !kite.tile<4x8xf32>, !kite.tile<4x8xi64>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$operand, Optional<I64>:$k, Kite_DimAttr:$dim,
                       UnitAttr:$descending);
  let results = (outs Kite_AnyTile:$values, Kite_AnyTile:$indices);
  let assemblyFormat = [{
    $operand (`top` $k^)? attr-dict `:` type($operand) `->` type($values) `,` type($indices)
  }];
  let hasVerifier = 1;
}

class Kite_MatmulLikeOp<string mnemonic> : Kite_Op<mnemonic, [Pure]> {
  let results = (outs Kite_AnyTile:$result);
  let hasVerifier = 1;
}

def Kite_DotOp : Kite_MatmulLikeOp<"dot"> {
  let summary = "a 2-D matrix product";
  let description = [{
    `dot(a, b)`: `[M, K] x [K, N] -> [M, N]`; 16-bit float inputs give an
    f32 result (tensor cores accumulate in f32).

    ```mlir
    %c = kite.dot %a, %b : !kite.tile<?x?xbf16>, !kite.tile<?x?xbf16> -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$lhs, Kite_AnyTile:$rhs);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def Kite_MatmulOp : Kite_MatmulLikeOp<"matmul"> {
  let summary = "a matrix product with PyTorch's matmul rules";
  let description = [{
    `matmul(a, b)`: 1-D, 2-D and batched operands; the result has the
    promoted input dtype.

    ```mlir
    %c = kite.matmul %a, %b : !kite.tile<?x?xbf16>, !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$lhs, Kite_AnyTile:$rhs);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def Kite_AddmmOp : Kite_MatmulLikeOp<"addmm"> {
  let summary = "acc + a @ b";
  let description = [{
    `addmm(acc, a, b)`: `[M, N] + [M, K] x [K, N]`; the result has `acc`'s
    dtype, the product accumulates in f32 for 16-bit inputs.

    ```mlir
    %r = kite.addmm %acc, %a, %b : !kite.tile<?x?xf32>, !kite.tile<?x?x?>, !kite.tile<?x?x?> -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$acc, Kite_AnyTile:$lhs, Kite_AnyTile:$rhs);
  let assemblyFormat = [{
    $acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Kite_BmmOp : Kite_MatmulLikeOp<"bmm"> {
  let summary = "a batched matrix product";
  let description = [{
    `bmm(a, b)`: `[B, M, K] x [B, K, N] -> [B, M, N]`, in the promoted
    input dtype, or in `out_dtype` where given (`bmm(a, b, f32)`, as
    torch.bmm's `out_dtype`: f32 for f16 or bf16 inputs keeps the sums
    unrounded).

    ```mlir
    %c = kite.bmm %a, %b : !kite.tile<?x?x?x?>, !kite.tile<?x?x?x?> -> !kite.tile<?x?x?x?>
    %s = kite.bmm %a, %b {out_dtype = f32} : !kite.tile<?x?x?xbf16>, !kite.tile<?x?x?xbf16> -> !kite.tile<?x?x?xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$lhs, Kite_AnyTile:$rhs,
                       OptionalAttr<TypeAttr>:$out_dtype);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def Kite_BaddbmmOp : Kite_MatmulLikeOp<"baddbmm"> {
  let summary = "acc + bmm(a, b)";
  let description = [{
    `baddbmm(acc, a, b)`; the result has `acc`'s dtype.

    ```mlir
    %r = kite.baddbmm %acc, %p, %v : !kite.tile<?x?x?xf32>, !kite.tile<?x?x?x?>, !kite.tile<?x?x?x?> -> !kite.tile<?x?x?xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$acc, Kite_AnyTile:$lhs, Kite_AnyTile:$rhs);
  let assemblyFormat = [{
    $acc `,` $lhs `,` $rhs attr-dict `:` type($acc) `,` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

def Kite_FullOp : Kite_Op<"full", [Pure]> {
  let summary = "a tile filled with one value";
  let description = [{
    `zeros({tm, tn}, f32)`, `full({tm}, -INFINITY, f32)`. A `!kite.span`
    dimension has its tile's block size; an integer dimension is that size
    (a constant or a `kite.block_size`).

    ```mlir
    %z = kite.full [%tm, %tn], %zero, %f32 : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Variadic<Kite_Dim>:$dims, Kite_Scalar:$value,
                       Kite_DType:$dtype);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = [{
    ` ` `[` $dims `]` `,` $value `,` $dtype attr-dict `:` `[` type($dims) `]` `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kite_ArangeOp : Kite_Op<"arange", [Pure]> {
  let summary = "the integers [begin, end) as a 1-D tile";
  let description = [{
    ```mlir
    %r = kite.arange %c0, %bs : !kite.tile<?xi64>
    ```
  }];
  let arguments = (ins I64:$begin, I64:$end);
  let results = (outs Kite_AnyTile:$result);
  let assemblyFormat = "$begin `,` $end attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops on tiles
//===----------------------------------------------------------------------===//

class Kite_ShapeOp<string mnemonic> : Kite_Op<mnemonic, [Pure]> {
  let results = (outs Kite_AnyTile:$result);
  let hasVerifier = 1;
}

def Kite_UnsqueezeOp : Kite_ShapeOp<"unsqueeze"> {
  let summary = "insert a size-1 dimension";
  let description = [{
    ```mlir
    %r = kite.unsqueeze %m {dim = -1 : i64} : !kite.tile<?xf32> -> !kite.tile<?x1xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$operand, Kite_DimAttr:$dim);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def Kite_SqueezeOp : Kite_ShapeOp<"squeeze"> {
  let summary = "remove a size-1 dimension";
  let description = [{
    ```mlir
    %r = kite.squeeze %m {dim = 1 : i64} : !kite.tile<?x1xf32> -> !kite.tile<?xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$operand, Kite_DimAttr:$dim);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def Kite_TransposeOp : Kite_ShapeOp<"transpose"> {
  let summary = "swap two dimensions";
  let description = [{
    ```mlir
    %t = kite.transpose %k {dim0 = 1 : i64, dim1 = 2 : i64} : !kite.tile<?x?x?x?> -> !kite.tile<?x?x?x?>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$operand, Kite_DimAttr:$dim0, Kite_DimAttr:$dim1);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def Kite_PermuteOp : Kite_ShapeOp<"permute"> {
  let summary = "reorder dimensions";
  let description = [{
    ```mlir
    %p = kite.permute %x {dims = array<i64: 1, 0>} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$operand, DenseI64ArrayAttr:$dims);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def Kite_ReshapeOp : Kite_ShapeOp<"reshape"> {
  let summary = "reshape a tile";
  let description = [{
    Dims as for `kite.full`; one may be -1.

    ```mlir
    %r = kite.reshape %x [%tm, %c4] : !kite.tile<?xf32>, !kite.span, i64 -> !kite.tile<?x4xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$operand, Variadic<Kite_Dim>:$dims);
  let assemblyFormat = [{
    $operand ` ` `[` $dims `]` attr-dict `:` type($operand) (`,` type($dims)^)? `->` type($result)
  }];
}

def Kite_ExpandOp : Kite_ShapeOp<"expand"> {
  let summary = "broadcast a tile to a larger shape";
  let description = [{
    Dims as for `kite.full`; -1 keeps a dimension.

    ```mlir
    %e = kite.expand %x [%tm, %tn] : !kite.tile<1x?xf32>, !kite.span, !kite.span -> !kite.tile<?x?xf32>
    ```
  }];
  let arguments = (ins Kite_AnyTile:$operand, Variadic<Kite_Dim>:$dims);
  let assemblyFormat = [{
    $operand ` ` `[` $dims `]` attr-dict `:` type($operand) (`,` type($dims)^)? `->` type($result)
  }];
}

#endif // KITE_OPS_TD
