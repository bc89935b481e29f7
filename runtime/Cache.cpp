//===- Cache.cpp - The persistent cache of compiled plans -----------------===//
//
// This file implements kite/cache.hpp (entries, their byte form, the cache
// directory, bundles, reporting) and the lookup chain of kite::launch
// (PlanCache.h).
//
// Layout of a cache directory:
//
//   <dir>/v1/<kernel>-<lookup hash>/<entry id>.kite   one entry per file
//   <dir>/failed/                                     NVRTC sources that failed
//
// The lookup hash covers what a launch knows without the compiler (kernel,
// IR hash, arch, tensor specs, scalar types), so a lookup reads one small
// directory; the entry id covers the whole key. An entry file is
//
//   "KITEENTR"  u32 version  u64 size  payload  u64 FNV-1a(payload)
//
// with the payload: kernel, IR hash, kite version, target (arch, SM count,
// NVRTC, driver), source, pinned config, config, time, configs searched,
// tuning seconds, creation time, and the plan in its own byte form. A bundle
// is the same frame ("KITEBNDL") around a count and the entries' bytes.
//
//===----------------------------------------------------------------------===//

#include "runtime/ByteIO.h"
#include "runtime/CompilerHook.h"
#include "runtime/Nvrtc.h"
#include "runtime/PlanCache.h"

#include "kite_build_id.h"

#include <kite/cache.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#ifndef KITE_VERSION
#error "KITE_VERSION must be defined by the build (the CMake project version)"
#endif

namespace fs = std::filesystem;
using namespace kite;
using namespace kite::runtime;

const char *kite::version() { return KITE_VERSION; }

const char *kite::build_id() { return KITE_BUILD_ID; }

const std::string &kite::cache::kite_version() {
  static const std::string v = *build_id() ? std::string(version()) + "+" + build_id()
                                           : std::string(version());
  return v;
}

std::string_view cache::source_name(Source source) {
  switch (source) {
  case Source::default_config: return "default";
  case Source::tuned: return "tuned";
  case Source::pinned: return "pinned";
  }
  return "unknown";
}

cache::Target cache::device_target(int device) {
  const DeviceProperties &props = device_properties(device);
  Target t;
  t.arch = props.arch();
  t.smCount = props.smCount;
  t.driverVersion = props.driverVersion;
  return t;
}

int cache::loaded_nvrtc_version() {
  static const int nvrtc = [] {
    if (!nvrtcAvailable())
      return 0;
    auto [major, minor] = nvrtcVersion();
    return 1000 * major + 10 * minor;
  }();
  return nvrtc;
}

cache::Target cache::compiler_target(int device) {
  Target t = device_target(device);
  t.nvrtcVersion = loaded_nvrtc_version();
  return t;
}

//===----------------------------------------------------------------------===//
// Reporting
//===----------------------------------------------------------------------===//

namespace {

struct ReporterSlot {
  std::mutex mutex;
  cache::Reporter reporter;
};

ReporterSlot &reporterSlot() {
  static ReporterSlot *slot = new ReporterSlot();
  return *slot;
}

/// One line: newlines in a nested message become "; ".
std::string oneLine(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (c == '\n')
      s += "; ";
    else
      s += c;
  }
  return s;
}

} // namespace

cache::Reporter cache::set_reporter(Reporter reporter) {
  ReporterSlot &s = reporterSlot();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::swap(s.reporter, reporter);
  return reporter;
}

void cache::report(std::string_view message) {
  Reporter reporter;
  {
    ReporterSlot &s = reporterSlot();
    std::lock_guard<std::mutex> lock(s.mutex);
    reporter = s.reporter;
  }
  std::string line = oneLine(message);
  if (reporter)
    reporter(line);
  else
    fmt::print(stderr, "kite: warning: {}\n", line);
}

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

