//===- Sort.cpp - sorts and top-k -------------------------------------------===//
//
// This file implements kite.sort: the tile goes to shared memory as lines
// along the sorted dim (values and positions), a bitonic network over all
// the program's threads orders each line (bitonic_sort_lines in
// kite_device.cuh: stable, NaN largest, masked lanes last; for a top-k,
// bitonic_topk_lines sorts chunks of k and merges them), and the result
// tiles read back the first k of each line.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

LogicalResult Emitter::emitSort(SortOp op) {
  Tile src = tiles[op.getOperand()];
  int64_t rank = src.rank();
  int64_t dim = op.getDim() < 0 ? op.getDim() + rank : op.getDim();
  int64_t L = src.dims[dim].padded;
  int64_t lines = paddedCount(src) / L;
  std::string valid = src.dims[dim].extent.empty() ? std::to_string(L) : src.dims[dim].extent;
  std::string key = cType(src.elem);
  std::string pos = L <= 65536 ? "unsigned short" : "int";
  int64_t keyBytes = elementBytes(src.elem), posBytes = L <= 65536 ? 2 : 4;
  // The element offset of element `k` of tile `t` in the lines: its line
  // (row-major over the other dims' padded sizes), then its position.
  auto offsetOf = [&](const Tile &t, ArrayRef<std::string> k) {
    std::string lineIdx;
    for (int64_t i = 0; i < rank; ++i) {
      if (i == dim)
        continue;
      std::string c = coord(t, i, k[i]);
      lineIdx = lineIdx.empty() ? c
                                : llvm::formatv("({0}) * {1} + {2}", lineIdx, src.dims[i].padded, c)
                                      .str();
    }
    std::string c = coord(t, dim, k[dim]);
    return lineIdx.empty() ? c : llvm::formatv("({0}) * {1} + {2}", lineIdx, L, c).str();
  };
  std::string keys = fresh("keys"), positions = fresh("pos");
  int64_t base = scratchBase();
  line(llvm::formatv("{0}* {1} = {2};", key, keys, smem(key, lines * L, keyBytes)));
  // The positions follow the keys (16-byte aligned).
  int64_t keysEnd = llvm::alignTo(lines * L * keyBytes, 16);
  sharedBytes = std::max<int64_t>(sharedBytes, base + keysEnd + lines * L * posBytes);
  line(llvm::formatv("{0}* {1} = reinterpret_cast<{0}*>(kite_smem + {2});", pos, positions,
                     base + keysEnd));
  // Replicas write the same elements: the same values.
  forEach(src, [&](ArrayRef<std::string> k) {
    std::string off = offsetOf(src, k);
    line(llvm::formatv("{0}[{1}] = {2}[{3}]; {4}[{1}] = ({5}){6};", keys, off, src.name,
                       flat(src, k), positions, pos, coord(src, dim, k[dim])));
  });
  line("__syncthreads();");
  // A top-k sorts chunks of the next power of two at least k and merges
  // them; a sort, whole lines.
  int64_t K = L;
  if (op.getK())
    K = std::max<int64_t>(1, paddedSize(cast<TileType>(op.getValues().getType()).getShape()[dim]));
  std::string desc = op.getDescending() ? "true" : "false";
  if (K < L)
    line(llvm::formatv("bitonic_topk_lines<{0}, {1}, {2}, {3}, {4}>({5}, {6}, {7});", desc, L, K,
                       lines, numThreads, keys, positions, valid));
  else
    line(llvm::formatv("bitonic_sort_lines<{0}, {1}, {2}, {3}>({4}, {5}, {6});", desc, L, lines,
                       numThreads, keys, positions, valid));
  auto result = [&](Value v, Type elem, bool isPos) {
    auto [ctx, dims] = layoutOf(v);
    for (int64_t i = 0; i < rank; ++i)
      dims[i].extent = src.dims[i].extent;
    if (op.getK()) {
      int64_t k = cast<TileType>(v.getType()).getShape()[dim];
      dims[dim].extent = k < dims[dim].padded ? std::to_string(k) : "";
    }
    Tile r = declare(elem, ctx, dims);
    forEach(r, [&](ArrayRef<std::string> k) {
      std::string off = offsetOf(r, k);
      line(llvm::formatv("{0}[{1}] = {2};", r.name, flat(r, k),
                         isPos ? llvm::formatv("(i64){0}[{1}]", positions, off).str()
                               : llvm::formatv("{0}[{1}]", keys, off).str()));
    });
    tiles[v] = r;
  };
  result(op.getValues(), src.elem, false);
  result(op.getIndices(), IntegerType::get(op.getContext(), 64), true);
  line("__syncthreads();");
  return success();
}
