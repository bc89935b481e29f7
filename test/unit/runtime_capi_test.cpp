//===- runtime_capi_test.cpp - kite/c_api.h without a GPU ---------------===//
//
// This file tests the C interface's checks and messages: a plan read from a
// file (missing, corrupt, valid), its arguments as JSON, and the argument
// checks a run makes before it touches the GPU.
//
//===----------------------------------------------------------------------===//

#include <kite/c_api.h>
#include <kite/runtime.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

kite::KernelPlan scalePlan() {
  kite::KernelPlan p;
  p.key = "capi-test";
  p.name = "scale";
  p.kernelName = "kite_scale";
  p.arch = "sm_90a";
  p.binary = {0};
  p.args = {kite::ArgSpec::tensor("x", kite::DType::bf16, {8, 16}, {}, 16),
            kite::ArgSpec::scalar("alpha", kite::DType::f32),
            kite::ArgSpec::scalar("causal", kite::DType::boolean, 1.0)};
  return p;
}

struct PlanFile {
  fs::path path;
  explicit PlanFile(const std::vector<uint8_t> &bytes) {
    path = fs::temp_directory_path() / ("kite_capi_test_" + std::to_string(::getpid()) + ".plan");
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()),
                                                std::streamsize(bytes.size()));
  }
  ~PlanFile() { fs::remove(path); }
};

TEST(CApi, ReadsAPlanAndDescribesItsArguments) {
  PlanFile file(kite::serialize(scalePlan()));
  char error[256] = "unset";
  kite_plan *plan = kite_plan_read(file.path.c_str(), error, sizeof error);
  ASSERT_NE(plan, nullptr) << error;
  nlohmann::json args = nlohmann::json::parse(kite_plan_args_json(plan));
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0]["name"], "x");
  EXPECT_EQ(args[0]["tensor"], true);
  EXPECT_EQ(args[0]["dtype"], "bf16");
  EXPECT_EQ(args[0]["sizes"], nlohmann::json({8, 16}));
  EXPECT_EQ(args[1]["tensor"], false);
  EXPECT_EQ(args[1]["dtype"], "f32");
  EXPECT_TRUE(args[1]["value"].is_null()) << "alpha is given at launch";
  EXPECT_EQ(args[2]["value"], 1.0) << "causal is specialized";
  kite_plan_free(plan);
}

TEST(CApi, MissingAndCorruptFilesAreErrorsThatNameThem) {
  char error[256];
  EXPECT_EQ(kite_plan_read("/nonexistent/kite.plan", error, sizeof error), nullptr);
  EXPECT_NE(std::string(error).find("cannot open /nonexistent/kite.plan"), std::string::npos) << error;

  std::vector<uint8_t> bytes = kite::serialize(scalePlan());
  bytes.resize(bytes.size() / 2);
  PlanFile file(bytes);
  EXPECT_EQ(kite_plan_read(file.path.c_str(), error, sizeof error), nullptr);
  std::string message = error;
  EXPECT_NE(message.find(file.path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;

  // A short buffer gets a truncated, terminated message.
  char tiny[8];
  EXPECT_EQ(kite_plan_read("/nonexistent/kite.plan", tiny, sizeof tiny), nullptr);
  EXPECT_EQ(std::string(tiny), "/nonexi");
}

TEST(CApi, RunChecksItsArgumentsBeforeTheGpu) {
  PlanFile file(kite::serialize(scalePlan()));
  char error[512];
  kite_plan *plan = kite_plan_read(file.path.c_str(), error, sizeof error);
  ASSERT_NE(plan, nullptr) << error;
  uint64_t tensors[3] = {0x7f0000000000, 0, 0};
  double scalars[3] = {0, 2.0, 1.0};

  EXPECT_EQ(kite_plan_run(plan, 0, 0, 2, tensors, scalars, nullptr, 0, error, sizeof error), -1);
  EXPECT_NE(std::string(error).find("the plan takes 3 arguments, 2 were given"), std::string::npos)
      << error;

  uint64_t none[3] = {0, 0, 0};
  EXPECT_EQ(kite_plan_run(plan, 0, 0, 3, none, scalars, nullptr, 0, error, sizeof error), -1);
  EXPECT_NE(std::string(error).find("no device address for tensor argument 'x'"), std::string::npos)
      << error;

  // The specialized scalar, given another value: kite::launch's check.
  double other[3] = {0, 2.0, 0.0};
  EXPECT_EQ(kite_plan_run(plan, 0, 0, 3, tensors, other, nullptr, 0, error, sizeof error), -1);
  EXPECT_NE(std::string(error).find("causal"), std::string::npos) << error;

  // Result slots must match what the plan returns (none here).
  DLManagedTensor *slot = nullptr;
  EXPECT_EQ(kite_plan_num_results(plan), 0);
  EXPECT_EQ(kite_plan_run(plan, 0, 0, 3, tensors, scalars, &slot, 1, error, sizeof error), -1);
  EXPECT_NE(std::string(error).find("the plan returns 0 tensors, 1 result slots were given"),
            std::string::npos)
      << error;
  EXPECT_EQ(slot, nullptr);

  EXPECT_EQ(kite_plan_run(nullptr, 0, 0, 0, nullptr, nullptr, nullptr, 0, error, sizeof error), -1);
  EXPECT_NE(std::string(error).find("no plan"), std::string::npos) << error;
  kite_plan_free(plan);
}

} // namespace
