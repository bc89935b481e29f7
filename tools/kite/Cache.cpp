//===- Cache.cpp - `kite cache` -------------------------------------------===//
//
// This file implements `kite cache ls|show|rm|export`, the command line over
// the runtime's cache of compiled plans (include/kite/cache.hpp):
//
//   ls      one line per entry: id, kernel, source, arch, time, size, args;
//           an unreadable file is listed as corrupt with the reason
//   show    every field of one entry (an id from ls, or a file), with its
//           config as JSON
//   rm      entries by id, by --kernel, or --all
//   export  the entries (or one kernel's) into a bundle for kite::load_bundle
//
// Each takes --dir (default: $KITE_CACHE_DIR, else ~/.cache/kite). Exit
// statuses: 0 success, 1 a user error (no such entry, a corrupt entry to
// show, a file rm may not delete, nothing to export, a failed write), 2 a
// usage error.
//
// The cache may hold anything (it may be shared, or pointed at the wrong
// directory), so: rm deletes only entry files of the cache, through the
// runtime's checks (cache::remove_entry: no link followed, the entry magic
// present), and refuses everything else; export replaces only a regular
// file and creates directories only with --parents; every string from a
// cache file is printed through printable(), so that a kernel name cannot
// drive the terminal.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "runtime/ByteIO.h"

#include <kite/cache.hpp>

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ctime>
#include <string>
#include <string_view>
#include <memory>
#include <set>

namespace fs = std::filesystem;
using namespace kite;
using kite::runtime::printable;

