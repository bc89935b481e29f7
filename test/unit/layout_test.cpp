//===- layout_test.cpp - the layout algebra -------------------------------===//
//
// This file tests ir/Layout.h against formulas written out here
// independently: blocked layouts' element arithmetic, PTX's mma.sync and
// wgmma fragment tables (with kite_gemm.cuh's warp tiling), slices,
// conversion plans, holders, get()'s checks, and shared-memory bank
// conflicts against a brute-force wavefront count; and #kite.blocked's
// tensor-core layout and readableAt against what each thread holds.
//
//===----------------------------------------------------------------------===//

#include "ir/KiteDialect.h"
#include "ir/Layout.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace kite::layout;

namespace {

using Bases = LinearLayout::Bases;

Coord rc(int64_t row, int64_t col) { return Coord{row, col}; }

/// Every (register, thread) of `l` holds expected(reg, lane, warp).
template <class F> void expectEvery(const LinearLayout &l, F expected) {
  for (int64_t w = 0; w < l.numWarps(); ++w)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < l.numRegisters(); ++r)
        ASSERT_EQ(l.apply(r, lane, w), expected(r, lane, w))
            << "reg " << r << " lane " << lane << " warp " << w << " of " << l.str();
}

/// Each element of the shape is held exactly `copies` times.
void expectCovered(const LinearLayout &l, int64_t copies) {
  std::map<Coord, int64_t> seen;
  for (int64_t t = 0; t < l.numThreads(); ++t)
    for (int64_t r = 0; r < l.numRegisters(); ++r)
      ++seen[l.apply(r, t)];
  int64_t elems = 1;
  for (int64_t s : l.shape())
    elems *= s;
  EXPECT_EQ(int64_t(seen.size()), elems);
  for (auto &[c, n] : seen)
    EXPECT_EQ(n, copies);
}

//===----------------------------------------------------------------------===//
// blocked
//===----------------------------------------------------------------------===//

struct BlockedCase {
  Coord shape, vec, threads, order;
  int64_t numThreads;
};

/// The blocked formula: thread t's coordinate along each dim from `order`
/// (replicas wrap), register r row-major over the per-dim counts, element
/// k of a dim at (k / V) * T * V + t_d * V + k % V.
Coord blockedElement(const BlockedCase &b, int64_t reg, int64_t thread) {
  int64_t rank = b.shape.size();
  int64_t used = 1;
  for (int64_t t : b.threads)
    used *= t;
  int64_t t = thread % used;
  Coord td(rank, 0), k(rank, 0), out(rank, 0);
  for (int64_t d : b.order) {
    td[d] = t % b.threads[d];
    t /= b.threads[d];
  }
  for (int64_t d = rank - 1; d >= 0; --d) {
    int64_t n = b.shape[d] / b.threads[d];
    k[d] = reg % n;
    reg /= n;
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t T = b.threads[d], V = b.vec[d];
    out[d] = (k[d] / V) * T * V + td[d] * V + k[d] % V;
  }
  return out;
}

TEST(LayoutBlocked, MatchesTheFormula) {
  std::vector<BlockedCase> cases = {
      {{64}, {4}, {16}, {0}, 32},
      {{4, 256}, {4, 4}, {1, 64}, {1, 0}, 128},
      {{2, 8}, {1, 1}, {2, 8}, {1, 0}, 128},
      {{128, 64}, {1, 8}, {16, 8}, {1, 0}, 128},
      {{128, 64}, {2, 4}, {8, 4}, {0, 1}, 64},
      {{4, 8, 16}, {1, 2, 4}, {2, 2, 4}, {2, 0, 1}, 32},
  };
  for (const BlockedCase &b : cases) {
    LinearLayout l = LinearLayout::blocked(b.shape, b.vec, b.threads, b.order, b.numThreads);
    EXPECT_EQ(l.numThreads(), b.numThreads);
    int64_t used = 1, elems = 1;
    for (size_t d = 0; d < b.shape.size(); ++d) {
      used *= b.threads[d];
      elems *= b.shape[d];
    }
    EXPECT_EQ(l.numRegisters(), elems / used);
    for (int64_t t = 0; t < b.numThreads; ++t)
      for (int64_t r = 0; r < l.numRegisters(); ++r)
        ASSERT_EQ(l.apply(r, t), blockedElement(b, r, t))
            << "reg " << r << " thread " << t << " of " << l.str();
    EXPECT_TRUE(l.registersDistinct());
    expectCovered(l, b.numThreads / used);
  }
}

TEST(LayoutBlocked, ReplicasAreZeroBases) {
  // [2, 8] over 128 threads: 16 threads hold it, lane bit 4 and both warp
  // bits replicate.
  LinearLayout l = LinearLayout::blocked({2, 8}, {1, 1}, {2, 8}, {1, 0}, 128);
  EXPECT_EQ(l.numRegisters(), 1);
  EXPECT_EQ(l.bases(HwDim::Lane)[4], Coord({0, 0}));
  ASSERT_EQ(l.bases(HwDim::Warp).size(), 2u);
  for (const Coord &c : l.bases(HwDim::Warp))
    EXPECT_EQ(c, Coord({0, 0}));
}

