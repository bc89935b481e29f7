//===- runtime_cache_test.cpp - The persistent cache of compiled plans ----===//
//
// This file tests the cache of compiled plans (include/kite/cache.hpp) and
// the lookup chain of kite::launch (runtime/PlanCache.h) without a GPU:
// entries round-trip through files; a tuned entry wins over a default one
// and is never replaced by one; truncated, garbage and other-version files
// are ignored with a one-line report naming the file; four processes
// writing one directory at once leave only valid entries; bundles export and
// load; and a launch's plan comes from the loaded bundles, then the cache
// directory, then the compiler (a fake one here that counts its calls).
// Hostile directories: symbolic links out of the cache, FIFOs where entries
// would be, huge files, configs nested 100,000 levels deep, control
// characters in what the cache reports.
//
//===----------------------------------------------------------------------===//

#include "runtime/CompilerHook.h"
#include "runtime/Nvrtc.h"
#include "runtime/PlanCache.h"

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

namespace fs = std::filesystem;
using namespace kite;
using namespace kite::runtime;

namespace {

const char *kIrHash = "0123456789abcdef";

cache::Target h200() { return {"sm_90a", 132, 13000, 13000}; }

/// The launch's specs: x (a contiguous bf16 tensor, 16-byte aligned), n (an
/// i64 the kernel does not specialize on) and causal (a bool: always
/// specialized).
std::vector<ArgSpec> launchSpecs(int64_t n = 3, bool causal = true, int64_t rows = 8) {
  return {ArgSpec::tensor("x", bf16, {rows, 8}, {8, 1}, 16), ArgSpec::scalar("n", i64, double(n)),
          ArgSpec::scalar("causal", boolean, causal ? 1.0 : 0.0)};
}

/// A plan as the compiler makes it for launchSpecs: n's value dropped.
KernelPlan planFor(const std::vector<ArgSpec> &specs, std::string config = "") {
  KernelPlan p;
  p.name = "softmax";
  p.kernelName = "softmax_kernel";
  p.arch = "sm_90a";
  p.binary = {1, 2, 3, 4};
  p.block = {128, 1, 1};
  p.args = specs;
  p.args[1].value.reset();
  p.config = std::move(config);
  p.key = "softmax|" + std::string(kIrHash) + "|" + p.args[0].str() + "|" + p.config;
  return p;
}

cache::Entry entryFor(cache::Source source, std::vector<ArgSpec> specs = launchSpecs()) {
  cache::Entry e;
  e.kernel = "softmax";
  e.irHash = kIrHash;
  e.kiteVersion = kite::cache::kite_version();
  e.target = h200();
  e.source = source;
  e.plan = planFor(specs, source == cache::Source::tuned ? R"({"block_sizes":[64]})" : "");
  e.config = e.plan.config;
  if (source == cache::Source::tuned) {
    e.timeMs = 0.125;
    e.configsSearched = 42;
    e.tuningSeconds = 3.5;
  }
  e.created = 1700000000;
  return e;
}

cache::Query queryFor(const std::vector<ArgSpec> &specs, cache::Target target = h200()) {
  cache::Query q;
  q.kernel = "softmax";
  q.irHash = kIrHash;
  q.args = specs;
  q.target = std::move(target);
  return q;
}

/// A fresh cache directory for one test, in effect for the process (and
/// removed afterwards); reports are collected instead of printed.
class CacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          fmt::format("kite-cache-test-{}-{}", ::getpid(),
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    cache::set_directory(dir.string());
    previous = cache::set_reporter([this](std::string_view m) { reports.emplace_back(m); });
    cache::unload_bundles();
  }
  void TearDown() override {
    cache::set_reporter(previous);
    cache::set_directory("");
    cache::unload_bundles();
    fs::remove_all(dir);
  }
  std::string allReports() const {
    std::string s;
    for (const std::string &r : reports)
      s += r + "\n";
    return s;
  }

  fs::path dir;
  std::vector<std::string> reports;
  cache::Reporter previous;
};