namespace {

/// Strides as a launch checks them: the effective ones, with 0 in
/// dimensions of size 1 (where any stride is accepted).
std::vector<int64_t> normalStrides(const ArgSpec &a) {
  std::vector<int64_t> s = a.effective_strides();
  for (size_t d = 0; d < s.size() && d < a.sizes.size(); ++d)
    if (a.sizes[d] == 1)
      s[d] = 0;
  return s;
}

int64_t alignmentClass(const ArgSpec &a) { return std::max<int64_t>(a.alignment, 1); }

/// The canonical text of the lookup key: "kernel|irhash|arch|f32[4,8]s[8,1]a16,i64".
std::string lookupKeyText(std::string_view kernel, std::string_view irHash, std::string_view arch,
                          std::span<const ArgSpec> args) {
  std::string s = fmt::format("{}|{}|{}|", kernel, irHash, arch);
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSpec &a = args[i];
    if (i)
      s += ',';
    s += dtype_name(a.dtype);
    if (a.is_tensor())
      s += fmt::format("[{}]s[{}]a{}", fmt::join(a.sizes, ","), fmt::join(normalStrides(a), ","),
                       alignmentClass(a));
  }
  return s;
}

uint64_t lookupHash(std::string_view kernel, std::string_view irHash, std::string_view arch,
                    std::span<const ArgSpec> args) {
  return fnv1a(lookupKeyText(kernel, irHash, arch, args));
}

/// A kernel name as a directory name: [A-Za-z0-9_] kept, anything else '_'.
std::string fileSafe(std::string_view name) {
  std::string s;
  for (char c : name.substr(0, 64))
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s.empty() ? "kernel" : s;
}

std::string hex16(uint64_t v) { return fmt::format("{:016x}", v); }

std::string keyDirName(const cache::Entry &e) {
  return fileSafe(e.kernel) + "-" +
         hex16(lookupHash(e.kernel, e.irHash, e.target.arch, e.plan.args));
}

constexpr std::string_view kEntrySuffix = ".kite";

fs::path versionDir(const fs::path &dir) {
  return dir / fmt::format("v{}", cache::kEntryFormatVersion);
}

} // namespace

std::string cache::entry_id(const Entry &e) {
  std::string key = lookupKeyText(e.kernel, e.irHash, e.target.arch, e.plan.args);
  key += "|values";
  for (const ArgSpec &a : e.plan.args)
    key += a.value ? fmt::format(",{}", *a.value) : std::string(",-");
  key += fmt::format("|sm{}|nvrtc{}|driver{}|kite{}|{}|{}", e.target.smCount,
                     e.target.nvrtcVersion, e.target.driverVersion, e.kiteVersion,
                     source_name(e.source), e.pinnedConfig);
  return hex16(fnv1a(key));
}

fs::path cache::entry_path(const fs::path &dir, const Entry &entry) {
  return versionDir(dir) / keyDirName(entry) / (entry_id(entry) + std::string(kEntrySuffix));
}

//===----------------------------------------------------------------------===//
// Byte form
//===----------------------------------------------------------------------===//

namespace {

constexpr FrameKind kEntryFrame{"KITEENTR", cache::kEntryFormatVersion, "kite cache entry",
                                "entry",
                                "it was written by another kite version; remove it (kite cache "
                                "rm) and let kite compile or tune again"};
constexpr FrameKind kBundleFrame{"KITEBNDL", cache::kEntryFormatVersion, "kite bundle", "bundle",
                                 "export the bundle again with this kite (kite cache export)"};

/// Drops a "<what>: " prefix from a nested error, for messages that name
/// the file instead.
std::string withoutPrefix(std::string message, std::string_view what) {
  std::string prefix = std::string(what) + ": ";
  if (message.starts_with(prefix))
    message.erase(0, prefix.size());
  return message;
}

} // namespace

std::vector<uint8_t> cache::to_bytes(const Entry &e) {
  ByteWriter w;
  w.str(e.kernel);
  w.str(e.irHash);
  w.str(e.kiteVersion);
  w.str(e.target.arch);
  w.u32(uint32_t(e.target.smCount));
  w.u32(uint32_t(e.target.nvrtcVersion));
  w.u32(uint32_t(e.target.driverVersion));
  w.u8(uint8_t(e.source));
  w.str(e.pinnedConfig);
  w.str(e.config);
  w.u8(e.timeMs.has_value());
  w.f64(e.timeMs.value_or(0.0));
  w.u32(e.configsSearched);
  w.f64(e.tuningSeconds);
  w.i64(e.created);
  w.bytes(serialize(e.plan));
  return frame(kEntryFrame, w.out);
}