TEST(LayoutBlocked, Str) {
  auto l = LinearLayout::get({32, 8}, {Bases{rc(0, 1), rc(8, 0)},
                                       Bases{rc(0, 2), rc(0, 4), rc(1, 0), rc(2, 0), rc(4, 0)},
                                       Bases{rc(16, 0)}});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->str(), "[32, 8] reg=[[0,1],[8,0]] lane=[[0,2],[0,4],[1,0],[2,0],[4,0]] "
                      "warp=[[16,0]]");
  LinearLayout b = LinearLayout::blocked({64}, {4}, {16}, {0}, 32);
  EXPECT_EQ(b.str(), "[64] reg=[[1],[2]] lane=[[4],[8],[16],[32],[0]] warp=[]");
}

//===----------------------------------------------------------------------===//
// mma.sync and wgmma fragments
//===----------------------------------------------------------------------===//

/// PTX's m16n8k16 C/D fragment, kite_gemm.cuh's tiling: warp (wm, wn) =
/// (w % warpsM, w / warpsM) holds rows wm * TM.. and columns wn * TN..,
/// registers c0..c3, then 8-column blocks, then 16-row blocks.
Coord accumulatorElement(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN, int64_t r,
                         int64_t lane, int64_t w) {
  int64_t tm = m / warpsM, tn = n / warpsN, fn = tn / 8;
  int64_t g = lane / 4, t = lane % 4;
  int64_t q = r % 4, j = (r / 4) % fn, i = r / (4 * fn);
  int64_t wm = w % warpsM, wn = w / warpsM;
  return rc(wm * tm + i * 16 + g + 8 * (q / 2), wn * tn + j * 8 + 2 * t + q % 2);
}

TEST(LayoutMma, AccumulatorMatchesPtx) {
  struct Case {
    int64_t m, n, warpsM, warpsN;
  };
  for (Case c : {Case{16, 8, 1, 1}, Case{64, 64, 4, 1}, Case{64, 128, 2, 2}, Case{128, 64, 2, 4},
                 Case{32, 16, 1, 2}}) {
    LinearLayout l = LinearLayout::mmaAccumulator({c.m, c.n}, c.warpsM, c.warpsN);
    EXPECT_EQ(l.numWarps(), c.warpsM * c.warpsN);
    EXPECT_EQ(l.numRegisters(), c.m * c.n / (32 * c.warpsM * c.warpsN));
    expectEvery(l, [&](int64_t r, int64_t lane, int64_t w) {
      return accumulatorElement(c.m, c.n, c.warpsM, c.warpsN, r, lane, w);
    });
    EXPECT_TRUE(l.registersDistinct());
    expectCovered(l, 1);
  }
}

TEST(LayoutMma, AccumulatorLeadingUnitDims) {
  LinearLayout l = LinearLayout::mmaAccumulator({1, 32, 16}, 2, 1);
  expectEvery(l, [&](int64_t r, int64_t lane, int64_t w) {
    Coord e = accumulatorElement(32, 16, 2, 1, r, lane, w);
    return Coord{0, e[0], e[1]};
  });
}

TEST(LayoutMma, OperandAMatchesPtx) {
  struct Case {
    int64_t m, k, warpsM, warpsN;
  };
  for (Case c : {Case{16, 16, 1, 1}, Case{64, 32, 2, 2}, Case{64, 32, 4, 1}, Case{32, 64, 1, 2}}) {
    LinearLayout l = LinearLayout::mmaOperand(0, {c.m, c.k}, c.warpsM, c.warpsN);
    int64_t tm = c.m / c.warpsM, fk = c.k / 16;
    expectEvery(l, [&](int64_t r, int64_t lane, int64_t w) {
      int64_t g = lane / 4, t = lane % 4;
      int64_t q = r % 8, kb = (r / 8) % fk, i = r / (8 * fk);
      // a0,a1 (g, 2t..); a2,a3 (g + 8, 2t..); a4,a5 (g, 2t + 8..); a6,a7 (g + 8, 2t + 8..).
      int64_t row = (w % c.warpsM) * tm + i * 16 + g + 8 * ((q / 2) % 2);
      int64_t col = kb * 16 + 2 * t + q % 2 + 8 * (q / 4);
      return rc(row, col);
    });
    EXPECT_TRUE(l.registersDistinct());
    expectCovered(l, c.warpsN); // replicated over the N warps
  }
}

TEST(LayoutMma, OperandBMatchesPtx) {
  struct Case {
    int64_t k, n, warpsM, warpsN;
  };
  for (Case c : {Case{16, 8, 1, 1}, Case{16, 16, 1, 1}, Case{64, 32, 2, 2}, Case{32, 64, 1, 4}}) {
    LinearLayout l = LinearLayout::mmaOperand(1, {c.k, c.n}, c.warpsM, c.warpsN);
    int64_t tn = c.n / c.warpsN, fk = c.k / 16;
    expectEvery(l, [&](int64_t r, int64_t lane, int64_t w) {
      int64_t g = lane / 4, t = lane % 4;
      int64_t q = r % 4, kb = (r / 4) % fk, j = r / (4 * fk);
      // b0,b1 (k = 2t, 2t + 1; n = g); b2,b3 (k = 2t + 8, 2t + 9; n = g).
      int64_t row = kb * 16 + 2 * t + q % 2 + 8 * (q / 2);
      int64_t col = (w / c.warpsM) * tn + j * 8 + g;
      return rc(row, col);
    });
    EXPECT_TRUE(l.registersDistinct());
    expectCovered(l, c.warpsM); // replicated over the M warps
  }
}