std::vector<uint8_t> readBytes(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const fs::path &file, std::span<const uint8_t> bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

bool isFifo(const fs::path &path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

/// Opens (and closes) the write end of a FIFO every `seconds` until
/// destroyed, so that a reader blocked in open() on it returns.
class FifoUnblocker {
public:
  FifoUnblocker(fs::path fifo, int seconds)
      : thread_([this, fifo, seconds] {
          std::unique_lock lock(mutex_);
          while (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
            int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0)
              ::close(fd);
          }
        }) {}
  ~FifoUnblocker() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

} // namespace

//===----------------------------------------------------------------------===//
// Entries and the cache directory
//===----------------------------------------------------------------------===//

TEST_F(CacheTest, VersionComesFromTheBuild) {
  EXPECT_STREQ(kite::version(), "0.1.0");
  // In a git checkout the build id names the commit, and entries carry it.
  std::string id = kite::build_id();
  if (id.empty()) {
    EXPECT_EQ(cache::kite_version(), "0.1.0");
  } else {
    EXPECT_GE(id.size(), 12u);
    EXPECT_EQ(cache::kite_version(), "0.1.0+" + id);
  }
}

TEST_F(CacheTest, DirectoryFromOverrideEnvironmentAndOff) {
  EXPECT_EQ(cache::directory(), dir);
  cache::set_directory("off");
  EXPECT_TRUE(cache::directory().empty());
  EXPECT_THROW(cache::store(entryFor(cache::Source::default_config)), Error);
  cache::set_directory("");
  ::setenv("KITE_CACHE_DIR", "/somewhere/kite-cache", 1);
  EXPECT_EQ(cache::directory(), fs::path("/somewhere/kite-cache"));
  ::setenv("KITE_CACHE_DIR", "off", 1);
  EXPECT_TRUE(cache::directory().empty());
  // Failed NVRTC sources do not go to a directory called "off".
  EXPECT_NE(failedSourceDir().string().find("kite"), std::string::npos);
  EXPECT_EQ(failedSourceDir().string().find("off/failed"), std::string::npos);
  ::unsetenv("KITE_CACHE_DIR");
  const char *home = std::getenv("HOME");
  std::string savedHome = home ? home : "";
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(cache::directory(), fs::path("/home/someone/.cache/kite"));
  if (home)
    ::setenv("HOME", savedHome.c_str(), 1);
  else
    ::unsetenv("HOME");
}

// A dynamic-shapes entry answers every launch of its shape class (and
// only dynamic-shapes launches); entries of one class that differ in a
// static size share its directory and are told apart.
TEST_F(CacheTest, DynamicShapesEntriesAnswerTheirShapeClass) {
  auto dynamicEntry = [](int64_t divisor, int64_t cols) {
    std::vector<ArgSpec> specs = launchSpecs(3, true, 16);
    specs[0] = ArgSpec::tensor("x", bf16, {-1, cols}, {}, 16);
    specs[0].divisors = {divisor, 0};
    specs[0].index32 = true; // what planSpecs gives a tensor this small
    cache::Entry e = entryFor(cache::Source::default_config, specs);
    e.plan.dynamicShapes = true;
    e.plan.key += "|dynamic";
    return e;
  };
  cache::store(dynamicEntry(16, 8));
  cache::store(dynamicEntry(8, 8));
  auto launch = [](int64_t rows, int64_t cols, bool dynamic) {
    std::vector<ArgSpec> specs = launchSpecs(3, true, rows);
    specs[0] = ArgSpec::tensor("x", bf16, {rows, cols}, {}, 16);
    cache::Query q = queryFor(specs);
    q.dynamicShapes = dynamic;
    return cache::lookup(q);
  };
  std::optional<cache::Entry> a = launch(4096, 8, true), b = launch(32, 8, true);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->plan.args[0].str(), "x=bf16[?16,8]:align16:idx32");
  EXPECT_EQ(b->plan, a->plan) << "one plan for every multiple of 16";
  std::optional<cache::Entry> c = launch(24, 8, true);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->plan.args[0].str(), "x=bf16[?8,8]:align16:idx32");
  EXPECT_FALSE(launch(4097, 8, true)) << "no entry for odd sizes";
  EXPECT_FALSE(launch(4100, 8, true)) << "class 4: no entry";
  EXPECT_FALSE(launch(int64_t(1) << 27, 8, true))
      << "a tensor too large for the entries' 32-bit offsets";
  EXPECT_FALSE(launch(4096, 16, true)) << "x's columns are static";
  EXPECT_FALSE(launch(4096, 8, false)) << "a static launch never gets a dynamic plan";
  EXPECT_EQ(cache::list().size(), 2u);
  EXPECT_TRUE(reports.empty()) << allReports();
}

TEST_F(CacheTest, EntryRoundTripsThroughAFile) {
  cache::Entry e = entryFor(cache::Source::tuned);
  fs::path file = cache::store(e);
  EXPECT_EQ(file, cache::entry_path(dir, e));
  EXPECT_EQ(file.filename().string(), cache::entry_id(e) + ".kite");
  EXPECT_EQ(file.parent_path().parent_path(), dir / "v1");
  EXPECT_TRUE(file.parent_path().filename().string().starts_with("softmax-"));
  ASSERT_TRUE(fs::exists(file));

  cache::Entry back = cache::read_entry(file);
  EXPECT_EQ(back.kernel, "softmax");
  EXPECT_EQ(back.irHash, kIrHash);
  EXPECT_EQ(back.kiteVersion, cache::kite_version());
  EXPECT_EQ(back.target, h200());
  EXPECT_EQ(back.source, cache::Source::tuned);
  EXPECT_EQ(back.plan, e.plan);
  EXPECT_EQ(back.config, R"({"block_sizes":[64]})");
  ASSERT_TRUE(back.timeMs);
  EXPECT_EQ(*back.timeMs, 0.125);
  EXPECT_EQ(back.configsSearched, 42u);
  EXPECT_EQ(back.tuningSeconds, 3.5);
  EXPECT_EQ(back.created, 1700000000);
  EXPECT_EQ(cache::entry_id(back), cache::entry_id(e));

  // A default entry has no time; the creation time is filled in on store.
  cache::Entry d = entryFor(cache::Source::default_config);
  d.created = 0;
  cache::Entry dback = cache::read_entry(cache::store(d));
  EXPECT_FALSE(dback.timeMs);
  EXPECT_GT(dback.created, 1700000000);

  std::vector<ArgSpec> specs = launchSpecs();
  std::optional<cache::Entry> found = cache::lookup(queryFor(specs));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->plan, e.plan);
  EXPECT_TRUE(reports.empty()) << allReports();
}

TEST_F(CacheTest, IdsCoverTheWholeKey) {
  std::set<std::string> ids;
  cache::Entry e = entryFor(cache::Source::default_config);
  ids.insert(cache::entry_id(e));
  cache::Entry t = e;
  t.source = cache::Source::tuned;
  ids.insert(cache::entry_id(t));
  cache::Entry sm = e;
  sm.target.smCount = 114;
  ids.insert(cache::entry_id(sm));
  cache::Entry driver = e;
  driver.target.driverVersion = 12080;
  ids.insert(cache::entry_id(driver));
  cache::Entry nvrtc = e;
  nvrtc.target.nvrtcVersion = 12090;
  ids.insert(cache::entry_id(nvrtc));
  cache::Entry kv = e;
  kv.kiteVersion = "0.2.0";
  ids.insert(cache::entry_id(kv));
  cache::Entry value = entryFor(cache::Source::default_config, launchSpecs(3, false));
  ids.insert(cache::entry_id(value));
  cache::Entry shape = entryFor(cache::Source::default_config, launchSpecs(3, true, 16));
  ids.insert(cache::entry_id(shape));
  cache::Entry pinned = e;
  pinned.source = cache::Source::pinned;
  pinned.pinnedConfig = R"({"num_warps":4})";
  ids.insert(cache::entry_id(pinned));
  EXPECT_EQ(ids.size(), 9u);
  for (const std::string &id : ids)
    EXPECT_EQ(id.size(), 16u);
  // Not the time, the tuning statistics or the creation time.
  cache::Entry later = e;
  later.created += 100;
  later.timeMs = 1.0;
  EXPECT_EQ(cache::entry_id(later), cache::entry_id(e));
}

