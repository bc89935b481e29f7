//===- KiteOps.cpp - kite operations --------------------------------------===//
//
// This file implements the verifiers, custom assembly and memory effects of
// the kite ops. Verifiers check what is knowable from the types: when a rank
// or dtype is still unknown (`*`, `?`) the check waits for specialization.
//
//===----------------------------------------------------------------------===//

#include "ir/KiteDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kite;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// Normalizes a possibly negative `dim` against `rank` (`rank + 1` positions
/// when inserting); failure if out of range.
FailureOr<int64_t> normalizeDim(int64_t dim, int64_t rank) {
  if (dim < -rank || dim >= rank)
    return failure();
  return dim < 0 ? dim + rank : dim;
}

/// Emits an error if a ranked result does not have `expected` dims.
LogicalResult checkResultRank(Operation *op, Type result, int64_t expected) {
  std::optional<int64_t> rank = getRankOf(result);
  if (rank && *rank != expected)
    return op->emitOpError() << "result should have rank " << expected
                             << ", but has type " << result;
  return success();
}

/// Emits an error unless a known element type is `expected`.
LogicalResult checkResultElement(Operation *op, Type result, Type expected) {
  Type elem = getElementTypeOrNull(result);
  if (elem && expected && elem != expected)
    return op->emitOpError() << "result element type should be " << expected
                             << ", but is " << elem;
  return success();
}

bool isTile(Type type) { return isa<TileType>(type); }

} // namespace

//===----------------------------------------------------------------------===//
// Host prologue
//===----------------------------------------------------------------------===//

LogicalResult SizeOp::verify() {
  auto type = cast<kite::TensorType>(getTensor().getType());
  if (type.hasRank() && failed(normalizeDim(getDim(), type.getRank())))
    return emitOpError() << "dimension " << getDim()
                         << " is out of range for a tensor of rank "
                         << type.getRank();
  return success();
}

LogicalResult DTypeConstOp::verify() {
  if (!isKiteDType(getDtype()))
    return emitOpError() << "dtype must be one of f16, bf16, f32, f64, i8, "
                            "i32, i64, i1, f8E4M3FN, f8E5M2; got "
                         << getDtype();
  return success();
}

OpFoldResult DTypeConstOp::fold(FoldAdaptor) { return getDtypeAttr(); }

namespace {
/// A ranked result tensor has one dim per size operand.
LogicalResult verifySizesMatchRank(Operation *op, Type result, size_t numSizes) {
  auto type = cast<kite::TensorType>(result);
  if (type.hasRank() && type.getRank() != (int64_t)numSizes)
    return op->emitOpError() << "has " << numSizes << " sizes but its result type "
                             << type << " has rank " << type.getRank();
  return success();
}
} // namespace

LogicalResult EmptyOp::verify() {
  return verifySizesMatchRank(*this, getResult().getType(), getSizes().size());
}

LogicalResult TensorReshapeOp::verify() {
  return verifySizesMatchRank(*this, getResult().getType(), getSizes().size());
}

