//===- runtime_plan_test.cpp - Kernel plans: checks and byte form ---------===//
//
// This file tests the plan's byte form (a round trip keeps every field; a
// truncated, bit-flipped, foreign or other-version buffer is refused with a
// message that says which, never a crash) and the plan self-check.
//
//===----------------------------------------------------------------------===//

#include <kite/runtime.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>

#include <cstring>

using namespace kite;

namespace {

/// A plan that uses every field and every kind of parameter and result.
KernelPlan fullPlan() {
  KernelPlan p;
  p.key = "softmax:ir=0123abcd:x=bf16[8,8]:cfg=deadbeef:sm_90a";
  p.name = "softmax";
  p.kernelName = "kite_softmax_kernel";
  p.arch = "sm_90a";
  p.binaryKind = KernelPlan::Binary::cubin;
  p.binary = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 255};
  p.grid = {8, 2, 1};
  p.block = {128, 1, 1};
  p.dynamicSharedBytes = 65536;
  p.args = {ArgSpec::tensor("x", bf16, {8, 8}, {}, 16),
            ArgSpec::tensor("w", f32, {8, 4}, {1, 8}),
            ArgSpec::scalar("eps", f32), ArgSpec::scalar("n", i64, 7.0),
            ArgSpec::scalar("flag", boolean, 1.0)};
  p.outputs = {OutputSpec{"out", bf16, {8, 8}, false}, OutputSpec{"acc", f32, {8}, true}};
  ParamSpec constant;
  constant.kind = ParamSpec::Kind::constant;
  constant.bytes = {1, 2, 3, 4, 5};
  p.params = {ParamSpec{ParamSpec::Kind::argData, 0, 0, {}},
              ParamSpec{ParamSpec::Kind::argData, 1, 0, {}},
              ParamSpec{ParamSpec::Kind::outputData, 0, 0, {}},
              ParamSpec{ParamSpec::Kind::outputData, 1, 0, {}},
              ParamSpec{ParamSpec::Kind::argScalar, 2, 0, {}},
              ParamSpec{ParamSpec::Kind::argSize, 0, 1, {}},
              ParamSpec{ParamSpec::Kind::argStride, 1, 1, {}},
              ParamSpec{ParamSpec::Kind::argTensorMap, 0, 0, TensorMapSpec{2, 3, {8, 64}}.encode()},
              constant};
  p.results = {ResultSpec{ResultSpec::Kind::output, 0}, ResultSpec{ResultSpec::Kind::arg, 1}};
  p.config = R"({"block_sizes": [8], "num_warps": 4})";
  return p;
}