namespace {

struct CacheOptions {
  std::string dir;
  std::string kernel;
  std::vector<std::string> entries;
  bool all = false;
  bool parents = false;
  std::string output;
};

/// Prints an error; messages quote names and paths from cache files.
int error(std::string_view command, const std::string &message) {
  std::string prefix = "kite cache " + std::string(command);
  llvm::WithColor::error(llvm::errs(), prefix) << printable(message) << "\n";
  return cli::kUserError;
}

void warning(std::string_view command, const std::string &message) {
  std::string prefix = "kite cache " + std::string(command);
  llvm::WithColor::warning(llvm::errs(), prefix) << printable(message) << "\n";
}

/// Says what a walk of the cache passed by (links, FIFOs where entries would be).
void warnSkipped(std::string_view command, const std::vector<cache::Skipped> &skipped) {
  for (const cache::Skipped &s : skipped)
    warning(command, "skipped " + s.path.string() + ": " + s.why);
}

/// `message` without a leading `prefix`.
std::string withoutPrefix(std::string message, const std::string &prefix) {
  if (message.starts_with(prefix))
    message.erase(0, prefix.size());
  return message;
}

/// The cache directory to work on, or empty (with a message) when it is off.
fs::path cacheDir(const CacheOptions &opts, const char *command) {
  fs::path dir = opts.dir.empty() ? cache::directory() : fs::path(opts.dir);
  if (dir.empty())
    error(command, "the cache directory is off (KITE_CACHE_DIR=off or no home directory); give "
                   "one with --dir DIR");
  return dir;
}

std::string humanBytes(uintmax_t n) {
  if (n < 1024)
    return fmt::format("{} B", n);
  if (n < 1024 * 1024)
    return fmt::format("{:.1f} KiB", double(n) / 1024);
  return fmt::format("{:.1f} MiB", double(n) / (1024 * 1024));
}

std::string argsText(const KernelPlan &plan) {
  std::vector<std::string> args;
  for (const ArgSpec &a : plan.args)
    args.push_back(a.str());
  return printable(fmt::format("{}", fmt::join(args, " ")));
}

std::string timeText(const cache::Entry &e) {
  return e.timeMs ? fmt::format("{:.4g} ms", *e.timeMs) : "-";
}

std::string dateText(int64_t seconds) {
  std::time_t t = std::time_t(seconds);
  std::tm tm{};
  if (!gmtime_r(&t, &tm))
    return fmt::format("{} (Unix time)", seconds);
  char buffer[64];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer;
}

std::string versionText(int v) {
  return v == 0 ? std::string("unknown") : fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::string shortId(const std::string &id) { return id.substr(0, 12); }

/// Whether an ENTRY argument names a file rather than an id.
bool looksLikeFile(const std::string &what) {
  std::error_code ec;
  return what.find('/') != std::string::npos || what.ends_with(".kite") ||
         fs::is_regular_file(what, ec);
}

/// The entries an ENTRY argument names: a file, or the listed entries whose
/// id starts with it. Prints an error and returns nothing when there is no
/// such entry or the prefix is ambiguous.
std::optional<cache::Listed> findEntry(const std::string &what, const fs::path &dir,
                                       const std::vector<cache::Listed> &listed,
                                       const char *command) {
  std::error_code ec;
  if (looksLikeFile(what)) {
    if (!fs::is_regular_file(what, ec)) {
      error(command, "no cache entry file '" + what + "'");
      return std::nullopt;
    }
    cache::Listed l;
    l.path = what;
    l.id = fs::path(what).stem().string();
    l.bytes = fs::file_size(what, ec);
    try {
      l.entry = cache::read_entry(what);
    } catch (const Error &e) {
      l.error = withoutPrefix(e.what(), "cache entry " + what + ": ");
    }
    return l;
  }
  std::vector<const cache::Listed *> found;
  for (const cache::Listed &l : listed)
    if (!what.empty() && l.id.starts_with(what))
      found.push_back(&l);
  if (found.empty()) {
    error(command, "no cache entry '" + what + "' in " + dir.string() +
                       " (`kite cache ls` lists the ids)");
    return std::nullopt;
  }
  if (found.size() > 1) {
    std::string ids;
    for (const cache::Listed *l : found)
      ids += " " + shortId(l->id);
    error(command, "'" + what + "' is ambiguous: it starts the ids" + ids +
                       "; give more digits");
    return std::nullopt;
  }
  return *found.front();
}

//===----------------------------------------------------------------------===//
// ls
//===----------------------------------------------------------------------===//

int runList(const CacheOptions &opts) {
  fs::path dir = cacheDir(opts, "ls");
  if (dir.empty())
    return cli::kUserError;
  std::vector<cache::Skipped> skipped;
  std::vector<cache::Listed> listed = cache::list(dir, &skipped);
  warnSkipped("ls", skipped);
  size_t shown = 0, corrupt = 0;
  uintmax_t bytes = 0;
  for (const cache::Listed &l : listed) {
    if (!opts.kernel.empty() && (!l.entry || l.entry->kernel != opts.kernel))
      continue;
    if (shown++ == 0)
      llvm::outs() << fmt::format("{:<12}  {:<16} {:<8} {:<8} {:>11} {:>10}  {}\n", "ID",
                                  "KERNEL", "SOURCE", "ARCH", "TIME", "SIZE", "ARGS");
    bytes += l.bytes;
    if (!l.entry) {
      ++corrupt;
      llvm::outs() << fmt::format("{:<12}  corrupt: {} ({})\n", printable(shortId(l.id)),
                                  printable(l.error), printable(l.path.string()));
      continue;
    }
    const cache::Entry &e = *l.entry;
    llvm::outs() << fmt::format("{:<12}  {:<16} {:<8} {:<8} {:>11} {:>10}  {}\n",
                                printable(shortId(l.id)), printable(e.kernel),
                                cache::source_name(e.source), printable(e.target.arch),
                                timeText(e), humanBytes(l.bytes), argsText(e.plan));
  }
  if (shown == 0)
    llvm::outs() << "no entries"
                 << (opts.kernel.empty() ? "" : " of kernel " + printable(opts.kernel)) << " in "
                 << printable(dir.string()) << "\n";
  else
    llvm::outs() << fmt::format("{} entr{}{}, {} in {}\n", shown, shown == 1 ? "y" : "ies",
                                corrupt ? fmt::format(" ({} corrupt)", corrupt) : "",
                                humanBytes(bytes), printable(dir.string()));
  return cli::kSuccess;
}

//===----------------------------------------------------------------------===//
// show
//===----------------------------------------------------------------------===//

int runShow(const CacheOptions &opts) {
  const std::string &what = opts.entries.front();
  fs::path dir;
  std::vector<cache::Listed> listed;
  if (!looksLikeFile(what)) {
    dir = cacheDir(opts, "show");
    if (dir.empty())
      return cli::kUserError;
    listed = cache::list(dir);
  }
  std::optional<cache::Listed> l = findEntry(what, dir, listed, "show");
  if (!l)
    return cli::kUserError;
  if (!l->entry)
    return error("show", "cache entry " + l->path.string() + " is corrupt: " + l->error);
  const cache::Entry &e = *l->entry;
  const KernelPlan &p = e.plan;
  // Every value may come from the file: printed escaped.
  auto field = [](std::string_view name, const std::string &value) {
    llvm::outs() << fmt::format("{:<11} {}\n", std::string(name) + ":", printable(value));
  };
  field("id", l->id);
  field("file", l->path.string());
  field("kernel", e.kernel);
  field("ir hash", e.irHash);
  field("args", argsText(p));
  field("arch", fmt::format("{} ({} SMs)", e.target.arch, e.target.smCount));
  field("nvrtc", versionText(e.target.nvrtcVersion));
  field("driver", versionText(e.target.driverVersion));
  field("kite", e.kiteVersion);
  field("source", std::string(cache::source_name(e.source)));
  if (!e.pinnedConfig.empty())
    field("pinned", e.pinnedConfig);
  field("time", timeText(e));
  if (e.source == cache::Source::tuned)
    field("tuning", fmt::format("{} configs searched in {:.1f} s", e.configsSearched,
                                e.tuningSeconds));
  field("created", dateText(e.created));
  field("binary", fmt::format("{} for {}, {}, entry point {}",
                              p.binaryKind == KernelPlan::Binary::cubin ? "cubin" : "PTX",
                              p.arch, humanBytes(p.binary.size()), p.kernelName));
  field("launch", fmt::format("grid [{}]{}, block [{}], {} bytes of dynamic shared memory",
                              fmt::join(p.grid, ", "),
                              p.persistent ? " (program ids of persistent programs, as many as "
                                             "the SMs hold at once)"
                                           : "",
                              fmt::join(p.block, ", "), p.dynamicSharedBytes));
  field("size", humanBytes(l->bytes));
  // read_entry has refused configs nested deeper than kMaxConfigDepth (dump
  // recurses once per level); invalid UTF-8 in a string is replaced rather
  // than thrown, and DEL and C1 controls, which JSON leaves raw, escaped.
  std::string config = e.config.empty() ? std::string("{}") : e.config;
  nlohmann::json json = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
  std::string text = json.is_discarded()
                         ? config
                         : json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  llvm::outs() << "config:\n" << printable(text) << "\n";
  return cli::kSuccess;
}

//===----------------------------------------------------------------------===//
// rm
//===----------------------------------------------------------------------===//

int runRemove(const CacheOptions &opts) {
  int given = !opts.entries.empty() + !opts.kernel.empty() + opts.all;
  if (given != 1) {
    llvm::WithColor::error(llvm::errs(), "kite cache rm")
        << "give entry ids, --kernel NAME or --all (exactly one of them)\n";
    return cli::kUsageError;
  }
  fs::path dir = cacheDir(opts, "rm");
  if (dir.empty())
    return cli::kUserError;
  std::vector<cache::Skipped> skipped;
  std::vector<cache::Listed> listed = cache::list(dir, &skipped);
  if (!opts.all && opts.kernel.empty())
    skipped.clear(); // what the walk passed by is not what was named
  std::vector<fs::path> doomed;
  int status = cli::kSuccess;
  if (opts.all) {
    for (const cache::Listed &l : listed)
      doomed.push_back(l.path);
  } else if (!opts.kernel.empty()) {
    for (const cache::Listed &l : listed)
      if (l.entry && l.entry->kernel == opts.kernel)
        doomed.push_back(l.path);
    if (doomed.empty())
      status = error("rm", "no entries of kernel '" + opts.kernel + "' in " + dir.string());
  } else {
    // Named entries: each must be an entry file of the cache, or nothing
    // is removed (`kite cache rm ./main.cpp` is a mistake, not a request).
    for (const std::string &what : opts.entries) {
      if (looksLikeFile(what)) {
        doomed.push_back(what);
        continue;
      }
      std::optional<cache::Listed> l = findEntry(what, dir, listed, "rm");
      if (l)
        doomed.push_back(l->path);
      else
        status = cli::kUserError;
    }
    for (const fs::path &file : doomed) {
      try {
        cache::check_removable(file, dir);
      } catch (const Error &e) {
        status = error("rm", e.what());
      }
    }
    if (status != cli::kSuccess)
      doomed.clear();
  }
  size_t removed = 0;
  std::set<fs::path> seen;
  for (const fs::path &file : doomed) {
    if (!seen.insert(file).second)
      continue;
    try {
      cache::remove_entry(file, dir);
      ++removed;
    } catch (const Error &e) {
      // A walk passes by what is not an entry (a junk file named like one);
      // an entry that was asked for by kernel and cannot go is an error.
      if (opts.all)
        skipped.push_back({file, withoutPrefix(e.what(), "kite: not removing " +
                                                             file.string() + ": ")});
      else
        status = error("rm", e.what());
    }
  }
  warnSkipped("rm", skipped);
  llvm::outs() << fmt::format("removed {} entr{} from {}{}\n", removed, removed == 1 ? "y" : "ies",
                              printable(dir.string()),
                              skipped.empty() ? std::string()
                                              : fmt::format("; skipped {} that {} not entry "
                                                            "files (listed above)",
                                                            skipped.size(),
                                                            skipped.size() == 1 ? "is" : "are"));
  return status;
}

//===----------------------------------------------------------------------===//
// export
//===----------------------------------------------------------------------===//

int runExport(const CacheOptions &opts) {
  fs::path dir = cacheDir(opts, "export");
  if (dir.empty())
    return cli::kUserError;
  std::vector<cache::Entry> entries;
  for (cache::Listed &l : cache::list(dir)) {
    if (!l.entry) {
      cache::report(fmt::format("not exporting {}: {}", l.path.string(), l.error));
      continue;
    }
    if (opts.kernel.empty() || l.entry->kernel == opts.kernel)
      entries.push_back(std::move(*l.entry));
  }
  if (entries.empty())
    return error("export", "nothing to export: no entries" +
                               (opts.kernel.empty() ? std::string()
                                                    : " of kernel '" + opts.kernel + "'") +
                               " in " + dir.string());
  // The bundle's directory must exist unless --parents asks for it (as
  // `mkdir -p`): a mistyped -o is an error, not a new directory tree.
  fs::path parent = fs::path(opts.output).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::exists(parent, ec)) {
    if (!opts.parents)
      return error("export", "cannot write " + opts.output + ": the directory " + parent.string() +
                                 " does not exist; create it, or give --parents to create it");
    fs::create_directories(parent, ec);
    if (ec)
      return error("export", "cannot create the directory " + parent.string() + " for " +
                                 opts.output + ": " + ec.message());
  }
  try {
    cache::write_bundle(opts.output, entries);
  } catch (const Error &e) {
    return error("export", e.what());
  }
  llvm::outs() << fmt::format("wrote {} entr{} to {}\n", entries.size(),
                              entries.size() == 1 ? "y" : "ies", opts.output);
  return cli::kSuccess;
}

} // namespace