TEST(LayoutMma, AccumulatorIsTheNextAOperand) {
  struct Case {
    int64_t m, n, warpsM;
  };
  for (Case c :
       {Case{16, 16, 1}, Case{64, 64, 4}, Case{128, 32, 2}, Case{64, 128, 2}, Case{128, 128, 8}}) {
    LinearLayout acc = LinearLayout::mmaAccumulator({c.m, c.n}, c.warpsM, 1);
    LinearLayout a = LinearLayout::mmaOperand(0, {c.m, c.n}, c.warpsM, 1);
    EXPECT_EQ(acc, a) << acc.str() << " vs " << a.str();
    EXPECT_EQ(planConversion(acc, a).kind, ConversionPlan::Kind::None);
  }
}

TEST(LayoutMma, WgmmaAccumulatorMatchesPtx) {
  struct Case {
    int64_t m, n, warpgroups;
  };
  for (Case c :
       {Case{64, 64, 1}, Case{128, 128, 2}, Case{128, 64, 1}, Case{256, 32, 2}, Case{64, 8, 1}}) {
    LinearLayout l = LinearLayout::wgmmaAccumulator({c.m, c.n}, c.warpgroups);
    EXPECT_EQ(l.numWarps(), 4 * c.warpgroups);
    int64_t mw = c.m / c.warpgroups, perBlock = c.n / 2;
    expectEvery(l, [&](int64_t r, int64_t lane, int64_t w) {
      int64_t g = lane / 4, t = lane % 4;
      int64_t i = r % perBlock, block = r / perBlock;
      // D of m64nNk16: row 16 (w % 4) + g + 8 ((i / 2) % 2), col 8 (i / 4) + 2t + i % 2;
      // warpgroup w / 4 holds rows (w / 4) * M / warpgroups.., kite_gemm.cuh's split.
      int64_t row = (w / 4) * mw + block * 64 + 16 * (w % 4) + g + 8 * ((i / 2) % 2);
      int64_t col = 8 * (i / 4) + 2 * t + i % 2;
      return rc(row, col);
    });
    EXPECT_TRUE(l.registersDistinct());
    expectCovered(l, 1);
  }
}

//===----------------------------------------------------------------------===//
// slice, unsqueeze, permute
//===----------------------------------------------------------------------===//

TEST(LayoutSlice, AccumulatorRowSums) {
  LinearLayout acc = LinearLayout::mmaAccumulator({64, 64}, 4, 1);
  LinearLayout rows = acc.slice(1);
  EXPECT_EQ(rows.shape(), llvm::ArrayRef<int64_t>({64}));
  ASSERT_EQ(rows.bases(HwDim::Lane).size(), 5u);
  EXPECT_EQ(rows.bases(HwDim::Lane)[0], Coord({0}));
  EXPECT_EQ(rows.bases(HwDim::Lane)[1], Coord({0}));
  EXPECT_TRUE(rows.registersDistinct());
  EXPECT_EQ(rows.numRegisters(), 2); // rows g and g + 8 of the warp's 16
  for (int64_t t = 0; t < acc.numThreads(); ++t) {
    std::set<int64_t> accRows, sliceRows;
    for (int64_t r = 0; r < acc.numRegisters(); ++r)
      accRows.insert(acc.apply(r, t)[0]);
    for (int64_t r = 0; r < rows.numRegisters(); ++r)
      sliceRows.insert(rows.apply(r, t)[0]);
    EXPECT_EQ(accRows, sliceRows) << "thread " << t;
    EXPECT_EQ(sliceRows.size(), size_t(rows.numRegisters()));
  }
}

TEST(LayoutSlice, Blocked) {
  BlockedCase b{{32, 64}, {1, 4}, {4, 8}, {1, 0}, 64};
  LinearLayout l = LinearLayout::blocked(b.shape, b.vec, b.threads, b.order, b.numThreads);
  for (int64_t dim : {0, 1}) {
    LinearLayout s = l.slice(dim);
    EXPECT_EQ(s.rank(), 1);
    EXPECT_EQ(s.shape()[0], b.shape[1 - dim]);
    EXPECT_TRUE(s.registersDistinct());
    for (int64_t t = 0; t < l.numThreads(); ++t) {
      std::set<int64_t> want, got;
      for (int64_t r = 0; r < l.numRegisters(); ++r)
        want.insert(blockedElement(b, r, t)[1 - dim]);
      for (int64_t r = 0; r < s.numRegisters(); ++r)
        got.insert(s.apply(r, t)[0]);
      EXPECT_EQ(want, got) << "slice " << dim << " thread " << t;
    }
  }
  // Without the columns a thread keeps its 8 rows; without the rows, its 8
  // columns (2 runs of 4).
  EXPECT_EQ(l.slice(1).numRegisters(), 32 / 4);
  EXPECT_EQ(l.slice(0).numRegisters(), 64 / 8);
}

TEST(LayoutSlice, UnsqueezeAndPermute) {
  LinearLayout l = LinearLayout::blocked({8, 64}, {1, 4}, {2, 16}, {1, 0}, 32);
  LinearLayout u = l.unsqueeze(1);
  EXPECT_EQ(u.shape(), llvm::ArrayRef<int64_t>({8, 1, 64}));
  LinearLayout p = l.permute({1, 0});
  EXPECT_EQ(p.shape(), llvm::ArrayRef<int64_t>({64, 8}));
  for (int64_t t = 0; t < 32; ++t)
    for (int64_t r = 0; r < l.numRegisters(); ++r) {
      Coord c = l.apply(r, t);
      EXPECT_EQ(u.apply(r, t), Coord({c[0], 0, c[1]}));
      EXPECT_EQ(p.apply(r, t), Coord({c[1], c[0]}));
    }
  EXPECT_EQ(u.slice(1), l);
  EXPECT_EQ(p.permute({1, 0}), l);
}

