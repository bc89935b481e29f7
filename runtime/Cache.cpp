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
// The cache may be pointed anywhere, at a directory others can write to
// too, so below the cache directory every file operation goes through open
// directories (openat and friends, O_NOFOLLOW): a symbolic link planted in
// the cache, or swapped in while kite works, never leads a read, a write or
// a removal out of it. Only the cache directory itself is resolved like any
// path (~/.cache/kite may well be a link to a larger disk).
//
//===----------------------------------------------------------------------===//

#include "runtime/ByteIO.h"
#include "runtime/CompilerHook.h"
#include "runtime/Nvrtc.h"
#include "runtime/PlanCache.h"

#include "kite_build_id.h"

#include <kite/cache.hpp>

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
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
#include <utility>

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

/// One printable line: newlines in a nested message become "; ", other
/// control characters (a kernel name from a cache file may hold any) are
/// escaped.
std::string oneLine(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (c == '\n')
      s += "; ";
    else
      s += c;
  }
  return printable(s);
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
/// With `dynamicShapes`, a contiguous tensor's sizes count only as their
/// class ("?8" for a size of at least 2, dynamic or not, whose divisor class
/// is 8), as the front door's specialization_hash does: the entries of one
/// shape class share a directory, and each is checked against the launch.
std::string lookupKeyText(std::string_view kernel, std::string_view irHash, std::string_view arch,
                          std::span<const ArgSpec> args, bool dynamicShapes) {
  std::string s = fmt::format("{}|{}|{}|{}", kernel, irHash, arch, dynamicShapes ? "dyn|" : "");
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSpec &a = args[i];
    if (i)
      s += ',';
    s += dtype_name(a.dtype);
    if (a.is_tensor() && dynamicShapes && a.is_contiguous()) {
      // Sizes of 2 or more share a key: the classes a plan distinguishes
      // (divisors, buckets) are for argMatches to tell apart.
      std::vector<std::string> dims;
      for (size_t d = 0; d < a.sizes.size(); ++d)
        dims.push_back(a.is_dynamic(d) || a.sizes[d] > 1 ? std::string("?")
                                                         : fmt::format("{}", a.sizes[d]));
      s += fmt::format("[{}]c a{}", fmt::join(dims, ","), alignmentClass(a));
    } else if (a.is_tensor())
      s += fmt::format("[{}]s[{}]a{}", fmt::join(a.sizes, ","), fmt::join(normalStrides(a), ","),
                       alignmentClass(a));
  }
  return s;
}

uint64_t lookupHash(std::string_view kernel, std::string_view irHash, std::string_view arch,
                    std::span<const ArgSpec> args, bool dynamicShapes) {
  return fnv1a(lookupKeyText(kernel, irHash, arch, args, dynamicShapes));
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
         hex16(lookupHash(e.kernel, e.irHash, e.target.arch, e.plan.args, e.plan.dynamicShapes));
}

constexpr std::string_view kEntrySuffix = ".kite";

fs::path versionDir(const fs::path &dir) {
  return dir / fmt::format("v{}", cache::kEntryFormatVersion);
}

} // namespace

std::string cache::entry_id(const Entry &e) {
  std::string key = lookupKeyText(e.kernel, e.irHash, e.target.arch, e.plan.args, false);
  if (e.plan.dynamicShapes) { // the shape class's plans differ in static sizes and divisors
    key += "|dyn";
    for (const ArgSpec &a : e.plan.args)
      key += "," + a.str();
  }
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

/// How deep JSON text nests ('[' and '{' outside strings), counting no
/// further than `limit + 1`. A scan rather than a parse: it runs before
/// anything parses or prints a config from a file.
size_t jsonDepth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit)
        break;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

