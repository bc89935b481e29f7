//===- kite_stream_k.cuh - the arithmetic of a stream-K schedule ----------===//
//
// Config::stream_k's schedule of `tiles` tiles, each a K loop of `iters`
// iterations, over `programs` programs, as plain integer arithmetic that
// compiles for NVRTC (kite_device.cuh's StreamK runs it with gridDim.x and
// blockIdx.x) and for the host (test/unit/stream_k_test.cpp checks that the
// units cover every iteration once, and what finish assumes of them).
//
// The tiles of whole waves, tiles / programs a program, run whole,
// interleaved. The K iterations of the tiles left over (fewer than the
// programs) are shared out as contiguous ranges of at least iters / 2, one
// a program, tile by tile; a range's part of one tile is a *unit* (tile,
// iterations [kb, ke)). The unit with kb = 0 *owns* its tile: its sums come
// first in K order. A program walks its range's tiles from the last one
// back, each unit's K forward, so that its units start at K = 0 but the one
// that starts its range: the programs then read the same K slices of their
// operands at about the same time (two fronts, iters minus the range
// apart), as whole waves do, and the L2 serves them.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_STREAM_K_CUH
#define KITE_STREAM_K_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KITE_SK_FN __device__ __forceinline__
#else
#define KITE_SK_FN inline
#endif

/// One program's walk through a stream-K schedule. 32-bit counts (a launch
/// has fewer than 2^31 tiles and K iterations in its left-over tiles) and
/// no 64-bit division, so that the producer's few registers hold them.
struct StreamKWalk {
  int whole, iters, sharers, share, longer, programs, next, at, end;
  KITE_SK_FN StreamKWalk(long long tiles, long long iters_, int programs_, int program)
      : iters(int(iters_)), programs(programs_) {
    whole = int(tiles) / programs * programs;
    const int tail = (int(tiles) - whole) * iters;
    const int half = (iters + 1) / 2;
    sharers = tail == 0 ? 0 : tail / half < 1 ? 1 : tail / half < programs ? tail / half : programs;
    // The first `longer` sharers take share + 1 iterations, the rest share.
    share = sharers == 0 ? 0 : tail / sharers;
    longer = sharers == 0 ? 0 : tail % sharers;
    next = program;
    at = program < sharers ? start(program) : 0;
    end = program < sharers ? start(program + 1) : 0;
  }
  /// Sharer p's first iteration, counted from the left-over tiles' first.
  KITE_SK_FN int start(int p) const { return p * share + (p < longer ? p : longer); }
  /// The sharer whose range holds left-over iteration x.
  KITE_SK_FN int sharer(int x) const {
    const int split = longer * (share + 1);
    return x < split ? x / (share + 1) : longer + (x - split) / share;
  }
  /// This program's next unit; false when it has run them all.
  KITE_SK_FN bool next_unit(long long &tile, int &kb, int &ke) {
    if (next < whole) {
      tile = next;
      kb = 0;
      ke = iters;
      next += programs;
      return true;
    }
    if (at >= end)
      return false;
    // The range's last tile not yet run, from K = 0 (or from the range's
    // start, where that is in the same tile).
    const int last = (end - 1) / iters, from = at > last * iters ? at : last * iters;
    tile = whole + last;
    kb = from - last * iters;
    ke = end - last * iters;
    end = from;
    return true;
  }
  /// The sharers of left-over tile `tile` (first is its owner's program).
  KITE_SK_FN void sharers_of(long long tile, int &first, int &last) const {
    const int x = int(tile - whole) * iters;
    first = sharer(x);
    last = sharer(x + iters - 1);
  }
};

#endif // KITE_STREAM_K_CUH
