//===- cache_cli_test.cpp - `kite cache ls|show|rm|export` ----------------===//
//
// This file runs the `kite` tool (KITE_TOOL) on a cache directory the test
// fills through the runtime's API (two kernels, a tuned and a default entry,
// one truncated file), and checks each subcommand's output and exit status:
// 0 success, 1 a user error, 2 a usage error. The hostile cases: rm and
// export against symbolic links out of the cache, files that are not
// entries, FIFOs, device nodes and missing directories; a huge junk file
// that ls must not read whole; a config nested 100,000 levels deep; and
// kernel names with terminal control characters.
//
//===----------------------------------------------------------------------===//

#include <kite/cache.hpp>
#include <kite/runtime.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

  /// The peak resident memory of `kite ARGS`, in KiB (its own process: the
  /// shell execs it), or -1 when it did not exit normally.
  long kitePeakKiB(const std::string &args) {
    std::string command = fmt::format("exec {} {} >{} 2>{}", KITE_TOOL, args,
                                      (root / "stdout").string(), (root / "stderr").string());
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char *>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    struct rusage usage {};
    if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status))
      return -1;
    return usage.ru_maxrss;
  }

  fs::path root, dir, tunedFile, corruptFile;
  cache::Entry tuned, fallback, other;
};

/// The kind of file at `path`, not following a symbolic link ('-' when
/// there is none): 'f' regular, 'd' directory, 'l' link, 'p' FIFO, 'c'
/// character device.
char kindOf(const fs::path &path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return '-';
  if (S_ISREG(st.st_mode))
    return 'f';
  if (S_ISDIR(st.st_mode))
    return 'd';
  if (S_ISLNK(st.st_mode))
    return 'l';
  if (S_ISFIFO(st.st_mode))
    return 'p';
  if (S_ISCHR(st.st_mode))
    return 'c';
  return '?';
}

void writeFile(const fs::path &file, std::string_view text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary).write(text.data(), std::streamsize(text.size()));
}

void writeEntryBytes(const fs::path &file, const cache::Entry &e) {
  std::vector<uint8_t> bytes = cache::to_bytes(e);
  writeFile(file, std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
}

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

//===----------------------------------------------------------------------===//
// Hostile cache directories and arguments
//===----------------------------------------------------------------------===//

/// `kite cache rm PATH` deletes only entry files of the cache: not a source
/// file given by mistake, not a copy of an entry outside the cache, not a
/// file in the cache that is not an entry. Any refusal removes nothing.
TEST_F(CacheCli, RemoveRefusesFilesThatAreNotEntriesOfTheCache) {
  fs::path source = root / "main.cpp";
  writeFile(source, "int main() {}\n");
  fs::path copy = root / "elsewhere" / (cache::entry_id(tuned) + ".kite");
  writeEntryBytes(copy, tuned);
  fs::path notes = tunedFile.parent_path() / "notes.kite";
  writeFile(notes, "not an entry, but named like one\n");
  fs::path readme = tunedFile.parent_path() / "README";
  writeFile(readme, "a file of the user's\n");

  for (const fs::path &file : {source, copy, notes, readme}) {
    Result r = kite("cache rm " + file.string() + d());
    EXPECT_EQ(r.status, 1) << file << ": " << r.out;
    EXPECT_TRUE(fs::exists(file)) << file << " was deleted";
    EXPECT_NE(r.err.find("not removing " + file.string()), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("removed 0 entries"), std::string::npos) << r.out;
  }
  // The reasons: outside the cache, or not an entry.
  EXPECT_NE(kite("cache rm " + copy.string() + d()).err.find("not inside the cache directory"),
            std::string::npos);
  EXPECT_NE(kite("cache rm " + notes.string() + d()).err.find("not a kite cache entry"),
            std::string::npos);
  // A relative path, as a user types it.
  Result r = kite("cache rm ./main.cpp" + d(), "cd " + root.string() + " &&");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(fs::exists(source));
  // An entry and a refused file together: nothing is removed.
  r = kite("cache rm " + cache::entry_id(tuned).substr(0, 12) + " " + source.string() + d());
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(fs::exists(tunedFile)) << "the entry went although another argument was refused";
  EXPECT_TRUE(fs::exists(source));
  // The entry itself, by its path through a symbolic link to the cache
  // directory (the link names the cache, it does not lead out of it).
  fs::path alias = root / "alias";
  fs::create_directory_symlink(dir, alias);
  r = kite("cache rm " + (alias / fs::relative(tunedFile, dir)).string() + d());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(tunedFile));
}

