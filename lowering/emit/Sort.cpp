//===- Sort.cpp - sorts and top-k -------------------------------------------===//
//
// This file implements kite.sort: the tile goes to shared memory as lines
// along the sorted dim (values and positions), the program's threads order
// each line in PyTorch's order (stable, NaN largest, masked lanes last),
// and the result tiles read back the first k of each line. The order comes
// from kite_device.cuh: radix_topk_lines selects a small top-k by radix
// selection, radix_sort_lines sorts by digits, and bitonic networks
// (bitonic_sort_lines, bitonic_topk_lines) serve lines too short for the
// threads or too long for their registers.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

/// How kite.sort orders its lines: by radix selection of the first k (a
/// top-k of at most a quarter of the line), by radix sort (lines at least
/// as long as the program's threads, whose entries fit a thread's
/// registers during a pass), or by a bitonic network (the rest). On the
/// H200 radix sorts took 0.42-0.53x of torch.sort's time on 8192 x 8192
/// (bitonic: 1.06-2.06x) and radix selection 0.22-0.80x of torch.topk's.
enum class SortAlgorithm { radixSelect, radixSort, bitonicTopk, bitonicSort };

/// The ints of radix_topk_lines's scratch before its keys (kite_device.cuh's
/// kRadixSelectInts).
constexpr int64_t kRadixSelectInts = 256 + 4 + 32;

static SortAlgorithm chooseSort(int64_t L, int64_t K, int64_t threads, int64_t registers,
                                int64_t keyBytes, int64_t posBytes) {
  if (K < L && 4 * K <= L)
    return SortAlgorithm::radixSelect;
  // A pass holds L / threads entries a thread: one register each for a
  // 16-bit key and its position, more for wider keys. Past the registers a
  // thread has, the entries spill; up to them, ptxas spills a few bytes at
  // most (on the H200, 32768 f32 keys a line on 512 threads: 72 bytes, 6.7
  // ms for 4096 lines against 15.8 for the bitonic network).
  int64_t perEntry = keyBytes + posBytes <= 4 ? 1 : llvm::divideCeil(keyBytes + posBytes, 4);
  if (threads % 32 == 0 && L >= threads && (L / threads) * perEntry <= registers)
    return SortAlgorithm::radixSort;
  return K < L ? SortAlgorithm::bitonicTopk : SortAlgorithm::bitonicSort;
}