LogicalResult BlockSizeOp::verify() {
  // Read the id signed: the I64Attr accessor returns it unsigned, so a
  // negative id would pass a `< 0` check on it and later index the config's
  // block_sizes out of bounds.
  int64_t id = getIdAttr().getInt();
  if (id < 0 || id > kMaxBlockSizeId)
    return emitOpError() << "id must be in [0, " << kMaxBlockSizeId
                         << "], got " << id;
  if (getMin() && *getMin() < 1)
    return emitOpError() << "min must be at least 1, got " << *getMin();
  if (getMin() && getMax() && *getMin() > *getMax())
    return emitOpError() << "min " << *getMin() << " exceeds max " << *getMax();
  return success();
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

void TileForOp::build(OpBuilder &builder, OperationState &state,
                      ValueRange lowerBounds, ValueRange upperBounds,
                      ValueRange blockSizes, ValueRange initArgs) {
  state.addOperands(lowerBounds);
  state.addOperands(upperBounds);
  state.addOperands(blockSizes);
  state.addOperands(initArgs);
  state.addAttribute(getOperandSegmentSizesAttrName(state.name),
                     builder.getDenseI32ArrayAttr(
                         {(int32_t)lowerBounds.size(), (int32_t)upperBounds.size(),
                          (int32_t)blockSizes.size(), (int32_t)initArgs.size()}));
  for (Value v : initArgs)
    state.addTypes(v.getType());
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (size_t i = 0; i < lowerBounds.size(); ++i)
    block->addArgument(SpanType::get(builder.getContext()), state.location);
  for (Value v : initArgs)
    block->addArgument(v.getType(), state.location);
  if (initArgs.empty()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    builder.create<YieldOp>(state.location);
  }
}

void GridForOp::build(OpBuilder &builder, OperationState &state,
                      ValueRange lowerBounds, ValueRange upperBounds,
                      ValueRange initArgs) {
  state.addOperands(lowerBounds);
  state.addOperands(upperBounds);
  state.addOperands(initArgs);
  state.addAttribute(getOperandSegmentSizesAttrName(state.name),
                     builder.getDenseI32ArrayAttr({(int32_t)lowerBounds.size(),
                                                   (int32_t)upperBounds.size(),
                                                   (int32_t)initArgs.size()}));
  for (Value v : initArgs)
    state.addTypes(v.getType());
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (size_t i = 0; i < lowerBounds.size(); ++i)
    block->addArgument(builder.getI64Type(), state.location);
  for (Value v : initArgs)
    block->addArgument(v.getType(), state.location);
  if (initArgs.empty()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    builder.create<YieldOp>(state.location);
  }
}

namespace {

/// Checks what tile_for and grid_for share: dims, block arguments, the
/// yield and the results, and that top-level loops carry nothing.
LogicalResult verifyLoop(Operation *op, unsigned numDims, size_t numUpper,
                         ValueRange initArgs, Block &body, Type indexType,
                         bool topLevel) {
  if (numDims == 0)
    return op->emitOpError() << "needs at least one dimension";
  if (numUpper != numDims)
    return op->emitOpError() << "has " << numDims << " lower bounds but "
                             << numUpper << " upper bounds";
  if (body.getNumArguments() != numDims + initArgs.size())
    return op->emitOpError() << "body should have " << numDims + initArgs.size()
                             << " arguments, has " << body.getNumArguments();
  for (unsigned i = 0; i < numDims; ++i)
    if (body.getArgument(i).getType() != indexType)
      return op->emitOpError() << "loop variable #" << i << " should be "
                               << indexType;
  for (auto [i, init] : llvm::enumerate(initArgs)) {
    if (body.getArgument(numDims + i).getType() != init.getType())
      return op->emitOpError() << "iter_arg #" << i << " has type "
                               << body.getArgument(numDims + i).getType()
                               << " but its initial value has "
                               << init.getType();
    if (op->getResult(i).getType() != init.getType())
      return op->emitOpError() << "result #" << i << " has type "
                               << op->getResult(i).getType()
                               << " but iter_arg has " << init.getType();
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != initArgs.size())
    return yield.emitOpError() << "yields " << yield.getValues().size()
                               << " values, but the loop carries "
                               << initArgs.size();
  for (auto [i, v] : llvm::enumerate(yield.getValues()))
    if (v.getType() != initArgs[i].getType())
      return yield.emitOpError() << "value #" << i << " has type "
                                 << v.getType() << ", loop carries "
                                 << initArgs[i].getType();
  if (topLevel && !initArgs.empty())
    return op->emitOpError() << "is a top-level loop (mapped onto the launch "
                                "grid) and cannot carry values";
  return success();
}

/// Parses `(%a, %b) = (lbs) to (ubs) [block (bss)] [iter_args(...) -> (...)]
/// region attr-dict`.
ParseResult parseLoop(OpAsmParser &parser, OperationState &result,
                      Type indexType, bool hasBlock) {
  Builder &b = parser.getBuilder();
  SmallVector<OpAsmParser::Argument> args;
  if (parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren) ||
      parser.parseEqual())
    return failure();
  SmallVector<OpAsmParser::UnresolvedOperand> lbs, ubs, bss, inits;
  if (parser.parseOperandList(lbs, OpAsmParser::Delimiter::Paren) ||
      parser.parseKeyword("to") ||
      parser.parseOperandList(ubs, OpAsmParser::Delimiter::Paren))
    return failure();
  if (hasBlock && (parser.parseKeyword("block") ||
                   parser.parseOperandList(bss, OpAsmParser::Delimiter::Paren)))
    return failure();
  for (auto &arg : args)
    arg.type = indexType;
  SmallVector<Type> iterTypes;
  if (succeeded(parser.parseOptionalKeyword("iter_args"))) {
    SmallVector<OpAsmParser::Argument> iterArgs;
    if (parser.parseAssignmentList(iterArgs, inits) ||
        parser.parseArrowTypeList(iterTypes))
      return failure();
    if (iterTypes.size() != iterArgs.size())
      return parser.emitError(parser.getNameLoc(),
                              "iter_args and result types differ in number");
    for (auto [arg, type] : llvm::zip(iterArgs, iterTypes)) {
      arg.type = type;
      args.push_back(arg);
    }
  }
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args))
    return failure();
  // Resolve the operands only now that the body is parsed. Resolved first,
  // an operand the body defines (`to (%u) { %u = ... }`) is a forward
  // reference whose placeholder the body's definition replaces and frees,
  // leaving a dangling value in `result.operands` (a crash in
  // Operation::create). Resolved here, the body's names are out of scope and
  // such an operand is reported as undefined.
  Type i64 = b.getI64Type();
  if (parser.resolveOperands(lbs, i64, result.operands) ||
      parser.resolveOperands(ubs, i64, result.operands) ||
      parser.resolveOperands(bss, i64, result.operands) ||
      parser.resolveOperands(inits, iterTypes, parser.getNameLoc(),
                             result.operands))
    return failure();
  result.addTypes(iterTypes);
  SmallVector<int32_t> segments = {(int32_t)lbs.size(), (int32_t)ubs.size()};
  if (hasBlock)
    segments.push_back(bss.size());
  segments.push_back(inits.size());
  result.addAttribute("operandSegmentSizes", b.getDenseI32ArrayAttr(segments));
  if (body->empty())
    body->push_back(new Block());
  if (inits.empty()) {
    Block &block = body->front();
    if (block.empty() || !block.back().hasTrait<OpTrait::IsTerminator>()) {
      OpBuilder builder(parser.getContext());
      builder.setInsertionPointToEnd(&block);
      builder.create<YieldOp>(result.location);
    }
  }
  return parser.parseOptionalAttrDict(result.attributes);
}

