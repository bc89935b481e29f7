//===- Worker.cpp - benchmarking in a worker process ----------------------===//
//
// This file implements WorkerBench and the worker's loop (see Worker.h).
//
//===----------------------------------------------------------------------===//

#include "autotune/Worker.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using json = nlohmann::json;
using namespace kite;
using namespace kite::autotune;

namespace {

constexpr const char *kWorkerFlag = "--kite-autotune-worker";

enum Kind : uint32_t { kSetup = 1, kEvaluate = 2, kTime = 3, kReply = 4 };

struct Frame {
  uint32_t kind = 0;
  json meta;
  std::vector<uint8_t> blob;
};

/// Writes all of `n` bytes; false on a closed pipe.
bool writeAll(int fd, const void *data, size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/// Reads exactly `n` bytes before `deadline` (none: no deadline); false on
/// end of file, error or timeout (`timedOut` says which).
bool readAll(int fd, void *data, size_t n,
             std::optional<std::chrono::steady_clock::time_point> deadline, bool &timedOut) {
  char *p = static_cast<char *>(data);
  while (n) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      *deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) {
        timedOut = true;
        return false;
      }
      pollfd pfd{fd, POLLIN, 0};
      int r = ::poll(&pfd, 1, (int)std::min<long long>(left, 1 << 30));
      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0) {
        timedOut = true;
        return false;
      }
      if (r < 0)
        return false;
    }
    ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    p += got;
    n -= (size_t)got;
  }
  return true;
}

bool sendFrame(int fd, const Frame &f) {
  std::string text = f.meta.dump();
  uint32_t kind = f.kind, jsonLen = (uint32_t)text.size();
  uint64_t blobLen = f.blob.size();
  return writeAll(fd, &kind, 4) && writeAll(fd, &jsonLen, 4) && writeAll(fd, &blobLen, 8) &&
         writeAll(fd, text.data(), text.size()) && writeAll(fd, f.blob.data(), f.blob.size());
}

std::optional<Frame> receiveFrame(int fd,
                                  std::optional<std::chrono::steady_clock::time_point> deadline,
                                  bool &timedOut) {
  uint32_t kind = 0, jsonLen = 0;
  uint64_t blobLen = 0;
  if (!readAll(fd, &kind, 4, deadline, timedOut) || !readAll(fd, &jsonLen, 4, deadline, timedOut) ||
      !readAll(fd, &blobLen, 8, deadline, timedOut))
    return std::nullopt;
  if (jsonLen > (64u << 20) || blobLen > (uint64_t(1) << 32))
    return std::nullopt;
  std::string text(jsonLen, '\0');
  Frame f;
  f.kind = kind;
  f.blob.resize(blobLen);
  if (!readAll(fd, text.data(), jsonLen, deadline, timedOut) ||
      !readAll(fd, f.blob.data(), blobLen, deadline, timedOut))
    return std::nullopt;
  f.meta = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (f.meta.is_discarded())
    return std::nullopt;
  return f;
}

json settingsToJson(const BenchSettings &s) {
  json ranges = json::object();
  for (const auto &[name, r] : s.intRanges)
    ranges[name] = {r.first, r.second};
  return {{"warmup", s.warmup},   {"min_runs", s.minRuns}, {"max_runs", s.maxRuns},
          {"target_ms", s.targetMs}, {"flush_l2", s.flushL2}, {"seed", s.seed},
          {"int_ranges", ranges}};
}

BenchSettings settingsFromJson(const json &j) {
  BenchSettings s;
  s.warmup = j.value("warmup", s.warmup);
  s.minRuns = j.value("min_runs", s.minRuns);
  s.maxRuns = j.value("max_runs", s.maxRuns);
  s.targetMs = j.value("target_ms", s.targetMs);
  s.flushL2 = j.value("flush_l2", s.flushL2);
  s.seed = j.value("seed", s.seed);
  if (j.contains("int_ranges"))
    for (auto &[name, r] : j["int_ranges"].items())
      s.intRanges[name] = {r[0].get<int64_t>(), r[1].get<int64_t>()};
  return s;
}

const char *statusName(Evaluation::Status s) {
  switch (s) {
  case Evaluation::Status::ok:
    return "ok";
  case Evaluation::Status::rejected:
    return "rejected";
  case Evaluation::Status::failed:
    return "failed";
  case Evaluation::Status::wrong:
    return "wrong";
  case Evaluation::Status::skipped:
    return "skipped";
  }
  return "failed";
}

Evaluation::Status statusFrom(const std::string &s) {
  if (s == "ok")
    return Evaluation::Status::ok;
  if (s == "rejected")
    return Evaluation::Status::rejected;
  if (s == "wrong")
    return Evaluation::Status::wrong;
  if (s == "skipped")
    return Evaluation::Status::skipped;
  return Evaluation::Status::failed;
}

