//===- cache_fuzzer.cpp - fuzz cache entries and bundles ------------------===//
//
// This file implements the `cache` fuzz target: the input is a cache entry
// file ("KITEENTR") or a bundle ("KITEBNDL"), as kite reads them from a
// cache directory, a bundle an application ships, or `kite cache ls/show`.
// Every read must either give an entry or throw kite::Error; an entry that
// reads must write (cache::to_bytes) to bytes that read back to the same
// bytes. The input is tried as it is (framing: magic, version, sizes,
// checksum), then with every frame's checksum recomputed, so that the
// mutations reach the decoding of the payload behind the checksum.
//
// With KITE_FUZZ_WRITE_SEEDS=<dir> the target instead writes real entries
// (a plan compiled by NVRTC, no GPU needed) and a bundle of them into
// <dir>, the seed corpus in test/fuzz/corpus/cache (binaries cut to 256
// bytes).
//
//===----------------------------------------------------------------------===//

#include "FixedKernels.h"

#include "lowering/Compiler.h"

#include <kite/cache.hpp>

#include <unistd.h>

using namespace kite;
namespace fs = std::filesystem;

namespace {

uint64_t fnv1a(const uint8_t *data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/// Recomputes the checksum of every frame (KITEENTR, KITEBNDL, KITEPLAN)
/// whose payload size fits, innermost first.
void fixChecksums(std::vector<uint8_t> &bytes) {
  static const char *const magics[] = {"KITEENTR", "KITEBNDL", "KITEPLAN"};
  std::vector<size_t> frames;
  for (size_t at = 0; at + 8 <= bytes.size(); ++at)
    for (const char *magic : magics)
      if (std::memcmp(bytes.data() + at, magic, 8) == 0)
        frames.push_back(at);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    size_t at = *it;
    if (at + 20 > bytes.size())
      continue;
    uint64_t size = 0;
    for (int i = 0; i < 8; ++i)
      size |= uint64_t(bytes[at + 12 + i]) << (8 * i);
    if (size > bytes.size() || at + 20 + size + 8 > bytes.size())
      continue;
    uint64_t sum = fnv1a(bytes.data() + at + 20, size);
    for (int i = 0; i < 8; ++i)
      bytes[at + 20 + size + i] = uint8_t(sum >> (8 * i));
  }
}

void checkRoundTrip(const cache::Entry &entry) {
  std::vector<uint8_t> bytes = cache::to_bytes(entry);
  cache::Entry again = cache::from_bytes(bytes);
  if (cache::to_bytes(again) != bytes) {
    std::fprintf(stderr, "cache entry does not round-trip\n");
    std::abort();
  }
  (void)cache::entry_id(entry);
}

const fs::path &scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("kite-fuzz-cache-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

void writeFile(const fs::path &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

void tryBytes(const std::vector<uint8_t> &bytes) {
  try {
    checkRoundTrip(cache::from_bytes(bytes));
  } catch (const kite::Error &) {
  }
  // The file paths: a bundle, and an entry file in a cache directory as
  // `kite cache ls` lists it.
  fs::path bundle = scratch() / "input.kitebundle";
  writeFile(bundle, bytes);
  try {
    for (const cache::Entry &e : cache::read_bundle(bundle))
      checkRoundTrip(e);
  } catch (const kite::Error &) {
  }
  fs::path dir = scratch() / "cache";
  fs::create_directories(dir / "v1" / "k-0");
  writeFile(dir / "v1" / "k-0" / "0000000000000000.kite", bytes);
  for (const cache::Listed &l : cache::list(dir))
    if (l.entry)
      checkRoundTrip(*l.entry);
}

/// Real entries of the fixed kernels (default, tuned, pinned) and a bundle.
void writeSeeds(const fs::path &dir) {
  fs::create_directories(dir);
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ctx.loadDialect<KiteDialect, mlir::func::FuncDialect>();
  std::vector<cache::Entry> entries;
  const fuzz::FixedKernel &kernel = fuzz::fixedKernels().front();
  std::vector<ArgSpec> args = *fuzz::argSpecsOf(&ctx, fuzz::words(kernel.args));
  KernelSource source;
  source.name = kernel.name;
  source.ir = kernel.ir;
  source.irHash = "0123456789abcdef";
  cache::Target target{"sm_90a", 132, 13000, 13000};
  const char *configs[] = {"", R"({"block_sizes":[1,128],"num_warps":4})",
                           R"({"block_sizes":[2,64],"num_warps":8})"};
  for (int i = 0; i < 3; ++i) {
    CompileOptions compile;
    compile.arch = "sm_90a";
    compile.lineDirectives = false;
    cache::Entry e;
    e.kernel = kernel.name;
    e.irHash = source.irHash;
    e.kiteVersion = cache::kite_version();
    e.target = target;
    e.source = cache::Source(i);
    Options options;
    options.config = configs[i];
    e.plan = compileToPlan(source, args, options, compile);
    // The cache never looks inside a binary; its first bytes (the ELF
    // header) keep the seeds small.
    e.plan.binary.resize(std::min<size_t>(e.plan.binary.size(), 256));
    e.config = configs[i];
    if (e.source == cache::Source::pinned)
      e.pinnedConfig = configs[i];
    if (e.source == cache::Source::tuned) {
      e.timeMs = 0.25;
      e.configsSearched = 12;
      e.tuningSeconds = 1.5;
    }
    e.created = 1700000000;
    writeFile(dir / (std::string(cache::source_name(e.source)) + ".kite"), cache::to_bytes(e));
    entries.push_back(std::move(e));
  }
  cache::write_bundle(dir / "bundle.kitebundle", entries);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The corrupt inputs are the point; their reports would drown the output.
  cache::set_reporter([](std::string_view) {});
  if (const char *seeds = std::getenv("KITE_FUZZ_WRITE_SEEDS")) {
    writeSeeds(seeds);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 256 * 1024)
    return -1;
  std::vector<uint8_t> bytes(data, data + size);
  tryBytes(bytes);
  std::vector<uint8_t> fixed = bytes;
  fixChecksums(fixed);
  if (fixed != bytes)
    tryBytes(fixed);
  return 0;
}
