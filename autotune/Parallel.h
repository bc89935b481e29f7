//===- Parallel.h - a loop's iterations on a few threads --------*- C++ -*-===//
//
// The thread pool the compile-heavy tools share: the tuner's batches of
// configs and kite_bench's rows compile with NVRTC on every core, since one
// compile is seconds of one thread.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_AUTOTUNE_PARALLEL_H
#define KITE_AUTOTUNE_PARALLEL_H

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace kite::autotune {

/// The machine's hardware threads (at least 1).
inline int hardwareThreads() { return std::max(1, (int)std::thread::hardware_concurrency()); }

/// Calls fn(i) for every i in [0, n) on up to `threads` threads, the calling
/// one among them, each taking the next index as it finishes one; returns
/// once every call has. fn must not throw.
template <class Fn> void parallelFor(size_t n, int threads, Fn &&fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;)
      fn(i);
  };
  int count = std::max(1, std::min<int>(threads, (int)n));
  std::vector<std::thread> pool;
  for (int t = 1; t < count; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
}

} // namespace kite::autotune

#endif // KITE_AUTOTUNE_PARALLEL_H