/// `rm --all` walks the cache without following symbolic links out of it
/// and deletes only regular files that carry the entry magic; it says what
/// it skipped.
TEST_F(CacheCli, RemoveAllStaysInsideTheCache) {
  // Somewhere else, files named like entries (one of them a real entry).
  fs::path precious = root / "precious";
  writeEntryBytes(precious / "a.kite", tuned);
  writeFile(precious / "b.kite", "the user's file\n");
  writeEntryBytes(precious / "key-0000000000000000" / "c.kite", other);
  // Links out of the cache: a key directory, a version directory, a file.
  fs::path keyLink = dir / "v1" / "evil-0000000000000000";
  fs::create_directory_symlink(precious, keyLink);
  fs::path versionLink = dir / "v7";
  fs::create_directory_symlink(precious, versionLink);
  fs::path fileLink = tunedFile.parent_path() / "1111111111111111.kite";
  fs::create_symlink(precious / "a.kite", fileLink);
  // In the cache, a junk file and a FIFO named like entries.
  fs::path junk = tunedFile.parent_path() / "2222222222222222.kite";
  writeFile(junk, "junk, no magic\n");
  fs::path fifo = tunedFile.parent_path() / "3333333333333333.kite";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);

  Result r = kite("cache rm --all" + d());
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char *name : {"a.kite", "b.kite", "key-0000000000000000/c.kite"})
    EXPECT_EQ(kindOf(precious / name), 'f') << name << " outside the cache was deleted";
  EXPECT_EQ(kindOf(keyLink), 'l');
  EXPECT_EQ(kindOf(versionLink), 'l');
  EXPECT_EQ(kindOf(fileLink), 'l');
  EXPECT_EQ(kindOf(junk), 'f') << "a file without the entry magic was deleted";
  EXPECT_EQ(kindOf(fifo), 'p');
  EXPECT_FALSE(fs::exists(tunedFile));
  EXPECT_FALSE(fs::exists(corruptFile)) << "a truncated entry is still an entry";
  EXPECT_NE(r.out.find("removed 4 entries"), std::string::npos) << r.out;
  for (const fs::path &p : {keyLink, versionLink, fileLink, junk, fifo})
    EXPECT_NE(r.err.find("skipped " + p.string()), std::string::npos) << p << ": " << r.err;

  // Named through a link, they are refused too.
  for (const fs::path &p : {keyLink / "a.kite", fileLink, fifo}) {
    r = kite("cache rm " + p.string() + d());
    EXPECT_EQ(r.status, 1) << p;
  }
  EXPECT_EQ(kindOf(precious / "a.kite"), 'f');
  EXPECT_EQ(kindOf(fileLink), 'l');
  EXPECT_EQ(kindOf(fifo), 'p');
}

/// `export -o` replaces only a regular file, through a temporary file and a
/// rename in the destination's directory; a FIFO, a device, a directory or
/// a link is refused and left as it was.
TEST_F(CacheCli, ExportRefusesToReplaceWhatIsNotARegularFile) {
  fs::path fifo = root / "fifo.kitebundle";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fs::path folder = root / "folder.kitebundle";
  fs::create_directories(folder / "inside");
  fs::path target = root / "target.txt";
  writeFile(target, "the link's target\n");
  fs::path link = root / "link.kitebundle";
  fs::create_symlink(target, link);
  std::vector<std::pair<fs::path, char>> refused = {{fifo, 'p'}, {folder, 'd'}, {link, 'l'}};
  // A character device like /dev/null (only root can make one; as root the
  // old code replaced /dev/full with a regular file).
  fs::path device = root / "null.kitebundle";
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0)
    refused.push_back({device, 'c'});

  for (const auto &[path, kind] : refused) {
    Result r = kite("cache export -o " + path.string() + d());
    EXPECT_EQ(r.status, 1) << path << ": " << r.out;
    EXPECT_NE(r.err.find("refusing to replace " + path.string()), std::string::npos) << r.err;
    EXPECT_EQ(kindOf(path), kind) << path << " was replaced";
  }
  EXPECT_EQ(readText(target), "the link's target\n");
  EXPECT_TRUE(fs::exists(folder / "inside"));
  EXPECT_NE(kite("cache export -o " + fifo.string() + d()).err.find("a FIFO"), std::string::npos);

  // A regular file is replaced, and no temporary file is left behind.
  fs::path bundle = root / "out" / "app.kitebundle";
  writeFile(bundle, "an old bundle\n");
  Result r = kite("cache export -o " + bundle.string() + d());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(cache::read_bundle(bundle).size(), 3u);
  for (const fs::directory_entry &f : fs::directory_iterator(bundle.parent_path()))
    EXPECT_EQ(f.path(), bundle) << "left behind";
  // /dev/null itself, only without root: as root a kite that regressed
  // would replace the machine's /dev/null (the device made above covers
  // root).
  if (::geteuid() != 0 && kindOf("/dev/null") == 'c') {
    r = kite("cache export -o /dev/null" + d());
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(kindOf("/dev/null"), 'c');
  }
}