void kite::cli::addCacheCommand(CLI::App &app, Context &context) {
  CLI::App *cmd = app.add_subcommand(
      "cache", "List, show, remove and export the cached compiled kernels (plans)");
  cmd->require_subcommand(1);
  cmd->footer("The cache directory is $KITE_CACHE_DIR, else ~/.cache/kite "
              "(KITE_CACHE_DIR=off turns it off).");
  auto addDir = [](CLI::App *sub, CacheOptions &opts) {
    sub->add_option("--dir", opts.dir,
                    "The cache directory (default: $KITE_CACHE_DIR, else ~/.cache/kite)");
  };

  auto ls = std::make_shared<CacheOptions>();
  CLI::App *lsCmd = cmd->add_subcommand("ls", "List the entries, one per line (corrupt files too)");
  addDir(lsCmd, *ls);
  lsCmd->add_option("--kernel", ls->kernel, "Only this kernel's entries");
  lsCmd->callback([ls, &context] { context.exitCode = runList(*ls); });

  auto show = std::make_shared<CacheOptions>();
  CLI::App *showCmd = cmd->add_subcommand("show", "Show one entry's fields and config");
  showCmd->add_option("entry", show->entries, "An entry id (or a prefix of one) from `kite cache "
                                              "ls`, or an entry file")
      ->required()
      ->expected(1);
  addDir(showCmd, *show);
  showCmd->callback([show, &context] { context.exitCode = runShow(*show); });

  auto rm = std::make_shared<CacheOptions>();
  CLI::App *rmCmd = cmd->add_subcommand(
      "rm", "Remove entries by id, by kernel, or all of them (only entry files of the cache)");
  rmCmd->add_option("entries", rm->entries, "Entry ids (or prefixes) from `kite cache ls`, or "
                                            "entry files");
  rmCmd->add_option("--kernel", rm->kernel, "Remove every entry of this kernel");
  rmCmd->add_flag("--all", rm->all,
                  "Remove every entry (corrupt ones too); files that are not entries, and "
                  "symbolic links, are left and reported");
  addDir(rmCmd, *rm);
  rmCmd->callback([rm, &context] { context.exitCode = runRemove(*rm); });

  auto exp = std::make_shared<CacheOptions>();
  CLI::App *expCmd = cmd->add_subcommand(
      "export", "Write the entries into one bundle file, for kite::load_bundle");
  expCmd->add_option("-o,--output", exp->output,
                     "The bundle file to write (.kitebundle); replaces only a regular file")
      ->required();
  expCmd->add_option("--kernel", exp->kernel, "Only this kernel's entries");
  expCmd->add_flag("--parents", exp->parents,
                   "Create the output's missing parent directories (without it a missing "
                   "directory is an error)");
  addDir(expCmd, *exp);
  expCmd->callback([exp, &context] { context.exitCode = runExport(*exp); });
}