/// The worker: serves frames until its input closes.
int workerLoop(int in, int out) {
  std::unique_ptr<PlanBench> bench;
  for (;;) {
    bool timedOut = false;
    std::optional<Frame> f = receiveFrame(in, std::nullopt, timedOut);
    if (!f)
      return 0; // the parent is done (or gone)
    Frame reply{kReply, json::object(), {}};
    try {
      switch (f->kind) {
      case kSetup: {
        KernelPlan plan = deserialize(f->blob);
        std::vector<ArgSpec> args = plan.args;
        const json &values = f->meta["values"];
        if (!values.is_array() || values.size() != args.size())
          throw Error("the setup frame's values do not match the plan's arguments");
        const json &sizes = f->meta.value("sizes", json::array());
        for (size_t i = 0; i < args.size(); ++i) {
          if (!values[i].is_null() && !args[i].is_tensor())
            args[i].value = values[i].get<double>();
          if (args[i].is_tensor() && !args[i].divisors.empty()) {
            // A dynamic-shapes plan: the sizes to run are the launch's.
            if (i >= sizes.size() || !sizes[i].is_array())
              throw Error("the setup frame lacks the sizes of a dynamic-shapes argument");
            std::vector<int64_t> given = sizes[i].get<std::vector<int64_t>>();
            if (given.size() != args[i].sizes.size())
              throw Error("the setup frame's sizes do not match the plan's rank");
            for (size_t d = 0; d < given.size(); ++d)
              if (!args[i].size_fits(d, given[d]))
                throw Error("the setup frame's sizes are not of the plan's shape class");
            args[i] = ArgSpec::tensor(args[i].name, args[i].dtype, given, {}, args[i].alignment);
          }
        }
        bench = std::make_unique<PlanBench>(std::move(args), settingsFromJson(f->meta["settings"]),
                                            f->meta.value("device", 0));
        bench->setReference(plan);
        reply.meta["ok"] = true;
        break;
      }
      case kEvaluate: {
        if (!bench)
          throw Error("the worker has no reference yet");
        Evaluation e = bench->evaluate(deserialize(f->blob), f->meta.value("inject_fault", false),
                                       f->meta.value("cutoff_ms", 0.0));
        reply.meta = {{"status", statusName(e.status)}, {"ms", e.ms}, {"message", e.message}};
        if (bench->broken()) {
          // The context is gone: answer, then end; the parent restarts us.
          reply.meta["broken"] = true;
          sendFrame(out, reply);
          return 3;
        }
        break;
      }
      case kTime: {
        if (!bench)
          throw Error("the worker has no reference yet");
        reply.meta["ms"] = bench->time(deserialize(f->blob), f->meta.value("runs", 20));
        break;
      }
      default:
        throw Error(fmt::format("unknown message kind {}", f->kind));
      }
    } catch (const std::exception &e) {
      reply.meta = {{"ok", false}, {"status", "failed"}, {"error", e.what()}, {"message", e.what()}};
    }
    if (!sendFrame(out, reply))
      return 0;
  }
}

std::string describeExit(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status))
    return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "stopped";
}

} // namespace

struct WorkerBench::Process {
  pid_t pid = -1;
  int toChild = -1, fromChild = -1;

  /// Ends the child (closing its input first) and says how it ended.
  std::string finish(bool kill) {
    if (toChild >= 0)
      ::close(toChild);
    if (fromChild >= 0)
      ::close(fromChild);
    toChild = fromChild = -1;
    if (pid <= 0)
      return "";
    if (kill)
      ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    return describeExit(status);
  }
};

WorkerBench::WorkerBench(BenchSettings settings, int device, std::string executable)
    : settings_(std::move(settings)), device_(device), executable_(std::move(executable)) {
  if (executable_.empty())
    executable_ = "/proc/self/exe";
}

WorkerBench::~WorkerBench() { stop(); }

void WorkerBench::stop() {
  if (process_)
    process_->finish(false);
  process_.reset();
}

