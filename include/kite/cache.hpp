//===- kite/cache.hpp - The persistent cache of compiled plans ---*- C++ -*-===//
//
// This file declares kite's cache of compiled kernels: one file per entry in
// a cache directory, and bundles (one file holding many entries) that an
// application ships and loads with kite::load_bundle (runtime.hpp).
//
// An entry is a KernelPlan (with its cubin) and how it was chosen: the
// config, its measured time, how many configs were searched and for how
// long, and its source: "default" (the default config, compiled on a miss),
// "tuned" (the autotuner's winner) or "pinned" (Options::config). Its key:
//
//   kernel name, kernel IR hash, the plan's argument specs (dtypes, sizes,
//   strides, alignment class, specialized scalar values), the target (GPU
//   arch, SM count, NVRTC and driver versions), kite's version, the source,
//   and for a pinned entry the requested config.
//
// Files are found by the part of the key the launch path can compute without
// the compiler (the lookup key: kernel, IR hash, arch, tensor specs and
// scalar types); the rest is checked on each candidate. Every reader checks
// a magic, a format version and a checksum: a corrupt, truncated or
// other-version file is ignored and reported (cache::report), never trusted.
//
// Where: $KITE_CACHE_DIR, else ~/.cache/kite; KITE_CACHE_DIR=off (or
// cache::set_directory("off")) turns the cache directory off. Writes go to a
// temporary file in the entry's directory and are renamed into place, so
// several processes may write one cache at once.
//
// The cache is safe to point anywhere: below the directory itself (which may
// be a symbolic link), nothing follows a symbolic link, so no read, write or
// removal leaves the directory; a write replaces only a regular file (never
// a FIFO, device, directory or link); only regular files that carry the
// entry magic are removed; every read is bounded (kMaxEntryBytes,
// kMaxBundleBytes, kMaxConfigDepth).
//
// `kite cache ls|show|rm|export` is the command line over this API.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_CACHE_HPP
#define KITE_CACHE_HPP

#include <kite/runtime.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kite {

/// kite's version ("0.1.0"), from the CMake project; part of every cache key.
const char *version();
/// The source tree this kite was built from: the git commit, with a hash of
/// uncommitted changes to the compiler or runtime ("3f2a9b1c0d4e-dirty-1a2b3c4d");
/// empty when built outside git.
const char *build_id();

