// Mod for every numeric element type, both fmod modes, with broadcasting,
// against the CPU reference. Divisors are drawn with both signs (integers
// include 0, which gives 0).
#include <string>
#include <tuple>

#include "engine/ops/typed.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

constexpr DataType kNumericTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kInt64,
                                      DataType::kInt32,   DataType::kInt8,    DataType::kUInt8,
                                      DataType::kFloat64};

class ModTest : public ::testing::TestWithParam<std::tuple<DataType, bool>> {};

CheckOptions ModTolerance(DataType t) {
  if (IsIntegral(t)) return Exact();
  CheckOptions o;
  // fmod is exact; Python's % adds the divisor once (one rounding).
  o.atol = t == DataType::kFloat16 ? 1e-2f : 1e-5f;
  o.rtol = t == DataType::kFloat16 ? 1e-3f : 1e-6f;
  // Not under fp16 storage: Mod jumps by the divisor where the dividend
  // crosses a multiple of it, so float32 inputs rounded to half give other
  // results than the float32 reference (the float16 cases check half data
  // against a reference on the same values).
  o.precisions = {EngineOptions::Precision::kFp32};
  return o;
}

TEST_P(ModTest, SameShapes) {
  const auto [type, fmod] = GetParam();
  const bool is_unsigned = type == DataType::kUInt8;
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 37}, is_unsigned ? 0.0f : -100.0f, 100.0f, type);
  TensorRef m = b.Input("m", {3, 37}, is_unsigned ? 0.0f : -9.0f, 9.0f, type);
  TensorRef y = b.graph().AddNode(internal::kMod, {x, m}, internal::ModAttrs{fmod});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), ModTolerance(type));
}

TEST_P(ModTest, Broadcasts) {
  const auto [type, fmod] = GetParam();
  const bool is_unsigned = type == DataType::kUInt8;
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 1, 5}, is_unsigned ? 0.0f : -50.0f, 50.0f, type);
  TensorRef m = b.Input("m", {3, 1}, is_unsigned ? 1.0f : -7.0f, 7.0f, type);
  TensorRef y = b.graph().AddNode(internal::kMod, {x, m}, internal::ModAttrs{fmod});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), ModTolerance(type));
}

INSTANTIATE_TEST_SUITE_P(TypesAndModes, ModTest,
                         ::testing::Combine(::testing::ValuesIn(kNumericTypes), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_fmod" : "_python");
                         });

TEST(ModTest, RejectsMixedTypesAndBool) {
  for (DataType other : {DataType::kInt32, DataType::kBool}) {
    GraphBuilder b;
    TensorRef x = b.Input("x", {4}, other == DataType::kBool ? DataType::kBool : DataType::kInt64);
    TensorRef m = b.Input("m", {4}, other);
    b.Output(b.AddNode(internal::kMod, {x, m}, internal::ModAttrs{}), "y");
    absl::Status s = std::move(b).Build().status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("expected one numeric element type"), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace recq::optest