TEST_F(CacheTest, LookupChecksTheSpecializationAndTarget) {
  cache::store(entryFor(cache::Source::default_config));
  // n is not specialized: any value matches; causal is.
  EXPECT_TRUE(cache::lookup(queryFor(launchSpecs(7, true))));
  EXPECT_FALSE(cache::lookup(queryFor(launchSpecs(3, false))));
  EXPECT_FALSE(cache::lookup(queryFor(launchSpecs(3, true, 16))));
  // Strides of size-1 dimensions do not matter; other strides and the
  // alignment class do.
  std::vector<ArgSpec> s = launchSpecs();
  s[0].strides = {1, 8};
  EXPECT_FALSE(cache::lookup(queryFor(s)));
  s = launchSpecs();
  s[0].alignment = 8;
  EXPECT_FALSE(cache::lookup(queryFor(s)));
  s = launchSpecs();
  s[1].dtype = i32;
  EXPECT_FALSE(cache::lookup(queryFor(s)));
  s = launchSpecs();
  cache::Query q = queryFor(s);
  q.irHash = "fedcba9876543210";
  EXPECT_FALSE(cache::lookup(q)) << "another version of the kernel";
  // The cache directory wants the exact target ...
  cache::Target t = h200();
  t.driverVersion = 12080;
  EXPECT_FALSE(cache::lookup(queryFor(s, t)));
  t = h200();
  t.smCount = 114;
  EXPECT_FALSE(cache::lookup(queryFor(s, t)));
  t = h200();
  t.arch = "sm_80";
  EXPECT_FALSE(cache::lookup(queryFor(s, t)));
  t = h200();
  t.nvrtcVersion = 12090;
  EXPECT_FALSE(cache::lookup(queryFor(s, t)));
  // ... except NVRTC's version when there is no NVRTC (nothing to compile with).
  t.nvrtcVersion = 0;
  EXPECT_TRUE(cache::lookup(queryFor(s, t)));
  EXPECT_TRUE(reports.empty()) << allReports();
}

TEST_F(CacheTest, TunedBeatsDefaultAndIsNeverReplacedByIt) {
  std::vector<ArgSpec> specs = launchSpecs();
  cache::store(entryFor(cache::Source::default_config));
  ASSERT_TRUE(cache::lookup(queryFor(specs)));
  EXPECT_EQ(cache::lookup(queryFor(specs))->source, cache::Source::default_config);

  fs::path tunedFile = cache::store(entryFor(cache::Source::tuned));
  EXPECT_EQ(cache::lookup(queryFor(specs))->source, cache::Source::tuned);

  // Storing a default entry again (another process compiling the default
  // config) leaves the tuned one in place and winning.
  cache::Entry d = entryFor(cache::Source::default_config);
  d.created = 1800000000; // newer than the tuned one
  cache::store(d);
  ASSERT_TRUE(fs::exists(tunedFile));
  EXPECT_EQ(cache::read_entry(tunedFile).source, cache::Source::tuned);
  std::optional<cache::Entry> best = cache::lookup(queryFor(specs));
  ASSERT_TRUE(best);
  EXPECT_EQ(best->source, cache::Source::tuned);
  EXPECT_EQ(best->config, R"({"block_sizes":[64]})");

  // Only tuned entries answer a query that wants a tuning result.
  cache::Query q = queryFor(specs);
  q.tunedOnly = true;
  EXPECT_EQ(cache::lookup(q)->source, cache::Source::tuned);
  fs::remove(tunedFile);
  EXPECT_FALSE(cache::lookup(q));
  EXPECT_EQ(cache::lookup(queryFor(specs))->source, cache::Source::default_config);
}

TEST_F(CacheTest, PinnedEntriesAnswerOnlyTheirConfig) {
  std::vector<ArgSpec> specs = launchSpecs();
  cache::Entry p = entryFor(cache::Source::pinned);
  p.pinnedConfig = R"({"num_warps":4})";
  cache::store(p);
  EXPECT_FALSE(cache::lookup(queryFor(specs))) << "not for launches without a config";
  cache::Query q = queryFor(specs);
  q.pinnedConfig = R"({"num_warps":8})";
  EXPECT_FALSE(cache::lookup(q));
  q.pinnedConfig = R"({"num_warps":4})";
  ASSERT_TRUE(cache::lookup(q));
  EXPECT_EQ(cache::lookup(q)->source, cache::Source::pinned);
  cache::store(entryFor(cache::Source::tuned));
  EXPECT_EQ(cache::lookup(q)->source, cache::Source::pinned) << "a pinned launch gets its config";
}