//===----------------------------------------------------------------------===//
// planConversion
//===----------------------------------------------------------------------===//

LinearLayout withBases(const LinearLayout &l, HwDim h, Bases bases) {
  std::array<Bases, kNumHwDims> all = {l.bases(HwDim::Register), l.bases(HwDim::Lane),
                                       l.bases(HwDim::Warp)};
  all[int(h)] = std::move(bases);
  std::string error;
  auto out = LinearLayout::get(l.shape(), all, &error);
  EXPECT_TRUE(out) << error;
  return *out;
}

void expectRegisterMap(const LinearLayout &from, const LinearLayout &to) {
  ConversionPlan plan = planConversion(from, to);
  ASSERT_EQ(plan.kind, ConversionPlan::Kind::Registers);
  ASSERT_EQ(int64_t(plan.registerMap.size()), to.numRegisters());
  for (int64_t t = 0; t < to.numThreads(); ++t)
    for (int64_t r = 0; r < to.numRegisters(); ++r) {
      ASSERT_GE(plan.registerMap[r], 0);
      ASSERT_LT(plan.registerMap[r], from.numRegisters());
      ASSERT_EQ(from.apply(plan.registerMap[r], t), to.apply(r, t))
          << "reg " << r << " thread " << t;
    }
}

TEST(LayoutConversion, Kinds) {
  using Kind = ConversionPlan::Kind;
  LinearLayout rowMajor = LinearLayout::blocked({64, 64}, {1, 4}, {8, 16}, {1, 0}, 128);
  EXPECT_EQ(planConversion(rowMajor, rowMajor).kind, Kind::None);

  // The same elements per thread in another register order.
  Bases regs = rowMajor.bases(HwDim::Register);
  ASSERT_GE(regs.size(), 3u);
  std::swap(regs[0], regs[2]);
  std::swap(regs[1], regs.back());
  LinearLayout renamed = withBases(rowMajor, HwDim::Register, regs);
  expectRegisterMap(rowMajor, renamed);
  expectRegisterMap(renamed, rowMajor);

  // A register basis that is the XOR of two others: still a rename.
  Bases mixed = rowMajor.bases(HwDim::Register);
  mixed[1] = Coord({mixed[0][0] ^ mixed[1][0], mixed[0][1] ^ mixed[1][1]});
  expectRegisterMap(rowMajor, withBases(rowMajor, HwDim::Register, mixed));

  // `to` a subset: from holds a duplicate register (a zero basis) to drops.
  Bases dup = rowMajor.bases(HwDim::Register);
  dup.insert(dup.begin() + 1, Coord({0, 0}));
  expectRegisterMap(withBases(rowMajor, HwDim::Register, dup), rowMajor);

  // Lanes permuted within the warp: shuffles.
  Bases lanes = rowMajor.bases(HwDim::Lane);
  std::swap(lanes[0], lanes[4]);
  EXPECT_EQ(planConversion(rowMajor, withBases(rowMajor, HwDim::Lane, lanes)).kind,
            Kind::WarpShuffle);

  // Lane 1's elements differ by a register basis: each thread still holds
  // them, but at a register index that depends on the lane; shuffles.
  Bases shifted = rowMajor.bases(HwDim::Lane);
  const Coord &r0 = rowMajor.bases(HwDim::Register)[0];
  shifted[0] = Coord({shifted[0][0] ^ r0[0], shifted[0][1] ^ r0[1]});
  EXPECT_EQ(planConversion(rowMajor, withBases(rowMajor, HwDim::Lane, shifted)).kind,
            Kind::WarpShuffle);

  // Threads along the rows vs along the columns: warps hold other elements.
  LinearLayout colMajor = LinearLayout::blocked({64, 64}, {4, 1}, {16, 8}, {0, 1}, 128);
  EXPECT_EQ(planConversion(rowMajor, colMajor).kind, Kind::SharedMemory);
  EXPECT_EQ(planConversion(colMajor, rowMajor).kind, Kind::SharedMemory);

  // The same warp bases, but lane 1 of each warp holds what the next warp
  // holds in `from` (its lane-1 elements move to a register): cross-warp.
  {
    std::array<Bases, kNumHwDims> all = {rowMajor.bases(HwDim::Register),
                                         rowMajor.bases(HwDim::Lane), rowMajor.bases(HwDim::Warp)};
    all[0].push_back(all[1][0]);
    all[1][0] = all[2][0];
    auto crossed = LinearLayout::get(rowMajor.shape(), all);
    ASSERT_TRUE(crossed);
    EXPECT_EQ(planConversion(rowMajor, *crossed).kind, Kind::SharedMemory);
  }

  // Swapping two warps' elements: also through shared memory.
  Bases warps = rowMajor.bases(HwDim::Warp);
  std::swap(warps[0], warps[1]);
  EXPECT_EQ(planConversion(rowMajor, withBases(rowMajor, HwDim::Warp, warps)).kind,
            Kind::SharedMemory);
}

