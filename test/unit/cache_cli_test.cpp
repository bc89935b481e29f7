//===- cache_cli_test.cpp - `kite cache ls|show|rm|export` ----------------===//
//
// This file runs the `kite` tool (KITE_TOOL) on a cache directory the test
// fills through the runtime's API (two kernels, a tuned and a default entry,
// one truncated file), and checks each subcommand's output and exit status:
// 0 success, 1 a user error, 2 a usage error.
//
//===----------------------------------------------------------------------===//

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace kite;

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string readText(const fs::path &file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

cache::Entry makeEntry(std::string kernel, cache::Source source, int64_t rows) {
  cache::Entry e;
  e.kernel = kernel;
  e.irHash = "0123456789abcdef";
  e.kiteVersion = kite::cache::kite_version();
  e.target = {"sm_90a", 132, 13000, 13000};
  e.source = source;
  KernelPlan &p = e.plan;
  p.name = kernel;
  p.kernelName = kernel + "_kernel";
  p.arch = "sm_90a";
  p.binary.assign(2048, 7);
  p.block = {256, 1, 1};
  p.grid = {64, 1, 1};
  p.args = {ArgSpec::tensor("x", bf16, {rows, 4096}, {4096, 1}, 16), ArgSpec::scalar("eps", f64)};
  p.key = kernel + std::to_string(rows);
  if (source == cache::Source::tuned) {
    p.config = R"({"block_sizes":[4],"num_warps":8})";
    e.timeMs = 0.125;
    e.configsSearched = 120;
    e.tuningSeconds = 41.5;
  }
  e.config = p.config;
  e.created = 1700000000;
  return e;
}

class CacheCli : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           fmt::format("kite-cache-cli-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    dir = root / "cache";
    tuned = makeEntry("softmax", cache::Source::tuned, 1024);
    fallback = makeEntry("softmax", cache::Source::default_config, 2048);
    other = makeEntry("layernorm", cache::Source::default_config, 512);
    tunedFile = cache::store(tuned, dir);
    cache::store(fallback, dir);
    cache::store(other, dir);
    // A truncated file where an entry would be.
    cache::Entry broken = makeEntry("softmax", cache::Source::tuned, 4096);
    std::vector<uint8_t> bytes = cache::to_bytes(broken);
    corruptFile = cache::entry_path(dir, broken);
    fs::create_directories(corruptFile.parent_path());
    std::ofstream(corruptFile, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), 100);
  }
  void TearDown() override { fs::remove_all(root); }

  /// Runs `kite ARGS` with stdout and stderr captured.
  Result kite(const std::string &args, const std::string &env = "") {
    fs::path out = root / "stdout", err = root / "stderr";
    std::string command = fmt::format("{} {} {} >{} 2>{}", env, KITE_TOOL, args, out.string(),
                                      err.string());
    int raw = std::system(command.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = readText(out);
    r.err = readText(err);
    return r;
  }
  std::string d() const { return " --dir " + dir.string(); }

  fs::path root, dir, tunedFile, corruptFile;
  cache::Entry tuned, fallback, other;
};

std::string lineWith(const std::string &text, const std::string &needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos)
      return line;
  return "(no line with '" + needle + "')";
}

} // namespace

TEST_F(CacheCli, Help) {
  Result r = kite("cache --help");
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char *sub : {"ls", "show", "rm", "export"})
    EXPECT_NE(r.out.find(sub), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("KITE_CACHE_DIR"), std::string::npos) << r.out;
  for (const char *sub : {"ls", "show", "rm", "export"}) {
    Result s = kite(std::string("cache ") + sub + " --help");
    EXPECT_EQ(s.status, 0) << sub << ": " << s.err;
    EXPECT_NE(s.out.find("--dir"), std::string::npos) << s.out;
  }
  EXPECT_EQ(kite("cache").status, 2) << "a subcommand is required";
  EXPECT_EQ(kite("cache frobnicate").status, 2);
}