std::string errorOf(std::span<const uint8_t> bytes) {
  try {
    deserialize(bytes);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(RuntimePlan, RoundTrip) {
  KernelPlan p = fullPlan();
  std::vector<uint8_t> bytes = serialize(p);
  EXPECT_EQ(std::memcmp(bytes.data(), "KITEPLAN", 8), 0);
  KernelPlan q = deserialize(bytes);
  EXPECT_EQ(q, p);
  EXPECT_EQ(q.args[3].value, 7.0);
  EXPECT_FALSE(q.args[2].value.has_value());
  EXPECT_EQ(serialize(q), bytes) << "the byte form is canonical";

  KernelPlan persistent = fullPlan();
  persistent.grid = {4096, 1, 1};
  persistent.persistent = true;
  EXPECT_TRUE(deserialize(serialize(persistent)).persistent);
  EXPECT_NE(serialize(persistent), bytes);

  KernelPlan clustered = persistent;
  clustered.clusterSize = 2;
  EXPECT_EQ(deserialize(serialize(clustered)).clusterSize, 2u);
  EXPECT_NE(serialize(clustered), serialize(persistent));

  KernelPlan empty;
  empty.name = "nothing";
  empty.kernelName = "k";
  empty.binary = {0};
  EXPECT_EQ(deserialize(serialize(empty)), empty);
}

TEST(RuntimePlan, EightBitFloatsRoundTrip) {
  // Plans of 8-bit float kernels load back from the cache (the dtype codes
  // past bool are valid, the next one is not).
  KernelPlan p = fullPlan();
  p.args[0].dtype = DType::e4m3;
  p.outputs[0].dtype = DType::e5m2;
  std::vector<uint8_t> bytes = serialize(p);
  EXPECT_EQ(deserialize(bytes), p);
  EXPECT_EQ(p.args[0].str().substr(0, p.args[0].name.size() + 6), p.args[0].name + "=e4m3[");
}

TEST(RuntimePlan, EveryTruncationIsRefused) {
  std::vector<uint8_t> bytes = serialize(fullPlan());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string e = errorOf(std::span(bytes.data(), n));
    ASSERT_FALSE(e.empty()) << "a " << n << "-byte prefix was accepted";
    ASSERT_EQ(e.rfind("kite plan: ", 0), 0u) << e;
  }
  EXPECT_EQ(errorOf(std::span(bytes.data(), 4)),
            "kite plan: not a kite plan (4 bytes without the 'KITEPLAN' magic)");
  EXPECT_EQ(errorOf(std::span(bytes.data(), 20)),
            "kite plan: truncated: 20 bytes, shorter than the 28-byte header and checksum");
  std::string cut = errorOf(std::span(bytes.data(), bytes.size() - 1));
  EXPECT_EQ(cut.rfind("kite plan: truncated: the payload is ", 0), 0u) << cut;
}

TEST(RuntimePlan, EveryBitFlipIsRefused) {
  std::vector<uint8_t> bytes = serialize(fullPlan());
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit : {0, 7}) {
      std::vector<uint8_t> bad = bytes;
      bad[i] ^= uint8_t(1u << bit);
      ASSERT_FALSE(errorOf(bad).empty()) << "a flip of bit " << bit << " of byte " << i
                                         << " was accepted";
    }
  std::vector<uint8_t> bad = bytes;
  bad[40] ^= 1; // in the payload
  EXPECT_EQ(errorOf(bad), "kite plan: corrupt buffer: checksum mismatch");
}

TEST(RuntimePlan, TrailingBytesAndForeignBuffers) {
  std::vector<uint8_t> bytes = serialize(fullPlan());
  bytes.push_back(0);
  EXPECT_EQ(errorOf(bytes), "kite plan: corrupt buffer: 1 byte after the end of the plan");
  std::vector<uint8_t> text(100, 'x');
  EXPECT_EQ(errorOf(text), "kite plan: not a kite plan (100 bytes without the 'KITEPLAN' magic)");
  EXPECT_EQ(errorOf({}), "kite plan: not a kite plan (0 bytes without the 'KITEPLAN' magic)");
}

TEST(RuntimePlan, OtherVersionIsRefused) {
  std::vector<uint8_t> bytes = serialize(fullPlan());
  bytes[8] = uint8_t(kPlanFormatVersion + 1);
  EXPECT_EQ(errorOf(bytes), fmt::format("kite plan: format version {}, but this kite reads "
                                        "version {}; recompile the kernel (or re-tune the "
                                        "cache entry)",
                                        kPlanFormatVersion + 1, kPlanFormatVersion));
}

/// Corruptions that keep a valid checksum (a buggy writer, not a bit flip)
/// are still caught by the parser's bounds checks and the plan check.
std::vector<uint8_t> resealed(const KernelPlan &p, size_t payloadByte, uint8_t value) {
  std::vector<uint8_t> bytes = serialize(p);
  bytes[28 - 8 + payloadByte] = value;
  // Recompute the FNV-1a checksum over the payload.
  size_t payloadSize = bytes.size() - 28;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 20; i < 20 + payloadSize; ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  for (int i = 0; i < 8; ++i)
    bytes[20 + payloadSize + i] = uint8_t(h >> (8 * i));
  return bytes;
}