TEST(LayoutConversion, AccumulatorToBlockedAndBack) {
  using Kind = ConversionPlan::Kind;
  LinearLayout acc = LinearLayout::mmaAccumulator({64, 64}, 4, 1);
  LinearLayout rows = LinearLayout::blocked({64, 64}, {1, 4}, {2, 16}, {1, 0}, 128);
  EXPECT_EQ(planConversion(acc, rows).kind, Kind::SharedMemory);
  // Each warp of both holds the same 16 whole rows (lanes along the row,
  // two columns a lane): a shuffle.
  auto warpRows =
      LinearLayout::get({64, 64}, {Bases{rc(0, 1), rc(1, 0), rc(2, 0), rc(4, 0), rc(8, 0)},
                                   Bases{rc(0, 2), rc(0, 4), rc(0, 8), rc(0, 16), rc(0, 32)},
                                   Bases{rc(16, 0), rc(32, 0)}});
  ASSERT_TRUE(warpRows);
  EXPECT_EQ(planConversion(acc, *warpRows).kind, Kind::WarpShuffle);
  EXPECT_EQ(planConversion(*warpRows, acc).kind, Kind::WarpShuffle);
}

//===----------------------------------------------------------------------===//
// holderOf
//===----------------------------------------------------------------------===//

/// The first (warp, lane, register) in that order of significance that
/// holds `c`, by enumeration.
std::array<int64_t, 3> firstHolder(const LinearLayout &l, const Coord &c) {
  for (int64_t w = 0; w < l.numWarps(); ++w)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < l.numRegisters(); ++r)
        if (l.apply(r, lane, w) == c)
          return {r, lane, w};
  ADD_FAILURE() << "nobody holds the element";
  return {-1, -1, -1};
}

TEST(LayoutHolder, FindsTheLowestHolder) {
  std::vector<LinearLayout> layouts = {
      LinearLayout::blocked({2, 8}, {1, 1}, {2, 8}, {1, 0}, 128),
      LinearLayout::blocked({8, 64}, {1, 4}, {2, 16}, {1, 0}, 64),
      LinearLayout::mmaOperand(0, {32, 32}, 2, 2),
      LinearLayout::mmaOperand(1, {32, 32}, 2, 2),
      LinearLayout::mmaAccumulator({64, 64}, 2, 2),
      LinearLayout::mmaAccumulator({64, 64}, 4, 1).slice(1),
      LinearLayout::wgmmaAccumulator({128, 16}, 1),
  };
  // A layout whose registers duplicate: register bit 1 repeats bit 0.
  auto dup = LinearLayout::get(
      {64}, {Bases{{1}, {1}, {2}}, Bases{{4}, {8}, {16}, {32}, {0}}, Bases{{0}, {1}}});
  ASSERT_TRUE(dup);
  layouts.push_back(*dup);
  for (const LinearLayout &l : layouts) {
    int64_t rows = l.rank() == 2 ? l.shape()[0] : 1, cols = l.shape().back();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        Coord c = l.rank() == 2 ? rc(i, j) : Coord{j};
        auto [r, lane, w] = l.holderOf(c);
        ASSERT_EQ(l.apply(r, lane, w), c) << l.str();
        ASSERT_EQ(l.holderOf(c), firstHolder(l, c)) << l.str();
      }
  }
  // The replicated [2, 8]: always warp 0 and one of the first 16 lanes.
  LinearLayout small = layouts[0];
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      auto h = small.holderOf(rc(i, j));
      EXPECT_EQ(h[2], 0);
      EXPECT_EQ(h[1], j + 8 * i);
      EXPECT_EQ(h[0], 0);
    }
}

TEST(LayoutHolder, LargeShape) {
  // 2^24 elements: solved, not enumerated.
  LinearLayout l = LinearLayout::blocked({4096, 4096}, {1, 8}, {8, 16}, {1, 0}, 128);
  for (Coord c : {rc(0, 0), rc(4095, 4095), rc(1234, 567), rc(77, 4000)}) {
    auto [r, lane, w] = l.holderOf(c);
    EXPECT_EQ(l.apply(r, lane, w), c);
  }
}

//===----------------------------------------------------------------------===//
// get()
//===----------------------------------------------------------------------===//

Bases lanes1D() { return Bases{{1}, {2}, {4}, {8}, {16}}; }