TEST_F(CacheCli, ListShowsEveryEntryAndTheCorruptOne) {
  Result r = kite("cache ls" + d());
  ASSERT_EQ(r.status, 0) << r.err;
  std::string id = cache::entry_id(tuned).substr(0, 12);
  std::string line = lineWith(r.out, id);
  EXPECT_NE(line.find("softmax"), std::string::npos) << line;
  EXPECT_NE(line.find("tuned"), std::string::npos) << line;
  EXPECT_NE(line.find("sm_90a"), std::string::npos) << line;
  EXPECT_NE(line.find("0.125 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("KiB"), std::string::npos) << line;
  EXPECT_NE(line.find("x=bf16[1024,4096]:align16 eps=f64"), std::string::npos) << line;
  line = lineWith(r.out, cache::entry_id(other).substr(0, 12));
  EXPECT_NE(line.find("layernorm"), std::string::npos) << line;
  EXPECT_NE(line.find("default"), std::string::npos) << line;
  line = lineWith(r.out, "corrupt");
  EXPECT_NE(line.find("truncated"), std::string::npos) << line;
  EXPECT_NE(line.find(corruptFile.string()), std::string::npos) << line;
  EXPECT_NE(r.out.find("4 entries (1 corrupt)"), std::string::npos) << r.out;

  r = kite("cache ls --kernel layernorm" + d());
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.find("softmax"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 entry,"), std::string::npos) << r.out;

  // The environment's directory, an empty one, and the cache turned off.
  r = kite("cache ls", "KITE_CACHE_DIR=" + dir.string());
  EXPECT_NE(r.out.find("4 entries"), std::string::npos) << r.out;
  r = kite("cache ls --dir " + (root / "empty").string());
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("no entries in"), std::string::npos) << r.out;
  r = kite("cache ls", "KITE_CACHE_DIR=off");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("the cache directory is off"), std::string::npos) << r.err;
}

TEST_F(CacheCli, ShowPrintsTheFieldsAndConfig) {
  std::string id = cache::entry_id(tuned);
  for (const std::string &which : {id.substr(0, 6), tunedFile.string()}) {
    Result r = kite("cache show " + which + d());
    ASSERT_EQ(r.status, 0) << which << ": " << r.err;
    EXPECT_NE(r.out.find("id:         " + id), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("kernel:     softmax"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("source:     tuned"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("arch:       sm_90a (132 SMs)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nvrtc:      13.0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("kite:       0.1.0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tuning:     120 configs searched in 41.5 s"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("created:    2023-11-14 22:13:20 UTC"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"num_warps\": 8"), std::string::npos) << "pretty JSON: " << r.out;
  }
  Result r = kite("cache show 0000000000" + d());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no cache entry '0000000000'"), std::string::npos) << r.err;
  r = kite("cache show " + corruptFile.stem().string() + d());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is corrupt: truncated"), std::string::npos) << r.err;
  EXPECT_EQ(kite("cache show" + d()).status, 2) << "ENTRY is required";
}

TEST_F(CacheCli, ExportWritesALoadableBundle) {
  fs::path bundle = root / "app.kitebundle";
  Result r = kite("cache export -o " + bundle.string() + " --kernel softmax" + d());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote 2 entries to"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("not exporting " + corruptFile.string()), std::string::npos) << r.err;
  std::vector<cache::Entry> entries = cache::read_bundle(bundle);
  ASSERT_EQ(entries.size(), 2u);
  for (const cache::Entry &e : entries)
    EXPECT_EQ(e.kernel, "softmax");
  EXPECT_EQ(load_bundle(bundle.string()), 2u);
  cache::unload_bundles();

  r = kite("cache export -o " + bundle.string() + d());
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(cache::read_bundle(bundle).size(), 3u);
  r = kite("cache export -o " + bundle.string() + " --kernel nothing" + d());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("nothing to export"), std::string::npos) << r.err;
  EXPECT_EQ(kite("cache export" + d()).status, 2) << "-o is required";
}

TEST_F(CacheCli, RemoveByIdKernelAndAll) {
  EXPECT_EQ(kite("cache rm" + d()).status, 2) << "nothing to remove given";
  EXPECT_EQ(kite("cache rm --all --kernel softmax" + d()).status, 2);

  Result r = kite("cache rm " + cache::entry_id(tuned).substr(0, 12) + d());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("removed 1 entry"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(tunedFile));
  EXPECT_TRUE(fs::exists(cache::entry_path(dir, fallback)));

  r = kite("cache rm 0000000000" + d());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no cache entry"), std::string::npos) << r.err;

  r = kite("cache rm --kernel layernorm" + d());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(cache::entry_path(dir, other)));
  EXPECT_FALSE(fs::exists(cache::entry_path(dir, other).parent_path()))
      << "an emptied directory goes too";
  EXPECT_EQ(kite("cache rm --kernel layernorm" + d()).status, 1);

  r = kite("cache rm --all" + d());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("removed 2 entries"), std::string::npos) << "the corrupt one too: " << r.out;
  EXPECT_TRUE(cache::list(dir).empty());
  r = kite("cache ls" + d());
  EXPECT_NE(r.out.find("no entries"), std::string::npos) << r.out;
}

/// `kite inspect --emit=config` names the config a launch would use and
/// where it comes from: a tuned entry of the cache directory for these
/// arguments (matched by the kernel's IR hash, as kite_add_kernels
/// registers it), a pinned --config, or the default.
TEST_F(CacheCli, InspectConfigFindsTheTunedEntry) {
  const std::string file = std::string(KITE_SRC) + "/examples/softmax.kite.cpp";
  fs::path registration = root / "softmax.registration.cpp";
  Result r = kite("compile " + file + " --emit=registration -o " + registration.string());
  ASSERT_EQ(r.status, 0) << r.err;
  // The hash follows the IR literal: the first 16-hex-digit string literal.
  std::string text = readText(registration), hash;
  for (size_t at = text.find("\"softmax\""); at != std::string::npos && hash.empty();
       at = text.find('"', at + 1)) {
    std::string candidate = text.substr(at + 1, 16);
    if (candidate.size() == 16 && text[at + 17] == '"' &&
        candidate.find_first_not_of("0123456789abcdef") == std::string::npos)
      hash = candidate;
  }
  ASSERT_EQ(hash.size(), 16u) << text.substr(0, 2000);

  cache::Entry e = makeEntry("softmax", cache::Source::tuned, 64);
  e.irHash = hash;
  e.plan.args = {ArgSpec::tensor("x", bf16, {64, 1000}, {}, 16)};
  e.config = e.plan.config = R"({"block_sizes":[8],"num_warps":2})";
  cache::store(e, dir);

  std::string inspect = "inspect " + file + " --kernel softmax --arg 'x=bf16[64,1000]' --emit=config";
  std::string env = "KITE_CACHE_DIR=" + dir.string();
  r = kite(inspect, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"block_sizes\":[8]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"num_warps\":2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("source  tuned: cache entry " + cache::entry_id(e)), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("0.1250 ms, 120 configs searched"), std::string::npos) << r.out;

  // Other shapes: no tuned entry, the default.
  r = kite("inspect " + file + " --kernel softmax --arg 'x=bf16[64,2000]' --emit=config", env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("source  default (no tuned entry"), std::string::npos) << r.out;
  // A pinned config wins over the cache.
  r = kite(inspect + " --config '{\"num_warps\":16}'", env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"num_warps\":16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("source  pinned (--config)"), std::string::npos) << r.out;
}
