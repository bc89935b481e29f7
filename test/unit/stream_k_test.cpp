//===- stream_k_test.cpp - the stream-K schedule's arithmetic -------------===//
//
// kite_stream_k.cuh's schedule, run on the host for every program of a
// launch: the units cover each tile's K iterations exactly once; a shared
// tile's parts are the sharers that sharers_of names, each with its own
// workspace slot (at most one part starting inside a tile and one owned
// part ending inside one a program, which StreamK::slot relies on); a
// program's units start at K = 0 but its last; and the left-over tiles are
// fewer than the programs (one counter a program is enough).
//
//===----------------------------------------------------------------------===//

#include "runtime/device/kite_stream_k.cuh"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

namespace {

struct Unit {
  int program;
  int kb, ke;
};

void checkSchedule(long long tiles, int iters, int programs) {
  SCOPED_TRACE(testing::Message() << tiles << " tiles of " << iters << " iterations on "
                                  << programs << " programs");
  std::map<long long, std::vector<Unit>> byTile;
  StreamKWalk any(tiles, iters, programs, 0);
  EXPECT_LT(tiles - any.whole, programs > 0 ? programs : 1);
  for (int p = 0; p < programs; ++p) {
    StreamKWalk w(tiles, iters, programs, p);
    long long tile;
    int kb, ke, startsInside = 0, endsInside = 0, units = 0;
    std::vector<int> starts;
    while (w.next_unit(tile, kb, ke)) {
      ASSERT_GE(tile, 0);
      ASSERT_LT(tile, tiles);
      ASSERT_LT(kb, ke);
      ASSERT_LE(ke, iters);
      byTile[tile].push_back({p, kb, ke});
      starts.push_back(kb);
      if (tile >= w.whole) {
        startsInside += kb > 0;
        endsInside += kb == 0 && ke < iters;
      }
      ASSERT_LT(++units, 1 << 20);
    }
    EXPECT_LE(startsInside, 1) << "program " << p;
    EXPECT_LE(endsInside, 1) << "program " << p;
    // Every unit but the last starts at K = 0 (the walk from the range's end).
    for (size_t i = 0; i + 1 < starts.size(); ++i)
      EXPECT_EQ(starts[i], 0) << "program " << p << ", unit " << i;
  }
  ASSERT_EQ((long long)byTile.size(), tiles);
  for (auto &[tile, units] : byTile) {
    std::vector<int> covered(iters, 0);
    for (const Unit &u : units)
      for (int k = u.kb; k < u.ke; ++k)
        ++covered[k];
    for (int k = 0; k < iters; ++k)
      ASSERT_EQ(covered[k], 1) << "tile " << tile << ", iteration " << k;
    if (tile < any.whole) {
      ASSERT_EQ(units.size(), 1u);
      continue;
    }
    // The sharers sharers_of names are the programs that ran the parts,
    // in K order, the owner (kb = 0) first.
    int first, last;
    any.sharers_of(tile, first, last);
    std::set<int> programsOf;
    for (const Unit &u : units)
      programsOf.insert(u.program);
    ASSERT_EQ((int)programsOf.size(), last - first + 1) << "tile " << tile;
    EXPECT_EQ(*programsOf.begin(), first);
    EXPECT_EQ(*programsOf.rbegin(), last);
    for (const Unit &u : units) {
      if (u.kb == 0) {
        EXPECT_EQ(u.program, first) << "tile " << tile;
      }
    }
  }
}

TEST(StreamK, UnitsCoverEveryIterationOnce) {
  // The benchmark shapes on 132 SMs (4096^3 and 8192^3 in 128 x 256 tiles,
  // bmm 64 x 1024^3, FP8 8192^3, 128 x 8192^2 in 64 x 128 tiles), the GPU
  // cases' shapes, few tiles, K of one iteration, odd counts.
  const long long shapes[][2] = {{512, 64}, {2048, 128}, {2048, 16}, {2048, 64}, {128, 128},
                                 {270, 5},  {180, 5},    {135, 5},   {141, 16}, {1, 1},
                                 {1, 7},    {131, 3},    {133, 3},   {264, 1},  {265, 2},
                                 {1000, 9}, {7, 1000}};
  for (auto [tiles, iters] : shapes)
    for (int programs : {1, 2, 7, 66, 132, 264})
      checkSchedule(tiles, int(iters), programs);
}

TEST(StreamK, WholeWavesLeaveNothingShared) {
  StreamKWalk w(528, 64, 132, 5);
  EXPECT_EQ(w.whole, 528);
  EXPECT_EQ(w.sharers, 0);
  long long tile;
  int kb, ke, n = 0;
  while (w.next_unit(tile, kb, ke)) {
    EXPECT_EQ(tile, 5 + 132 * n++);
    EXPECT_EQ(kb, 0);
    EXPECT_EQ(ke, 64);
  }
  EXPECT_EQ(n, 4);
}

TEST(StreamK, RangesAreAtLeastHalfATile) {
  // 4 left-over tiles of 64 iterations on 132 programs: 8 sharers of 32,
  // not 132 of 1 or 2.
  StreamKWalk w(4, 64, 132, 0);
  EXPECT_EQ(w.whole, 0);
  EXPECT_EQ(w.sharers, 8);
  EXPECT_EQ(w.share, 32);
  // 512 tiles: 116 left over, 7424 iterations, 56 or 57 a program.
  StreamKWalk big(512, 64, 132, 0);
  EXPECT_EQ(big.whole, 396);
  EXPECT_EQ(big.sharers, 132);
  EXPECT_EQ(big.share, 56);
  EXPECT_EQ(big.longer, 7424 - 56 * 132);
}

} // namespace