TEST_F(CacheTest, BadFilesAreIgnoredAndReported) {
  std::vector<ArgSpec> specs = launchSpecs();
  cache::Entry d = entryFor(cache::Source::default_config);
  fs::path good = cache::store(d);
  std::vector<uint8_t> bytes = readBytes(good);
  ASSERT_GT(bytes.size(), 40u);
  fs::path keyDir = good.parent_path();

  // Truncated (a tuned entry, so that it would win if it were trusted).
  cache::Entry t = entryFor(cache::Source::tuned);
  std::vector<uint8_t> tunedBytes = cache::to_bytes(t);
  fs::path truncated = cache::entry_path(dir, t);
  writeBytes(truncated, std::span(tunedBytes).first(tunedBytes.size() / 2));
  // Garbage.
  fs::path garbage = keyDir / "00000000deadbeef.kite";
  std::string text = "this is not a cache entry at all, just some text in a file";
  writeBytes(garbage, std::span(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  // Another format version.
  fs::path other = keyDir / "00000000000000f2.kite";
  std::vector<uint8_t> v2 = tunedBytes;
  v2[8] = 2;
  writeBytes(other, v2);
  // A flipped byte in the payload.
  fs::path flipped = keyDir / "00000000000000ff.kite";
  std::vector<uint8_t> bad = tunedBytes;
  bad[bad.size() / 2] ^= 0x40;
  writeBytes(flipped, bad);
  // Empty.
  fs::path empty = keyDir / "0000000000000000.kite";
  writeBytes(empty, {});

  std::optional<cache::Entry> found = cache::lookup(queryFor(specs));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->source, cache::Source::default_config) << "no bad file is trusted";
  ASSERT_EQ(reports.size(), 5u) << allReports();
  auto reportFor = [&](const fs::path &file) -> std::string {
    for (const std::string &r : reports)
      if (r.find(file.string() + ":") != std::string::npos)
        return r;
    return "(no report for " + file.string() + ")";
  };
  EXPECT_EQ(reportFor(truncated).rfind("ignoring cache entry " + truncated.string() +
                                           ": truncated: the payload is ",
                                       0),
            0u)
      << reportFor(truncated);
  EXPECT_EQ(reportFor(garbage),
            "ignoring cache entry " + garbage.string() + ": not a kite cache entry (" +
                std::to_string(text.size()) + " bytes without the 'KITEENTR' magic)");
  EXPECT_EQ(reportFor(other), "ignoring cache entry " + other.string() +
                                  ": format version 2, but this kite reads version 1; it was "
                                  "written by another kite version; remove it (kite cache rm) "
                                  "and let kite compile or tune again");
  EXPECT_EQ(reportFor(flipped),
            "ignoring cache entry " + flipped.string() + ": corrupt buffer: checksum mismatch");
  EXPECT_EQ(reportFor(empty), "ignoring cache entry " + empty.string() +
                                  ": not a kite cache entry (0 bytes without the 'KITEENTR' "
                                  "magic)");
  for (const std::string &r : reports)
    EXPECT_EQ(r.find('\n'), std::string::npos) << "one line: " << r;

  // list() shows them, with the reasons, and never throws.
  std::vector<cache::Listed> listed = cache::list();
  EXPECT_EQ(listed.size(), 6u);
  size_t corrupt = 0;
  for (const cache::Listed &l : listed) {
    if (!l.entry) {
      ++corrupt;
      EXPECT_FALSE(l.error.empty()) << l.path;
    }
  }
  EXPECT_EQ(corrupt, 5u);

  // The default reporter writes one warning line to stderr.
  cache::set_reporter({});
  ::testing::internal::CaptureStderr();
  cache::lookup(queryFor(specs));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("kite: warning: ignoring cache entry " + garbage.string() +
                     ": not a kite cache entry"),
            std::string::npos)
      << err;
}

TEST_F(CacheTest, FourProcessesWriteOneCache) {
  // Each child stores the same 10 shared entries and 10 of its own, looking
  // entries up in between; then every file must read back intact.
  constexpr int kProcesses = 4, kShared = 10, kOwn = 10;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < kShared + kOwn; ++i) {
          int64_t rows = i < kShared ? 100 + i : 1000 + 100 * p + i;
          cache::Entry e = entryFor(i % 2 ? cache::Source::tuned : cache::Source::default_config,
                                    launchSpecs(3, true, rows));
          e.created = 1700000000 + round;
          try {
            cache::store(e);
            std::vector<ArgSpec> specs = launchSpecs(3, true, rows);
            if (!cache::lookup(queryFor(specs)))
              ++failures;
          } catch (const std::exception &) {
            ++failures;
          }
        }
      }
      ::_exit(failures == 0 && reports.empty() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid;
  }
  std::vector<cache::Listed> listed = cache::list();
  EXPECT_EQ(listed.size(), size_t(kShared + kProcesses * kOwn));
  for (const cache::Listed &l : listed) {
    ASSERT_TRUE(l.entry) << l.path << ": " << l.error;
    EXPECT_EQ(cache::entry_id(*l.entry), l.id);
  }
  // No temporary file is left behind.
  for (const fs::directory_entry &f : fs::recursive_directory_iterator(dir))
    EXPECT_FALSE(f.path().filename().string().starts_with(".")) << f.path();
  EXPECT_TRUE(reports.empty()) << allReports();
}

//===----------------------------------------------------------------------===//
// Hostile cache directories
//===----------------------------------------------------------------------===//

TEST_F(CacheTest, StoreStaysInsideTheCacheDirectory) {
  cache::Entry e = entryFor(cache::Source::default_config);
  fs::path file = cache::entry_path(dir, e);
  fs::path outside = dir.string() + "-outside";
  fs::remove_all(outside);
  fs::create_directories(outside);
  // The key directory is a link to somewhere else.
  fs::create_directories(file.parent_path().parent_path());
  fs::create_directory_symlink(outside, file.parent_path());
  try {
    cache::store(e);
    ADD_FAILURE() << "stored through a link out of the cache";
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("symbolic link"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find(file.parent_path().string()), std::string::npos)
        << err.what();
  }
  EXPECT_TRUE(fs::is_empty(outside)) << "written outside the cache";
  // The version directory is.
  fs::remove(file.parent_path());
  fs::remove(file.parent_path().parent_path());
  fs::create_directory_symlink(outside, file.parent_path().parent_path());
  EXPECT_THROW(cache::store(e), Error);
  EXPECT_TRUE(fs::is_empty(outside)) << "written outside the cache";
  fs::remove_all(outside);
}