TEST(LayoutGet, AcceptsAndRejects) {
  std::string error;
  EXPECT_TRUE(LinearLayout::get({64}, {Bases{{32}}, lanes1D(), Bases{}}, &error)) << error;

  error.clear();
  EXPECT_FALSE(LinearLayout::get({48}, {Bases{{32}}, lanes1D(), Bases{}}, &error));
  EXPECT_NE(error.find("power of two"), std::string::npos) << error;

  error.clear();
  EXPECT_FALSE(LinearLayout::get({16}, {Bases{}, Bases{{1}, {2}, {4}, {8}}, Bases{}}, &error));
  EXPECT_NE(error.find("lane"), std::string::npos) << error;

  error.clear();
  EXPECT_FALSE(LinearLayout::get({64}, {Bases{{16}}, lanes1D(), Bases{}}, &error));
  EXPECT_NE(error.find("span"), std::string::npos) << error;

  error.clear();
  EXPECT_FALSE(LinearLayout::get({64}, {Bases{{64}}, lanes1D(), Bases{}}, &error));
  EXPECT_NE(error.find("outside"), std::string::npos) << error;

  error.clear();
  EXPECT_FALSE(LinearLayout::get({64}, {Bases{{-1}}, lanes1D(), Bases{}}, &error));
  EXPECT_FALSE(error.empty());

  error.clear();
  EXPECT_FALSE(LinearLayout::get({64}, {Bases{{32, 0}}, lanes1D(), Bases{}}, &error));
  EXPECT_NE(error.find("entries"), std::string::npos) << error;

  EXPECT_FALSE(LinearLayout::get({0}, {Bases{}, lanes1D(), Bases{}}));
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

/// Brute force: warp 0's wavefronts, every lane's register runs of `vec`
/// addressed at the first register's byte offset, phases of 128 bytes, per
/// bank the distinct words; over the ideal of the same bytes.
double referenceConflicts(const LinearLayout &l, const SharedLayout &s, int64_t vec) {
  int64_t bytes = vec * s.elemBytes;
  int64_t perPhase = bytes <= 4 ? 32 : 128 / bytes;
  int64_t total = 0, ideal = 0;
  for (int64_t r = 0; r < l.numRegisters(); r += vec) {
    for (int64_t p0 = 0; p0 < 32; p0 += perPhase) {
      std::map<int64_t, std::set<int64_t>> banks;
      for (int64_t lane = p0; lane < p0 + perPhase; ++lane)
        for (int64_t j = 0; j < vec; ++j) {
          Coord c = l.apply(r + j, lane, 0);
          int64_t byte = s.offset(c) * s.elemBytes;
          for (int64_t b = byte; b < byte + s.elemBytes; ++b)
            banks[(b / 4) % 32].insert(b / 4);
        }
      size_t most = 0;
      for (auto &[bank, words] : banks)
        most = std::max(most, words.size());
      total += most;
      ++ideal;
    }
  }
  return double(total) / double(ideal);
}

/// The swizzle formula, written out: element (row, col) of an [R, C] tile.
int64_t swizzled(int64_t row, int64_t col, int64_t rowElems, int64_t elemBytes, int64_t perPhase,
                 int64_t maxPhase) {
  int64_t chunkElems = 16 / elemBytes;
  int64_t chunk = col / chunkElems;
  return row * rowElems + (chunk ^ ((row / perPhase) % maxPhase)) * chunkElems + col % chunkElems;
}

TEST(LayoutShared, Offsets) {
  SharedLayout s{{2, 16, 64}, 2, 0, 2, 4};
  EXPECT_EQ(s.sizeElems(), 2 * 16 * 64);
  std::set<int64_t> seen;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t c = 0; c < 64; ++c) {
        int64_t o = s.offset({b, r, c});
        EXPECT_EQ(o, b * 16 * 64 + swizzled(r, c, 64, 2, 2, 4));
        seen.insert(o);
      }
  EXPECT_EQ(seen.size(), size_t(2 * 16 * 64)); // a permutation
  SharedLayout padded{{32, 32}, 4, 33, 1, 1};
  EXPECT_EQ(padded.sizeElems(), 32 * 33);
  EXPECT_EQ(padded.offset({3, 5}), 3 * 33 + 5);
  SharedLayout flat{{64}, 4};
  EXPECT_EQ(flat.offset({17}), 17);
  EXPECT_EQ(flat.sizeElems(), 64);
}

TEST(LayoutShared, BankConflicts) {
  // Each lane one row of f32 [32, 32]: a column at a time, all in one bank.
  LinearLayout rowPerLane = LinearLayout::blocked({32, 32}, {1, 1}, {32, 1}, {0, 1}, 32);
  SharedLayout plain{{32, 32}, 4};
  EXPECT_DOUBLE_EQ(bankConflicts(rowPerLane, plain, 1), 32.0);
  SharedLayout padded{{32, 32}, 4, 33};
  EXPECT_DOUBLE_EQ(bankConflicts(rowPerLane, padded, 1), 1.0);
  // Lanes along a row, 16 bytes each: a quarter warp per 128-byte row.
  LinearLayout alongRows = LinearLayout::blocked({32, 32}, {1, 4}, {4, 8}, {1, 0}, 32);
  EXPECT_DOUBLE_EQ(bankConflicts(alongRows, plain, 4), 1.0);
  // The same registers one or two at a time: the warp's 4 rows (8 lanes
  // each, 4 floats apart) meet in the same banks, 4 of them per bank, or 2
  // per half warp.
  EXPECT_DOUBLE_EQ(bankConflicts(alongRows, plain, 2), 2.0);
  EXPECT_DOUBLE_EQ(bankConflicts(alongRows, plain, 1), 4.0);
  // 8-byte accesses: each half warp writes one whole 128-byte row.
  LinearLayout pairs = LinearLayout::blocked({32, 32}, {1, 2}, {2, 16}, {1, 0}, 32);
  EXPECT_DOUBLE_EQ(bankConflicts(pairs, plain, 2), 1.0);
  // Broadcast: 32 lanes of which 16 replicate, one float each.
  LinearLayout bcast = LinearLayout::blocked({16}, {1}, {16}, {0}, 32);
  EXPECT_DOUBLE_EQ(bankConflicts(bcast, SharedLayout{{16}, 4}, 1), 1.0);
  // bf16 columns, 32 rows of 128 bytes: all lanes in one bank; a full
  // 8-phase swizzle leaves 4 rows per chunk position.
  LinearLayout cols = LinearLayout::blocked({64, 64}, {1, 1}, {32, 1}, {0, 1}, 32);
  EXPECT_DOUBLE_EQ(bankConflicts(cols, SharedLayout{{64, 64}, 2}, 1), 32.0);
  EXPECT_DOUBLE_EQ(bankConflicts(cols, SharedLayout{{64, 64}, 2, 0, 1, 8}, 1), 4.0);
}