namespace cache {

/// What an entry's kiteVersion must equal to be trusted: version(), plus
/// "+build_id()" when there is one, so that entries from another build of
/// the same version (a changed compiler) are recompiled, not reused.
const std::string &kite_version();

/// The version of the entry and bundle byte forms this kite reads and writes.
inline constexpr uint32_t kEntryFormatVersion = 1;

/// The largest entry file a reader reads (1 GiB; a cubin is a few MiB at
/// most): a bigger file is reported as corrupt ("too large") from its size,
/// without being read.
inline constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;
/// The largest bundle file read_bundle and kite::load_bundle read (4 GiB).
inline constexpr uint64_t kMaxBundleBytes = uint64_t(4) << 30;
/// How deep the JSON of an entry's configs (config, pinned config, the
/// plan's) may nest; a real config nests two or three levels. A deeper one
/// makes the entry corrupt, so that nothing parses or prints it (printing
/// JSON recurses once per level).
inline constexpr size_t kMaxConfigDepth = 64;

/// How an entry's config was chosen. A tuned entry wins over a default one
/// for the same key; a pinned one is found only by a launch that pins the
/// same config.
enum class Source : uint8_t { default_config, tuned, pinned };
/// "default", "tuned", "pinned".
std::string_view source_name(Source source);

/// What a binary is built and tuned for.
struct Target {
  std::string arch;      // the NVRTC target ("sm_90a")
  int smCount = 0;       // multiprocessors (persistent kernels size their grid by it)
  int nvrtcVersion = 0;  // 1000 * major + 10 * minor (13.0: 13000); 0: NVRTC not loadable
  int driverVersion = 0; // the driver's, in the same form
  friend bool operator==(const Target &, const Target &) = default;
};

/// The target of a CUDA device as a launch looks it up (throws kite::Error
/// without a GPU). `nvrtcVersion` is 0, which matches entries built by any
/// NVRTC: a cubin does not depend on the NVRTC that built it, and loading
/// NVRTC only to read its version costs a launch 7 ms (135 ms cold).
Target device_target(int device = 0);
/// The NVRTC version (1000 * major + 10 * minor) as an entry that was just
/// compiled records it, loading NVRTC if needed; 0 where it cannot load.
int loaded_nvrtc_version();
/// device_target with loaded_nvrtc_version() filled in.
Target compiler_target(int device = 0);

/// One cached plan and how it was chosen.
struct Entry {
  std::string kernel;      // the kernel's name ("softmax")
  std::string irHash;      // KernelSource::irHash of the captured IR it was compiled from
  std::string kiteVersion; // cache::kite_version() of the kite that made it
  Target target;
  Source source = Source::default_config;
  /// A pinned entry's requested config (Options::config); part of its key.
  std::string pinnedConfig;
  /// The plan: argument specs (the specialization), binary, launch shape.
  KernelPlan plan;
  /// The config as JSON (the tuner's winner, or the pinned one; "" for a
  /// default entry whose compiler does not report it).
  std::string config;
  std::optional<double> timeMs; // the measured time; a default entry has none
  uint32_t configsSearched = 0;
  double tuningSeconds = 0;
  int64_t created = 0;          // seconds since the Unix epoch
};

/// An entry's stable identity: 16 hex digits of a hash of its whole key
/// (the file name in the cache directory; `kite cache` shows the first 12).
std::string entry_id(const Entry &entry);

/// The byte form of an entry ("KITEENTR" frame: magic, version, checksum)
/// and back; from_bytes throws kite::Error saying what is wrong (also for a
/// config nested deeper than kMaxConfigDepth).
std::vector<uint8_t> to_bytes(const Entry &entry);
Entry from_bytes(std::span<const uint8_t> bytes);

//===----------------------------------------------------------------------===//
// The cache directory
//===----------------------------------------------------------------------===//

/// The cache directory in effect: set_directory's, else $KITE_CACHE_DIR,
/// else ~/.cache/kite; empty when the cache is off ("off") or there is no
/// home directory. Not created here.
std::filesystem::path directory();
/// Overrides the cache directory for this process: a path, "off" to turn
/// the cache off, or "" to go back to the environment.
void set_directory(std::string dir);

/// Where `entry` lives under the cache directory `dir`:
/// dir/v<format>/<kernel>-<lookup key hash>/<entry_id>.kite.
std::filesystem::path entry_path(const std::filesystem::path &dir, const Entry &entry);

/// Writes an entry into `dir` (default: directory()) atomically and returns
/// its path. The same key written again replaces the file; entries of other
/// sources live beside it, so storing a default entry never replaces a
/// tuned one. Throws kite::Error when the cache is off or a write fails,
/// and, writing nothing, when a directory on the way below `dir` is a
/// symbolic link or the entry's path is something other than a regular
/// file (a FIFO, a device, a directory, a link).
std::filesystem::path store(const Entry &entry, const std::filesystem::path &dir = {});

/// Reads one entry file; throws kite::Error naming the file and what is
/// wrong (missing, not a regular file, larger than kMaxEntryBytes,
/// truncated, corrupt, other format version). The magic is checked with an
/// 8-byte read before anything else is read.
Entry read_entry(const std::filesystem::path &file);

/// One file of a cache directory: the entry, or why it could not be read.
struct Listed {
  std::filesystem::path path;
  std::string id;             // the file's stem (the entry_id when intact)
  std::optional<Entry> entry; // empty: corrupt
  std::string error;          // why, when corrupt
  uintmax_t bytes = 0;        // the file's size
};
/// Something list() did not follow or read: a symbolic link where a version
/// or key directory or an entry file would be, or an entry name that is not
/// a regular file (a FIFO, a device, a directory).
struct Skipped {
  std::filesystem::path path;
  std::string why; // "a symbolic link (not followed out of the cache)"
};
/// Every entry file under `dir` (default: directory()), sorted by kernel
/// then id; corrupt ones included, with the reason. Never throws for a bad
/// file; a missing directory is an empty cache. Follows no symbolic link
/// below `dir`; what it passes by is added to `skipped` when given.
std::vector<Listed> list(const std::filesystem::path &dir = {},
                         std::vector<Skipped> *skipped = nullptr);

/// A tuned entry's config near a launch's specs: same kernel, IR hash and
/// arch, arguments of the same names, kinds, dtypes and ranks (and plans
/// of the same shape mode), at `distance` = the sum over dims of
/// |log2(size / tuned size)| (0 for a dim the entry takes at launch).
struct NearbyConfig {
  double distance = 0;
  std::string config;
};
/// Such configs in `dir` (default: the cache directory), nearest first,
/// each config once, at most `most`.
std::vector<NearbyConfig> nearby_tuned_configs(std::string_view kernel, std::string_view irHash,
                                               std::string_view arch,
                                               std::span<const ArgSpec> args, bool dynamicShapes,
                                               size_t most,
                                               const std::filesystem::path &dir = {});

/// Throws kite::Error ("kite: not removing FILE: why") unless `file` is an
/// entry file of the cache directory `dir` (default: directory()): a
/// regular file named <id>.kite whose directory, with symbolic links
/// resolved, is a key directory of `dir` (dir/v<N>/<key>/), and which starts
/// with the entry magic (corrupt and other-version entries qualify).
void check_removable(const std::filesystem::path &file, const std::filesystem::path &dir = {});
/// Removes an entry file after the checks of check_removable (made again
/// through open directories, so that a link swapped in meanwhile is not
/// followed), and its key directory when that is left empty. Throws
/// kite::Error, removing nothing, when a check fails or removal does.
void remove_entry(const std::filesystem::path &file, const std::filesystem::path &dir = {});

/// What a launch looks for: a kernel, the launch's argument specs (scalars
/// with their values), the target, and which entries may answer.
struct Query {
  std::string_view kernel;
  std::string_view irHash;
  std::span<const ArgSpec> args;
  Target target;
  /// Empty: tuned or default entries (tuned first). Otherwise: only pinned
  /// entries for exactly this config.
  std::string_view pinnedConfig;
  /// Only tuned entries (Options::Tuning::tune looks for a tuning result).
  bool tunedOnly = false;
  /// Plans for dynamic shapes (Options::static_shapes = false), found by
  /// shape class; otherwise only plans for static shapes.
  bool dynamicShapes = false;
};

/// Whether an entry answers a query: same kernel and IR hash, argument specs
/// the launch satisfies (tensors exactly as specialized, scalars of the same
/// type and, where the plan specializes one, the same value), an acceptable
/// source. `exactTarget`: the whole target and kite's version must match
/// (the cache directory); otherwise only the arch (a bundle, built for a
/// fleet: a cubin runs on any driver and SM count of its architecture).
bool matches(const Entry &entry, const Query &query, bool exactTarget);

/// The best entry in `dir` (default: directory()) for a query: tuned over
/// default, then the newest. Corrupt or other-version files are reported
/// and skipped. Reads only the files under the query's lookup key.
/// `exactTarget` false matches on the architecture only (as bundles do; for
/// tools that ask without a GPU).
std::optional<Entry> lookup(const Query &query, const std::filesystem::path &dir = {},
                            bool exactTarget = true);

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

/// Writes entries into one bundle file ("KITEBNDL" frame), atomically: a
/// temporary file in the bundle's directory, renamed into place. Throws
/// kite::Error, writing nothing, when that directory does not exist (it is
/// not created) or `file` is something other than a regular file (a FIFO, a
/// device, a directory, a symbolic link).
void write_bundle(const std::filesystem::path &file, std::span<const Entry> entries);
/// Reads a bundle; throws kite::Error naming the file and what is wrong
/// (as read_entry; larger than kMaxBundleBytes).
std::vector<Entry> read_bundle(const std::filesystem::path &file);
/// The best entry of the loaded bundles (kite::load_bundle) for a query:
/// an exact target first, then tuned over pinned/default, then the newest.
std::optional<Entry> lookup_loaded(const Query &query);
/// Forgets every loaded bundle (for tests and tools).
void unload_bundles();

//===----------------------------------------------------------------------===//
// Reporting
//===----------------------------------------------------------------------===//

/// Where the cache's warnings go (one line each, naming the file and what is
/// wrong). The default prints "kite: warning: <message>" to stderr.
using Reporter = std::function<void(std::string_view message)>;
/// Installs a reporter (an empty one restores the default); returns the
/// previous one.
Reporter set_reporter(Reporter reporter);
/// Reports one warning through the installed reporter.
void report(std::string_view message);

} // namespace cache
} // namespace kite

#endif // KITE_CACHE_HPP