TEST(RuntimePlan, ResealedCorruptionIsRefused) {
  KernelPlan p;
  p.name = "k";
  p.kernelName = "k";
  p.binary = {1};
  // Payload: key (8-byte length + 0 bytes) first. A huge key length:
  std::string e = errorOf(resealed(p, 7, 0x7f));
  EXPECT_EQ(e.rfind("kite plan: corrupt buffer: key claims ", 0), 0u) << e;
  // Every byte of a resealed plan changed to 0xff is refused or parses to a
  // valid plan; none crashes.
  std::vector<uint8_t> base = serialize(fullPlan());
  for (size_t i = 0; i + 28 < base.size(); ++i) {
    std::vector<uint8_t> bytes = resealed(fullPlan(), i, 0xff);
    try {
      KernelPlan q = deserialize(bytes);
      validate_plan(q);
    } catch (const Error &) {
    }
  }
}

/// validate_plan's message for `p`, or "".
std::string errorOfPlan(const KernelPlan &p) {
  try {
    validate_plan(p);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(RuntimePlan, ValidatePlanNamesTheProblem) {
  EXPECT_EQ(errorOfPlan(fullPlan()), "");
  KernelPlan p = fullPlan();
  p.params.push_back(ParamSpec{ParamSpec::Kind::argData, 2, 0, {}});
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: parameter 9 reads argument 'eps' as "
                            "a tensor, but it is a scalar");
  p = fullPlan();
  p.params.push_back(ParamSpec{ParamSpec::Kind::outputData, 5, 0, {}});
  EXPECT_EQ(errorOfPlan(p),
            "kite plan 'softmax' is invalid: parameter 9 reads output 5, but there are 2");
  p = fullPlan();
  p.params.push_back(ParamSpec{ParamSpec::Kind::argSize, 0, 2, {}});
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: parameter 9 reads dimension 2 of "
                            "argument 'x', which has 2");
  p = fullPlan();
  p.results.push_back(ResultSpec{ResultSpec::Kind::arg, 2});
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: result 2 returns argument 2, which "
                            "is not a tensor argument");
  p = fullPlan();
  p.block = {0, 1, 1};
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: block dimension 0 is 0");
  p = fullPlan();
  p.persistent = true; // fullPlan's grid is [8, 2, 1]
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: a persistent plan loops over grid x "
                            "only, but its grid is [8, 2, 1]");
  p = fullPlan();
  p.grid = {7, 1, 1};
  p.clusterSize = 2;
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: a plan of clusters of 2 programs "
                            "needs a constant grid [x, 1, 1] whose x is a multiple of it, but "
                            "its grid is [7, 1, 1]");
  p.grid = {8, 1, 1};
  p.clusterSize = 3;
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: cluster size 3 (1 or 2)");
  p = fullPlan();
  p.args[1].strides = {1};
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: argument 'w' has 2 sizes but 1 "
                            "strides");
  p = fullPlan();
  p.args[2].dtype = bf16;
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: scalar argument 'eps' has type bf16; "
                            "scalars are i64, i32, f64, f32 or bool");
}