TEST_F(CacheTest, StoreRefusesToReplaceWhatIsNotARegularFile) {
  cache::Entry e = entryFor(cache::Source::default_config);
  fs::path file = cache::entry_path(dir, e);
  fs::create_directories(file.parent_path());
  ASSERT_EQ(::mkfifo(file.c_str(), 0644), 0);
  try {
    cache::store(e);
    ADD_FAILURE() << "a FIFO was replaced";
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("refusing to replace " + file.string()),
              std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what()).find("a FIFO"), std::string::npos) << err.what();
  }
  EXPECT_TRUE(isFifo(file));
  fs::remove(file);
  fs::create_directories(file / "sub");
  EXPECT_THROW(cache::store(e), Error);
  EXPECT_TRUE(fs::is_directory(file / "sub"));
  // No temporary file is left behind.
  for (const fs::directory_entry &f : fs::directory_iterator(file.parent_path()))
    EXPECT_EQ(f.path(), file) << "left behind";
}

TEST_F(CacheTest, LookupDoesNotFollowLinksOrOpenFifos) {
  std::vector<ArgSpec> specs = launchSpecs();
  cache::Entry e = entryFor(cache::Source::tuned);
  fs::path file = cache::entry_path(dir, e);
  // A valid entry outside the cache, reached through a linked key directory.
  fs::path outside = dir.string() + "-outside";
  fs::remove_all(outside);
  writeBytes(outside / file.filename(), cache::to_bytes(e));
  fs::create_directories(file.parent_path().parent_path());
  fs::create_directory_symlink(outside, file.parent_path());
  EXPECT_FALSE(cache::lookup(queryFor(specs))) << "read an entry through a link";
  EXPECT_TRUE(cache::list().empty());
  fs::remove(file.parent_path());

  // A FIFO named like an entry (opening it would block) beside a good entry.
  cache::Entry d = entryFor(cache::Source::default_config);
  cache::store(d);
  fs::path fifo = file.parent_path() / "00000000000000ee.kite";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  reports.clear();
  {
    FifoUnblocker unblock(fifo, 10);
    std::optional<cache::Entry> found = cache::lookup(queryFor(specs));
    ASSERT_TRUE(found);
    EXPECT_EQ(found->source, cache::Source::default_config);
  }
  ASSERT_EQ(reports.size(), 1u) << allReports();
  EXPECT_NE(reports[0].find(fifo.string()), std::string::npos) << reports[0];
  EXPECT_NE(reports[0].find("a FIFO, not a regular file"), std::string::npos) << reports[0];
  {
    FifoUnblocker unblock(fifo, 10);
    EXPECT_THROW(cache::read_entry(fifo), Error);
    EXPECT_THROW(cache::read_bundle(fifo), Error);
  }
  fs::remove_all(outside);
}

TEST_F(CacheTest, ReadsAreBounded) {
  // Sparse files that start like an entry and a bundle, bigger than either
  // may be: refused from their size, without being read.
  fs::path entry = dir / "huge.kite";
  writeBytes(entry, std::vector<uint8_t>{'K', 'I', 'T', 'E', 'E', 'N', 'T', 'R', 1, 0, 0, 0});
  fs::resize_file(entry, uintmax_t(3) << 29);
  auto start = std::chrono::steady_clock::now();
  try {
    cache::read_entry(entry);
    ADD_FAILURE() << "read";
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("too large: 1610612736 bytes"), std::string::npos)
        << err.what();
  }
  fs::path bundle = dir / "huge.kitebundle";
  writeBytes(bundle, std::vector<uint8_t>{'K', 'I', 'T', 'E', 'B', 'N', 'D', 'L', 1, 0, 0, 0});
  fs::resize_file(bundle, uintmax_t(5) << 30);
  try {
    cache::read_bundle(bundle);
    ADD_FAILURE() << "read";
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("too large: 5368709120 bytes"), std::string::npos)
        << err.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2))
      << "read whole";
}

TEST_F(CacheTest, DeeplyNestedConfigsAreCorrupt) {
  for (int which = 0; which < 3; ++which) {
    cache::Entry e = entryFor(cache::Source::tuned);
    std::string deep = std::string(100000, '{') + std::string(100000, '}');
    (which == 0 ? e.config : which == 1 ? e.pinnedConfig : e.plan.config) = deep;
    std::vector<uint8_t> bytes = cache::to_bytes(e);
    try {
      cache::from_bytes(bytes);
      ADD_FAILURE() << which << ": accepted";
    } catch (const Error &err) {
      EXPECT_NE(std::string(err.what()).find("nests deeper than 64 levels"), std::string::npos)
          << err.what();
    }
  }
  // Brackets inside JSON strings do not count; 64 levels are fine.
  cache::Entry e = entryFor(cache::Source::tuned);
  e.config = "{\"a\": \"" + std::string(1000, '[') + "\"," + "\"b\":" + std::string(63, '[') +
             std::string(63, ']') + "}";
  EXPECT_EQ(cache::from_bytes(cache::to_bytes(e)).config, e.config);
}

TEST_F(CacheTest, ReportsEscapeControlCharacters) {
  cache::report("kernel 'a\x1b[2Jb\x07' in\nfile \x9b\\");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0], "kernel 'a\\x1b[2Jb\\x07' in; file \\x9b\\");
}

TEST_F(CacheTest, WriteBundleRefusesMissingDirectoriesAndNonRegularFiles) {
  std::vector<cache::Entry> entries = {entryFor(cache::Source::tuned)};
  fs::path missing = dir / "missing" / "app.kitebundle";
  try {
    cache::write_bundle(missing, entries);
    ADD_FAILURE() << "written";
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find((dir / "missing").string() + " does not exist"),
              std::string::npos)
        << err.what();
  }
  EXPECT_FALSE(fs::exists(dir / "missing"));
  fs::path fifo = dir / "fifo.kitebundle";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THROW(cache::write_bundle(fifo, entries), Error);
  EXPECT_TRUE(isFifo(fifo));
  fs::path link = dir / "link.kitebundle";
  fs::create_symlink(dir / "target", link);
  EXPECT_THROW(cache::write_bundle(link, entries), Error);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(dir / "target"));
}

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

