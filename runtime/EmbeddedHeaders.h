//===- EmbeddedHeaders.h - Device headers compiled into the runtime -*- C++ -*-===//
//
// This file declares the device tile library headers (runtime/device/*.cuh)
// that the build embeds into kite_runtime as string literals (see
// EmbedHeaders.cmake), so NVRTC gets them from memory on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_EMBEDDEDHEADERS_H
#define KITE_RUNTIME_EMBEDDEDHEADERS_H

#include <cstddef>
#include <span>

namespace kite::runtime {

struct EmbeddedFile {
  const char *name; // the include name: the path under runtime/device/
  const char *text;
};

/// Every embedded device header, sorted by name.
std::span<const EmbeddedFile> deviceHeaders();

} // namespace kite::runtime

#endif // KITE_RUNTIME_EMBEDDEDHEADERS_H