void printLoop(OpAsmPrinter &p, Operation *op, unsigned numDims,
               OperandRange lbs, OperandRange ubs,
               std::optional<OperandRange> bss, OperandRange inits,
               Block &body) {
  p << " (";
  llvm::interleaveComma(body.getArguments().take_front(numDims), p,
                        [&](BlockArgument a) { p.printOperand(a); });
  p << ") = (" << lbs << ") to (" << ubs << ")";
  if (bss)
    p << " block (" << *bss << ")";
  if (!inits.empty()) {
    p << " iter_args(";
    llvm::interleaveComma(
        llvm::zip(body.getArguments().drop_front(numDims), inits), p,
        [&](auto pair) {
          p.printOperand(std::get<0>(pair));
          p << " = ";
          p.printOperand(std::get<1>(pair));
        });
    p << ") -> (" << inits.getTypes() << ")";
  }
  p << " ";
  p.printRegion(op->getRegion(0), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/!inits.empty());
  p.printOptionalAttrDict(op->getAttrs(), {"operandSegmentSizes"});
}

} // namespace

ParseResult TileForOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseLoop(parser, result, SpanType::get(parser.getContext()),
                   /*hasBlock=*/true);
}
void TileForOp::print(OpAsmPrinter &p) {
  printLoop(p, *this, getNumDims(), getLowerBounds(), getUpperBounds(),
            getBlockSizes(), getInitArgs(), *getBodyBlock());
}
LogicalResult TileForOp::verify() {
  if (getBlockSizes().size() != getNumDims())
    return emitOpError() << "has " << getNumDims() << " dimensions but "
                         << getBlockSizes().size() << " block sizes";
  return verifyLoop(*this, getNumDims(), getUpperBounds().size(),
                    getInitArgs(), *getBodyBlock(),
                    SpanType::get(getContext()), isTopLevel());
}

ParseResult GridForOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseLoop(parser, result, parser.getBuilder().getI64Type(),
                   /*hasBlock=*/false);
}
void GridForOp::print(OpAsmPrinter &p) {
  printLoop(p, *this, getNumDims(), getLowerBounds(), getUpperBounds(),
            std::nullopt, getInitArgs(), *getBodyBlock());
}
LogicalResult GridForOp::verify() {
  return verifyLoop(*this, getNumDims(), getUpperBounds().size(),
                    getInitArgs(), *getBodyBlock(),
                    IntegerType::get(getContext(), 64), isTopLevel());
}

LogicalResult SpanIndexOp::verify() {
  if (failed(checkResultRank(*this, getType(), 1)))
    return failure();
  return checkResultElement(*this, getType(),
                            IntegerType::get(getContext(), 64));
}

//===----------------------------------------------------------------------===//
// Subscripts
//===----------------------------------------------------------------------===//

/// Parses `%a, all, %b, newaxis` into operands and a layout.
static ParseResult
parseSubscripts(OpAsmParser &parser,
                SmallVectorImpl<OpAsmParser::UnresolvedOperand> &indices,
                DenseI32ArrayAttr &layout) {
  SmallVector<int32_t> entries;
  auto parseOne = [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalKeyword("all"))) {
      entries.push_back(kSubscriptAll);
      return success();
    }
    if (succeeded(parser.parseOptionalKeyword("newaxis"))) {
      entries.push_back(kSubscriptNewAxis);
      return success();
    }
    entries.push_back(indices.size());
    return parser.parseOperand(indices.emplace_back());
  };
  if (parser.parseCommaSeparatedList(parseOne))
    return failure();
  layout = parser.getBuilder().getDenseI32ArrayAttr(entries);
  return success();
}