TEST(LayoutShared, BankConflictsMatchBruteForce) {
  std::vector<std::pair<LinearLayout, int64_t>> dists = {
      {LinearLayout::blocked({64, 64}, {1, 8}, {16, 8}, {1, 0}, 128), 8},
      {LinearLayout::blocked({64, 64}, {1, 4}, {8, 16}, {1, 0}, 128), 4},
      {LinearLayout::blocked({64, 64}, {1, 2}, {2, 16}, {1, 0}, 128), 2},
      {LinearLayout::blocked({64, 64}, {1, 1}, {64, 2}, {0, 1}, 128), 1},
      {LinearLayout::mmaAccumulator({64, 64}, 2, 2), 2},
      {LinearLayout::mmaOperand(0, {64, 64}, 2, 2), 2},
      {LinearLayout::mmaOperand(1, {64, 64}, 2, 2), 1},
  };
  for (int64_t elemBytes : {2, 4}) {
    for (int64_t maxPhase : {1, 2, 4, 8})
      for (int64_t perPhase : {1, 2, 4}) {
        SharedLayout s{{64, 64}, elemBytes, 0, perPhase, maxPhase};
        for (auto &[l, vec] : dists) {
          if (vec * elemBytes > 16)
            continue;
          EXPECT_DOUBLE_EQ(bankConflicts(l, s, vec), referenceConflicts(l, s, vec))
              << l.str() << " vec " << vec << " elem " << elemBytes << " swizzle " << perPhase
              << "/" << maxPhase;
        }
      }
  }
}

TEST(LayoutShared, UnvectorizableAccessCostsAtLeastTheVectors) {
  // mma's B pairs run along K, not the last dim: read one at a time, which
  // is twice the wavefronts of 4-byte bf16 pairs.
  LinearLayout b = LinearLayout::mmaOperand(1, {64, 64}, 2, 2);
  SharedLayout s{{64, 64}, 2, 0, 1, 8};
  EXPECT_DOUBLE_EQ(bankConflicts(b, s, 1), 1.0);
  EXPECT_DOUBLE_EQ(bankConflicts(b, s, 2), 2.0);
  // Rows padded by one bf16: 16-byte vectors are misaligned in odd rows.
  LinearLayout rows = LinearLayout::blocked({64, 64}, {1, 8}, {16, 8}, {1, 0}, 128);
  EXPECT_GE(bankConflicts(rows, SharedLayout{{64, 64}, 2, 66}, 8), 2.0);
}

/// Every buffer the test weighs: the swizzles and paddings of the header.
std::vector<SharedLayout> candidates(int64_t elemBytes) {
  std::vector<SharedLayout> out;
  for (int64_t maxPhase : {1, 2, 4, 8})
    for (int64_t perPhase : {1, 2, 4, 8})
      out.push_back(SharedLayout{{64, 64}, elemBytes, 0, perPhase, maxPhase});
  for (int64_t pad : {1, 2, 4, 8})
    out.push_back(SharedLayout{{64, 64}, elemBytes, 64 + pad});
  return out;
}

TEST(LayoutShared, ChooseSharedLayout) {
  LinearLayout rows = LinearLayout::blocked({64, 64}, {1, 8}, {16, 8}, {1, 0}, 128);
  LinearLayout cols = LinearLayout::blocked({64, 64}, {1, 1}, {64, 2}, {0, 1}, 128);
  SharedLayout plain{{64, 64}, 2};
  SharedLayout chosen = chooseSharedLayout(rows, 8, cols, 1, 2);
  double cost = bankConflicts(rows, chosen, 8) + bankConflicts(cols, chosen, 1);
  EXPECT_DOUBLE_EQ(bankConflicts(rows, plain, 8) + bankConflicts(cols, plain, 1), 33.0);
  EXPECT_LT(cost, 33.0);
  // The 16-byte row writes are conflict-free in any swizzle, but a warp's
  // column reads (32 rows) are at best 4-way there: 8 chunk positions.
  // Padding the rows by one word (2 bf16) makes the reads free and the
  // writes unaligned: 2-byte writes, 32 steps of 1 wavefront where the
  // vectors would need 16, 2.0. 1.0 + 2.0 beats 1.0 + 4.0.
  EXPECT_DOUBLE_EQ(cost, 3.0);
  EXPECT_EQ(chosen.rowElems, 66);
  EXPECT_EQ(chosen.maxPhase, 1);
  EXPECT_DOUBLE_EQ(bankConflicts(rows, SharedLayout{{64, 64}, 2, 0, 1, 8}, 8) +
                       bankConflicts(cols, SharedLayout{{64, 64}, 2, 0, 1, 8}, 1),
                   5.0);
  for (const SharedLayout &s : candidates(2))
    EXPECT_LE(cost, bankConflicts(rows, s, 8) + bankConflicts(cols, s, 1) + 1e-9);

  // Into mma's B operand, read as bf16 pairs.
  LinearLayout b = LinearLayout::mmaOperand(1, {64, 64}, 2, 2);
  // The pairs run along K, so they are read one at a time (2.0 at best);
  // a swizzle that puts rows k, k + 2, k + 4, k + 6 on distinct chunks
  // makes those reads conflict-free.
  SharedLayout toB = chooseSharedLayout(rows, 8, b, 2, 2);
  EXPECT_GT(toB.maxPhase, 1);
  EXPECT_DOUBLE_EQ(bankConflicts(rows, toB, 8), 1.0);
  EXPECT_DOUBLE_EQ(bankConflicts(b, toB, 2), 2.0);
  EXPECT_DOUBLE_EQ(bankConflicts(b, toB, 1), 1.0);
  double costB = bankConflicts(rows, toB, 8) + bankConflicts(b, toB, 2);
  for (const SharedLayout &s : candidates(2))
    EXPECT_LE(costB, bankConflicts(rows, s, 8) + bankConflicts(b, s, 2) + 1e-9);

  // Nothing to gain: the unswizzled, unpadded buffer.
  LinearLayout rows4 = LinearLayout::blocked({64, 64}, {1, 4}, {8, 16}, {1, 0}, 128);
  SharedLayout same = chooseSharedLayout(rows4, 4, rows4, 4, 4);
  EXPECT_EQ(same.maxPhase, 1);
  EXPECT_EQ(same.rowElems == 0 ? 64 : same.rowElems, 64);
}

} // namespace

