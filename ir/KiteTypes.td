//===- KiteTypes.td - kite types --------------------------*- tablegen -*-===//
//
// Tensors (global memory), tiles (values inside loops), spans (tile loop
// variables) and dtype values.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_TYPES_TD
#define KITE_TYPES_TD

include "KiteBase.td"

class Kite_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Kite_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

// The queries tensors and tiles share.
defvar commonExtraClassDeclaration = [{
    bool hasRank() const { return getRanked(); }
    int64_t getRank() const { return getShape().size(); }
    bool hasElementType() const { return static_cast<bool>(getElementType()); }
    bool hasStaticShape() const {
      return getRanked() && ::llvm::none_of(getShape(), [](int64_t d) {
        return ::mlir::ShapedType::isDynamic(d);
      });
    }
    std::optional<::llvm::ArrayRef<int64_t>> getOptionalShape() const {
      if (!getRanked()) return std::nullopt;
      return getShape();
    }
}];

// A tensor's parameters (a tile has the same and its layout): an optional
// shape (unranked when `ranked` is false; `?` dims are ShapedType::kDynamic)
// and an optional element type (null: not known until specialization).
class Kite_ShapedLikeType<string name, string typeMnemonic>
    : Kite_Type<name, typeMnemonic> {
  let parameters = (ins
    "bool":$ranked,
    ArrayRefParameter<"int64_t", "dimensions">:$shape,
    "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilder<(ins "std::optional<::llvm::ArrayRef<int64_t>>":$shape,
                     "::mlir::Type":$elementType), [{
      if (shape)
        return $_get($_ctxt, true, *shape, elementType);
      return $_get($_ctxt, false, ::llvm::ArrayRef<int64_t>(), elementType);
    }]>,
    TypeBuilder<(ins), [{
      return $_get($_ctxt, false, ::llvm::ArrayRef<int64_t>(), ::mlir::Type());
    }]>
  ];
}

def Kite_TensorType : Kite_ShapedLikeType<"Tensor", "tensor"> {
  let summary = "a tensor in global memory";
  let description = [{
    A kernel parameter or an output allocated in the host prologue. Its
    dtype and sizes are known at launch; in captured IR they are often not.

    ```mlir
    !kite.tensor<*x?>        // rank and dtype unknown
    !kite.tensor<?x?xbf16>   // rank 2, bf16
    !kite.tensor<8192x8192xbf16>
    ```
  }];
  let extraClassDeclaration = commonExtraClassDeclaration;
}

def Kite_TileType : Kite_Type<"Tile", "tile"> {
  let summary = "a value inside a device loop";
  let description = [{
    A tile lives in registers (or shared memory after lowering). Its dims
    are block sizes, tensor sizes or constants; before specialization they
    are `?`. After kite-assign-layouts a tile carries its layout, which only
    `kite.convert_layout` changes.

    ```mlir
    !kite.tile<?x?xf32>
    !kite.tile<*x?>
    !kite.tile<64x128xf32, #kite.blocked<shape = [64, 128], vec = [1, 4], threads = [4, 32], dims = [0, 1]>>
    ```
  }];
  let parameters = (ins
    "bool":$ranked,
    ArrayRefParameter<"int64_t", "dimensions">:$shape,
    "::mlir::Type":$elementType,
    "::mlir::Attribute":$layout);
  let hasCustomAssemblyFormat = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilder<(ins "std::optional<::llvm::ArrayRef<int64_t>>":$shape,
                     "::mlir::Type":$elementType,
                     CArg<"::mlir::Attribute", "{}">:$layout), [{
      if (shape)
        return $_get($_ctxt, true, *shape, elementType, layout);
      return $_get($_ctxt, false, ::llvm::ArrayRef<int64_t>(), elementType, layout);
    }]>,
    TypeBuilder<(ins), [{
      return $_get($_ctxt, false, ::llvm::ArrayRef<int64_t>(), ::mlir::Type(),
                   ::mlir::Attribute());
    }]>
  ];
  let extraClassDeclaration = commonExtraClassDeclaration # [{
    /// The same tile with layout `layout` (null: none).
    TileType withLayout(::mlir::Attribute layout) const {
      return get(getContext(), getOptionalShape(), getElementType(), layout);
    }
  }];
}

def Kite_SpanType : Kite_Type<"Span", "span"> {
  let summary = "a tile loop variable";
  let description = [{
    The indices `[begin, min(begin + block_size, end))` of one tile of a
    `kite.tile_for` dimension. Used as a subscript it selects those
    indices; lanes past the end are masked.
  }];
}

def Kite_DTypeType : Kite_Type<"DType", "dtype"> {
  let summary = "a dtype value";
  let description = [{
    The dtype of a tensor (`kite.dtype_of`) or a constant dtype
    (`kite.dtype_const`). Specialization folds every dtype value to a
    constant.
  }];
}

// The constraints keep the generic C++ type `mlir::Type` so that the
// assembly prints types in full (`!kite.tile<?xf32>`, never a bare `<?xf32>`).
def Kite_AnyTensor : Type<CPred<"::llvm::isa<::kite::TensorType>($_self)">,
                          "kite tensor">;
def Kite_AnyTile : Type<CPred<"::llvm::isa<::kite::TileType>($_self)">,
                        "kite tile">;
def Kite_Span : Type<CPred<"::llvm::isa<::kite::SpanType>($_self)">,
                     "kite span", "::kite::SpanType">,
                BuildableType<"::kite::SpanType::get($_builder.getContext())">;
def Kite_DType : Type<CPred<"::llvm::isa<::kite::DTypeType>($_self)">,
                      "kite dtype", "::kite::DTypeType">,
                 BuildableType<"::kite::DTypeType::get($_builder.getContext())">;
def Kite_Scalar : AnyTypeOf<[AnySignlessInteger, AnyFloat]>;
def Kite_TileOrScalar : AnyTypeOf<[Kite_AnyTile, AnySignlessInteger, AnyFloat]>;
def Kite_Dim : AnyTypeOf<[Kite_Span, AnySignlessInteger]>;

// A dimension index: an i64 attribute read as a signed value (negative dims
// count from the end).
def Kite_DimAttr : TypedSignlessIntegerAttrBase<I64, "int64_t",
    "64-bit signless integer attribute (a dimension; negative from the end)"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

#endif // KITE_TYPES_TD