TEST(RuntimePlan, TensorMapParameters) {
  TensorMapSpec m{3, 3, {1, 128, 64}};
  std::vector<uint8_t> bytes = m.encode();
  ASSERT_EQ(bytes.size(), 16u);
  TensorMapSpec back = TensorMapSpec::decode(bytes);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.swizzle, 3);
  EXPECT_EQ(back.box[0], 1u);
  EXPECT_EQ(back.box[1], 128u);
  EXPECT_EQ(back.box[2], 64u);
  EXPECT_FALSE(back.staged);
  // A staged map (a padded copy of the tensor) keeps its flag.
  TensorMapSpec staged{2, 3, {128, 64}, true};
  EXPECT_TRUE(TensorMapSpec::decode(staged.encode()).staged);
  EXPECT_EQ(staged.encode()[2], 1);

  // Row blocks: the splits and the step follow the boxes.
  TensorMapSpec blocks{3, 3, {1, 64, 64}};
  blocks.rowSplits = {{8, 1}, {2, 64}, {4, 8}};
  blocks.rowStep = 8;
  std::vector<uint8_t> blockBytes = blocks.encode();
  ASSERT_EQ(blockBytes.size(), 4u + 12u + 24u + 4u);
  EXPECT_EQ(blockBytes[3], 3);
  TensorMapSpec blocksBack = TensorMapSpec::decode(blockBytes);
  EXPECT_EQ(blocksBack.rowSplits, blocks.rowSplits);
  EXPECT_EQ(blocksBack.rowStep, 8u);
  EXPECT_EQ(blocksBack.box, blocks.box);

  auto errorOfMap = [](std::vector<uint8_t> bytes) -> std::string {
    KernelPlan p = fullPlan();
    p.params.push_back(ParamSpec{ParamSpec::Kind::argTensorMap, 0, 0, std::move(bytes)});
    try {
      validate_plan(p);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(errorOfMap(TensorMapSpec{2, 3, {64, 64}}.encode()), "");
  EXPECT_EQ(errorOfMap(TensorMapSpec{3, 3, {1, 64, 64}}.encode()),
            "kite plan 'softmax' is invalid: parameter 9 tiles argument 'x' in 3 dims, but it "
            "has 2");
  EXPECT_EQ(errorOfMap(TensorMapSpec{2, 3, {0, 64}}.encode()),
            "kite plan 'softmax' is invalid: parameter 9 has a copy box of 0 elements in dim 0 "
            "(1 to 256 allowed)");
  EXPECT_EQ(errorOfMap(TensorMapSpec{2, 3, {64, 512}}.encode()),
            "kite plan 'softmax' is invalid: parameter 9 has a copy box of 512 elements in dim 1 "
            "(1 to 256 allowed)");
  EXPECT_EQ(errorOfMap(TensorMapSpec{2, 7, {64, 64}}.encode()),
            "kite plan 'softmax' is invalid: parameter 9 has swizzle mode 7 (0 to 3 allowed)");
  std::vector<uint8_t> flag = TensorMapSpec{2, 3, {64, 64}}.encode();
  flag[2] = 2;
  EXPECT_EQ(errorOfMap(flag),
            "kite plan 'softmax' is invalid: parameter 9: a tensor-map parameter's third and "
            "fourth bytes are its staged flag (0 or 1) and its number of row splits (0 to 3), got "
            "2 and 0");
  TensorMapSpec split{2, 3, {64, 64}};
  split.rowSplits = {{8, 1}, {2, 64}, {4, 8}};
  split.rowStep = 8;
  EXPECT_EQ(errorOfMap(split.encode()), "");
  split.rowStep = 0;
  EXPECT_EQ(errorOfMap(split.encode()),
            "kite plan 'softmax' is invalid: parameter 9 steps its row blocks by 0 rows");
  split.rowStep = 8;
  split.rowSplits[1].stride = 0;
  EXPECT_EQ(errorOfMap(split.encode()),
            "kite plan 'softmax' is invalid: parameter 9 has a row split of 2 rows by a stride "
            "of 0 (1 to 256 rows, a stride of at least 1 allowed)");
  split.rowSplits[1].stride = 64;
  // Row blocks of a staged tensor's padded copy (its rows 16-byte
  // multiples, the dims before them packed).
  split.staged = true;
  EXPECT_EQ(errorOfMap(split.encode()), "");
  split.staged = false;
  std::vector<uint8_t> splits4 = split.encode();
  splits4[3] = 4;
  EXPECT_EQ(errorOfMap(splits4),
            "kite plan 'softmax' is invalid: parameter 9: a tensor-map parameter needs 4 + 4 x "
            "rank bytes with a rank of 1 to 5, and 8 per row split and 4 more with splits, got "
            "40 bytes");
  std::vector<uint8_t> truncated = TensorMapSpec{2, 3, {64, 64}}.encode();
  truncated.pop_back();
  EXPECT_EQ(errorOfMap(truncated),
            "kite plan 'softmax' is invalid: parameter 9: a tensor-map parameter needs 4 + 4 x "
            "rank bytes with a rank of 1 to 5, and 8 per row split and 4 more with splits, got "
            "11 bytes");
  // Workspaces: 1 byte to 1 MiB a program, zeroed or not.
  auto errorOfWorkspace = [](uint32_t bytes, uint32_t zeroed) -> std::string {
    KernelPlan p = fullPlan();
    p.params.push_back(ParamSpec{ParamSpec::Kind::workspace, bytes, zeroed, {}});
    try {
      validate_plan(p);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(errorOfWorkspace(65536, 0), "");
  EXPECT_EQ(errorOfWorkspace(4, 1), "");
  EXPECT_EQ(errorOfWorkspace(0, 0),
            "kite plan 'softmax' is invalid: workspace parameter 9 has 0 bytes a program (1 to "
            "1048576 allowed) and zeroed flag 0 (0 or 1)");
  EXPECT_NE(errorOfWorkspace(4, 2), "");
  {
    KernelPlan p = fullPlan();
    p.params.push_back(ParamSpec{ParamSpec::Kind::workspace, 4, 1, {}});
    EXPECT_EQ(deserialize(serialize(p)), p);
  }
  // A tensor map of a scalar argument.
  KernelPlan p = fullPlan();
  p.params.push_back(
      ParamSpec{ParamSpec::Kind::argTensorMap, 2, 0, TensorMapSpec{1, 0, {8}}.encode()});
  EXPECT_THROW(validate_plan(p), Error);
}

// Sizes no tensor has (from a corrupt cache entry) are an invalid plan, and
// computing their strides does not overflow (UBSan's check in the sanitizer
// build; found by the cache fuzzer).
TEST(RuntimePlan, HugeSizesAreInvalidNotOverflowed) {
  KernelPlan p = fullPlan();
  p.args[0] = ArgSpec::tensor("x", bf16, {int64_t(1) << 40, int64_t(1) << 40});
  std::vector<int64_t> strides = p.args[0].effective_strides();
  EXPECT_EQ(strides[1], 1);
  EXPECT_EQ(strides[0], int64_t(1) << 40);
  p.args[0].sizes.push_back(int64_t(1) << 40);
  EXPECT_EQ(p.args[0].effective_strides()[0], std::numeric_limits<int64_t>::max());
  try {
    validate_plan(p);
    FAIL() << "accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("larger than any GPU memory"), std::string::npos)
        << e.what();
  }
}

TEST(RuntimePlan, ArgSpecText) {
  KernelPlan p = fullPlan();
  EXPECT_EQ(p.args[0].str(), "x=bf16[8,8]:align16");
  EXPECT_EQ(p.args[1].str(), "w=f32[8,4]:strides[1,8]:align1");
  EXPECT_EQ(p.args[2].str(), "eps=f32");
  EXPECT_EQ(p.args[3].str(), "n=i64:7");
  EXPECT_EQ(ArgSpec::tensor("y", f32, {4, 8}, {8, 1}).str(), "y=f32[4,8]:align1");
  EXPECT_EQ(ArgSpec::tensor("y", f32, {4, 8}, {8, 1}, 1).str(), "y=f32[4,8]:align1");
  EXPECT_EQ(ArgSpec::tensor("y", f32, {4, 8}, {8, 1}, 4).str(), "y=f32[4,8]:align4");
  EXPECT_EQ(ArgSpec::tensor("y", f32, {4, 8}).effective_strides(), (std::vector<int64_t>{8, 1}));
}

/// A dynamic-shapes plan: x's rows and an output's rows taken at launch,
/// an output sized by a scalar, the grid computed at launch.
KernelPlan dynamicPlan() {
  KernelPlan p = fullPlan();
  p.dynamicShapes = true;
  ArgSpec x = ArgSpec::tensor("x", bf16, {-1, 8}, {}, 16);
  x.divisors = {16, 0};
  p.args[0] = x;
  using Op = LaunchExpr::Op;
  LaunchExpr rows{{{Op::argSize, 0, 0, 0}}};
  p.outputs[0] = OutputSpec{"out", bf16, {-1, 8}, false, {rows}};
  p.outputs[1] = OutputSpec{"acc", f32, {-1}, true, {LaunchExpr{{{Op::argScalar, 3, 0, 0}}}}};
  p.grid = {1, 1, 1};
  // ceildiv(x.size(0), 64) * 2
  p.gridExpr = {LaunchExpr{{{Op::argSize, 0, 0, 0},
                            {Op::constant, 0, 0, 64},
                            {Op::ceildiv},
                            {Op::constant, 0, 0, 2},
                            {Op::mul}}}};
  p.params.erase(p.params.begin() + 7); // no tensor map of a dynamic tensor here
  p.checks = {LaunchCheck{rows, LaunchExpr::constant(8192), "k.kite.cpp:3:4: rows"}};
  return p;
}

TEST(RuntimePlan, DynamicShapesRoundTripAndText) {
  KernelPlan p = dynamicPlan();
  ASSERT_NO_THROW(validate_plan(p));
  EXPECT_EQ(deserialize(serialize(p)), p);
  EXPECT_EQ(p.args[0].str(), "x=bf16[?16,8]:align16");
  ArgSpec any = p.args[0];
  any.divisors[0] = 1;
  EXPECT_EQ(any.str(), "x=bf16[?,8]:align16");
  EXPECT_EQ(p.gridExpr[0].str({"x", "w", "eps", "n"}), "ceildiv(x.size(0), 64) * 2");
  EXPECT_EQ(p.outputs[1].sizeExprs[0].str(), "#3");

  // What a dynamic size accepts: at least 2, a multiple of its divisor.
  EXPECT_TRUE(p.args[0].size_fits(0, 32));
  EXPECT_TRUE(p.args[0].size_fits(0, 4096));
  EXPECT_FALSE(p.args[0].size_fits(0, 24));
  EXPECT_FALSE(p.args[0].size_fits(0, 0));
  EXPECT_FALSE(p.args[0].size_fits(1, 16)) << "dim 1 is static: 8";
  EXPECT_TRUE(p.args[0].size_fits(1, 8));
  EXPECT_EQ(ArgSpec::size_divisor(4097), 1);
  EXPECT_EQ(ArgSpec::size_divisor(4100), 4);
  EXPECT_EQ(ArgSpec::size_divisor(4096), 16);
  EXPECT_EQ(ArgSpec::size_divisor(24), 8);
}

TEST(RuntimePlan, BucketedDims) {
  // A held row's length: its bucket (the power of two at or above it, from
  // 128 to 16384; -1 past that), and a divisor class of a whole 16-byte
  // vector or 1.
  EXPECT_EQ(ArgSpec::size_bound(2), 128);
  EXPECT_EQ(ArgSpec::size_bound(128), 128);
  EXPECT_EQ(ArgSpec::size_bound(129), 256);
  EXPECT_EQ(ArgSpec::size_bound(5000), 8192);
  EXPECT_EQ(ArgSpec::size_bound(16384), 16384);
  EXPECT_EQ(ArgSpec::size_bound(16385), -1);
  EXPECT_EQ(ArgSpec::bounded_divisor(4096, bf16), 8);
  EXPECT_EQ(ArgSpec::bounded_divisor(4100, bf16), 1);
  EXPECT_EQ(ArgSpec::bounded_divisor(4100, f32), 4);
  EXPECT_EQ(ArgSpec::bounded_divisor(4098, f32), 1);

  KernelPlan p = dynamicPlan();
  ArgSpec &x = p.args[0];
  x.divisors = {16, 8};
  x.sizes = {-1, -1};
  x.bounds = {0, 8192};
  ASSERT_NO_THROW(validate_plan(p));
  EXPECT_EQ(deserialize(serialize(p)), p);
  EXPECT_EQ(x.str(), "x=bf16[?16,?8<=8192]:align16");
  EXPECT_TRUE(x.size_fits(1, 8192));
  EXPECT_TRUE(x.size_fits(1, 4104));
  EXPECT_FALSE(x.size_fits(1, 4096)) << "the bucket below";
  EXPECT_FALSE(x.size_fits(1, 8200)) << "the bucket above";
  EXPECT_FALSE(x.size_fits(1, 5001)) << "not a multiple of 8";
  // A plan serves a launch as its own only in exactly its class: a row of
  // an odd length's plan fits a multiple of 8 but is not its class.
  EXPECT_TRUE(x.size_in_class(1, 5000));
  EXPECT_TRUE(x.size_in_class(1, 8192)) << "16 divides it, but 8 is a whole vector";
  ArgSpec odd = x;
  odd.divisors[1] = 1;
  EXPECT_EQ(odd.str(), "x=bf16[?16,?<=8192]:align16");
  EXPECT_TRUE(odd.size_fits(1, 5000));
  EXPECT_FALSE(odd.size_in_class(1, 5000));
  EXPECT_TRUE(odd.size_in_class(1, 5001));
  EXPECT_TRUE(odd.size_in_class(1, 5002)) << "classes between are 1";
  ArgSpec unbucketed = dynamicPlan().args[0];
  EXPECT_TRUE(unbucketed.size_in_class(0, 4096));
  EXPECT_FALSE(unbucketed.size_in_class(0, 4104)) << "class 8, not 16";
  ArgSpec longer = x;
  longer.bounds[1] = -1;
  longer.divisors[1] = 16;
  EXPECT_EQ(longer.str(), "x=bf16[?16,?16>16384]:align16");
  EXPECT_TRUE(longer.size_in_class(1, 32768));
  EXPECT_FALSE(longer.size_in_class(1, 16384));

  // Malformed buckets are refused.
  x.bounds = {0, 100};
  EXPECT_NE(errorOfPlan(p).find("has bound 100 on dim 1"), std::string::npos) << errorOfPlan(p);
  x.bounds = {8192, 0};
  x.divisors = {0, 8};
  x.sizes = {4, -1};
  EXPECT_NE(errorOfPlan(p).find("has bound 8192 on dim 0"), std::string::npos) << errorOfPlan(p);
  x.bounds = {0};
  EXPECT_NE(errorOfPlan(p).find("has 1 bounds for 2 sizes"), std::string::npos) << errorOfPlan(p);
}

TEST(RuntimePlan, ThirtyTwoBitOffsets) {
  // A dynamic-shapes tensor few enough elements for 32-bit offsets says so.
  EXPECT_TRUE(ArgSpec::fits_index32((int64_t(1) << 29) - 1));
  EXPECT_FALSE(ArgSpec::fits_index32(int64_t(1) << 29));
  KernelPlan p = dynamicPlan();
  p.args[0].index32 = true;
  ASSERT_NO_THROW(validate_plan(p));
  EXPECT_EQ(deserialize(serialize(p)), p);
  EXPECT_EQ(p.args[0].str(), "x=bf16[?16,8]:align16:idx32");
  KernelPlan fixed = fullPlan();
  fixed.args[0].index32 = true;
  EXPECT_NE(errorOfPlan(fixed).find("has 32-bit offsets (idx32) without dynamic sizes"),
            std::string::npos)
      << errorOfPlan(fixed);
}

TEST(RuntimePlan, DynamicShapesValidation) {
  using Op = LaunchExpr::Op;
  KernelPlan p = dynamicPlan();
  p.args[0].divisors = {3, 0};
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: argument 'x' has a dynamic dim 0 of "
                            "size -1 and divisor 3 (a dynamic size is -1 with a divisor of 1, 2, "
                            "4, 8 or 16, or -1 for any)");
  p = dynamicPlan();
  p.args[0].sizes[0] = 8; // a divisor on a static size
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: argument 'x' has a dynamic dim 0 of "
                            "size 8 and divisor 16 (a dynamic size is -1 with a divisor of 1, 2, "
                            "4, 8 or 16, or -1 for any)");
  p = dynamicPlan();
  p.args[0].divisors = {16};
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: argument 'x' has 1 divisors for 2 "
                            "sizes");
  p = dynamicPlan();
  p.args[0].strides = {8, 1};
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: argument 'x' has dynamic sizes and "
                            "strides; a tensor with dynamic sizes is contiguous");
  p = dynamicPlan();
  p.outputs[0].sizeExprs.clear();
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: output 'out' has 1 dynamic sizes but "
                            "0 size expressions");
  p = dynamicPlan();
  p.outputs[0].sizeExprs[0].terms[0].dim = 5;
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: a size expression of output 'out' "
                            "reads size 5 of argument 'x', which has no such dim");
  p = dynamicPlan();
  p.outputs[1].sizeExprs[0].terms[0].index = 2; // eps: f32
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: a size expression of output 'acc' "
                            "reads argument 'eps' as an integer scalar");
  p = dynamicPlan();
  p.gridExpr[0].terms.pop_back();
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: the grid expression leaves 2 values, "
                            "not one");
  p = dynamicPlan();
  p.gridExpr[0].terms.insert(p.gridExpr[0].terms.begin(), LaunchExpr::Term{Op::add});
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: the grid expression an operation "
                            "lacks operands");
  p = dynamicPlan();
  p.checks[0].rhs.terms[0] = {Op::argSize, 9, 0, 0};
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: the launch check 'k.kite.cpp:3:4: "
                            "rows' reads argument 9, but there are 5");
  p = dynamicPlan();
  p.grid = {1, 2, 1};
  EXPECT_EQ(errorOfPlan(p), "kite plan 'softmax' is invalid: a plan with a grid expression has a "
                            "grid of [n, 1, 1]");
  // A corrupt buffer with a bad expression is refused whole.
  p = dynamicPlan();
  p.gridExpr[0].terms[0].op = Op(200);
  std::vector<uint8_t> bytes = serialize(p);
  EXPECT_THROW(deserialize(bytes), Error);
}