//===----------------------------------------------------------------------===//
// #kite.blocked: the tensor cores' layout and readableAt
//===----------------------------------------------------------------------===//

namespace {

/// The elements (projected onto `dims` of the tile) thread `t` holds in `l`.
std::set<Coord> heldBy(const LinearLayout &l, int64_t t, llvm::ArrayRef<int64_t> dims) {
  std::set<Coord> held;
  for (int64_t r = 0; r < l.numRegisters(); ++r) {
    Coord e = l.apply(r, t), p;
    for (int64_t d : dims)
      p.push_back(e[d]);
    held.insert(p);
  }
  return held;
}

struct BlockedAttrs : ::testing::Test {
  BlockedAttrs() { context.loadDialect<kite::KiteDialect>(); }
  kite::BlockedLayoutAttr blocked(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> vec,
                                  llvm::ArrayRef<int64_t> threads, llvm::ArrayRef<int64_t> dims) {
    return kite::BlockedLayoutAttr::get(&context, shape, vec, threads, dims);
  }
  mlir::MLIRContext context;
};

} // namespace

// kite-assign-layouts' tensor-core layout of a [64, 32] tile on 128 threads:
// each thread holds, per pair of its rows, exactly the columns PTX's m16n8
// accumulator gives its lane, and the 4 lanes of a quad share their rows
// (so the pair of rows is the two 8-row halves of one 16-row tile).
TEST_F(BlockedAttrs, TensorCoreLayoutIsTheAccumulatorWithRowsPermuted) {
  LinearLayout l = blocked({64, 32}, {1, 2}, {32, 4}, {0, 1}).toLinearLayout(128);
  LinearLayout ptx = LinearLayout::mmaAccumulator({64, 32}, 4, 1);
  for (int64_t t = 0; t < 128; ++t) {
    std::set<Coord> cols = heldBy(l, t, {1}), ptxCols = heldBy(ptx, t, {1});
    EXPECT_EQ(cols, ptxCols) << "thread " << t;
    EXPECT_EQ(heldBy(l, t, {0}), heldBy(l, t - t % 4, {0})) << "thread " << t;
    EXPECT_EQ(heldBy(l, t, {0}).size(), heldBy(ptx, t, {0}).size()) << "thread " << t;
  }
}

// A row statistic of the [64, 32] scores reads at the [64, 128] accumulator
// in another context (rows distributed alike); one from a context whose rows
// lie otherwise does not. Checked against what each thread holds.
TEST_F(BlockedAttrs, ReadableAtMatchesWhatThreadsHold) {
  struct Case {
    kite::BlockedLayoutAttr operand, user;
    bool readable;
  };
  auto acc = blocked({64, 128}, {1, 2}, {32, 4}, {0, 1});
  Case cases[] = {
      {blocked({64, 32}, {1, 2}, {32, 4}, {0, -1}), acc, true},
      {blocked({64, 32}, {1, 2}, {32, 4}, {0, 1}), blocked({64, 32}, {1, 2}, {32, 4}, {0, 1}),
       true},
      {blocked({64, 128}, {1, 8}, {8, 16}, {0, -1}), acc, false},
      {blocked({64, 32}, {1, 2}, {16, 8}, {0, -1}), acc, false},
      {blocked({64, 32}, {1, 2}, {32, 4}, {-1, -1}), acc, true},
      {blocked({64, 32}, {1, 2}, {32, 4}, {0, 1}), acc, false},
  };
  for (auto [i, c] : llvm::enumerate(cases)) {
    SCOPED_TRACE("case " + std::to_string(i));
    EXPECT_EQ(c.operand.readableAt(c.user, 0), c.readable);
    if (!c.readable)
      continue;
    // Every element a user's thread holds, projected onto the operand's
    // non-unit dims, is one that thread holds of the operand.
    llvm::SmallVector<int64_t> dims;
    for (auto [j, d] : llvm::enumerate(c.operand.getDims()))
      if (d >= 0)
        dims.push_back(j);
    LinearLayout o = c.operand.toLinearLayout(128), u = c.user.toLinearLayout(128);
    for (int64_t t = 0; t < 128; ++t) {
      std::set<Coord> held = heldBy(o, t, dims);
      for (const Coord &e : heldBy(u, t, dims))
        EXPECT_TRUE(held.count(e)) << "thread " << t;
    }
  }
  // Offsets align from the right; an operand dim over a user's unit dim is
  // not readable.
  auto row = blocked({64, 32}, {1, 2}, {32, 4}, {0});
  EXPECT_TRUE(row.readableAt(acc, 0));
  EXPECT_FALSE(row.readableAt(acc, 1));
  EXPECT_FALSE(row.readableAt(blocked({64, 128}, {1, 2}, {32, 4}, {-1, 1}), 0));
}
