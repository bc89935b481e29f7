//===- FixedKernels.h - the kernels the config and args fuzzers use -*- C++ -*-===//
//
// This file declares the captured kernels that the `config` and `args` fuzz
// targets compile their input against: test/fuzz/kernels/*.mlir, captured
// IR with a `// ARGS:` line, read once from the source tree.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_TEST_FUZZ_FIXEDKERNELS_H
#define KITE_TEST_FUZZ_FIXEDKERNELS_H

#include "FuzzUtil.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef KITE_FUZZ_KERNELS_DIR
#error "KITE_FUZZ_KERNELS_DIR must be defined by the build"
#endif

namespace kite::fuzz {

struct FixedKernel {
  std::string name; // the kernel's symbol: the file's stem
  std::string ir;
  std::string args; // the `// ARGS:` line
};

inline const std::vector<FixedKernel> &fixedKernels() {
  static const std::vector<FixedKernel> kernels = [] {
    std::vector<FixedKernel> out;
    for (const auto &e : std::filesystem::directory_iterator(KITE_FUZZ_KERNELS_DIR)) {
      if (e.path().extension() != ".mlir")
        continue;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      FixedKernel k{e.path().stem().string(), text.str(), ""};
      k.args = headerLine(k.ir, "ARGS").value_or("");
      out.push_back(std::move(k));
    }
    std::sort(out.begin(), out.end(),
              [](const FixedKernel &a, const FixedKernel &b) { return a.name < b.name; });
    if (out.empty()) {
      std::fprintf(stderr, "no kernels in %s\n", KITE_FUZZ_KERNELS_DIR);
      std::abort();
    }
    return out;
  }();
  return kernels;
}

} // namespace kite::fuzz

#endif // KITE_TEST_FUZZ_FIXEDKERNELS_H