LogicalResult Emitter::emitSort(SortOp op) {
  Tile src = tiles[op.getOperand()];
  int64_t rank = src.rank();
  int64_t dim = op.getDim() < 0 ? op.getDim() + rank : op.getDim();
  int64_t L = src.dims[dim].padded;
  int64_t lines = paddedCount(src) / L;
  std::string valid = src.dims[dim].extent.empty() ? std::to_string(L) : src.dims[dim].extent;
  std::string key = cType(src.elem);
  // Positions up to L (radix selection's past-the-end slots) fit.
  std::string pos = L < 65536 ? "unsigned short" : "int";
  int64_t keyBytes = elementBytes(src.elem), posBytes = L < 65536 ? 2 : 4;
  // A top-k keeps the first k: K is the next power of two at least k.
  int64_t K = L, k = L;
  if (op.getK()) {
    k = cast<TileType>(op.getValues().getType()).getShape()[dim];
    K = std::max<int64_t>(1, paddedSize(k));
  }
  SortAlgorithm algorithm = chooseSort(L, K, numThreads, registersPerThread(config, numThreads), keyBytes, posBytes);
  bool select = algorithm == SortAlgorithm::radixSelect;
  // The element offset of element `c` of tile `t` in lines of `stride`:
  // its line (row-major over the other dims' padded sizes), then its
  // position.
  auto offsetOf = [&](const Tile &t, ArrayRef<std::string> c, int64_t stride) {
    std::string lineIdx;
    for (int64_t i = 0; i < rank; ++i) {
      if (i == dim)
        continue;
      std::string ci = coord(t, i, c[i]);
      lineIdx = lineIdx.empty() ? ci
                                : llvm::formatv("({0}) * {1} + {2}", lineIdx, src.dims[i].padded, ci)
                                      .str();
    }
    std::string ci = coord(t, dim, c[dim]);
    return lineIdx.empty() ? ci : llvm::formatv("({0}) * {1} + {2}", lineIdx, stride, ci).str();
  };
  // Shared memory: the keys in lines of L, the positions (lines of K for a
  // selection, which writes only its result's), the algorithm's scratch.
  int64_t posStride = select ? K : L;
  int64_t keysAt = scratchBase();
  int64_t posAt = keysAt + llvm::alignTo(lines * L * keyBytes, 16);
  int64_t scratchAt = posAt + llvm::alignTo(lines * posStride * posBytes, 16);
  int64_t scratchBytes = 0;
  if (algorithm == SortAlgorithm::radixSelect)
    scratchBytes = 4 * kRadixSelectInts + llvm::alignTo(K * keyBytes, 8) + K * posBytes;
  else if (algorithm == SortAlgorithm::radixSort)
    scratchBytes = 4 * 33 * (numThreads / 32);
  sharedBytes = std::max<int64_t>(sharedBytes, scratchAt + scratchBytes);
  std::string keys = fresh("keys"), positions = fresh("pos"), scratch = fresh("scratch");
  auto at = [](int64_t offset) {
    return offset == 0 ? std::string("kite_smem") : llvm::formatv("kite_smem + {0}", offset).str();
  };
  line(llvm::formatv("{0}* {1} = reinterpret_cast<{0}*>({2});", key, keys, at(keysAt)));
  line(llvm::formatv("{0}* {1} = reinterpret_cast<{0}*>({2});", pos, positions, at(posAt)));
  if (scratchBytes > 0)
    line(llvm::formatv("int* {0} = reinterpret_cast<int*>({1});", scratch, at(scratchAt)));
  // Replicas write the same elements: the same values.
  forEach(src, [&](ArrayRef<std::string> c) {
    std::string off = offsetOf(src, c, L);
    if (select)
      line(llvm::formatv("{0}[{1}] = {2}[{3}];", keys, off, src.name, flat(src, c)));
    else
      line(llvm::formatv("{0}[{1}] = {2}[{3}]; {4}[{1}] = ({5}){6};", keys, off, src.name,
                         flat(src, c), positions, pos, coord(src, dim, c[dim])));
  });
  line(sync());
  std::string desc = op.getDescending() ? "true" : "false";
  switch (algorithm) {
  case SortAlgorithm::radixSelect:
    line(llvm::formatv("radix_topk_lines<{0}, {1}, {2}, {3}, {4}, {5}>({6}, {7}, {8}, {9});", desc,
                       L, K, k, lines, numThreads, keys, positions, valid, scratch));
    break;
  case SortAlgorithm::radixSort:
    line(llvm::formatv("radix_sort_lines<{0}, {1}, {2}, {3}>({4}, {5}, {6}, {7});", desc, L,
                       lines, numThreads, keys, positions, valid, scratch));
    break;
  case SortAlgorithm::bitonicTopk:
    line(llvm::formatv("bitonic_topk_lines<{0}, {1}, {2}, {3}, {4}>({5}, {6}, {7});", desc, L, K,
                       lines, numThreads, keys, positions, valid));
    break;
  case SortAlgorithm::bitonicSort:
    line(llvm::formatv("bitonic_sort_lines<{0}, {1}, {2}, {3}>({4}, {5}, {6});", desc, L, lines,
                       numThreads, keys, positions, valid));
    break;
  }
  auto result = [&](Value v, Type elem, bool isPos) {
    auto [ctx, dims] = layoutOf(v);
    for (int64_t i = 0; i < rank; ++i)
      dims[i].extent = src.dims[i].extent;
    if (op.getK()) {
      int64_t kr = cast<TileType>(v.getType()).getShape()[dim];
      dims[dim].extent = kr < dims[dim].padded ? std::to_string(kr) : "";
    }
    Tile r = declare(elem, ctx, dims);
    forEach(r, [&](ArrayRef<std::string> c) {
      line(llvm::formatv("{0}[{1}] = {2};", r.name, flat(r, c),
                         isPos ? llvm::formatv("(i64){0}[{1}]", positions, offsetOf(r, c, posStride))
                                     .str()
                               : llvm::formatv("{0}[{1}]", keys, offsetOf(r, c, L)).str()));
    });
    tiles[v] = r;
  };
  result(op.getValues(), src.elem, false);
  result(op.getIndices(), IntegerType::get(op.getContext(), 64), true);
  line(sync());
  return success();
}