TEST(RuntimePlan, LaunchExpressionsEvaluate) {
  using Op = LaunchExpr::Op;
  Tensor x = Tensor::from_blob(reinterpret_cast<void *>(0x7f0000000000), {1000, 8}, {}, bf16,
                               Device::cuda(0));
  std::vector<KernelArg> args = {x, int64_t(-7)};
  auto eval = [&](std::vector<LaunchExpr::Term> terms) {
    return evaluate(LaunchExpr{std::move(terms)}, args);
  };
  EXPECT_EQ(eval({{Op::argSize, 0, 0, 0}, {Op::constant, 0, 0, 64}, {Op::ceildiv}}), 16);
  EXPECT_EQ(eval({{Op::argSize, 0, 1, 0}, {Op::argScalar, 1, 0, 0}, {Op::add}}), 1);
  EXPECT_EQ(eval({{Op::argScalar, 1, 0, 0}, {Op::constant, 0, 0, 2}, {Op::floordiv}}), -4);
  EXPECT_EQ(eval({{Op::argScalar, 1, 0, 0}, {Op::constant, 0, 0, 2}, {Op::ceildiv}}), -3);
  EXPECT_EQ(eval({{Op::argScalar, 1, 0, 0}, {Op::constant, 0, 0, 0}, {Op::max}}), 0);
  EXPECT_EQ(eval({{Op::argSize, 0, 0, 0}, {Op::constant, 0, 0, 3}, {Op::min}}), 3);
  EXPECT_THROW(eval({{Op::argSize, 0, 0, 0}, {Op::constant, 0, 0, 0}, {Op::ceildiv}}), Error);
  EXPECT_THROW(eval({{Op::argSize, 0, 2, 0}}), Error) << "no dim 2";
  EXPECT_THROW(eval({{Op::argScalar, 0, 0, 0}}), Error) << "argument 0 is a tensor";
  EXPECT_THROW(eval({{Op::add}}), Error);
  EXPECT_THROW(eval({}), Error);
}

} // namespace
