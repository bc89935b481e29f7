//===- Memory.h - Device allocations for the runtime ------------*- C++ -*-===//
//
// This file declares the device allocation that kite::cuda::empty/zeros and
// the launch path's output allocation share.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_MEMORY_H
#define KITE_RUNTIME_MEMORY_H

#include "runtime/Driver.h"

#include <string_view>
#include <vector>

namespace kite::runtime {

/// A contiguous tensor on `device`, allocated on `stream` (a block a dropped
/// tensor of the same size left on the stream, DeviceContext::blocks(); else
/// from the device's caching pool, DeviceContext::pool(); cuMemAlloc without
/// memory pools; when the pool is out of memory, the device is synchronized,
/// what the cache and the pool keep is released and the allocation retried
/// once), zero-filled on the stream if
/// `zeroed`, and freed on the same stream when the last handle drops. The
/// device's context must be current. `what` names the operation in errors.
Tensor allocateDevice(DeviceContext &device, const std::vector<int64_t> &sizes, DType dtype,
                      Stream stream, bool zeroed, std::string_view what);

} // namespace kite::runtime

#endif // KITE_RUNTIME_MEMORY_H
