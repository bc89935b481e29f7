//===- Nvrtc.cpp - CUDA C++ to cubin or PTX with NVRTC --------------------===//
//
// This file implements compiling with a dlopen'd NVRTC: loading the library
// and resolving its entry points, the program as an RAII owner, the options
// kite passes, the in-memory headers, finding CUDA's include directory, and
// reporting a failed compile with its log and the saved source.
//
// CUDA's headers (cuda_fp16.h, cuda_bf16.h, CCCL) are read from disk through
// --include-path. Shipping them in memory too, as the device library is,
// would make kite independent of a toolkit install on the target machine;
// that is a later improvement if deployments need it (a deployment cache of
// cubins needs neither NVRTC nor the headers).
//
//===----------------------------------------------------------------------===//

#include "runtime/Nvrtc.h"

#include "runtime/EmbeddedHeaders.h"

#include <kite/cache.hpp>
#include <kite/kite.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fmt/format.h>
#include <nvrtc.h>

#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <system_error>

using namespace kite;
using namespace kite::runtime;
namespace fs = std::filesystem;

//===----------------------------------------------------------------------===//
// Loading NVRTC
//===----------------------------------------------------------------------===//

namespace {

#define KITE_NVRTC_FUNCTIONS(X)                                                                    \
  X(nvrtcGetErrorString)                                                                           \
  X(nvrtcVersion)                                                                                  \
  X(nvrtcCreateProgram)                                                                            \
  X(nvrtcDestroyProgram)                                                                           \
  X(nvrtcCompileProgram)                                                                           \
  X(nvrtcGetProgramLogSize)                                                                        \
  X(nvrtcGetProgramLog)                                                                            \
  X(nvrtcGetPTXSize)                                                                               \
  X(nvrtcGetPTX)                                                                                   \
  X(nvrtcGetCUBINSize)                                                                             \
  X(nvrtcGetCUBIN)

struct NvrtcApi {
#define KITE_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  KITE_NVRTC_FUNCTIONS(KITE_DECLARE_ENTRY)
#undef KITE_DECLARE_ENTRY
};

struct NvrtcLibrary {
  void *handle = nullptr;
  std::string libraryPath; // the file the dynamic loader picked
  std::string reason;      // why it is unusable; empty when usable
  NvrtcApi api;
};

const NvrtcLibrary &library() {
  // Loaded once and kept for the process.
  static const NvrtcLibrary *lib = [] {
    auto *l = new NvrtcLibrary();
    std::string errors;
    for (const char *name : {"libnvrtc.so.13", "libnvrtc.so"}) {
      dlerror();
      l->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (l->handle)
        break;
      const char *err = dlerror();
      errors += fmt::format("{}{}", errors.empty() ? "" : "; ", err ? err : name);
    }
    if (!l->handle) {
      l->reason = fmt::format("NVRTC could not be loaded ({}); kite compiles kernels at run "
                              "time with NVRTC from the CUDA toolkit (add its lib directory "
                              "to LD_LIBRARY_PATH), or runs cubins from a kite cache without it",
                              errors);
      return l;
    }
    std::string missing;
#define KITE_RESOLVE_ENTRY(name)                                                                   \
  l->api.name = reinterpret_cast<decltype(&::name)>(dlsym(l->handle, #name));                      \
  if (!l->api.name)                                                                                \
    missing += (missing.empty() ? "" : ", ") + std::string(#name);
    KITE_NVRTC_FUNCTIONS(KITE_RESOLVE_ENTRY)
#undef KITE_RESOLVE_ENTRY
    Dl_info info;
    if (l->api.nvrtcVersion && dladdr(reinterpret_cast<void *>(l->api.nvrtcVersion), &info) &&
        info.dli_fname)
      l->libraryPath = info.dli_fname;
    if (!missing.empty())
      l->reason = fmt::format("the NVRTC library {} lacks {}", l->libraryPath, missing);
    return l;
  }();
  return *lib;
}

const NvrtcApi &nvrtc() {
  const NvrtcLibrary &lib = library();
  if (!lib.reason.empty())
    throw Error(lib.reason);
  return lib.api;
}

/// An NVRTC program, destroyed on scope exit.
class Program {
public:
  Program(std::string_view source, const std::string &name,
          const std::vector<const char *> &headerTexts,
          const std::vector<const char *> &headerNames) {
    std::string text(source); // NVRTC wants a NUL-terminated source
    nvrtcResult r = nvrtc().nvrtcCreateProgram(&program_, text.c_str(), name.c_str(),
                                               int(headerTexts.size()), headerTexts.data(),
                                               headerNames.data());
    if (r != NVRTC_SUCCESS)
      throw Error(fmt::format("NVRTC could not create program {}: {}", name,
                              nvrtc().nvrtcGetErrorString(r)));
  }
  ~Program() {
    if (program_)
      nvrtc().nvrtcDestroyProgram(&program_);
  }
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;
  nvrtcProgram get() const { return program_; }

private:
  nvrtcProgram program_ = nullptr;
};

void checkNvrtc(nvrtcResult r, std::string_view what, std::string_view name) {
  if (r != NVRTC_SUCCESS)
    throw Error(fmt::format("NVRTC error {} while {} for {}", nvrtc().nvrtcGetErrorString(r),
                            what, name));
}

std::string programLog(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtc().nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1)
    return {};
  std::string log(size, '\0');
  if (nvrtc().nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS)
    return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

/// A file name made of the program name's safe characters.
std::string safeFileName(std::string_view name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c
                                                                                             : '_';
  if (s.empty() || s == "." || s == "..")
    s = "kernel";
  return s;
}

bool isDir(const fs::path &p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

/// Saves a failing source (options appended as a trailing comment, so the
/// log's line numbers still match) and returns where, or "" if it could not.
/// The file is written under a temporary name (created, never opened
/// through a link) and renamed into place, so a link or FIFO planted at
/// the name is replaced, never written through.
std::string saveFailedSource(std::string_view source, std::string_view name,
                             const std::vector<std::string> &options) {
  fs::path dir = failedSourceDir();
  if (dir.empty())
    return {};
  fs::path file = dir / (safeFileName(name) + ".cu");
  std::string text(source);
  if (!text.empty() && text.back() != '\n')
    text += '\n';
  text += "// kite: NVRTC options:";
  for (const std::string &o : options)
    text += ' ' + o;
  text += '\n';
  fs::path temp = dir / fmt::format(".{}.{}.tmp", file.filename().string(), ::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return {};
  bool ok = true;
  for (size_t done = 0; ok && done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    ok = n > 0;
    done += ok ? size_t(n) : 0;
  }
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(temp.c_str(), file.c_str()) != 0) {
    ::unlink(temp.c_str());
    return {};
  }
  return file.string();
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

enum class Output { cubin, ptx };

NvrtcOutput compile(std::string_view source, std::string_view name, std::string_view arch,
                    const NvrtcOptions &options, Output output) {
  // A cubin targets a real architecture (sm_90a), PTX a virtual one
  // (compute_90a); accept either spelling for both.
  std::string target(arch);
  if (output == Output::cubin && target.starts_with("compute_"))
    target = "sm_" + target.substr(8);
  if (output == Output::ptx && target.starts_with("sm_"))
    target = "compute_" + target.substr(3);
  if (!target.starts_with("sm_") && !target.starts_with("compute_"))
    throw Error(fmt::format("NVRTC target '{}' for {} is not an architecture such as sm_90a",
                            arch, name));

  NvrtcOutput result;
  std::vector<std::string> &opts = result.options;
  opts.push_back("-std=" + options.standard);
  opts.push_back("--gpu-architecture=" + target);
  if (options.defaultDevice)
    opts.push_back("-default-device");
  if (options.lineinfo)
    opts.push_back("-lineinfo");
  for (const std::string &dir : cudaIncludeDirs())
    opts.push_back("--include-path=" + dir);
  opts.insert(opts.end(), options.extra.begin(), options.extra.end());

  std::vector<const char *> headerTexts, headerNames;
  for (const EmbeddedFile &f : deviceHeaders()) {
    headerNames.push_back(f.name);
    headerTexts.push_back(f.text);
  }
  for (const auto &[hname, text] : options.headers) {
    headerNames.push_back(hname.c_str());
    headerTexts.push_back(text.c_str());
  }

  std::string programName = std::string(name) + ".cu";
  Program program(source, programName, headerTexts, headerNames);
  std::vector<const char *> argv;
  for (const std::string &o : opts)
    argv.push_back(o.c_str());
  nvrtcResult r = nvrtc().nvrtcCompileProgram(program.get(), int(argv.size()), argv.data());
  result.log = programLog(program.get());
  if (r != NVRTC_SUCCESS) {
    // ptxas could not fit an instruction's operands (a wgmma's sums) in the
    // registers __launch_bounds__ leaves a thread: the config's programs an
    // SM (min_programs_per_sm) do not fit the kernel, which is a rejection.
    if (size_t at = result.log.find("(C7602)"); at != std::string::npos) {
      size_t begin = result.log.rfind('\n', at), end = result.log.find('\n', at);
      begin = begin == std::string::npos ? 0 : begin + 1;
      throw ConfigRejected(fmt::format("{} for {}: config does not fit: {}", name, target,
                                       result.log.substr(begin, end - begin)));
    }
    std::string saved = saveFailedSource(source, name, opts);
    std::string where = saved.empty()
                            ? std::string("the source could not be saved (no writable "
                                          "$KITE_CACHE_DIR, ~/.cache/kite or temp directory)")
                            : fmt::format("the source is saved in {}", saved);
    throw Error(fmt::format("NVRTC could not compile {} for {} ({}):\n{}\n{}", name, target,
                            nvrtc().nvrtcGetErrorString(r),
                            result.log.empty() ? "(no log)" : result.log, where));
  }

  size_t size = 0;
  if (output == Output::cubin) {
    checkNvrtc(nvrtc().nvrtcGetCUBINSize(program.get(), &size), "reading the cubin size", name);
    result.binary.resize(size);
    checkNvrtc(nvrtc().nvrtcGetCUBIN(program.get(), reinterpret_cast<char *>(result.binary.data())),
               "reading the cubin", name);
  } else {
    checkNvrtc(nvrtc().nvrtcGetPTXSize(program.get(), &size), "reading the PTX size", name);
    result.binary.resize(size); // includes the terminating NUL
    checkNvrtc(nvrtc().nvrtcGetPTX(program.get(), reinterpret_cast<char *>(result.binary.data())),
               "reading the PTX", name);
  }
  return result;
}

} // namespace

NvrtcOutput kite::runtime::compileToCubin(std::string_view source, std::string_view name,
                                          std::string_view arch, const NvrtcOptions &options) {
  return compile(source, name, arch, options, Output::cubin);
}

NvrtcOutput kite::runtime::compileToPtx(std::string_view source, std::string_view name,
                                        std::string_view arch, const NvrtcOptions &options) {
  return compile(source, name, arch, options, Output::ptx);
}

bool kite::runtime::nvrtcAvailable() { return library().reason.empty(); }

std::string kite::runtime::nvrtcUnavailableReason() { return library().reason; }

std::pair<int, int> kite::runtime::nvrtcVersion() {
  int major = 0, minor = 0;
  checkNvrtc(nvrtc().nvrtcVersion(&major, &minor), "reading the version", "NVRTC");
  return {major, minor};
}

const std::vector<std::string> &kite::runtime::cudaIncludeDirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<fs::path> candidates;
    for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char *v = std::getenv(var); v && *v)
        candidates.push_back(fs::path(v) / "include");
    // Beside the NVRTC that was loaded: <toolkit>/lib64/libnvrtc.so.13 with
    // <toolkit>/include, or the targets/<arch>/{lib,include} layout.
    const NvrtcLibrary &lib = library();
    if (!lib.libraryPath.empty()) {
      std::error_code ec;
      fs::path libDir = fs::canonical(fs::path(lib.libraryPath), ec).parent_path();
      if (!ec) {
        candidates.push_back(libDir.parent_path() / "include");
        candidates.push_back(libDir.parent_path() / "targets" / "x86_64-linux" / "include");
      }
    }
    candidates.push_back("/usr/local/cuda/include");
    std::vector<std::string> found;
    for (const fs::path &dir : candidates) {
      std::error_code ec;
      if (fs::exists(dir / "cuda_fp16.h", ec)) {
        found.push_back(dir.string());
        if (isDir(dir / "cccl"))
          found.push_back((dir / "cccl").string());
        break;
      }
    }
    return found;
  }();
  return dirs;
}

fs::path kite::runtime::failedSourceDir() {
  // In the cache, or a directory of this user's own under the temporary
  // directory (a shared /tmp/kite could be anyone's, or a link).
  std::vector<fs::path> candidates;
  if (fs::path root = cache::directory(); !root.empty())
    candidates.push_back(root / "failed");
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  candidates.push_back((ec ? fs::path("/tmp") : tmp) / fmt::format("kite-{}", ::getuid()) /
                       "failed");
  auto realDirOfOurs = [](const fs::path &p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid();
  };
  for (size_t i = 0; i < candidates.size(); ++i) {
    const fs::path &dir = candidates[i];
    bool inTmp = i + 1 == candidates.size();
    std::error_code e;
    fs::create_directories(dir, e);
    if (e || !realDirOfOurs(dir) || (inTmp && !realDirOfOurs(dir.parent_path())))
      continue;
    if (inTmp)
      ::chmod(dir.parent_path().c_str(), 0700);
    return dir;
  }
  return {};
}

fs::path kite::runtime::cudaOverrideDir() {
  const char *v = std::getenv("KITE_CUDA_OVERRIDE");
  return v && *v ? fs::path(v) : fs::path();
}

std::optional<std::string> kite::runtime::cudaOverride(std::string_view symbol) {
  fs::path dir = cudaOverrideDir();
  if (dir.empty())
    return std::nullopt;
  fs::path file = dir / (std::string(symbol) + ".cu");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof())
    throw Error(fmt::format("KITE_CUDA_OVERRIDE: could not read {}", file.string()));
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  if (reported.insert(std::string(symbol)).second)
    std::fprintf(stderr, "kite: KITE_CUDA_OVERRIDE: compiling %s instead of %.*s's generated source\n",
                 file.c_str(), int(symbol.size()), symbol.data());
  return text;
}