cache::Entry cache::from_bytes(std::span<const uint8_t> bytes) {
  std::span<const uint8_t> payload = unframe(kEntryFrame, bytes);
  ByteReader r(payload, kFrameHeaderBytes, kEntryFrame.what);
  Entry e;
  e.kernel = r.str("kernel");
  e.irHash = r.str("IR hash");
  e.kiteVersion = r.str("kite version");
  e.target.arch = r.str("arch");
  e.target.smCount = int(r.u32("SM count"));
  e.target.nvrtcVersion = int(r.u32("NVRTC version"));
  e.target.driverVersion = int(r.u32("driver version"));
  e.source = r.enumeration<Source>("source", uint8_t(Source::pinned));
  e.pinnedConfig = r.str("pinned config");
  e.config = r.str("config");
  bool hasTime = r.u8("time flag") != 0;
  double time = r.f64("time");
  if (hasTime)
    e.timeMs = time;
  e.configsSearched = r.u32("configs searched");
  e.tuningSeconds = r.f64("tuning seconds");
  e.created = r.i64("creation time");
  std::span<const uint8_t> plan = r.view("plan");
  if (r.remaining() != 0)
    r.fail(fmt::format("{} unread bytes at the end of the payload", r.remaining()));
  try {
    e.plan = deserialize(plan);
  } catch (const Error &err) {
    throw Error(fmt::format("kite cache entry: its plan: {}", withoutPrefix(err.what(), "kite plan")));
  }
  if (e.plan.name != e.kernel)
    throw Error(fmt::format("kite cache entry: corrupt buffer: the entry is for kernel '{}' but "
                            "its plan for '{}'",
                            e.kernel, e.plan.name));
  return e;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

namespace {

std::mutex &directoryMutex() {
  static std::mutex *m = new std::mutex();
  return *m;
}
std::optional<std::string> &directoryOverride() {
  static std::optional<std::string> *dir = new std::optional<std::string>();
  return *dir;
}

std::vector<uint8_t> readFile(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw Error(fmt::format("cannot be read ({})", std::strerror(errno)));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad())
    throw Error(fmt::format("cannot be read ({})", std::strerror(errno)));
  return bytes;
}

/// Writes `bytes` to `file` through a temporary file in the same directory
/// and a rename: readers (other processes too) see the old file or the new
/// one, never a part. Throws kite::Error.
void writeAtomically(const fs::path &file, std::span<const uint8_t> bytes, std::string_view what) {
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec && !fs::is_directory(file.parent_path()))
    throw Error(fmt::format("kite: cannot create the directory {} for {}: {}",
                            file.parent_path().string(), what, ec.message()));
  fs::path tmp = file.parent_path() /
                 fmt::format(".{}.{}.{}.{:x}.tmp", file.filename().string(), ::getpid(),
                             counter.fetch_add(1),
                             std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffff);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(fmt::format("kite: cannot write {} {}: {}", what, tmp.string(),
                            std::strerror(errno)));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      fs::remove(tmp, ec);
      throw Error(fmt::format("kite: cannot write {} {}: {}", what, tmp.string(),
                              std::strerror(err)));
    }
    done += size_t(n);
  }
  if (::close(fd) != 0) {
    int err = errno;
    fs::remove(tmp, ec);
    throw Error(fmt::format("kite: cannot write {} {}: {}", what, tmp.string(), std::strerror(err)));
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error(fmt::format("kite: cannot move {} into place at {}: {}", what, file.string(),
                            ec.message()));
  }
}

int64_t now() { return int64_t(std::time(nullptr)); }

} // namespace