TEST_F(CacheTest, BundlesExportAndLoad) {
  std::vector<cache::Entry> entries = {entryFor(cache::Source::default_config),
                                       entryFor(cache::Source::tuned),
                                       entryFor(cache::Source::default_config,
                                                launchSpecs(3, true, 64))};
  fs::path file = dir / "app.kitebundle";
  cache::write_bundle(file, entries);
  std::vector<cache::Entry> back = cache::read_bundle(file);
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < back.size(); ++i)
    EXPECT_EQ(cache::entry_id(back[i]), cache::entry_id(entries[i]));

  std::vector<ArgSpec> specs = launchSpecs();
  EXPECT_FALSE(cache::lookup_loaded(queryFor(specs)));
  EXPECT_EQ(load_bundle(file.string()), 3u);
  std::optional<cache::Entry> found = cache::lookup_loaded(queryFor(specs));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->source, cache::Source::tuned);
  std::vector<ArgSpec> other = launchSpecs(3, true, 64);
  EXPECT_TRUE(cache::lookup_loaded(queryFor(other)));
  std::vector<ArgSpec> missing = launchSpecs(3, true, 65);
  EXPECT_FALSE(cache::lookup_loaded(queryFor(missing)));
  // A bundle is built for a fleet: another driver, NVRTC or SM count of the
  // same architecture still runs its cubins; another architecture does not.
  cache::Target t = {"sm_90a", 114, 0, 12080};
  EXPECT_TRUE(cache::lookup_loaded(queryFor(specs, t)));
  t.arch = "sm_100a";
  EXPECT_FALSE(cache::lookup_loaded(queryFor(specs, t)));

  // A bad bundle is an Error naming the file.
  std::vector<uint8_t> bytes = readBytes(file);
  fs::path cut = dir / "cut.kitebundle";
  writeBytes(cut, std::span(bytes).first(bytes.size() - 10));
  try {
    load_bundle(cut.string());
    FAIL() << "a truncated bundle loaded";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("kite bundle " + cut.string() + ": truncated: ", 0),
              0u)
        << e.what();
  }
  try {
    load_bundle((dir / "missing.kitebundle").string());
    FAIL() << "a missing bundle loaded";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("missing.kitebundle: cannot be read"),
              std::string::npos)
        << e.what();
  }
  fs::path entryFile = cache::store(entries[0]);
  try {
    load_bundle(entryFile.string());
    FAIL() << "an entry file loaded as a bundle";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("not a kite bundle"), std::string::npos) << e.what();
  }
}

//===----------------------------------------------------------------------===//
// The lookup chain of kite::launch
//===----------------------------------------------------------------------===//

namespace {

/// Installs a fake compiler (and optionally a tuner) for one test, counting
/// calls; the plans it makes are like the real compiler's (n's value
/// dropped, the config in the plan).
struct FakeCompiler {
  int compiles = 0, tunes = 0;
  FakeCompiler(bool withTuner = false) {
    setCompiler([this](const KernelSource &, const std::vector<ArgSpec> &specs,
                       const Options &o) {
      ++compiles;
      return planFor(specs, o.config);
    });
    if (withTuner)
      setTuner([this](const KernelSource &, const std::vector<ArgSpec> &specs, const Options &,
                      const cache::Target &target) {
        ++tunes;
        cache::Entry e = entryFor(cache::Source::tuned, specs);
        e.target = target;
        return e;
      });
  }
  ~FakeCompiler() {
    setCompiler({});
    setTuner({});
  }
};

/// A compiler that, asked for dynamic shapes, makes x's rows dynamic (as
/// planSpecs does for a kernel that loops over them).
struct FakeDynamicCompiler {
  int compiles = 0;
  FakeDynamicCompiler() {
    setCompiler([this](const KernelSource &, const std::vector<ArgSpec> &specs,
                       const Options &o) {
      ++compiles;
      std::vector<ArgSpec> s = specs;
      if (!o.static_shapes && s[0].sizes[0] >= 2) {
        s[0].index32 = ArgSpec::fits_index32(s[0].sizes[0] * s[0].sizes[1]);
        s[0].divisors = {ArgSpec::size_divisor(s[0].sizes[0]), 0};
        s[0].sizes[0] = -1;
        s[0].strides.clear();
      }
      KernelPlan p = planFor(s, o.config);
      p.dynamicShapes = !o.static_shapes;
      p.key += p.dynamicShapes ? "|dynamic" : "";
      return p;
    });
  }
  ~FakeDynamicCompiler() { setCompiler({}); }
};

KernelSource softmaxSource() {
  KernelSource k;
  k.name = "softmax";
  k.irHash = kIrHash;
  k.ir = "module {}";
  return k;
}

} // namespace

TEST_F(CacheTest, ChainCompilesOnceThenReadsTheDirectory) {
  FakeCompiler compiler;
  KernelSource k = softmaxSource();
  uint64_t before = compileCount();
  ResolvedPlan first = resolvePlan(k, launchSpecs(), Options{}, h200());
  EXPECT_EQ(first.origin, PlanOrigin::compiled);
  EXPECT_EQ(compiler.compiles, 1);
  EXPECT_EQ(compileCount(), before + 1);
  std::vector<cache::Listed> listed = cache::list();
  ASSERT_EQ(listed.size(), 1u);
  ASSERT_TRUE(listed[0].entry);
  EXPECT_EQ(listed[0].entry->source, cache::Source::default_config);
  EXPECT_EQ(listed[0].entry->target, h200());
  EXPECT_FALSE(listed[0].entry->timeMs);

  // Another launch of the specialization (another process, say) reads it.
  ResolvedPlan second = resolvePlan(k, launchSpecs(5, true), Options{}, h200());
  EXPECT_EQ(second.origin, PlanOrigin::directory);
  EXPECT_EQ(second.plan, first.plan);
  EXPECT_EQ(compiler.compiles, 1);
  EXPECT_EQ(compileCount(), before + 1);

  // Another specialization compiles.
  EXPECT_EQ(resolvePlan(k, launchSpecs(3, false), Options{}, h200()).origin,
            PlanOrigin::compiled);
  EXPECT_EQ(compiler.compiles, 2);
  EXPECT_EQ(cache::list().size(), 2u);
  EXPECT_TRUE(reports.empty()) << allReports();
}

