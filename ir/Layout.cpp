//===- Layout.cpp - linear layouts, fragments and shared memory -----------===//
//
// This file implements kite's layout algebra (see Layout.h). A coordinate is
// packed into one 64-bit vector over GF(2), each dim's log2(size) bits side
// by side, so that a layout's bases are the columns of a bit matrix; holders,
// spans and conversions are Gaussian elimination over those columns. The
// fragment layouts put their warps on contiguous sub-tiles (warp bits over M
// first), as kite_gemm.cuh's main loops do. Bank conflicts are counted by
// simulating one warp's accesses.
//
//===----------------------------------------------------------------------===//

#include "ir/Layout.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <set>

using namespace kite::layout;

namespace {

using Bases = LinearLayout::Bases;

constexpr int kLaneBits = 5;
/// Caps that keep every (register, lane, warp) index in 64 bits.
constexpr int kMaxRegisterBits = 32;
constexpr int kMaxWarpBits = 16;
constexpr int kMaxShapeBits = 62;

bool isPow2(int64_t x) { return x >= 1 && (x & (x - 1)) == 0; }
int log2Of(int64_t x) { return std::countr_zero(uint64_t(x)); }

const char *hwName(int d) {
  static const char *const names[] = {"register", "lane", "warp"};
  return names[d];
}

//===----------------------------------------------------------------------===//
// Coordinates as GF(2) vectors
//===----------------------------------------------------------------------===//

/// Where each dim's bits sit in a packed coordinate (dim 0 lowest).
struct BitSpace {
  llvm::SmallVector<int, 4> offset, bits;
  int total = 0;