static void printSubscripts(OpAsmPrinter &p, Operation *, OperandRange indices,
                            DenseI32ArrayAttr layout) {
  llvm::interleaveComma(layout.asArrayRef(), p, [&](int32_t e) {
    if (e == kSubscriptAll)
      p << "all";
    else if (e == kSubscriptNewAxis)
      p << "newaxis";
    else
      p.printOperand(indices[e]);
  });
}

namespace {

SmallVector<Subscript> resolveSubscripts(OperandRange indices,
                                         ArrayRef<int32_t> layout) {
  SmallVector<Subscript> result;
  for (int32_t e : layout) {
    if (e == kSubscriptAll)
      result.push_back({Subscript::Kind::All, {}});
    else if (e == kSubscriptNewAxis)
      result.push_back({Subscript::Kind::NewAxis, {}});
    else
      result.push_back({*getSubscriptKind(indices[e].getType()), indices[e]});
  }
  return result;
}

/// Checks a subscript and, when everything is known, returns the rank of the
/// value it selects (a load's result, a store's target shape).
FailureOr<std::optional<int64_t>>
verifySubscripts(Operation *op, kite::TensorType tensor, OperandRange indices,
                 ArrayRef<int32_t> layout, Value mask) {
  // Every operand appears exactly once, in order.
  int32_t next = 0;
  for (int32_t e : layout) {
    if (e == kSubscriptAll || e == kSubscriptNewAxis)
      continue;
    if (e != next)
      return op->emitOpError() << "subscript layout must name index operands "
                                  "once each, in order";
    ++next;
  }
  if (next != (int32_t)indices.size())
    return op->emitOpError() << "has " << indices.size()
                             << " index operands but its layout names "
                             << next;
  if (layout.empty())
    return op->emitOpError() << "needs at least one subscript";
  int64_t consumed = 0;      // tensor dims the subscripts address
  int64_t produced = 0;      // dims of the selected value
  bool known = true;
  bool sawGather = false;
  for (auto [i, index] : llvm::enumerate(indices)) {
    if (failed(getSubscriptKind(index.getType())))
      return op->emitOpError() << "index #" << i << " has type "
                               << index.getType()
                               << "; expected !kite.span, an integer, or a "
                                  "tile of integers";
  }
  for (int32_t e : layout) {
    if (e == kSubscriptNewAxis) {
      ++produced;
      continue;
    }
    ++consumed;
    if (e == kSubscriptAll) {
      ++produced;
      continue;
    }
    Type type = indices[e].getType();
    switch (*getSubscriptKind(type)) {
    case Subscript::Kind::Span:
      ++produced;
      break;
    case Subscript::Kind::Scalar:
      break;
    case Subscript::Kind::Gather: {
      std::optional<int64_t> rank = getRankOf(type);
      // Adjacent gathers broadcast together: count their dims once.
      if (!rank)
        known = false;
      else if (!sawGather)
        produced += *rank;
      sawGather = true;
      break;
    }
    default:
      break;
    }
  }
  if (tensor.hasRank()) {
    if (consumed > tensor.getRank())
      return op->emitOpError() << "has " << consumed
                               << " subscripts for a tensor of rank "
                               << tensor.getRank();
    produced += tensor.getRank() - consumed; // trailing dims are `all`
  } else {
    known = false;
  }
  if (mask && !isTile(mask.getType()) && !mask.getType().isInteger(1))
    return op->emitOpError() << "mask must be a tile of booleans, got "
                             << mask.getType();
  if (!known)
    return std::optional<int64_t>();
  return std::optional<int64_t>(produced);
}

} // namespace

SmallVector<Subscript> LoadOp::getSubscripts() {
  return resolveSubscripts(getIndices(), getLayout());
}
SmallVector<Subscript> StoreOp::getSubscripts() {
  return resolveSubscripts(getIndices(), getLayout());
}
SmallVector<Subscript> AtomicOp::getSubscripts() {
  return resolveSubscripts(getIndices(), getLayout());
}

LogicalResult LoadOp::verify() {
  auto rank = verifySubscripts(*this, cast<kite::TensorType>(getTensor().getType()), getIndices(),
                               getLayout(), getMask());
  if (failed(rank))
    return failure();
  if (*rank && failed(checkResultRank(*this, getType(), **rank)))
    return failure();
  return checkResultElement(*this, getType(),
                            getElementTypeOrNull(getTensor().getType()));
}

namespace {
/// A stored value broadcasts to the subscript's shape: it may not have more
/// dims than the subscript selects.
LogicalResult checkStoredRank(Operation *op, Type value,
                              std::optional<int64_t> target) {
  std::optional<int64_t> rank = getRankOf(value);
  if (rank && target && *rank > *target)
    return op->emitOpError() << "stores a value of rank " << *rank
                             << " into a subscript of rank " << *target;
  return success();
}
} // namespace