// While KITE_CUDA_OVERRIDE is set, a launch neither reads the cache (its
// compile would take the edited source) nor stores what it compiled (an
// edited cubin must not be served later as the generated plan).
TEST_F(CacheTest, ACudaOverrideBypassesTheCache) {
  FakeCompiler compiler;
  KernelSource k = softmaxSource();
  ResolvedPlan stored = resolvePlan(k, launchSpecs(), Options{}, h200());
  EXPECT_EQ(stored.origin, PlanOrigin::compiled);
  ASSERT_EQ(cache::list().size(), 1u);
  ::setenv("KITE_CUDA_OVERRIDE", (dir / "edits").c_str(), 1);
  ResolvedPlan edited = resolvePlan(k, launchSpecs(), Options{}, h200());
  ResolvedPlan other = resolvePlan(k, launchSpecs(3, false), Options{}, h200());
  ::unsetenv("KITE_CUDA_OVERRIDE");
  EXPECT_EQ(edited.origin, PlanOrigin::compiled); // not PlanOrigin::directory
  EXPECT_EQ(other.origin, PlanOrigin::compiled);
  EXPECT_EQ(compiler.compiles, 3);
  EXPECT_EQ(cache::list().size(), 1u) << "nothing stored while overridden";
  // Without it, the stored entry answers again.
  EXPECT_EQ(resolvePlan(k, launchSpecs(), Options{}, h200()).origin, PlanOrigin::directory);
  EXPECT_EQ(compiler.compiles, 3);
}

// A launch with dynamic shapes stores its plan under its shape class: a
// later process's launch of another size of the class reads it; a static
// launch of the same sizes does not.
TEST_F(CacheTest, ChainServesAShapeClassFromTheDirectory) {
  FakeDynamicCompiler compiler;
  KernelSource k = softmaxSource();
  Options dynamic;
  dynamic.static_shapes = false;
  ResolvedPlan first = resolvePlan(k, launchSpecs(3, true, 4096), dynamic, h200());
  EXPECT_EQ(first.origin, PlanOrigin::compiled);
  EXPECT_EQ(first.plan.args[0].str(), "x=bf16[?16,8]:align16:idx32");
  ResolvedPlan other = resolvePlan(k, launchSpecs(3, true, 48), dynamic, h200());
  EXPECT_EQ(other.origin, PlanOrigin::directory) << "48 rows: the class of multiples of 16";
  EXPECT_EQ(other.plan, first.plan);
  EXPECT_EQ(resolvePlan(k, launchSpecs(3, true, 40), dynamic, h200()).origin,
            PlanOrigin::compiled)
      << "40 rows: multiples of 8, another class";
  EXPECT_EQ(resolvePlan(k, launchSpecs(3, true, 4096), Options{}, h200()).origin,
            PlanOrigin::compiled)
      << "a static launch never takes a dynamic plan";
  EXPECT_EQ(compiler.compiles, 3);
  EXPECT_EQ(cache::list().size(), 3u);
  EXPECT_TRUE(reports.empty()) << allReports();
}

// A miss with a tuned entry for nearby sizes compiles that entry's config
// (stored as a default entry); a shape that rejects it, or far sizes, get
// the default config.
TEST_F(CacheTest, ChainCompilesANearbyTunedConfig) {
  std::vector<std::string> configs;
  bool reject = false;
  setCompiler([&](const KernelSource &, const std::vector<ArgSpec> &specs, const Options &o) {
    configs.push_back(o.config);
    if (reject && !o.config.empty())
      throw ConfigRejected("the config does not fit");
    return planFor(specs, o.config);
  });
  KernelSource k = softmaxSource();
  cache::store(entryFor(cache::Source::tuned, launchSpecs(3, true, 4096))); // block_sizes [64]
  ResolvedPlan near = resolvePlan(k, launchSpecs(3, true, 2048), Options{}, h200());
  EXPECT_EQ(near.origin, PlanOrigin::compiled);
  EXPECT_EQ(near.plan.config, R"({"block_sizes":[64]})") << "one doubling away";
  reject = true;
  ResolvedPlan rejected = resolvePlan(k, launchSpecs(3, true, 1024), Options{}, h200());
  EXPECT_EQ(rejected.plan.config, "") << "rejected here: the default";
  reject = false;
  ResolvedPlan far = resolvePlan(k, launchSpecs(3, true, 64), Options{}, h200());
  EXPECT_EQ(far.plan.config, "") << "64 rows: six doublings away";
  EXPECT_EQ(configs, (std::vector<std::string>{R"({"block_sizes":[64]})", R"({"block_sizes":[64]})",
                                               "", ""}));
  // The nearby compile is a default entry: the next process reads it.
  EXPECT_EQ(resolvePlan(k, launchSpecs(3, true, 2048), Options{}, h200()).origin,
            PlanOrigin::directory);
  setCompiler({});
  EXPECT_TRUE(reports.empty()) << allReports();
}