  explicit BitSpace(llvm::ArrayRef<int64_t> shape) {
    for (int64_t s : shape) {
      offset.push_back(total);
      bits.push_back(log2Of(s));
      total += bits.back();
    }
  }
  uint64_t pack(llvm::ArrayRef<int64_t> c) const {
    uint64_t v = 0;
    for (size_t d = 0; d < c.size(); ++d)
      v |= uint64_t(c[d]) << offset[d];
    return v;
  }
};

/// A GF(2) span in echelon form: pivot `b` (if nonzero) is a vector
/// whose highest set bit is `b`, with the set of columns (variables) whose
/// XOR it is.
class Gf2Span {
public:
  /// `v` reduced by the pivots, and the variables used to reduce it (XORed
  /// into `vars`); the remainder is 0 exactly when `v` is in the span.
  std::pair<uint64_t, uint64_t> reduce(uint64_t v, uint64_t vars = 0) const {
    for (int b = 63; b >= 0; --b)
      if ((v >> b) & 1 && vec[b]) {
        v ^= vec[b];
        vars ^= combo[b];
      }
    return {v, vars};
  }
  bool contains(uint64_t v) const { return reduce(v).first == 0; }
  /// Adds column `v` of variable `var`; when it is dependent, returns the
  /// variables that XOR to zero (`var` the highest of them if variables are
  /// added in increasing order).
  std::optional<uint64_t> insert(uint64_t v, int var) {
    auto [rest, vars] = reduce(v, uint64_t(1) << var);
    if (!rest)
      return vars;
    int b = 63 - std::countl_zero(rest);
    vec[b] = rest;
    combo[b] = vars;
    ++rank_;
    return std::nullopt;
  }
  int rank() const { return rank_; }

private:
  std::array<uint64_t, 64> vec{}, combo{};
  int rank_ = 0;
};

/// Solves `XOR of columns[v] for v in x == target` for the numerically
/// smallest x (variable 0 the least significant). With the columns added
/// in that order, a solution reduced by the pivots uses only variables that
/// were independent of the lower ones; any other solution adds a kernel
/// vector, whose highest variable is one that was not, so it is larger.
class MinSolver {
public:
  explicit MinSolver(llvm::ArrayRef<uint64_t> columns) {
    for (auto [i, col] : llvm::enumerate(columns))
      span.insert(col, int(i));
  }
  std::optional<uint64_t> solve(uint64_t target) const {
    auto [rest, x] = span.reduce(target);
    if (rest)
      return std::nullopt;
    return x;
  }

private:
  Gf2Span span;
};

llvm::SmallVector<uint64_t, 16> packAll(const BitSpace &space, const Bases &bases) {
  llvm::SmallVector<uint64_t, 16> out;
  for (const Coord &c : bases)
    out.push_back(space.pack(c));
  return out;
}

/// A span of the packed columns of some bases.
Gf2Span spanOf(const BitSpace &space, std::initializer_list<const Bases *> all) {
  Gf2Span s;
  for (const Bases *bases : all)
    for (const Coord &c : *bases)
      s.insert(space.pack(c), 0); // the combinations are not needed
  return s;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

std::string checkShape(llvm::ArrayRef<int64_t> shape) {
  int bits = 0;
  for (auto [d, s] : llvm::enumerate(shape)) {
    if (!isPow2(s))
      return "shape dim " + std::to_string(d) + " is " + std::to_string(s) +
             ", not a power of two >= 1";
    bits += log2Of(s);
  }
  if (bits > kMaxShapeBits)
    return "the shape has 2^" + std::to_string(bits) + " elements, more than 2^" +
           std::to_string(kMaxShapeBits);
  return "";
}

std::string checkBases(llvm::ArrayRef<int64_t> shape, const std::array<Bases, kNumHwDims> &bases) {
  if (bases[1].size() != kLaneBits)
    return std::to_string(bases[1].size()) + " lane bases, expected " + std::to_string(kLaneBits) +
           " (a warp has 32 lanes)";
  if (bases[0].size() > kMaxRegisterBits)
    return std::to_string(bases[0].size()) + " register bases, at most " +
           std::to_string(kMaxRegisterBits);
  if (bases[2].size() > kMaxWarpBits)
    return std::to_string(bases[2].size()) + " warp bases, at most " + std::to_string(kMaxWarpBits);
  for (int h = 0; h < kNumHwDims; ++h)
    for (auto [b, c] : llvm::enumerate(bases[h])) {
      std::string what = std::string(hwName(h)) + " basis " + std::to_string(b);
      if (c.size() != shape.size())
        return what + " has " + std::to_string(c.size()) + " entries, expected the rank " +
               std::to_string(shape.size());
      for (size_t d = 0; d < c.size(); ++d)
        if (c[d] < 0 || c[d] >= shape[d])
          return what + ": coordinate " + std::to_string(c[d]) + " of dim " + std::to_string(d) +
                 " is outside [0, " + std::to_string(shape[d]) + ")";
    }
  BitSpace space(shape);
  Gf2Span s = spanOf(space, {&bases[0], &bases[1], &bases[2]});
  if (s.rank() != space.total)
    return "the bases span " + std::to_string(s.rank()) + " of the shape's " +
           std::to_string(space.total) + " bits: some elements have no holder";
  return "";
}

//===----------------------------------------------------------------------===//
// Building the layouts kite uses
//===----------------------------------------------------------------------===//

/// The coordinate (0, ..., 0, row, col) of a rank-`rank` tile.
Coord rowCol(int64_t rank, int64_t row, int64_t col) {
  Coord c(rank, 0);
  c[rank - 2] = row;
  c[rank - 1] = col;
  return c;
}

/// Appends the bases (row or column) first, 2 * first, ... below `end`.
void appendStrides(Bases &out, int64_t rank, bool row, int64_t first, int64_t end) {
  for (int64_t s = first; s < end; s *= 2)
    out.push_back(row ? rowCol(rank, s, 0) : rowCol(rank, 0, s));
}

void appendZeros(Bases &out, int64_t rank, int64_t count) {
  for (int64_t i = 1; i < count; i *= 2)
    out.push_back(Coord(rank, 0));
}

/// mma.sync's lanes: lane l at (l / 4, 2 (l % 4)) of its fragment, or the
/// transpose of that for the B operand.
Bases mmaLanes(int64_t rank, bool transposed) {
  Bases lanes;
  for (int64_t s : {2, 4})
    lanes.push_back(transposed ? rowCol(rank, s, 0) : rowCol(rank, 0, s));
  for (int64_t s : {1, 2, 4})
    lanes.push_back(transposed ? rowCol(rank, 0, s) : rowCol(rank, s, 0));
  return lanes;
}

/// The [M, N] of a fragment layout's shape, checked.
std::pair<int64_t, int64_t> fragmentDims(llvm::ArrayRef<int64_t> shape) {
  assert(shape.size() >= 2 && "a fragment layout needs two dims");
  assert(llvm::all_of(shape.drop_back(2), [](int64_t s) { return s == 1; }) &&
         "a fragment layout's leading dims must be 1");
  return {shape[shape.size() - 2], shape.back()};
}

/// The layout of bases a constructor built (valid whenever its
/// preconditions hold).
LinearLayout build(llvm::ArrayRef<int64_t> shape, Bases reg, Bases lane, Bases warp) {
  auto l = LinearLayout::get(shape, {std::move(reg), std::move(lane), std::move(warp)});
  assert(l && "a layout constructor built invalid bases");
  return l.value();
}

} // namespace

//===----------------------------------------------------------------------===//
// LinearLayout
//===----------------------------------------------------------------------===//

std::optional<LinearLayout> LinearLayout::get(llvm::ArrayRef<int64_t> shape,
                                              std::array<Bases, kNumHwDims> bases,
                                              std::string *error) {
  std::string problem = checkShape(shape);
  if (problem.empty())
    problem = checkBases(shape, bases);
  if (!problem.empty()) {
    if (error)
      *error = problem;
    return std::nullopt;
  }
  LinearLayout l;
  l.shape_.assign(shape.begin(), shape.end());
  l.bases_ = std::move(bases);
  return l;
}

LinearLayout LinearLayout::blocked(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> vec,
                                   llvm::ArrayRef<int64_t> threads, llvm::ArrayRef<int64_t> order,
                                   int64_t numThreads) {
  int64_t rank = shape.size();
  assert(vec.size() == shape.size() && threads.size() == shape.size() &&
         order.size() == shape.size() && "blocked: one vec, threads and order entry per dim");
  assert(isPow2(numThreads) && numThreads >= kWarpSize &&
         "blocked: numThreads must be a power of two >= 32");
  int64_t used = 1;
  for (int64_t d = 0; d < rank; ++d) {
    assert(isPow2(shape[d]) && isPow2(vec[d]) && isPow2(threads[d]) &&
           "blocked: shape, vec and threads must be powers of two");
    assert(shape[d] % (vec[d] * threads[d]) == 0 && "blocked: vec * threads must divide shape");
    used *= threads[d];
  }
  assert(used <= numThreads && "blocked: more threads along the dims than numThreads");
  for (int64_t d = 0; d < rank; ++d)
    assert(llvm::count(order, d) == 1 && "blocked: order must be a permutation of the dims");
  auto unit = [&](int64_t d, int64_t v) {
    Coord c(rank, 0);
    c[d] = v;
    return c;
  };
  // Registers: the last dim's bits lowest; within a dim, bits inside a run,
  // then the run index (which skips the threads' span of T * V).
  Bases reg;
  for (int64_t d = rank - 1; d >= 0; --d)
    for (int64_t k = 1; k < shape[d] / threads[d]; k *= 2)
      reg.push_back(unit(d, k < vec[d] ? k : k * threads[d]));
  Bases thread;
  for (int64_t d : order)
    for (int64_t t = 1; t < threads[d]; t *= 2)
      thread.push_back(unit(d, vec[d] * t));
  while (int64_t(thread.size()) < log2Of(numThreads))
    thread.push_back(Coord(rank, 0));
  Bases lane(thread.begin(), thread.begin() + kLaneBits);
  Bases warp(thread.begin() + kLaneBits, thread.end());
  return build(shape, std::move(reg), std::move(lane), std::move(warp));
}

LinearLayout LinearLayout::mmaAccumulator(llvm::ArrayRef<int64_t> shape, int64_t warpsM,
                                          int64_t warpsN) {
  auto [m, n] = fragmentDims(shape);
  int64_t rank = shape.size();
  assert(isPow2(warpsM) && isPow2(warpsN) && isPow2(m) && isPow2(n) &&
         "mmaAccumulator: powers of two");
  assert(m % (16 * warpsM) == 0 && n % (8 * warpsN) == 0 &&
         "mmaAccumulator: each warp needs whole 16x8 blocks");
  int64_t tm = m / warpsM, tn = n / warpsN;
  Bases reg = {rowCol(rank, 0, 1), rowCol(rank, 8, 0)};
  appendStrides(reg, rank, /*row=*/false, 8, tn);
  appendStrides(reg, rank, /*row=*/true, 16, tm);
  Bases warp;
  appendStrides(warp, rank, /*row=*/true, tm, m);
  appendStrides(warp, rank, /*row=*/false, tn, n);
  return build(shape, std::move(reg), mmaLanes(rank, false), std::move(warp));
}

LinearLayout LinearLayout::mmaOperand(int opIdx, llvm::ArrayRef<int64_t> shape, int64_t warpsM,
                                      int64_t warpsN) {
  assert((opIdx == 0 || opIdx == 1) && "mmaOperand: operand 0 (A) or 1 (B)");
  auto [rows, cols] = fragmentDims(shape);
  int64_t rank = shape.size();
  assert(isPow2(warpsM) && isPow2(warpsN) && isPow2(rows) && isPow2(cols) &&
         "mmaOperand: powers of two");
  Bases reg, warp;
  if (opIdx == 0) {
    // A: [M, K], 16x16 blocks: a0..a7, then along K, then along M.
    assert(rows % (16 * warpsM) == 0 && cols % 16 == 0 && "mmaOperand: whole 16x16 A blocks");
    int64_t tm = rows / warpsM;
    reg = {rowCol(rank, 0, 1), rowCol(rank, 8, 0), rowCol(rank, 0, 8)};
    appendStrides(reg, rank, /*row=*/false, 16, cols);
    appendStrides(reg, rank, /*row=*/true, 16, tm);
    appendStrides(warp, rank, /*row=*/true, tm, rows);
    appendZeros(warp, rank, warpsN);
  } else {
    // B: [K, N], 16x8 blocks: b0..b3, then along K, then along N.
    assert(rows % 16 == 0 && cols % (8 * warpsN) == 0 && "mmaOperand: whole 16x8 B blocks");
    int64_t tn = cols / warpsN;
    reg = {rowCol(rank, 1, 0), rowCol(rank, 8, 0)};
    appendStrides(reg, rank, /*row=*/true, 16, rows);
    appendStrides(reg, rank, /*row=*/false, 8, tn);
    appendZeros(warp, rank, warpsM);
    appendStrides(warp, rank, /*row=*/false, tn, cols);
  }
  return build(shape, std::move(reg), mmaLanes(rank, opIdx == 1), std::move(warp));
}

LinearLayout LinearLayout::wgmmaAccumulator(llvm::ArrayRef<int64_t> shape, int64_t warpgroups) {
  auto [m, n] = fragmentDims(shape);
  int64_t rank = shape.size();
  assert(isPow2(warpgroups) && isPow2(m) && isPow2(n) && "wgmmaAccumulator: powers of two");
  assert(m % (64 * warpgroups) == 0 && n % 8 == 0 &&
         "wgmmaAccumulator: each warpgroup needs whole 64x8 blocks");
  // Each warpgroup holds a contiguous block of M / warpgroups rows, as
  // kite_gemm.cuh's wgmma main loops split the tile.
  int64_t mw = m / warpgroups;
  Bases reg = {rowCol(rank, 0, 1), rowCol(rank, 8, 0)};
  appendStrides(reg, rank, /*row=*/false, 8, n);
  appendStrides(reg, rank, /*row=*/true, 64, mw);
  Bases warp = {rowCol(rank, 16, 0), rowCol(rank, 32, 0)};
  appendStrides(warp, rank, /*row=*/true, mw, m);
  return build(shape, std::move(reg), mmaLanes(rank, false), std::move(warp));
}

Coord LinearLayout::apply(int64_t reg, int64_t lane, int64_t warp) const {
  assert(reg >= 0 && reg < numRegisters() && lane >= 0 && lane < kWarpSize && warp >= 0 &&
         warp < numWarps() && "apply: index out of range");
  Coord c(rank(), 0);
  int64_t index[kNumHwDims] = {reg, lane, warp};
  for (int h = 0; h < kNumHwDims; ++h)
    for (auto [b, basis] : llvm::enumerate(bases_[h]))
      if ((index[h] >> b) & 1)
        for (int64_t d = 0; d < rank(); ++d)
          c[d] ^= basis[d];
  return c;
}

std::array<int64_t, kNumHwDims> LinearLayout::holderOf(llvm::ArrayRef<int64_t> c) const {
  assert(int64_t(c.size()) == rank() && "holderOf: coordinate of another rank");
  for (int64_t d = 0; d < rank(); ++d)
    assert(c[d] >= 0 && c[d] < shape_[d] && "holderOf: coordinate outside the shape");
  // Variables from least to most significant: registers, lanes, warps.
  BitSpace space(shape_);
  llvm::SmallVector<uint64_t, 64> columns;
  for (const Bases &bases : bases_)
    llvm::append_range(columns, packAll(space, bases));
  std::optional<uint64_t> x = MinSolver(columns).solve(space.pack(c));
  assert(x && "holderOf: the bases do not span the shape");
  int64_t regBits = bases(HwDim::Register).size();
  return {int64_t(*x & ((uint64_t(1) << regBits) - 1)), int64_t((*x >> regBits) & (kWarpSize - 1)),
          int64_t(*x >> (regBits + kLaneBits))};
}

bool LinearLayout::registersDistinct() const {
  BitSpace space(shape_);
  Gf2Span s = spanOf(space, {&bases(HwDim::Register)});
  return s.rank() == int64_t(bases(HwDim::Register).size());
}

LinearLayout LinearLayout::slice(int64_t dim) const {
  assert(dim >= 0 && dim < rank() && "slice: dim out of range");
  auto drop = [&](const Coord &c) {
    Coord out(c);
    out.erase(out.begin() + dim);
    return out;
  };
  LinearLayout l;
  l.shape_ = shape_;
  l.shape_.erase(l.shape_.begin() + dim);
  BitSpace space(l.shape_);
  Gf2Span kept;
  for (const Coord &c : bases(HwDim::Register)) {
    Coord s = drop(c);
    if (!kept.insert(space.pack(s), 0))
      l.bases_[0].push_back(std::move(s));
  }
  for (int h = 1; h < kNumHwDims; ++h)
    for (const Coord &c : bases_[h])
      l.bases_[h].push_back(drop(c));
  return l;
}

LinearLayout LinearLayout::unsqueeze(int64_t dim) const {
  assert(dim >= 0 && dim <= rank() && "unsqueeze: dim out of range");
  LinearLayout l = *this;
  l.shape_.insert(l.shape_.begin() + dim, 1);
  for (Bases &bases : l.bases_)
    for (Coord &c : bases)
      c.insert(c.begin() + dim, 0);
  return l;
}

LinearLayout LinearLayout::permute(llvm::ArrayRef<int64_t> perm) const {
  assert(int64_t(perm.size()) == rank() && "permute: one entry per dim");
  llvm::SmallVector<bool, 4> seen(rank(), false);
  for (int64_t p : perm) {
    assert(p >= 0 && p < rank() && !seen[p] && "permute: not a permutation");
    seen[p] = true;
  }
  auto apply = [&](llvm::ArrayRef<int64_t> v) {
    llvm::SmallVector<int64_t, 4> out;
    for (int64_t p : perm)
      out.push_back(v[p]);
    return out;
  };
  LinearLayout l;
  l.shape_ = apply(shape_);
  for (int h = 0; h < kNumHwDims; ++h)
    for (const Coord &c : bases_[h])
      l.bases_[h].push_back(apply(c));
  return l;
}

std::string LinearLayout::str() const {
  auto list = [](llvm::ArrayRef<int64_t> v, const char *sep) {
    std::string s = "[";
    for (auto [i, x] : llvm::enumerate(v)) {
      if (i)
        s += sep;
      s += std::to_string(x);
    }
    return s + "]";
  };
  std::string s = list(shape_, ", ");
  static const char *const names[] = {"reg", "lane", "warp"};
  for (int h = 0; h < kNumHwDims; ++h) {
    s += " ";
    s += names[h];
    s += "=[";
    for (auto [i, c] : llvm::enumerate(bases_[h])) {
      if (i)
        s += ",";
      s += list(c, ",");
    }
    s += "]";
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

namespace {

/// Whether every basis in `bases` lies in `span`.
bool allIn(const Gf2Span &span, const BitSpace &space, const Bases &bases) {
  return llvm::all_of(bases, [&](const Coord &c) { return span.contains(space.pack(c)); });
}

/// Whether `to`'s basis minus `from`'s lies in `span` for every bit of
/// hardware dim `h`: a thread (or warp) of `to` then holds a subset of what
/// the same one holds in `from`, up to the span's indices.
bool offsetsIn(const Gf2Span &span, const BitSpace &space, const LinearLayout &from,
               const LinearLayout &to, HwDim h) {
  const Bases &f = from.bases(h), &t = to.bases(h);
  for (size_t b = 0; b < t.size(); ++b)
    if (!span.contains(space.pack(f[b]) ^ space.pack(t[b])))
      return false;
  return true;
}

/// For each register of `to`, the lowest register of `from` that holds its
/// element in thread 0; nullopt where none does.
std::optional<llvm::SmallVector<int64_t>>
registerMap(const BitSpace &space, const LinearLayout &from, const LinearLayout &to) {
  MinSolver solver(packAll(space, from.bases(HwDim::Register)));
  llvm::SmallVector<int64_t> map;
  for (int64_t r = 0; r < to.numRegisters(); ++r) {
    std::optional<uint64_t> x = solver.solve(space.pack(to.apply(r, 0, 0)));
    if (!x)
      return std::nullopt;
    map.push_back(int64_t(*x));
  }
  return map;
}

} // namespace

ConversionPlan kite::layout::planConversion(const LinearLayout &from, const LinearLayout &to) {
  assert(from.shape() == to.shape() && "planConversion: layouts of different shapes");
  using Kind = ConversionPlan::Kind;
  if (from == to)
    return {Kind::None, {}};
  if (from.numWarps() != to.numWarps())
    return {Kind::SharedMemory, {}};
  BitSpace space(from.shape());
  // Registers: each thread's elements of `to` are among its elements of
  // `from`. A rename must be the same in every thread, so the lane and warp
  // bases must agree exactly (a difference inside from's register span would
  // still be a subset, but one whose register index depends on the thread).
  Gf2Span regs = spanOf(space, {&from.bases(HwDim::Register)});
  if (allIn(regs, space, to.bases(HwDim::Register)) &&
      from.bases(HwDim::Lane) == to.bases(HwDim::Lane) &&
      from.bases(HwDim::Warp) == to.bases(HwDim::Warp))
    if (auto map = registerMap(space, from, to))
      return {Kind::Registers, std::move(*map)};
  // WarpShuffle: each warp's elements of `to` are among its elements of
  // `from` (lanes may exchange them, warps may not).
  Gf2Span inWarp = spanOf(space, {&from.bases(HwDim::Register), &from.bases(HwDim::Lane)});
  if (allIn(inWarp, space, to.bases(HwDim::Register)) &&
      allIn(inWarp, space, to.bases(HwDim::Lane)) &&
      offsetsIn(inWarp, space, from, to, HwDim::Warp))
    return {Kind::WarpShuffle, {}};
  return {Kind::SharedMemory, {}};
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

int64_t SharedLayout::offset(llvm::ArrayRef<int64_t> c) const {
  int64_t rank = shape.size();
  assert(rank >= 1 && int64_t(c.size()) == rank && "offset: coordinate of another rank");
  assert(16 % elemBytes == 0 && "offset: elements of 1, 2, 4, 8 or 16 bytes");
  int64_t cols = shape.back();
  int64_t width = rowElems ? rowElems : cols;
  int64_t chunkElems = 16 / elemBytes;
  assert(width >= cols && "offset: rows shorter than the last dim");
  assert(isPow2(perPhase) && isPow2(maxPhase) && "offset: swizzle of powers of two");
  assert(
      (maxPhase == 1 || ((width * elemBytes) % 16 == 0 && cols % (chunkElems * maxPhase) == 0)) &&
      "offset: a swizzle needs whole 16-byte chunks, maxPhase of them per row");
  int64_t lead = 0;
  for (int64_t d = 0; d + 2 < rank; ++d)
    lead = lead * shape[d] + c[d];
  int64_t rows = rank >= 2 ? shape[rank - 2] : 1;
  int64_t row = rank >= 2 ? c[rank - 2] : 0;
  int64_t col = c[rank - 1];
  int64_t chunk = (col / chunkElems) ^ ((row / perPhase) % maxPhase);
  return (lead * rows + row) * width + chunk * chunkElems + col % chunkElems;
}

int64_t SharedLayout::sizeElems() const {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    rows *= shape[d];
  return rows * (rowElems ? rowElems : shape.back());
}

namespace {

/// The element offsets register `reg` of each lane of warp 0 has.
llvm::SmallVector<int64_t, 32> laneOffsets(const LinearLayout &dist, const SharedLayout &shared,
                                           int64_t reg) {
  llvm::SmallVector<int64_t, 32> out;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    out.push_back(shared.offset(dist.apply(reg, lane, 0)));
  return out;
}

/// Whether every run of `vec` registers is `vec` consecutive, aligned
/// elements of the buffer in every lane of warp 0 (one vector access).
bool vectorizable(const LinearLayout &dist, const SharedLayout &shared, int64_t vec) {
  if (vec == 1)
    return true;
  for (int64_t r = 0; r < dist.numRegisters(); r += vec) {
    llvm::SmallVector<int64_t, 32> first = laneOffsets(dist, shared, r);
    for (int64_t lane = 0; lane < kWarpSize; ++lane)
      if (first[lane] % vec)
        return false;
    for (int64_t j = 1; j < vec; ++j) {
      llvm::SmallVector<int64_t, 32> next = laneOffsets(dist, shared, r + j);
      for (int64_t lane = 0; lane < kWarpSize; ++lane)
        if (next[lane] != first[lane] + j)
          return false;
    }
  }
  return true;
}

/// The wavefronts of one access of `bytes` per lane at element offsets
/// `offsets`: phases of 128 bytes' worth of lanes, each as many wavefronts
/// as the most distinct words one bank serves.
int64_t wavefronts(llvm::ArrayRef<int64_t> offsets, int64_t elemBytes, int64_t bytes) {
  int64_t lanesPerPhase = bytes <= 4 ? kWarpSize : 128 / bytes;
  int64_t total = 0;
  for (int64_t p = 0; p < kWarpSize; p += lanesPerPhase) {
    std::array<std::set<int64_t>, 32> words;
    for (int64_t lane = p; lane < p + lanesPerPhase; ++lane) {
      int64_t addr = offsets[lane] * elemBytes;
      for (int64_t w = addr / 4; w <= (addr + bytes - 1) / 4; ++w)
        words[w % 32].insert(w);
    }
    size_t most = 0;
    for (const auto &bank : words)
      most = std::max(most, bank.size());
    total += most;
  }
  return total;
}

} // namespace

double kite::layout::bankConflicts(const LinearLayout &dist, const SharedLayout &shared,
                                   int64_t vecElems) {
  assert(llvm::ArrayRef<int64_t>(shared.shape) == dist.shape() &&
         "bankConflicts: a buffer of another shape");
  assert(isPow2(vecElems) && vecElems <= dist.numRegisters() && vecElems * shared.elemBytes <= 16 &&
         "bankConflicts: vectors of up to 16 bytes");
  // The fewest wavefronts: one per 128 bytes' phase of each requested access.
  int64_t bytes = vecElems * shared.elemBytes;
  int64_t phases = bytes <= 4 ? 1 : bytes * kWarpSize / 128;
  int64_t ideal = phases * (dist.numRegisters() / vecElems);
  // Registers that are not whole aligned vectors in this buffer are accessed
  // one at a time, which costs at least as much as the vectors would have.
  int64_t vec = vectorizable(dist, shared, vecElems) ? vecElems : 1;
  int64_t total = 0;
  for (int64_t r = 0; r < dist.numRegisters(); r += vec)
    total += wavefronts(laneOffsets(dist, shared, r), shared.elemBytes, vec * shared.elemBytes);
  return double(total) / double(ideal);
}

namespace {

/// The buffers chooseSharedLayout weighs, the unswizzled unpadded one first.
llvm::SmallVector<SharedLayout, 24> sharedCandidates(llvm::ArrayRef<int64_t> shape,
                                                     int64_t elemBytes) {
  SharedLayout base;
  base.shape.assign(shape.begin(), shape.end());
  base.elemBytes = elemBytes;
  llvm::SmallVector<SharedLayout, 24> out = {base};
  int64_t cols = shape.back(), chunkElems = 16 / elemBytes;
  for (int64_t maxPhase = 2; maxPhase <= 8; maxPhase *= 2) {
    if (cols % (chunkElems * maxPhase))
      break;
    for (int64_t perPhase = 1; perPhase <= 8; perPhase *= 2) {
      SharedLayout s = base;
      s.maxPhase = maxPhase;
      s.perPhase = perPhase;
      out.push_back(s);
    }
  }
  // Rows padded by one word, two words or one chunk.
  llvm::SmallVector<int64_t, 3> pads;
  for (int64_t padBytes : {4, 8, 16}) {
    int64_t pad = std::max<int64_t>(1, padBytes / elemBytes);
    if (!llvm::is_contained(pads, pad))
      pads.push_back(pad);
  }
  for (int64_t pad : pads) {
    SharedLayout s = base;
    s.rowElems = cols + pad;
    out.push_back(s);
  }
  return out;
}

} // namespace

SharedLayout kite::layout::chooseSharedLayout(const LinearLayout &from, int64_t fromVec,
                                              const LinearLayout &to, int64_t toVec,
                                              int64_t elemBytes) {
  assert(from.shape() == to.shape() && "chooseSharedLayout: layouts of different shapes");
  std::optional<SharedLayout> best;
  double bestCost = 0;
  for (const SharedLayout &s : sharedCandidates(from.shape(), elemBytes)) {
    double cost = bankConflicts(from, s, fromVec) + bankConflicts(to, s, toVec);
    // Ties go to the smaller buffer, then to the earlier (less swizzled) one.
    constexpr double kEps = 1e-9;
    if (!best || cost < bestCost - kEps ||
        (cost < bestCost + kEps && s.sizeElems() < best->sizeElems())) {
      best = s;
      bestCost = cost;
    }
  }
  return *best;
}
