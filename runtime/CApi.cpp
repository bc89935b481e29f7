//===- CApi.cpp - kite/c_api.h over kite_runtime --------------------------===//
//
// This file implements the C interface: a plan read from its file, its
// arguments described as JSON, and kite::run_plan on caller-owned device
// addresses. Every kite::Error (and any other exception) becomes the
// function's error message; nothing throws across the C boundary.
//
//===----------------------------------------------------------------------===//

#include <kite/c_api.h>
#include <kite/runtime.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

struct kite_plan {
  kite::KernelPlan plan;
  std::string argsJson;
};

namespace {

void setError(char *error, size_t size, const std::string &message) {
  if (!error || size == 0)
    return;
  size_t n = std::min(size - 1, message.size());
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

std::string describeArgs(const kite::KernelPlan &plan) {
  nlohmann::json args = nlohmann::json::array();
  for (const kite::ArgSpec &a : plan.args) {
    nlohmann::json j = {{"name", a.name}, {"tensor", a.is_tensor()}, {"dtype", kite::dtype_name(a.dtype)}};
    if (a.is_tensor())
      j["sizes"] = a.sizes;
    else
      j["value"] = a.value ? nlohmann::json(*a.value) : nlohmann::json(nullptr);
    args.push_back(std::move(j));
  }
  return args.dump();
}

} // namespace

extern "C" kite_plan *kite_plan_read(const char *path, char *error, size_t error_size) {
  try {
    if (!path)
      throw kite::Error("kite_plan_read: no path");
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw kite::Error(std::string("kite_plan_read: cannot open ") + path);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto plan = std::make_unique<kite_plan>();
    plan->plan = kite::deserialize(bytes);
    kite::validate_plan(plan->plan);
    plan->argsJson = describeArgs(plan->plan);
    return plan.release();
  } catch (const std::exception &e) {
    setError(error, error_size, path ? std::string(path) + ": " + e.what() : e.what());
    return nullptr;
  }
}

extern "C" void kite_plan_free(kite_plan *plan) { delete plan; }

extern "C" const char *kite_plan_args_json(const kite_plan *plan) {
  return plan ? plan->argsJson.c_str() : "[]";
}

extern "C" int kite_plan_num_results(const kite_plan *plan) {
  return plan ? int(plan->plan.results.size()) : 0;
}

extern "C" int kite_plan_run(kite_plan *plan, int device, uint64_t stream, int nargs,
                             const uint64_t *tensors, const double *scalars,
                             DLManagedTensor **results, int nresults, char *error,
                             size_t error_size) {
  try {
    if (!plan)
      throw kite::Error("kite_plan_run: no plan");
    const kite::KernelPlan &p = plan->plan;
    if (nargs < 0 || size_t(nargs) != p.args.size())
      throw kite::Error("kite_plan_run(" + p.name + "): the plan takes " +
                        std::to_string(p.args.size()) + " arguments, " + std::to_string(nargs) +
                        " were given");
    std::vector<kite::Tensor> views;
    views.reserve(p.args.size());
    std::vector<kite::KernelArg> args;
    for (size_t i = 0; i < p.args.size(); ++i) {
      const kite::ArgSpec &a = p.args[i];
      if (!a.is_tensor()) {
        if (!scalars)
          throw kite::Error("kite_plan_run(" + p.name + "): no scalars for argument '" + a.name + "'");
        args.push_back(kite::KernelArg::scalar(a.dtype, scalars[i]));
        continue;
      }
      for (int64_t s : a.sizes)
        if (s < 0)
          throw kite::Error("kite_plan_run(" + p.name + "): argument '" + a.name +
                            "' has a size taken at launch; this interface runs static-shape plans");
      if (!tensors || tensors[i] == 0)
        throw kite::Error("kite_plan_run(" + p.name + "): no device address for tensor argument '" +
                          a.name + "'");
      views.push_back(kite::Tensor::from_blob(reinterpret_cast<void *>(uintptr_t(tensors[i])), a.sizes,
                                              a.strides, a.dtype, kite::Device::cuda(device), nullptr));
      args.emplace_back(views.back());
    }
    if (results && (nresults < 0 || size_t(nresults) != p.results.size()))
      throw kite::Error("kite_plan_run(" + p.name + "): the plan returns " +
                        std::to_string(p.results.size()) + " tensors, " + std::to_string(nresults) +
                        " result slots were given");
    std::vector<kite::Tensor> out(p.results.size());
    kite::run_plan(p, args, out, kite::Stream{reinterpret_cast<void *>(uintptr_t(stream))});
    if (results)
      for (size_t i = 0; i < out.size(); ++i)
        results[i] = kite::to_dlpack(out[i]);
    return 0;
  } catch (const std::exception &e) {
    setError(error, error_size, e.what());
    return -1;
  }
}
