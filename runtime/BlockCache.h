//===- BlockCache.h - freed device blocks kept for reuse ----------*- C++ -*-===//
//
// The device memory of dropped tensors, kept per (stream, byte size) and
// handed to the next allocation of that size on that stream without a driver
// call. A launch allocates its outputs and, in a loop, drops the previous
// ones; with the cache neither puts anything in the stream (stream-ordered
// cuMemAllocAsync/cuMemFreeAsync each do).
//
// Reuse on the stream a block was freed on is ordered after the block's last
// use by that stream, as cuMemFreeAsync's reuse is; a block is never handed
// to another stream. Work on other streams must be ordered before the drop,
// as for cuMemFreeAsync.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_BLOCKCACHE_H
#define KITE_RUNTIME_BLOCKCACHE_H

#include <cuda.h>

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kite::runtime {

class BlockCache {
public:
  /// Blocks kept per (stream, size); a drop beyond them is freed.
  static constexpr size_t kMaxPerSize = 4;

  /// A block of exactly `bytes` dropped on `stream`, or 0.
  CUdeviceptr take(CUstream stream, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(Key{stream, bytes});
    if (it == blocks_.end() || it->second.empty())
      return 0;
    CUdeviceptr p = it->second.back();
    it->second.pop_back();
    bytes_ -= bytes;
    return p;
  }

  /// Keeps `ptr` (dropped on `stream`); false when that stream already keeps
  /// kMaxPerSize blocks of the size: the caller frees it.
  bool put(CUstream stream, size_t bytes, CUdeviceptr ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<CUdeviceptr> &v = blocks_[Key{stream, bytes}];
    if (v.size() >= kMaxPerSize)
      return false;
    v.push_back(ptr);
    bytes_ += bytes;
    return true;
  }

  /// Removes every kept block, with the stream it was dropped on.
  std::vector<std::pair<CUstream, CUdeviceptr>> drain() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::pair<CUstream, CUdeviceptr>> all;
    for (auto &[key, v] : blocks_)
      for (CUdeviceptr p : v)
        all.emplace_back(key.stream, p);
    blocks_.clear();
    bytes_ = 0;
    return all;
  }

  /// The bytes kept.
  size_t bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }

private:
  struct Key {
    CUstream stream;
    size_t bytes;
    bool operator==(const Key &) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key &k) const {
      return std::hash<const void *>()(k.stream) * 31 + std::hash<size_t>()(k.bytes);
    }
  };
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::vector<CUdeviceptr>, KeyHash> blocks_;
  size_t bytes_ = 0;
};

} // namespace kite::runtime

#endif // KITE_RUNTIME_BLOCKCACHE_H
