//===- FuzzMain.cpp - replay a fuzz target's inputs without libFuzzer -----===//
//
// This file implements main() for a fuzz target built without libFuzzer
// (KITE_FUZZ off, the default build): it runs LLVMFuzzerTestOneInput once
// on every file named on the command line or found under a named directory,
// in sorted order, and prints how many it ran. So the checked-in corpus and
// the regressions replay under plain ctest with any compiler; a crash, an
// abort or a sanitizer report (in a KITE_SANITIZE build) fails the test like
// any other. Arguments starting with '-' (libFuzzer flags) are ignored, so
// one command line serves both builds.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-')
      continue;
    fs::path p = argv[i];
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto &e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "%s: no such file or directory: %s\n", argv[0],
                   argv[i]);
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    // A copy of exactly the file's size, so that ASan catches reads past
    // the end as it does under libFuzzer.
    auto *data = new uint8_t[bytes.size()];
    std::copy(bytes.begin(), bytes.end(), data);
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", f.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(data, bytes.size());
    delete[] data;
  }
  std::printf("%s: %zu inputs ran\n", argv[0], files.size());
  return 0;
}