LogicalResult StoreOp::verify() {
  auto rank = verifySubscripts(*this, cast<kite::TensorType>(getTensor().getType()), getIndices(),
                               getLayout(), getMask());
  if (failed(rank))
    return failure();
  return checkStoredRank(*this, getValue().getType(), *rank);
}

LogicalResult AtomicOp::verify() {
  auto rank = verifySubscripts(*this, cast<kite::TensorType>(getTensor().getType()), getIndices(),
                               getLayout(), getMask());
  if (failed(rank))
    return failure();
  return checkStoredRank(*this, getValue().getType(), *rank);
}

void LoadOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getTensorMutable(),
                       SideEffects::DefaultResource::get());
}
void StoreOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), &getTensorMutable(),
                       SideEffects::DefaultResource::get());
}
void AtomicOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getTensorMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getTensorMutable(),
                       SideEffects::DefaultResource::get());
}

//===----------------------------------------------------------------------===//
// Elementwise values
//===----------------------------------------------------------------------===//

namespace {

/// The broadcast rank of operands (tiles or scalars), if every rank is known.
std::optional<int64_t> broadcastRank(ArrayRef<Type> types) {
  int64_t rank = 0;
  for (Type t : types) {
    std::optional<int64_t> r = getRankOf(t);
    if (!r)
      return std::nullopt;
    rank = std::max(rank, *r);
  }
  return rank;
}

/// Checks that known static dims of operands broadcast against each other.
LogicalResult checkBroadcast(Operation *op, ArrayRef<Type> types) {
  std::optional<int64_t> rank = broadcastRank(types);
  if (!rank)
    return success();
  SmallVector<int64_t> dims(*rank, 1);
  for (Type t : types) {
    auto tile = dyn_cast<TileType>(t);
    if (!tile)
      continue;
    ArrayRef<int64_t> shape = tile.getShape();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &d = dims[*rank - shape.size() + i];
      int64_t s = shape[i];
      if (ShapedType::isDynamic(s) || s == 1)
        continue;
      if (d == 1 || ShapedType::isDynamic(d))
        d = s;
      else if (d != s)
        return op->emitOpError() << "operand shapes do not broadcast: "
                                 << "dimension " << i << " of " << t
                                 << " is " << s << ", another operand has " << d;
    }
  }
  return checkResultRank(op, op->getResult(0).getType(), *rank);
}

LogicalResult needsTile(Operation *op, ArrayRef<Type> types) {
  if (llvm::none_of(types, isTile))
    return op->emitOpError() << "needs at least one tile operand (scalar "
                                "math uses arith and math ops)";
  return success();
}

} // namespace

LogicalResult UnaryOp::verify() {
  if (getKind() == UnaryKind::not_) {
    Type elem = getElementTypeOrNull(getOperand().getType());
    if (elem && !elem.isSignlessInteger())
      return emitOpError() << "'not' needs a boolean or integer tile, got "
                           << getOperand().getType();
  }
  return checkBroadcast(*this, {getOperand().getType()});
}

LogicalResult BinaryOp::verify() {
  SmallVector<Type> types = {getLhs().getType(), getRhs().getType()};
  if (failed(needsTile(*this, types)))
    return failure();
  switch (getKind()) {
  case BinaryKind::and_:
  case BinaryKind::or_:
  case BinaryKind::xor_:
    for (Type t : types) {
      Type elem = getElementTypeOrNull(t);
      if (elem && !elem.isSignlessInteger())
        return emitOpError() << "'" << stringifyBinaryKind(getKind())
                             << "' needs boolean or integer operands, got "
                             << t;
    }
    break;
  default:
    break;
  }
  return checkBroadcast(*this, types);
}

LogicalResult CompareOp::verify() {
  SmallVector<Type> types = {getLhs().getType(), getRhs().getType()};
  if (failed(needsTile(*this, types)) ||
      failed(checkResultElement(*this, getType(),
                                IntegerType::get(getContext(), 1))))
    return failure();
  return checkBroadcast(*this, types);
}

LogicalResult WhereOp::verify() {
  SmallVector<Type> types = {getCondition().getType(),
                             getTrueValue().getType(),
                             getFalseValue().getType()};
  if (failed(needsTile(*this, types)))
    return failure();
  Type cond = getElementTypeOrNull(getCondition().getType());
  if (cond && !cond.isInteger(1))
    return emitOpError() << "condition must be boolean, got "
                         << getCondition().getType();
  return checkBroadcast(*this, types);
}

LogicalResult CastOp::verify() {
  std::optional<int64_t> src = getRankOf(getSource().getType());
  if (src && failed(checkResultRank(*this, getType(), *src)))
    return failure();
  if (auto c = getDtype().getDefiningOp<DTypeConstOp>())
    return checkResultElement(*this, getType(), c.getDtype());
  return success();
}