void WorkerBench::start() {
  stop();
  int down[2], up[2];
  if (::pipe(down) != 0 || ::pipe(up) != 0)
    throw Error(std::string("kite autotune: cannot create pipes for the benchmark worker: ") +
                std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, down[0], 0);
  posix_spawn_file_actions_adddup2(&actions, up[1], 1);
  posix_spawn_file_actions_addclose(&actions, down[1]);
  posix_spawn_file_actions_addclose(&actions, up[0]);
  // Resolve the executable now: /proc/self/exe in the child is the child.
  char resolved[4096];
  std::string exe = executable_;
  if (exe == "/proc/self/exe") {
    ssize_t n = ::readlink("/proc/self/exe", resolved, sizeof(resolved) - 1);
    if (n > 0)
      exe.assign(resolved, (size_t)n);
  }
  std::string flag = kWorkerFlag;
  char *argv[] = {exe.data(), flag.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(down[0]);
  ::close(up[1]);
  if (rc != 0) {
    ::close(down[1]);
    ::close(up[0]);
    throw Error(fmt::format("kite autotune: cannot start the benchmark worker {}: {}", exe,
                            std::strerror(rc)));
  }
  // A worker that dies must not kill us with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  process_ = std::make_unique<Process>();
  process_->pid = pid;
  process_->toChild = down[1];
  process_->fromChild = up[0];
  ++starts_;
  if (reference_) {
    // The scalars' values: a plan's specs keep only those it is
    // specialized on. And the tensors' sizes, where a dynamic-shapes plan
    // takes some at launch.
    json values = json::array(), sizes = json::array();
    for (const ArgSpec &a : args_) {
      values.push_back(!a.is_tensor() && a.value ? json(*a.value) : json(nullptr));
      sizes.push_back(a.is_tensor() ? json(a.sizes) : json(nullptr));
    }
    Frame setup{kSetup,
                {{"settings", settingsToJson(settings_)}, {"device", device_},
                 {"values", values}, {"sizes", sizes}},
                serialize(*reference_)};
    bool timedOut = false;
    std::optional<Frame> reply;
    if (sendFrame(process_->toChild, setup))
      reply = receiveFrame(process_->fromChild,
                           std::chrono::steady_clock::now() + std::chrono::seconds(120), timedOut);
    if (!reply || reply->kind != kReply || !reply->meta.value("ok", false)) {
      std::string why =
          !reply ? "the worker " + process_->finish(true)
          : reply->kind != kReply
              ? "it answered with something else than a reply (is " + executable_ +
                    " a kite program that serves --kite-autotune-worker?)"
              : reply->meta.value("error", std::string("unknown error"));
      stop();
      throw Error("kite autotune: the benchmark worker could not run the reference config: " +
                  why);
    }
  }
}

void WorkerBench::setReference(const KernelPlan &plan, std::vector<ArgSpec> args) {
  reference_ = plan;
  args_ = std::move(args);
  start();
}

Evaluation WorkerBench::evaluate(const KernelPlan &plan, bool injectFault, double timeoutSeconds,
                                  double cutoffMs) {
  if (!process_)
    start();
  Frame request{kEvaluate, {{"inject_fault", injectFault}, {"cutoff_ms", cutoffMs}},
                serialize(plan)};
  bool timedOut = false;
  std::optional<Frame> reply;
  if (sendFrame(process_->toChild, request))
    reply = receiveFrame(process_->fromChild,
                         std::chrono::steady_clock::now() +
                             std::chrono::milliseconds((int64_t)(timeoutSeconds * 1000)),
                         timedOut);
  Evaluation e;
  if (!reply) {
    std::string how = process_->finish(timedOut);
    process_.reset();
    e.message = timedOut ? fmt::format("timed out after {:g} s (the worker was killed)",
                                       timeoutSeconds)
                         : "the benchmark worker died (" + how + ")";
    return e;
  }
  e.status = statusFrom(reply->meta.value("status", std::string("failed")));
  e.ms = reply->meta.value("ms", 0.0);
  e.message = reply->meta.value("message", std::string());
  // A worker whose context broke exits after answering; reap it now.
  if (reply->meta.value("broken", false)) {
    std::string how = process_->finish(false);
    process_.reset();
    e.message += " (the CUDA context is lost; the worker " + how + " and restarts)";
  }
  return e;
}

std::optional<double> WorkerBench::time(const KernelPlan &plan, int runs) {
  if (!process_)
    start();
  Frame request{kTime, {{"runs", runs}}, serialize(plan)};
  bool timedOut = false;
  std::optional<Frame> reply;
  if (sendFrame(process_->toChild, request))
    reply = receiveFrame(process_->fromChild,
                         std::chrono::steady_clock::now() + std::chrono::seconds(120), timedOut);
  if (!reply || !reply->meta.contains("ms")) {
    if (!reply) {
      process_->finish(timedOut);
      process_.reset();
    }
    return std::nullopt;
  }
  return reply->meta["ms"].get<double>();
}

std::optional<int> kite::autotune::maybeRunWorker(int argc, char **argv) {
  if (argc < 2 || std::strcmp(argv[1], kWorkerFlag) != 0)
    return std::nullopt;
  std::signal(SIGPIPE, SIG_IGN);
  // Frames go to the original stdout; anything else printed goes to stderr.
  int out = ::dup(1);
  ::dup2(2, 1);
  return workerLoop(0, out);
}