/// Which of an entry's configs nests deeper than kMaxConfigDepth, if any.
std::optional<std::string_view> tooDeepConfig(const cache::Entry &e) {
  std::pair<std::string_view, const std::string *> configs[] = {
      {"config", &e.config}, {"pinned config", &e.pinnedConfig}, {"plan's config", &e.plan.config}};
  for (auto [name, text] : configs)
    if (jsonDepth(*text, cache::kMaxConfigDepth) > cache::kMaxConfigDepth)
      return name;
  return std::nullopt;
}

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
  if (std::optional<std::string_view> which = tooDeepConfig(e))
    throw Error(fmt::format("kite cache entry: corrupt buffer: its {} nests deeper than {} levels",
                            *which, kMaxConfigDepth));
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

/// An open file descriptor, closed when destroyed.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd &operator=(Fd &&other) noexcept {
    if (this != &other) {
      close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() { close(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  /// Closes now; the result of close(2) (a write's error may show only here).
  int close() {
    int result = fd_ >= 0 ? ::close(fd_) : 0;
    fd_ = -1;
    return result;
  }

private:
  int fd_ = -1;
};

/// What a file is, for messages ("a FIFO").
std::string_view fileKind(mode_t mode) {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "a file of an unknown kind";
}

constexpr std::string_view kLinkNotFollowed =
    "a symbolic link (the cache does not follow links out of its directory)";

/// The mode of `name` in the directory `dirfd` (a link's own), or nullopt
/// when there is nothing there.
std::optional<mode_t> modeAt(int dirfd, const std::string &name) {
  struct stat st;
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return std::nullopt;
  return st.st_mode;
}

/// Why `name` in `dirfd` is not a directory kite may enter: a link, another
/// kind of file; empty when it is one, or missing.
std::string notADirectory(int dirfd, const std::string &name) {
  std::optional<mode_t> mode = modeAt(dirfd, name);
  if (!mode || S_ISDIR(*mode))
    return "";
  if (S_ISLNK(*mode))
    return std::string(kLinkNotFollowed);
  return fmt::format("{}, not a directory", fileKind(*mode));
}

/// The cache directory itself (followed, if it is a link).
Fd openDirectory(const fs::path &path) {
  return Fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

/// The directory `name` in `dirfd`, never through a symbolic link.
Fd openSubdirectory(int dirfd, const std::string &name) {
  return Fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

/// The names in an open directory, without "." and "..", sorted.
std::vector<std::string> namesIn(int dirfd) {
  std::vector<std::string> names;
  // A descriptor of its own: readdir moves the offset it shares with dups.
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return names;
  DIR *d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return names;
  }
  while (const dirent *e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..")
      names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

/// Reads into `out` from `offset` until it is full or the file ends; the
/// bytes read.
size_t readFully(int fd, std::span<uint8_t> out, uint64_t offset) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done, off_t(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw Error(fmt::format("cannot be read ({})", std::strerror(errno)));
    if (n == 0)
      break;
    done += size_t(n);
  }
  return done;
}

/// The bytes of a framed file open as `fd`, of at most `maxBytes`. What is
/// not a regular file is not read at all (a FIFO would block, a device
/// never end); the magic is checked with an 8-byte read, and the size
/// against the bound, before the rest is read, so that a huge junk file
/// costs nothing. Throws kite::Error in unframe's words ("<what>: ...").
std::vector<uint8_t> readFramed(int fd, const FrameKind &kind, uint64_t maxBytes) {
  struct stat st;
  if (::fstat(fd, &st) != 0)
    throw Error(fmt::format("cannot be read ({})", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw Error(fmt::format("{}, not a regular file; not read", fileKind(st.st_mode)));
  uint64_t size = uint64_t(st.st_size);
  std::vector<uint8_t> bytes(std::min<uint64_t>(size, 8));
  bytes.resize(readFully(fd, bytes, 0));
  checkMagic(kind, bytes, size);
  if (size > maxBytes)
    throw Error(fmt::format("{}: too large: {} bytes, more than the {} GiB a {} may be; not read",
                            kind.what, size, maxBytes >> 30, kind.item));
  bytes.resize(size);
  bytes.resize(8 + readFully(fd, std::span(bytes).subspan(8), 8));
  return bytes;
}

/// Reads the entry `name` of the directory `dirfd` (AT_FDCWD: a path,
/// followed if it is a link; otherwise a link is not followed). Throws
/// kite::Error: "cache entry <file>: <what is wrong>".
cache::Entry readEntryAt(int dirfd, const std::string &name, const fs::path &file) {
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (dirfd == AT_FDCWD ? 0 : O_NOFOLLOW);
  try {
    Fd fd(::openat(dirfd, name.c_str(), flags));
    if (!fd)
      throw Error(fmt::format("cannot be read ({})", std::strerror(errno)));
    return cache::from_bytes(readFramed(fd.get(), kEntryFrame, cache::kMaxEntryBytes));
  } catch (const Error &e) {
    throw Error(fmt::format("cache entry {}: {}", file.string(),
                            withoutPrefix(e.what(), kEntryFrame.what)));
  }
}

/// Writes `bytes` as `name` in the directory `dirfd` (`file` names it in
/// messages) through a temporary file there and a rename: readers (other
/// processes too) see the old file or the new one, never a part. Replaces
/// only a regular file: a FIFO, a device, a directory or a symbolic link at
/// `name` is refused and left as it is (as root, renaming over /dev/full
/// would replace the device). Throws kite::Error.
void writeAtomicallyAt(int dirfd, const fs::path &file, const std::string &name,
                       std::span<const uint8_t> bytes, std::string_view what) {
  static std::atomic<uint64_t> counter{0};
  auto refuseUnlessRegular = [&] {
    std::optional<mode_t> mode = modeAt(dirfd, name);
    if (mode && !S_ISREG(*mode))
      throw Error(fmt::format("kite: refusing to replace {} with {}: it is {}, not a regular "
                              "file; remove it or write somewhere else",
                              file.string(), what, fileKind(*mode)));
  };
  refuseUnlessRegular();
  std::string tmp = fmt::format(".{}.{}.{}.{:x}.tmp", name, ::getpid(), counter.fetch_add(1),
                                std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffff);
  fs::path tmpPath = file.parent_path() / tmp;
  Fd fd(::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd)
    throw Error(fmt::format("kite: cannot write {} {}: {}", what, tmpPath.string(),
                            std::strerror(errno)));
  auto fail = [&](const std::string &message) {
    fd.close();
    ::unlinkat(dirfd, tmp.c_str(), 0);
    throw Error(message);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      fail(fmt::format("kite: cannot write {} {}: {}", what, tmpPath.string(),
                       std::strerror(n < 0 ? errno : EIO)));
    done += size_t(n);
  }
  if (fd.close() != 0)
    fail(fmt::format("kite: cannot write {} {}: {}", what, tmpPath.string(), std::strerror(errno)));
  // Again: something may have appeared at `name` while the file was written.
  try {
    refuseUnlessRegular();
  } catch (const Error &e) {
    fail(e.what());
  }
  if (::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0)
    fail(fmt::format("kite: cannot move {} into place at {}: {}", what, file.string(),
                     std::strerror(errno)));
}

bool isVersionName(std::string_view name) {
  return name.size() >= 2 && name[0] == 'v' &&
         std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// An entry file of a cache directory, checked: its key directory and the
/// version directory above it, open, so that removing it follows no link.
struct RemovableEntry {
  Fd versionDir, keyDir;
  std::string keyName, name;
};

RemovableEntry checkRemovable(const fs::path &file, const fs::path &dir) {
  auto refuse = [&](const std::string &why) {
    return Error(fmt::format("kite: not removing {}: {}", file.string(), why));
  };
  fs::path root = dir.empty() ? cache::directory() : dir;
  if (root.empty())
    throw refuse("the cache directory is off (KITE_CACHE_DIR=off, or no home directory)");
  std::error_code ec;
  fs::path rootReal = fs::canonical(root, ec);
  if (ec)
    throw refuse(fmt::format("the cache directory {} cannot be resolved ({})", root.string(),
                             ec.message()));
  fs::path absolute = fs::absolute(file, ec);
  std::string name = absolute.filename().string();
  fs::path parentReal = fs::canonical(absolute.parent_path(), ec);
  if (ec)
    throw refuse(fmt::format("its directory cannot be resolved ({})", ec.message()));
  std::vector<std::string> parts;
  for (const fs::path &part : parentReal.lexically_relative(rootReal))
    parts.push_back(part.string());
  if (parts.empty() || parts[0] == "..")
    throw refuse(fmt::format("it is not inside the cache directory {} (its directory, with "
                             "symbolic links resolved, is {}); kite cache rm removes only the "
                             "cache's own entries",
                             root.string(), parentReal.string()));
  if (parts.size() != 2 || !isVersionName(parts[0]) || parts[1] == "." || name.empty() ||
      name.starts_with(".") || !name.ends_with(kEntrySuffix))
    throw refuse(fmt::format("it is not an entry file of the cache directory {} (those are "
                             "v<N>/<kernel>-<key>/<id>{})",
                             root.string(), kEntrySuffix));
  Fd rootFd = openDirectory(rootReal);
  RemovableEntry r;
  if (rootFd)
    r.versionDir = openSubdirectory(rootFd.get(), parts[0]);
  if (r.versionDir)
    r.keyDir = openSubdirectory(r.versionDir.get(), parts[1]);
  if (!r.keyDir)
    throw refuse(fmt::format("its directory cannot be opened without following a link ({})",
                             std::strerror(errno)));
  r.keyName = parts[1];
  r.name = name;
  std::optional<mode_t> mode = modeAt(r.keyDir.get(), name);
  if (!mode)
    throw refuse(fmt::format("there is no such file ({})", std::strerror(errno)));
  if (S_ISLNK(*mode))
    throw refuse(std::string(kLinkNotFollowed));
  if (!S_ISREG(*mode))
    throw refuse(fmt::format("it is {}, not a regular file", fileKind(*mode)));
  Fd fd(::openat(r.keyDir.get(), name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0)
    throw refuse(fmt::format("it cannot be read ({})", std::strerror(errno)));
  std::vector<uint8_t> head(8);
  try {
    head.resize(readFully(fd.get(), head, 0));
    checkMagic(kEntryFrame, head, uint64_t(st.st_size));
  } catch (const Error &e) {
    throw refuse(fmt::format("{}; kite cache rm removes only cache entries",
                             withoutPrefix(e.what(), kEntryFrame.what)));
  }
  return r;
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
  // What readers would refuse is not written.
  if (std::optional<std::string_view> which = tooDeepConfig(e))
    throw Error(fmt::format("kite: the {} of a cache entry of {} nests deeper than {} levels",
                            *which, e.kernel, kMaxConfigDepth));
  std::vector<uint8_t> bytes = to_bytes(e);
  if (bytes.size() > kMaxEntryBytes)
    throw Error(fmt::format("kite: a cache entry of {} is {} bytes, more than the {} GiB an entry "
                            "may be",
                            e.kernel, bytes.size(), kMaxEntryBytes >> 30));
  fs::path file = entry_path(root, e);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec && !fs::is_directory(root))
    throw Error(fmt::format("kite: cannot create the directory {} for the cache entry: {}",
                            root.string(), ec.message()));
  Fd at = openDirectory(root);
  if (!at)
    throw Error(fmt::format("kite: cannot open the cache directory {}: {}", root.string(),
                            std::strerror(errno)));
  // Down to the key directory one open directory at a time, creating what
  // is missing and entering no link.
  fs::path atPath = root;
  for (std::string name : {file.parent_path().parent_path().filename().string(),
                           file.parent_path().filename().string()}) {
    atPath /= name;
    if (::mkdirat(at.get(), name.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error(fmt::format("kite: cannot create the directory {} for the cache entry: {}",
                              atPath.string(), std::strerror(errno)));
    Fd sub = openSubdirectory(at.get(), name);
    if (!sub) {
      int err = errno;
      if (std::string why = notADirectory(at.get(), name); !why.empty())
        throw Error(fmt::format("kite: refusing to store the cache entry under {}: it is {}; "
                                "remove it",
                                atPath.string(), why));
      throw Error(fmt::format("kite: cannot open the directory {} for the cache entry: {}",
                              atPath.string(), std::strerror(err)));
    }
    at = std::move(sub);
  }
  writeAtomicallyAt(at.get(), file, file.filename().string(), bytes, "the cache entry");
  return file;
}

cache::Entry cache::read_entry(const fs::path &file) {
  return readEntryAt(AT_FDCWD, file.string(), file);
}

std::vector<cache::NearbyConfig>
cache::nearby_tuned_configs(std::string_view kernel, std::string_view irHash, std::string_view arch,
                            std::span<const ArgSpec> args, bool dynamicShapes, size_t most,
                            const fs::path &dir) {
  std::vector<NearbyConfig> found;
  for (const Listed &l : list(dir)) {
    if (!l.entry)
      continue;
    const Entry &e = *l.entry;
    if (e.source != Source::tuned || e.kernel != kernel || e.irHash != irHash ||
        e.target.arch != arch || e.config.empty() || e.plan.args.size() != args.size() ||
        e.plan.dynamicShapes != dynamicShapes)
      continue;
    double distance = 0;
    bool alike = true;
    for (size_t i = 0; i < args.size() && alike; ++i) {
      const ArgSpec &a = args[i], &b = e.plan.args[i];
      alike = a.name == b.name && a.kind == b.kind && a.dtype == b.dtype &&
              a.sizes.size() == b.sizes.size();
      for (size_t d = 0; alike && d < a.sizes.size(); ++d)
        if (!b.is_dynamic(d) && !a.is_dynamic(d))
          distance += std::abs(std::log2(double(std::max<int64_t>(a.sizes[d], 1)) /
                                         double(std::max<int64_t>(b.sizes[d], 1))));
    }
    if (alike)
      found.push_back({distance, e.config});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const NearbyConfig &x, const NearbyConfig &y) { return x.distance < y.distance; });
  std::vector<NearbyConfig> configs;
  for (const NearbyConfig &c : found)
    if (configs.size() < most &&
        std::none_of(configs.begin(), configs.end(),
                     [&](const NearbyConfig &k) { return k.config == c.config; }))
      configs.push_back(c);
  return configs;
}

std::vector<cache::Listed> cache::list(const fs::path &dir, std::vector<Skipped> *skipped) {
  fs::path root = dir.empty() ? directory() : dir;
  std::vector<Listed> out;
  if (root.empty())
    return out;
  Fd rootFd = openDirectory(root);
  if (!rootFd)
    return out;
  std::vector<Skipped> passed;
  // A directory to walk into, or nothing (what is not a directory is not
  // the cache's, and only a link is worth a word).
  auto enter = [&](int at, const std::string &name, const fs::path &path) {
    std::optional<mode_t> mode = modeAt(at, name);
    if (mode && S_ISLNK(*mode))
      passed.push_back({path, std::string(kLinkNotFollowed)});
    return mode && S_ISDIR(*mode) ? openSubdirectory(at, name) : Fd();
  };
  // Every v<N> directory: entries of other format versions are listed (as
  // unreadable) so that `kite cache rm` can remove them.
  for (const std::string &vname : namesIn(rootFd.get())) {
    if (!isVersionName(vname))
      continue;
    fs::path vpath = root / vname;
    Fd v = enter(rootFd.get(), vname, vpath);
    if (!v)
      continue;
    for (const std::string &kname : namesIn(v.get())) {
      fs::path kpath = vpath / kname;
      Fd k = enter(v.get(), kname, kpath);
      if (!k)
        continue;
      for (const std::string &name : namesIn(k.get())) {
        if (name.starts_with(".") || !name.ends_with(kEntrySuffix))
          continue;
        fs::path path = kpath / name;
        struct stat st;
        if (::fstatat(k.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
          continue;
        if (!S_ISREG(st.st_mode)) {
          passed.push_back({path, S_ISLNK(st.st_mode)
                                      ? std::string(kLinkNotFollowed)
                                      : fmt::format("{}, not a regular file", fileKind(st.st_mode))});
          continue;
        }
        Listed l;
        l.path = path;
        l.id = name.substr(0, name.size() - kEntrySuffix.size());
        l.bytes = uintmax_t(st.st_size);
        try {
          l.entry = readEntryAt(k.get(), name, path);
        } catch (const Error &e) {
          l.error = withoutPrefix(e.what(), fmt::format("cache entry {}", path.string()));
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
  if (skipped)
    skipped->insert(skipped->end(), passed.begin(), passed.end());
  return out;
}

void cache::check_removable(const fs::path &file, const fs::path &dir) {
  checkRemovable(file, dir);
}

void cache::remove_entry(const fs::path &file, const fs::path &dir) {
  RemovableEntry r = checkRemovable(file, dir);
  if (::unlinkat(r.keyDir.get(), r.name.c_str(), 0) != 0)
    throw Error(fmt::format("kite: cannot remove {}: {}", file.string(), std::strerror(errno)));
  // The key directory too once it is empty (rmdir removes nothing else).
  ::unlinkat(r.versionDir.get(), r.keyName.c_str(), AT_REMOVEDIR);
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
  if (e.sizes.size() != q.sizes.size() || alignmentClass(e) != alignmentClass(q))
    return false;
  if (!e.divisors.empty()) { // dynamic sizes: a contiguous tensor of the class
    int64_t numel = 1;
    for (int64_t s : q.sizes)
      numel *= s;
    if (q.divisors.empty() ? e.index32 != ArgSpec::fits_index32(numel) : e.index32 != q.index32)
      return false;
    for (size_t d = 0; d < e.sizes.size(); ++d)
      if (q.is_dynamic(d) ? !e.is_dynamic(d) || q.divisors[d] != e.divisors[d] ||
                                q.bound(d) != e.bound(d)
                          : !e.size_in_class(d, q.sizes[d]))
        return false;
    return q.is_contiguous();
  }
  return e.sizes == q.sizes && q.divisors.empty() && normalStrides(e) == normalStrides(q);
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
  if (e.plan.args.size() != q.args.size() || e.plan.dynamicShapes != q.dynamicShapes)
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
  std::string vname = versionDir(root).filename().string();
  std::string kname =
      fileSafe(q.kernel) + "-" + hex16(lookupHash(q.kernel, q.irHash, q.target.arch, q.args, q.dynamicShapes));
  fs::path keyPath = versionDir(root) / kname;
  Fd rootFd = openDirectory(root), v, k;
  if (rootFd)
    v = openSubdirectory(rootFd.get(), vname);
  if (v)
    k = openSubdirectory(v.get(), kname);
  if (!k) {
    // A miss; worth a word only when a link or a file is in the way.
    std::string why = !rootFd ? "" : !v ? notADirectory(rootFd.get(), vname) : notADirectory(v.get(), kname);
    if (!why.empty())
      report(fmt::format("ignoring {}: {}", (v ? keyPath : versionDir(root)).string(), why));
    return std::nullopt;
  }
  std::optional<Entry> best;
  for (const std::string &name : namesIn(k.get())) {
    if (name.starts_with(".") || !name.ends_with(kEntrySuffix))
      continue;
    fs::path path = keyPath / name;
    std::optional<mode_t> mode = modeAt(k.get(), name);
    if (mode && !S_ISREG(*mode)) {
      report(fmt::format("ignoring cache entry {}: {}", path.string(),
                         S_ISLNK(*mode) ? std::string(kLinkNotFollowed)
                                        : fmt::format("{}, not a regular file", fileKind(*mode))));
      continue;
    }
    Entry e;
    try {
      e = readEntryAt(k.get(), name, path);
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
  std::vector<uint8_t> bytes = frame(kBundleFrame, w.out);
  if (bytes.size() > kMaxBundleBytes)
    throw Error(fmt::format("kite: the bundle {} would be {} bytes, more than the {} GiB a bundle "
                            "may be; export fewer entries (--kernel)",
                            file.string(), bytes.size(), kMaxBundleBytes >> 30));
  // Into an existing directory only: a mistyped path is an error, not a
  // new directory tree.
  fs::path parent = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::string name = file.filename().string();
  struct stat st;
  if (::stat(parent.c_str(), &st) != 0) {
    int err = errno;
    throw Error(err == ENOENT ? fmt::format("kite: cannot write the bundle {}: the directory {} "
                                            "does not exist; create it first",
                                            file.string(), parent.string())
                              : fmt::format("kite: cannot write the bundle {}: {}: {}",
                                            file.string(), parent.string(), std::strerror(err)));
  }
  if (!S_ISDIR(st.st_mode))
    throw Error(fmt::format("kite: cannot write the bundle {}: {} is {}, not a directory",
                            file.string(), parent.string(), fileKind(st.st_mode)));
  if (name.empty() || name == "." || name == "..")
    throw Error(fmt::format("kite: cannot write the bundle {}: the path names a directory, not a "
                            "file",
                            file.string()));
  Fd dirFd = openDirectory(parent);
  if (!dirFd)
    throw Error(fmt::format("kite: cannot write the bundle {}: cannot open {}: {}", file.string(),
                            parent.string(), std::strerror(errno)));
  writeAtomicallyAt(dirFd.get(), file, name, bytes, "the bundle");
}

std::vector<cache::Entry> cache::read_bundle(const fs::path &file) {
  try {
    Fd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd)
      throw Error(fmt::format("cannot be read ({})", std::strerror(errno)));
    std::vector<uint8_t> bytes = readFramed(fd.get(), kBundleFrame, kMaxBundleBytes);
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
    uint64_t key = lookupHash(e.kernel, e.irHash, e.target.arch, e.plan.args, e.plan.dynamicShapes);
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
  auto it = b.byKey.find(lookupHash(q.kernel, q.irHash, q.target.arch, q.args, q.dynamicShapes));
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

/// How far (sum of |log2| size ratios) a tuned entry's sizes may be from a
/// launch's for a compile on a miss to take its config.
constexpr double kNearbyDistance = 2.0;

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
  // A hand-edited kernel (KITE_CUDA_OVERRIDE) is neither served from the
  // cache nor stored in it.
  bool useCache = options.tuning != Tuning::never && runtime::cudaOverrideDir().empty();
  bool pinned = !options.config.empty();
  if (useCache) {
    cache::Query q{kernel.name, kernel.irHash, args, target, options.config,
                   options.tuning == Tuning::tune && !pinned, !options.static_shapes};
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

  // A miss: compile the default config, or, where the cache holds a tuned
  // entry for nearby sizes (within a factor of 4 over all dims), its config
  // (the default where this shape rejects it).
  KernelPlan plan;
  bool compiled = false;
  if (useCache && !pinned) {
    std::vector<cache::NearbyConfig> nearby = cache::nearby_tuned_configs(
        kernel.name, kernel.irHash, target.arch, args, !options.static_shapes, 1);
    if (!nearby.empty() && nearby[0].distance <= kNearbyDistance) {
      Options o = options;
      o.config = nearby[0].config;
      try {
        plan = compileKernel(kernel, args, o);
        compiled = true;
      } catch (const ConfigRejected &) {
      }
    }
  }
  if (!compiled)
    plan = compileKernel(kernel, args, options);
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