LogicalResult RandomOp::verify() {
  Type off = getElementTypeOrNull(getOffsets().getType());
  if (off && (!off.isInteger() || off.isInteger(1)))
    return emitOpError() << "offsets must be integers, got " << getOffsets().getType();
  std::optional<int64_t> rank = getRankOf(getOffsets().getType());
  if (rank && failed(checkResultRank(*this, getType(), *rank)))
    return failure();
  Type elem = getKind() == RandomKind::bits ? Type(IntegerType::get(getContext(), 64))
                                             : Type(Float32Type::get(getContext()));
  return checkResultElement(*this, getType(), elem);
}

//===----------------------------------------------------------------------===//
// Reductions and matmuls
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto type = cast<TileType>(getOperand().getType());
  if (type.hasRank()) {
    if (type.getRank() == 0)
      return emitOpError() << "cannot reduce a rank-0 tile";
    if (failed(normalizeDim(getDim(), type.getRank())))
      return emitOpError() << "dimension " << getDim()
                           << " is out of range for a tile of rank "
                           << type.getRank();
    if (failed(checkResultRank(*this, getType(),
                               getKeepdim() ? type.getRank()
                                            : type.getRank() - 1)))
      return failure();
  }
  bool isArg = getKind() == ReduceKind::argmax || getKind() == ReduceKind::argmin;
  if (getLocal() && (!getKeepdim() || isArg || getKind() == ReduceKind::mean))
    return emitOpError() << "a local reduction needs keepdim and a kind other than "
                            "mean, argmax and argmin";
  if (isArg)
    return checkResultElement(*this, getType(),
                              IntegerType::get(getContext(), 64));
  return success();
}

LogicalResult ScanOp::verify() {
  auto type = cast<TileType>(getOperand().getType());
  if (!type.hasRank())
    return success();
  if (type.getRank() == 0)
    return emitOpError() << "cannot scan a rank-0 tile";
  if (failed(normalizeDim(getDim(), type.getRank())))
    return emitOpError() << "dimension " << getDim() << " is out of range for a tile of rank "
                         << type.getRank();
  if (failed(checkResultRank(*this, getResult().getType(), type.getRank())))
    return failure();
  if (Value idx = getIndices()) {
    if (getKind() == ScanKind::sum || getKind() == ScanKind::prod)
      return emitOpError() << "only max and min scans give indices";
    if (failed(checkResultElement(*this, idx.getType(), IntegerType::get(getContext(), 64))))
      return failure();
    return checkResultRank(*this, idx.getType(), type.getRank());
  }
  return success();
}

YieldOp AssociativeScanOp::getYield() {
  return cast<YieldOp>(getCombine().front().getTerminator());
}

LogicalResult AssociativeScanOp::verify() {
  if (getOperands().empty())
    return emitOpError() << "scans no operands";
  if (getResults().size() != getOperands().size())
    return emitOpError() << "has " << getOperands().size() << " operands but "
                         << getResults().size() << " results";
  std::optional<int64_t> rank;
  for (Value v : getOperands()) {
    std::optional<int64_t> r = getRankOf(v.getType());
    if (!r)
      continue;
    if (rank && *r != *rank)
      return emitOpError() << "operands have ranks " << *rank << " and " << *r;
    rank = r;
  }
  if (!rank)
    return success();
  if (*rank == 0)
    return emitOpError() << "cannot scan a rank-0 tile";
  if (failed(normalizeDim(getDim(), *rank)))
    return emitOpError() << "dimension " << getDim() << " is out of range for a tile of rank "
                         << *rank;
  for (auto [operand, result] : llvm::zip(getOperands(), getResults())) {
    if (failed(checkResultRank(*this, result.getType(), *rank)) ||
        failed(checkResultElement(*this, result.getType(),
                                  getElementTypeOrNull(operand.getType()))))
      return failure();
  }
  return success();
}