/// `export -o` does not create missing directories unless asked to.
TEST_F(CacheCli, ExportDoesNotCreateMissingDirectories) {
  fs::path missing = root / "missing";
  fs::path bundle = missing / "sub" / "app.kitebundle";
  Result r = kite("cache export -o " + bundle.string() + d());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.err.find((missing / "sub").string() + " does not exist"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--parents"), std::string::npos) << "says how: " << r.err;
  EXPECT_FALSE(fs::exists(missing)) << "a directory was created";

  r = kite("cache export --parents -o " + bundle.string() + d());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(cache::read_bundle(bundle).size(), 3u);
  EXPECT_NE(kite("cache export --help").out.find("--parents"), std::string::npos);
}

/// ls reads the magic with a small read first, and refuses a file bigger
/// than an entry may be without reading it: a sparse 1.5 GiB junk file
/// and one that starts like an entry cost no memory.
TEST_F(CacheCli, ListDoesNotReadHugeFilesWhole) {
  fs::path keyDir = tunedFile.parent_path();
  fs::path junk = keyDir / "4444444444444444.kite";
  fs::path huge = keyDir / "5555555555555555.kite";
  writeFile(junk, "junk");
  writeFile(huge, std::string_view("KITEENTR\x01\x00\x00\x00", 12));
  fs::resize_file(junk, (uintmax_t(3) << 29));
  fs::resize_file(huge, (uintmax_t(3) << 29));

  long peak = kitePeakKiB("cache ls" + d());
  std::string out = readText(root / "stdout");
  ASSERT_GE(peak, 0) << readText(root / "stderr");
  EXPECT_LT(peak, 512 * 1024) << "KiB: a file was read whole";
  EXPECT_NE(lineWith(out, "4444444444").find("corrupt: not a kite cache entry"), std::string::npos)
      << out;
  EXPECT_NE(lineWith(out, "5555555555").find("corrupt: too large"), std::string::npos) << out;
  EXPECT_NE(out.find("6 entries (3 corrupt)"), std::string::npos) << out;

  peak = kitePeakKiB("cache show " + huge.string() + d());
  EXPECT_LT(peak, 512 * 1024);
  EXPECT_NE(readText(root / "stderr").find("is corrupt: too large"), std::string::npos)
      << readText(root / "stderr");
}

/// An entry whose config nests 100,000 levels deep is corrupt, not a stack
/// overflow (nlohmann's dump recurses per level) or gigabytes of output.
TEST_F(CacheCli, ShowRefusesADeeplyNestedConfig) {
  cache::Entry deep = makeEntry("softmax", cache::Source::tuned, 8192);
  deep.config = std::string(100000, '[') + std::string(100000, ']');
  deep.plan.config = deep.config;
  fs::path file = cache::entry_path(dir, deep);
  writeEntryBytes(file, deep);
  std::string id = cache::entry_id(deep);

  Result r = kite("cache show " + id + d());
  EXPECT_EQ(r.status, 1) << "a crash is not an error message: " << r.out.substr(0, 200);
  EXPECT_NE(r.err.find("is corrupt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nests deeper than 64 levels"), std::string::npos) << r.err;
  EXPECT_LT(r.out.size(), 4096u);
  r = kite("cache ls" + d());
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(lineWith(r.out, id.substr(0, 12)).find("corrupt"), std::string::npos) << r.out;
}

/// Strings from cache files are printed with their control characters and
/// other non-printable bytes escaped.
TEST_F(CacheCli, ControlCharactersArePrintedEscaped) {
  std::string name = "soft\x1b]0;owned\x07max\x1b[2J\x9b";
  cache::Entry e = makeEntry(name, cache::Source::tuned, 8192);
  e.plan.kernelName = name + "_kernel";
  e.plan.args[0].name = "x\r";
  e.config = "{\"num_warps\": \"\x1b[31m\"}";
  cache::store(e, dir);
  std::string id = cache::entry_id(e);
  for (const std::string &command : {"cache ls" + d(), "cache show " + id + d()}) {
    Result r = kite(command);
    ASSERT_EQ(r.status, 0) << command << ": " << r.err;
    for (char c : {'\x1b', '\x07', '\r', '\x9b'})
      EXPECT_EQ(r.out.find(c), std::string::npos)
          << command << " printed byte " << int(c) << " raw: " << r.out;
    EXPECT_NE(r.out.find("soft\\x1b]0;owned\\x07max\\x1b[2J\\x9b"), std::string::npos)
        << command << ": " << r.out;
  }
  EXPECT_NE(kite("cache show " + id + d()).out.find("x\\x0d=bf16"), std::string::npos);
}