TEST_F(CacheTest, ChainPrefersBundlesThenDirectoryThenCompiler) {
  FakeCompiler compiler;
  KernelSource k = softmaxSource();
  std::vector<ArgSpec> specs = launchSpecs();
  // The directory holds a default entry; a loaded bundle holds a tuned one.
  cache::store(entryFor(cache::Source::default_config));
  cache::Entry tuned = entryFor(cache::Source::tuned);
  tuned.target = {"sm_90a", 114, 12090, 12080}; // built elsewhere
  fs::path bundle = dir / "app.kitebundle";
  cache::write_bundle(bundle, std::span(&tuned, 1));

  EXPECT_EQ(resolvePlan(k, specs, Options{}, h200()).origin, PlanOrigin::directory);
  ASSERT_EQ(load_bundle(bundle.string()), 1u);
  ResolvedPlan r = resolvePlan(k, specs, Options{}, h200());
  EXPECT_EQ(r.origin, PlanOrigin::bundle);
  EXPECT_EQ(r.plan.config, R"({"block_sizes":[64]})");
  cache::unload_bundles();
  EXPECT_EQ(resolvePlan(k, specs, Options{}, h200()).origin, PlanOrigin::directory);
  EXPECT_EQ(compiler.compiles, 0);

  // Tuning::never ignores both and stores nothing.
  ASSERT_EQ(load_bundle(bundle.string()), 1u);
  Options never;
  never.tuning = Options::Tuning::never;
  EXPECT_EQ(resolvePlan(k, launchSpecs(3, false), never, h200()).origin, PlanOrigin::compiled);
  EXPECT_EQ(resolvePlan(k, specs, never, h200()).origin, PlanOrigin::compiled);
  EXPECT_EQ(compiler.compiles, 2);
  EXPECT_EQ(cache::list().size(), 1u) << "nothing stored";

  // With the cache directory off, bundles still answer; compiles store nothing.
  cache::set_directory("off");
  EXPECT_EQ(resolvePlan(k, specs, Options{}, h200()).origin, PlanOrigin::bundle);
  EXPECT_EQ(resolvePlan(k, launchSpecs(3, false), Options{}, h200()).origin,
            PlanOrigin::compiled);
  cache::set_directory(dir.string());
  EXPECT_EQ(cache::list().size(), 1u);
  EXPECT_EQ(compiler.compiles, 3);
  EXPECT_TRUE(reports.empty()) << allReports();
}

TEST_F(CacheTest, BundleRunsWithoutAnyCompiler) {
  // An application with no compiler linked in and a bundle of its plans.
  setCompiler({});
  uint64_t before = compileCount();
  KernelSource k = softmaxSource();
  std::vector<ArgSpec> specs = launchSpecs();
  fs::path bundle = dir / "app.kitebundle";
  std::vector<cache::Entry> entries = {entryFor(cache::Source::tuned)};
  cache::write_bundle(bundle, entries);
  cache::set_directory("off");
  EXPECT_THROW(resolvePlan(k, specs, Options{}, h200()), Error) << "no plan, no compiler";
  load_bundle(bundle.string());
  cache::Target device = h200();
  device.nvrtcVersion = 0; // no NVRTC loaded
  ResolvedPlan r = resolvePlan(k, specs, Options{}, device);
  EXPECT_EQ(r.origin, PlanOrigin::bundle);
  EXPECT_EQ(r.plan, entries[0].plan);
  EXPECT_EQ(compileCount(), before);
}

TEST_F(CacheTest, ChainTunesAndPins) {
  KernelSource k = softmaxSource();
  std::vector<ArgSpec> specs = launchSpecs();
  Options tune;
  tune.tuning = Options::Tuning::tune;
  {
    // Without an autotuner: one warning, then the default config.
    FakeCompiler compiler;
    cache::store(entryFor(cache::Source::default_config));
    EXPECT_EQ(resolvePlan(k, specs, tune, h200()).origin, PlanOrigin::directory);
    EXPECT_EQ(compiler.compiles, 0);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0], "Options::Tuning::tune: the autotuner is not linked in; using cached "
                          "or default configs");
  }
  {
    FakeCompiler compiler(/*withTuner=*/true);
    // A default entry does not answer a tuning launch: the tuner runs and its
    // winner is stored, then found.
    ResolvedPlan r = resolvePlan(k, specs, tune, h200());
    EXPECT_EQ(r.origin, PlanOrigin::tuned);
    EXPECT_EQ(compiler.tunes, 1);
    EXPECT_EQ(resolvePlan(k, specs, tune, h200()).origin, PlanOrigin::directory);
    EXPECT_EQ(compiler.tunes, 1);
    std::optional<cache::Entry> best = cache::lookup(queryFor(specs));
    ASSERT_TRUE(best);
    EXPECT_EQ(best->source, cache::Source::tuned);
    EXPECT_EQ(best->configsSearched, 42u);
    // A cached launch now gets the tuned plan.
    EXPECT_EQ(resolvePlan(k, specs, Options{}, h200()).plan.config, R"({"block_sizes":[64]})");

    // A pinned config compiles once, is stored as pinned, and is found
    // again only for that config.
    Options pinned;
    pinned.config = R"({"num_warps":4})";
    EXPECT_EQ(resolvePlan(k, specs, pinned, h200()).origin, PlanOrigin::compiled);
    EXPECT_EQ(resolvePlan(k, specs, pinned, h200()).origin, PlanOrigin::directory);
    EXPECT_EQ(resolvePlan(k, specs, pinned, h200()).plan.config, pinned.config);
    EXPECT_EQ(compiler.compiles, 1);
    pinned.config = R"({"num_warps":8})";
    EXPECT_EQ(resolvePlan(k, specs, pinned, h200()).origin, PlanOrigin::compiled);
    EXPECT_EQ(compiler.compiles, 2);
    EXPECT_EQ(compiler.tunes, 1);
    size_t pinnedEntries = 0;
    for (const cache::Listed &l : cache::list())
      pinnedEntries += l.entry && l.entry->source == cache::Source::pinned;
    EXPECT_EQ(pinnedEntries, 2u);
  }
}

TEST_F(CacheTest, AFailedStoreIsAWarningNotAnError) {
  FakeCompiler compiler;
  KernelSource k = softmaxSource();
  // The cache directory is a file: nothing can be created under it.
  writeBytes(dir / "file", std::vector<uint8_t>{1});
  cache::set_directory((dir / "file").string());
  ResolvedPlan r = resolvePlan(k, launchSpecs(), Options{}, h200());
  EXPECT_EQ(r.origin, PlanOrigin::compiled);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].rfind("could not store a plan of softmax in the cache: kite: cannot create "
                             "the directory ",
                             0),
            0u)
      << reports[0];
}