fs::path cache::directory() {
  std::optional<std::string> dir;
  {
    std::lock_guard<std::mutex> lock(directoryMutex());
    dir = directoryOverride();
  }
  if (!dir) {
    if (const char *v = std::getenv("KITE_CACHE_DIR"); v && *v)
      dir = v;
  }
  if (dir)
    return *dir == "off" ? fs::path() : fs::path(*dir);
  if (const char *home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "kite";
  return {};
}

void cache::set_directory(std::string dir) {
  std::lock_guard<std::mutex> lock(directoryMutex());
  if (dir.empty())
    directoryOverride().reset();
  else
    directoryOverride() = std::move(dir);
}

fs::path cache::store(const Entry &entry, const fs::path &dir) {
  fs::path root = dir.empty() ? directory() : dir;
  if (root.empty())
    throw Error("kite: the cache directory is off (KITE_CACHE_DIR=off, or no home directory); "
                "set KITE_CACHE_DIR to a directory to store plans");
  if (entry.kernel != entry.plan.name)
    throw Error(fmt::format("kite: a cache entry for kernel '{}' holds a plan of '{}'",
                            entry.kernel, entry.plan.name));
  Entry e = entry;
  if (e.kiteVersion.empty())
    e.kiteVersion = cache::kite_version();
  if (e.created == 0)
    e.created = now();
  fs::path file = entry_path(root, e);
  writeAtomically(file, to_bytes(e), "the cache entry");
  return file;
}

cache::Entry cache::read_entry(const fs::path &file) {
  try {
    return from_bytes(readFile(file));
  } catch (const Error &e) {
    throw Error(fmt::format("cache entry {}: {}", file.string(),
                            withoutPrefix(e.what(), kEntryFrame.what)));
  }
}

std::vector<cache::Listed> cache::list(const fs::path &dir) {
  fs::path root = dir.empty() ? directory() : dir;
  std::vector<Listed> out;
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec))
    return out;
  // Every v<N> directory: entries of other format versions are listed (as
  // unreadable) so that `kite cache rm` can remove them.
  for (const fs::directory_entry &v : fs::directory_iterator(root, ec)) {
    std::string vname = v.path().filename().string();
    if (!v.is_directory(ec) || vname.size() < 2 || vname[0] != 'v' ||
        !std::all_of(vname.begin() + 1, vname.end(), ::isdigit))
      continue;
    std::error_code kec;
    for (const fs::directory_entry &k : fs::directory_iterator(v.path(), kec)) {
      if (!k.is_directory(kec))
        continue;
      std::error_code fec;
      for (const fs::directory_entry &f : fs::directory_iterator(k.path(), fec)) {
        std::string name = f.path().filename().string();
        if (name.starts_with(".") || !name.ends_with(kEntrySuffix) || !f.is_regular_file(fec))
          continue;
        Listed l;
        l.path = f.path();
        l.id = name.substr(0, name.size() - kEntrySuffix.size());
        l.bytes = f.file_size(fec);
        try {
          l.entry = read_entry(f.path());
        } catch (const Error &e) {
          l.error = withoutPrefix(e.what(), fmt::format("cache entry {}", f.path().string()));
        }
        out.push_back(std::move(l));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Listed &a, const Listed &b) {
    std::string_view ka = a.entry ? std::string_view(a.entry->kernel) : "";
    std::string_view kb = b.entry ? std::string_view(b.entry->kernel) : "";
    return std::tie(ka, a.id) < std::tie(kb, b.id);
  });
  return out;
}

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

namespace {

/// The launch's spec `q` satisfies the entry's spec `e`: the checks of
/// validate_args (and the front door's scalarsMatch), on specs.
bool argMatches(const ArgSpec &e, const ArgSpec &q) {
  if (e.kind != q.kind || e.dtype != q.dtype)
    return false;
  if (!e.is_tensor())
    return !e.value || (q.value && *q.value == *e.value);
  return e.sizes == q.sizes && normalStrides(e) == normalStrides(q) &&
         alignmentClass(e) == alignmentClass(q);
}

bool sourceAccepted(const cache::Entry &e, const cache::Query &q) {
  if (!q.pinnedConfig.empty())
    return e.source == cache::Source::pinned && e.pinnedConfig == q.pinnedConfig;
  if (q.tunedOnly)
    return e.source == cache::Source::tuned;
  return e.source == cache::Source::tuned || e.source == cache::Source::default_config;
}

/// Higher is better: tuned over the rest, then the newest.
std::pair<int, int64_t> rank(const cache::Entry &e) {
  return {e.source == cache::Source::tuned ? 1 : 0, e.created};
}

} // namespace