LogicalResult AssociativeScanOp::verifyRegions() {
  Block &body = getCombine().front();
  size_t n = getOperands().size();
  if (body.getNumArguments() != 2 * n)
    return emitOpError() << "combine function takes " << body.getNumArguments()
                         << " arguments; it should take " << 2 * n << " (two of each operand)";
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    std::optional<int64_t> r = getRankOf(arg.getType());
    if (!isTile(arg.getType()) || (r && *r != 0))
      return emitOpError() << "combine argument " << i << " should be a rank-0 tile, but is "
                           << arg.getType();
    Type want = getElementTypeOrNull(getOperands()[i % n].getType());
    Type have = getElementTypeOrNull(arg.getType());
    if (want && have && want != have)
      return emitOpError() << "combine argument " << i << " should have element type " << want
                           << ", but has " << have;
  }
  YieldOp yield = getYield();
  if (yield.getValues().size() != n)
    return emitOpError() << "combine function yields " << yield.getValues().size()
                         << " values; it should yield " << n;
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    std::optional<int64_t> r = getRankOf(v.getType());
    if (!isTile(v.getType()) || (r && *r != 0))
      return emitOpError() << "combine value " << i << " should be a rank-0 tile, but is "
                           << v.getType();
    Type want = getElementTypeOrNull(getOperands()[i].getType());
    Type have = getElementTypeOrNull(v.getType());
    if (want && have && want != have)
      return emitOpError() << "combine value " << i << " has element type " << have
                           << ", but the scan's operand " << i << " has " << want;
  }
  // Elementwise only: no memory, no nested regions, and from outside only
  // scalars and rank-0 tiles (one value for every element).
  WalkResult walk = body.walk([&](Operation *op) -> WalkResult {
    if (op == yield.getOperation())
      return WalkResult::advance();
    if (op->getNumRegions() != 0 || !isMemoryEffectFree(op)) {
      op->emitOpError() << "is not allowed in an associative scan's combine function, which "
                           "computes only elementwise";
      return WalkResult::interrupt();
    }
    for (Value v : op->getOperands()) {
      if (getCombine().isAncestor(v.getParentRegion()))
        continue;
      std::optional<int64_t> r = getRankOf(v.getType());
      if (!v.getType().isIntOrFloat() && !(isTile(v.getType()) && (!r || *r == 0))) {
        op->emitOpError() << "uses a value of type " << v.getType()
                          << " from outside the associative scan's combine function; only "
                             "scalars and rank-0 tiles may come from outside";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// The value of `k` of a top-k, where it is a constant.
static std::optional<int64_t> constantK(Value k) {
  llvm::APInt v;
  if (k && matchPattern(k, m_ConstantInt(&v)))
    return v.getSExtValue();
  return std::nullopt;
}

LogicalResult SortOp::verify() {
  auto type = cast<TileType>(getOperand().getType());
  std::optional<int64_t> k = constantK(getK());
  if (k && *k < 0)
    return emitOpError() << "k must be at least 0, got " << *k;
  if (failed(checkResultElement(*this, getIndices().getType(), IntegerType::get(getContext(), 64))))
    return failure();
  if (failed(checkResultElement(*this, getValues().getType(), getElementTypeOrNull(type))))
    return failure();
  if (!type.hasRank())
    return success();
  if (type.getRank() == 0)
    return emitOpError() << "cannot sort a rank-0 tile";
  FailureOr<int64_t> d = normalizeDim(getDim(), type.getRank());
  if (failed(d))
    return emitOpError() << "dimension " << getDim() << " is out of range for a tile of rank "
                         << type.getRank();
  if (k && type.hasStaticShape() && type.getShape()[*d] < *k)
    return emitOpError() << "k = " << *k << " is more than the " << type.getShape()[*d]
                         << " elements along dimension " << *d;
  if (failed(checkResultRank(*this, getValues().getType(), type.getRank())))
    return failure();
  return checkResultRank(*this, getIndices().getType(), type.getRank());
}

namespace {
LogicalResult verifyMatmulOperands(Operation *op, ArrayRef<Value> operands,
                                   int64_t rank) {
  for (Value v : operands) {
    std::optional<int64_t> r = getRankOf(v.getType());
    if (r && *r != rank)
      return op->emitOpError() << "operands must have rank " << rank
                               << ", got " << v.getType();
  }
  return checkResultRank(op, op->getResult(0).getType(), rank);
}
} // namespace

LogicalResult DotOp::verify() {
  return verifyMatmulOperands(*this, {getLhs(), getRhs()}, 2);
}
LogicalResult MatmulOp::verify() {
  for (Value v : {getLhs(), getRhs()}) {
    std::optional<int64_t> r = getRankOf(v.getType());
    if (r && *r == 0)
      return emitOpError() << "operands must have rank 1 or more, got "
                           << v.getType();
  }
  return success();
}
LogicalResult AddmmOp::verify() {
  if (failed(verifyMatmulOperands(*this, {getAcc(), getLhs(), getRhs()}, 2)))
    return failure();
  return checkResultElement(*this, getType(),
                            getElementTypeOrNull(getAcc().getType()));
}
LogicalResult BmmOp::verify() {
  if (failed(verifyMatmulOperands(*this, {getLhs(), getRhs()}, 3)))
    return failure();
  std::optional<Type> out = getOutDtype();
  if (!out)
    return success();
  Type ea = getElementTypeOrNull(getLhs().getType()),
       eb = getElementTypeOrNull(getRhs().getType());
  if (ea && eb && !(*out == ea && *out == eb) &&
      !(out->isF32() && (isNarrowFloat(ea) || ea.isF32()) &&
        (isNarrowFloat(eb) || eb.isF32())))
    return emitOpError() << "out_dtype " << *out << " is not supported for " << ea << " and "
                         << eb << " inputs; it can be f32 for 16- or 8-bit float inputs, or "
                            "the inputs' dtype";
  return checkResultElement(*this, getType(), *out);
}
LogicalResult BaddbmmOp::verify() {
  if (failed(verifyMatmulOperands(*this, {getAcc(), getLhs(), getRhs()}, 3)))
    return failure();
  return checkResultElement(*this, getType(),
                            getElementTypeOrNull(getAcc().getType()));
}

//===----------------------------------------------------------------------===//
// Creation and shape ops
//===----------------------------------------------------------------------===//

LogicalResult FullOp::verify() {
  if (failed(checkResultRank(*this, getType(), getDims().size())))
    return failure();
  if (auto c = getDtype().getDefiningOp<DTypeConstOp>())
    return checkResultElement(*this, getType(), c.getDtype());
  return success();
}

LogicalResult ArangeOp::verify() {
  if (failed(checkResultRank(*this, getType(), 1)))
    return failure();
  return checkResultElement(*this, getType(),
                            IntegerType::get(getContext(), 64));
}

namespace {
/// Checks a dim attribute against an operand's rank (`extra` positions for
/// ops that insert a dimension) and the result's rank.
LogicalResult verifyDimOp(Operation *op, Type operand, int64_t dim,
                          int64_t extra, int64_t resultDelta) {
  std::optional<int64_t> rank = getRankOf(operand);
  if (!rank)
    return success();
  if (failed(normalizeDim(dim, *rank + extra)))
    return op->emitOpError() << "dimension " << dim
                             << " is out of range for a tile of rank " << *rank;
  return checkResultRank(op, op->getResult(0).getType(), *rank + resultDelta);
}
} // namespace

LogicalResult UnsqueezeOp::verify() {
  return verifyDimOp(*this, getOperand().getType(), getDim(), 1, 1);
}

LogicalResult SqueezeOp::verify() {
  if (failed(verifyDimOp(*this, getOperand().getType(), getDim(), 0, -1)))
    return failure();
  auto type = cast<TileType>(getOperand().getType());
  if (type.hasRank()) {
    int64_t d = *normalizeDim(getDim(), type.getRank());
    int64_t size = type.getShape()[d];
    if (!ShapedType::isDynamic(size) && size != 1)
      return emitOpError() << "squeezes dimension " << getDim()
                           << " of size " << size << " (must be 1)";
  }
  return success();
}

LogicalResult TransposeOp::verify() {
  if (failed(verifyDimOp(*this, getOperand().getType(), getDim0(), 0, 0)))
    return failure();
  return verifyDimOp(*this, getOperand().getType(), getDim1(), 0, 0);
}

LogicalResult PermuteOp::verify() {
  std::optional<int64_t> rank = getRankOf(getOperand().getType());
  int64_t n = getDims().size();
  if (rank && *rank != n)
    return emitOpError() << "permutes " << n << " dims of a tile of rank "
                         << *rank;
  SmallVector<bool> seen(n, false);
  for (int64_t d : getDims()) {
    FailureOr<int64_t> nd = normalizeDim(d, n);
    if (failed(nd) || seen[*nd])
      return emitOpError() << "dims must be a permutation of 0.." << n - 1;
    seen[*nd] = true;
  }
  return checkResultRank(*this, getType(), n);
}

LogicalResult ReshapeOp::verify() {
  return checkResultRank(*this, getType(), getDims().size());
}

LogicalResult ExpandOp::verify() {
  std::optional<int64_t> rank = getRankOf(getOperand().getType());
  int64_t n = getDims().size();
  if (rank && *rank > n)
    return emitOpError() << "expands a tile of rank " << *rank << " to rank "
                         << n;
  return checkResultRank(*this, getType(), n);
}

#define GET_OP_CLASSES
#include "ir/KiteOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ConvertLayoutOp
//===----------------------------------------------------------------------===//

LogicalResult ConvertLayoutOp::verify() {
  auto from = cast<TileType>(getSource().getType());
  auto to = cast<TileType>(getType());
  if (from.getOptionalShape() != to.getOptionalShape() ||
      from.getElementType() != to.getElementType())
    return emitOpError() << "changes only the layout: " << from << " and " << to
                         << " differ in shape or dtype";
  if (!to.getLayout())
    return emitOpError() << "needs a result layout";
  return success();
}

std::pair<TileForOp, unsigned> kite::getSpanLoop(Value span) {
  auto arg = dyn_cast<BlockArgument>(span);
  if (!arg)
    return {};
  auto loop = dyn_cast_or_null<TileForOp>(arg.getOwner()->getParentOp());
  if (!loop || arg.getArgNumber() >= loop.getNumDims())
    return {};
  return {loop, arg.getArgNumber()};
}