bool cache::matches(const Entry &e, const Query &q, bool exactTarget) {
  if (e.kernel != q.kernel || e.irHash != q.irHash || e.target.arch != q.target.arch ||
      !sourceAccepted(e, q))
    return false;
  if (exactTarget &&
      (e.target.smCount != q.target.smCount || e.target.driverVersion != q.target.driverVersion ||
       (q.target.nvrtcVersion != 0 && e.target.nvrtcVersion != q.target.nvrtcVersion) ||
       e.kiteVersion != cache::kite_version()))
    return false;
  if (e.plan.args.size() != q.args.size())
    return false;
  for (size_t i = 0; i < q.args.size(); ++i)
    if (!argMatches(e.plan.args[i], q.args[i]))
      return false;
  return true;
}

std::optional<cache::Entry> cache::lookup(const Query &q, const fs::path &dir,
                                          bool exactTarget) {
  fs::path root = dir.empty() ? directory() : dir;
  if (root.empty())
    return std::nullopt;
  fs::path keyDir = versionDir(root) / (fileSafe(q.kernel) + "-" +
                                        hex16(lookupHash(q.kernel, q.irHash, q.target.arch, q.args)));
  std::error_code ec;
  std::optional<Entry> best;
  for (const fs::directory_entry &f : fs::directory_iterator(keyDir, ec)) {
    std::string name = f.path().filename().string();
    if (name.starts_with(".") || !name.ends_with(kEntrySuffix))
      continue;
    Entry e;
    try {
      e = read_entry(f.path());
    } catch (const Error &err) {
      report(fmt::format("ignoring {}", err.what()));
      continue;
    }
    if (matches(e, q, exactTarget) && (!best || rank(e) > rank(*best)))
      best = std::move(e);
  }
  return best;
}

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

namespace {

struct LoadedBundles {
  std::shared_mutex mutex;
  std::unordered_map<uint64_t, std::vector<std::shared_ptr<const cache::Entry>>> byKey;
};

LoadedBundles &loadedBundles() {
  static LoadedBundles *b = new LoadedBundles();
  return *b;
}

} // namespace

void cache::write_bundle(const fs::path &file, std::span<const Entry> entries) {
  ByteWriter w;
  w.u64(entries.size());
  for (const Entry &e : entries)
    w.bytes(to_bytes(e));
  writeAtomically(file, frame(kBundleFrame, w.out), "the bundle");
}

std::vector<cache::Entry> cache::read_bundle(const fs::path &file) {
  try {
    std::vector<uint8_t> bytes = readFile(file);
    std::span<const uint8_t> payload = unframe(kBundleFrame, bytes);
    ByteReader r(payload, kFrameHeaderBytes, kBundleFrame.what);
    std::vector<Entry> entries(r.count("entries", 8 + kFrameHeaderBytes + kFrameTrailerBytes));
    for (size_t i = 0; i < entries.size(); ++i) {
      std::span<const uint8_t> entry = r.view("entry");
      try {
        entries[i] = from_bytes(entry);
      } catch (const Error &e) {
        throw Error(fmt::format("entry {}: {}", i, e.what()));
      }
    }
    if (r.remaining() != 0)
      r.fail(fmt::format("{} unread bytes at the end of the payload", r.remaining()));
    return entries;
  } catch (const Error &e) {
    throw Error(fmt::format("kite bundle {}: {}", file.string(),
                            withoutPrefix(e.what(), kBundleFrame.what)));
  }
}

size_t kite::load_bundle(const std::string &path) {
  std::vector<cache::Entry> entries = cache::read_bundle(path);
  LoadedBundles &b = loadedBundles();
  std::unique_lock lock(b.mutex);
  for (cache::Entry &e : entries) {
    uint64_t key = lookupHash(e.kernel, e.irHash, e.target.arch, e.plan.args);
    b.byKey[key].push_back(std::make_shared<const cache::Entry>(std::move(e)));
  }
  return entries.size();
}

void cache::unload_bundles() {
  LoadedBundles &b = loadedBundles();
  std::unique_lock lock(b.mutex);
  b.byKey.clear();
}

std::optional<cache::Entry> cache::lookup_loaded(const Query &q) {
  LoadedBundles &b = loadedBundles();
  std::shared_lock lock(b.mutex);
  if (b.byKey.empty())
    return std::nullopt;
  auto it = b.byKey.find(lookupHash(q.kernel, q.irHash, q.target.arch, q.args));
  if (it == b.byKey.end())
    return std::nullopt;
  const Entry *best = nullptr;
  std::tuple<bool, int, int64_t> bestRank;
  for (const std::shared_ptr<const Entry> &e : it->second) {
    if (!matches(*e, q, /*exactTarget=*/false))
      continue;
    auto [tuned, created] = rank(*e);
    std::tuple<bool, int, int64_t> r{matches(*e, q, /*exactTarget=*/true), tuned, created};
    if (!best || r > bestRank) {
      best = e.get();
      bestRank = r;
    }
  }
  if (!best)
    return std::nullopt;
  return *best;
}

//===----------------------------------------------------------------------===//
// The launch path's lookup chain
//===----------------------------------------------------------------------===//

std::string_view kite::runtime::originName(PlanOrigin origin) {
  switch (origin) {
  case PlanOrigin::bundle: return "bundle";
  case PlanOrigin::directory: return "cache directory";
  case PlanOrigin::tuned: return "autotuner";
  case PlanOrigin::compiled: return "compiler";
  }
  return "unknown";
}

namespace {

/// Stores an entry made by this process; a failure is a warning (the launch
/// goes on with the plan it has).
void storeQuietly(const cache::Entry &e) {
  if (cache::directory().empty())
    return;
  try {
    cache::store(e);
  } catch (const Error &err) {
    cache::report(fmt::format("could not store a plan of {} in the cache: {}", e.kernel,
                              err.what()));
  }
}

} // namespace

ResolvedPlan kite::runtime::resolvePlan(const KernelSource &kernel,
                                        const std::vector<ArgSpec> &args, const Options &options,
                                        const cache::Target &target) {
  using Tuning = Options::Tuning;
  bool useCache = options.tuning != Tuning::never;
  bool pinned = !options.config.empty();
  if (useCache) {
    cache::Query q{kernel.name, kernel.irHash, args, target, options.config,
                   options.tuning == Tuning::tune && !pinned};
    if (std::optional<cache::Entry> e = cache::lookup_loaded(q))
      return {std::move(e->plan), PlanOrigin::bundle};
    if (std::optional<cache::Entry> e = cache::lookup(q))
      return {std::move(e->plan), PlanOrigin::directory};
    if (q.tunedOnly) {
      if (hasTuner()) {
        cache::Entry e = tuneKernel(kernel, args, options, target);
        e.source = cache::Source::tuned;
        if (e.kernel.empty())
          e.kernel = std::string(kernel.name);
        if (e.irHash.empty())
          e.irHash = std::string(kernel.irHash);
        if (e.target.arch.empty())
          e.target = target;
        storeQuietly(e);
        return {std::move(e.plan), PlanOrigin::tuned};
      }
      static std::once_flag warned;
      std::call_once(warned, [] {
        cache::report("Options::Tuning::tune: the autotuner is not linked in; using cached or "
                      "default configs");
      });
      // A default entry answers now that no tuning will happen.
      q.tunedOnly = false;
      if (std::optional<cache::Entry> e = cache::lookup_loaded(q))
        return {std::move(e->plan), PlanOrigin::bundle};
      if (std::optional<cache::Entry> e = cache::lookup(q))
        return {std::move(e->plan), PlanOrigin::directory};
    }
  }

  KernelPlan plan = compileKernel(kernel, args, options);
  if (useCache) {
    cache::Entry e;
    e.kernel = std::string(kernel.name);
    e.irHash = std::string(kernel.irHash);
    e.kiteVersion = cache::kite_version();
    e.target = target;
    if (target.nvrtcVersion == 0) // the compile has loaded NVRTC: record its version
      e.target.nvrtcVersion = cache::loaded_nvrtc_version();
    if (!plan.arch.empty())
      e.target.arch = plan.arch;
    e.source = pinned ? cache::Source::pinned : cache::Source::default_config;
    e.pinnedConfig = options.config;
    e.config = plan.config;
    e.plan = plan;
    e.created = now();
    storeQuietly(e);
  }
  return {std::move(plan), PlanOrigin::compiled};
}
