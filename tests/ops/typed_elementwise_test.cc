// Comparisons, logic, integer arithmetic, IsNaN, IsInf, Sign, Expand of
// every element type, CumSum, Trilu, ArgMax, ArgMin, TopK and Hardmax
// against the CPU reference (exact: every result is an integer, a bool, a
// copied value or a float sum taken in the device's order), and the
// attention-mask chain of an exported BERT (int64 mask -> additive float
// mask -> Softmax).
#include <string>
#include <tuple>

#include "engine/ops/layout_attrs.h"
#include "engine/ops/typed.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::ArgReduceAttrs;
using internal::CumSumAttrs;
using internal::TriluAttrs;

constexpr DataType kNumericTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kInt64,
                                      DataType::kInt32,   DataType::kInt8,    DataType::kUInt8,
                                      DataType::kFloat64};
constexpr DataType kIntegerTypes[] = {DataType::kInt64, DataType::kInt32, DataType::kInt8,
                                      DataType::kUInt8};
constexpr DataType kAllTypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kInt64,
                                  DataType::kInt32,   DataType::kInt8,    DataType::kUInt8,
                                  DataType::kBool,    DataType::kFloat64};

std::string TypeName(DataType t) { return DataTypeName(t); }

// The value range of a type's inputs: a few values, so that ties and
// equal pairs are frequent (uint8 draws start at 0).
float Lo(DataType t) { return t == DataType::kUInt8 ? 0.0f : -4.0f; }

class CompareTest : public ::testing::TestWithParam<std::tuple<const char*, DataType>> {};

TEST_P(CompareTest, BroadcastsAndMatchesReference) {
  const auto [name, t] = GetParam();
  OpGraphBuilder b;
  // Integer draws in [-4, 4) collide often; float16 draws in quarter
  // steps after rounding collide too.
  TensorRef x = b.Input("a", {2, 3, 5}, Lo(t), 4.0f, t);
  TensorRef y = b.Input("b", {3, 1}, Lo(t), 4.0f, t);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(OpType(name), {x, y})),
                                Exact());
}

TEST_P(CompareTest, EqualShapes) {
  const auto [name, t] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("a", {4, 37}, Lo(t), 4.0f, t);
  TensorRef y = b.Input("b", {4, 37}, Lo(t), 4.0f, t);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(OpType(name), {x, y})),
                                Exact());
}

INSTANTIATE_TEST_SUITE_P(OpsAndTypes, CompareTest,
                         ::testing::Combine(::testing::Values("Equal", "Less", "LessOrEqual",
                                                              "Greater", "GreaterOrEqual"),
                                            ::testing::ValuesIn(kNumericTypes)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  TypeName(std::get<1>(info.param));
                         });

TEST(CompareTest, EqualOfBools) {
  OpGraphBuilder b;
  TensorRef x = b.Input("a", {3, 8}, -1.0f, 1.0f, DataType::kBool);
  TensorRef y = b.Input("b", {8}, -1.0f, 1.0f, DataType::kBool);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(internal::kEqual, {x, y})),
                                Exact());
}

TEST(CompareTest, MixedTypesAreRejected) {
  GraphBuilder b;
  TensorRef x = b.Input("a", {4}, DataType::kInt64);
  TensorRef y = b.Input("b", {4});
  b.Output(b.AddNode(internal::kLess, {x, y}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("one element type"), std::string::npos) << s;
}

class LogicTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LogicTest, BroadcastsAndMatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("a", {2, 1, 6}, -1.0f, 1.0f, DataType::kBool);
  TensorRef y = b.Input("b", {3, 6}, -1.0f, 1.0f, DataType::kBool);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(OpType(GetParam()), {x, y})),
                                Exact());
}

INSTANTIATE_TEST_SUITE_P(Ops, LogicTest, ::testing::Values("And", "Or", "Xor"));

TEST(LogicTest, Not) {
  OpGraphBuilder b;
  TensorRef x = b.Input("a", {5, 7}, -1.0f, 1.0f, DataType::kBool);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(internal::kNot, {x})),
                                Exact());
}

TEST(LogicTest, AndOfIntegersIsRejected) {
  GraphBuilder b;
  TensorRef x = b.Input("a", {4}, DataType::kInt64);
  b.Output(b.AddNode(internal::kAnd, {x, x}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expected bool"), std::string::npos) << s;
}

class IntegerArithmeticTest : public ::testing::TestWithParam<std::tuple<const char*, DataType>> {};

TEST_P(IntegerArithmeticTest, BroadcastsAndMatchesReference) {
  const auto [name, t] = GetParam();
  OpGraphBuilder b;
  // Wide enough that int8 and uint8 products wrap; divisors include 0.
  const float lo = t == DataType::kUInt8 ? 0.0f : -120.0f;
  TensorRef x = b.Input("a", {3, 4, 5}, lo, 120.0f, t);
  TensorRef y = b.Input("b", {4, 1}, t == DataType::kUInt8 ? 0.0f : -3.0f, 3.0f, t);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(OpType(name), {x, y})),
                                Exact());
}

INSTANTIATE_TEST_SUITE_P(OpsAndTypes, IntegerArithmeticTest,
                         ::testing::Combine(::testing::Values("IntAdd", "IntSub", "IntMul",
                                                              "IntDiv", "IntMin", "IntMax"),
                                            ::testing::ValuesIn(kIntegerTypes)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  TypeName(std::get<1>(info.param));
                         });

// float64 takes the same ops (the float32 kernels of Add, Sub, Mul, Div,
// Min and Max do not): IEEE arithmetic in double, division by 0 included.
class Float64ArithmeticTest : public ::testing::TestWithParam<const char*> {};

TEST_P(Float64ArithmeticTest, BroadcastsAndMatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("a", {3, 4, 5}, -120.0f, 120.0f, DataType::kFloat64);
  TensorRef y = b.Input("b", {4, 1}, -3.0f, 3.0f, DataType::kFloat64);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(OpType(GetParam()), {x, y})),
                                Exact());
}

INSTANTIATE_TEST_SUITE_P(Ops, Float64ArithmeticTest,
                         ::testing::Values("IntAdd", "IntSub", "IntMul", "IntDiv", "IntMin",
                                           "IntMax"));

TEST(Float64ArithmeticTest, PowIsRejected) {
  GraphBuilder b;
  TensorRef x = b.Input("a", {4}, DataType::kFloat64);
  b.Output(b.AddNode(internal::kIntPow, {x, x}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expected an integer"), std::string::npos) << s;
}

// The unsigned and 16-bit integer types through the same integer ops.
INSTANTIATE_TEST_SUITE_P(WideTypes, IntegerArithmeticTest,
                         ::testing::Combine(::testing::Values("IntAdd", "IntDiv", "IntMax"),
                                            ::testing::Values(DataType::kUInt16, DataType::kInt16,
                                                              DataType::kUInt32,
                                                              DataType::kUInt64)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  TypeName(std::get<1>(info.param));
                         });

class BitShiftTest : public ::testing::TestWithParam<std::tuple<bool, DataType>> {};

TEST_P(BitShiftTest, BroadcastsAndMatchesReference) {
  const auto [left, t] = GetParam();
  OpGraphBuilder b;
  // Shifts from 0 to past the width of uint8 and uint16 (which give 0).
  TensorRef x = b.Input("a", {3, 4, 5}, 0.0f, 250.0f, t);
  TensorRef y = b.Input("b", {4, 1}, 0.0f, 20.0f, t);
  const OpType op = left ? internal::kBitShiftLeft : internal::kBitShiftRight;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(op, {x, y})), Exact());
}

INSTANTIATE_TEST_SUITE_P(
    DirectionsAndTypes, BitShiftTest,
    ::testing::Combine(::testing::Bool(), ::testing::Values(DataType::kUInt8, DataType::kUInt16,
                                                            DataType::kUInt32, DataType::kUInt64)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) ? "Left_" : "Right_") +
             TypeName(std::get<1>(info.param));
    });

TEST(BitShiftTest, SignedIntegersAreRejected) {
  GraphBuilder b;
  TensorRef x = b.Input("a", {4}, DataType::kInt32);
  b.Output(b.AddNode(internal::kBitShiftLeft, {x, x}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unsigned"), std::string::npos) << s;
}

class IntPowTest : public ::testing::TestWithParam<DataType> {};

TEST_P(IntPowTest, BroadcastsAndMatchesReference) {
  const DataType t = GetParam();
  OpGraphBuilder b;
  // Bases whose powers wrap int8 and uint8; signed exponents include
  // negative ones (1 / x^-m truncates to 0, 1 or -1).
  const bool is_unsigned = t == DataType::kUInt8;
  TensorRef x = b.Input("a", {3, 4, 5}, is_unsigned ? 0.0f : -9.0f, 9.0f, t);
  TensorRef y = b.Input("b", {4, 1}, is_unsigned ? 0.0f : -3.0f, 7.0f, t);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(internal::kIntPow, {x, y})),
                                Exact());
}

INSTANTIATE_TEST_SUITE_P(Types, IntPowTest, ::testing::ValuesIn(kIntegerTypes),
                         [](const auto& info) { return TypeName(info.param); });

TEST(IntegerArithmeticTest, FloatInputsAreRejected) {
  GraphBuilder b;
  TensorRef x = b.Input("a", {4});
  b.Output(b.AddNode(internal::kIntAdd, {x, x}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expected an integer"), std::string::npos) << s;
}

// Floor(a) / Floor(b) with draws in [-1.5, 1.5): quotients that are finite,
// +-inf (x / 0) and NaN (0 / 0).
TensorRef SpecialValues(OpGraphBuilder& b) {
  TensorRef x = b.graph().AddNode(OpType("Floor"), {b.Input("a", {6, 40}, -1.5f, 1.5f)});
  TensorRef z = b.graph().AddNode(OpType("Floor"), {b.Input("b", {6, 40}, -1.5f, 1.5f)});
  return b.graph().AddNode(OpType::kDiv, {x, z});
}

TEST(FloatClassTest, IsNaN) {
  OpGraphBuilder b;
  TensorRef q = SpecialValues(b);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(internal::kIsNaN, {q})),
                                Exact());
}

class IsInfTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(IsInfTest, DetectsTheChosenInfinities) {
  const auto [pos, neg] = GetParam();
  OpGraphBuilder b;
  TensorRef q = SpecialValues(b);
  RECQ_EXPECT_MATCHES_REFERENCE(
      std::move(b).Build(b.graph().AddNode(internal::kIsInf, {q}, internal::IsInfAttrs{pos, neg})),
      Exact());
}

INSTANTIATE_TEST_SUITE_P(Flags, IsInfTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

class SignTest : public ::testing::TestWithParam<DataType> {};

TEST_P(SignTest, MatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {4, 33}, Lo(GetParam()), 4.0f, GetParam());
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(b.graph().AddNode(internal::kSign, {x})),
                                Exact());
}

INSTANTIATE_TEST_SUITE_P(Types, SignTest, ::testing::ValuesIn(kNumericTypes),
                         [](const auto& info) { return TypeName(info.param); });

class TypedExpandTest : public ::testing::TestWithParam<DataType> {};

TEST_P(TypedExpandTest, BroadcastsEveryType) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 1, 5}, Lo(GetParam()), 100.0f, GetParam());
  TensorRef y = b.graph().AddNode(OpType("Expand"), {x}, internal::ExpandAttrs{{2, 3, 4, 5}});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Types, TypedExpandTest, ::testing::ValuesIn(kAllTypes),
                         [](const auto& info) { return TypeName(info.param); });

class CumSumTest : public ::testing::TestWithParam<std::tuple<DataType, int64_t, bool, bool>> {};

TEST_P(CumSumTest, MatchesReference) {
  const auto [t, axis, exclusive, reverse] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 7, 4}, -50.0f, 50.0f, t);
  TensorRef y = b.graph().AddNode(internal::kCumSum, {x}, CumSumAttrs{axis, exclusive, reverse});
  // Integers are exact; floats are summed in the reference's order, so a
  // last-bit difference can only come from contraction: 1e-5 relative.
  CheckOptions options = Exact();
  if (IsFloatingPoint(t)) {
    options.atol = 1e-5f;
    options.rtol = 1e-5f;
  }
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

INSTANTIATE_TEST_SUITE_P(TypesAndFlags, CumSumTest,
                         ::testing::Combine(::testing::Values(DataType::kFloat32,
                                                              DataType::kFloat16, DataType::kInt64,
                                                              DataType::kInt32, DataType::kFloat64),
                                            ::testing::Values<int64_t>(1, -1), ::testing::Bool(),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return TypeName(std::get<0>(info.param)) + "_axis" +
                                  (std::get<1>(info.param) < 0 ? "Last" : "1") +
                                  (std::get<2>(info.param) ? "_exclusive" : "") +
                                  (std::get<3>(info.param) ? "_reverse" : "");
                         });

class TriluTest : public ::testing::TestWithParam<std::tuple<DataType, bool, int64_t>> {};

TEST_P(TriluTest, MatchesReference) {
  const auto [t, upper, k] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 5, 7}, Lo(t) + 1.0f, 100.0f, t);
  TensorRef y = b.graph().AddNode(internal::kTrilu, {x}, TriluAttrs{upper, k});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(TypesAndK, TriluTest,
                         ::testing::Combine(::testing::ValuesIn(kAllTypes), ::testing::Bool(),
                                            ::testing::Values<int64_t>(-2, 0, 1, 100)),
                         [](const auto& info) {
                           const int64_t k = std::get<2>(info.param);
                           return TypeName(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_upper_k" : "_lower_k") +
                                  (k < 0 ? "m" + std::to_string(-k) : std::to_string(k));
                         });

class ArgReduceTest
    : public ::testing::TestWithParam<std::tuple<const char*, DataType, bool, bool>> {};

TEST_P(ArgReduceTest, MatchesReference) {
  const auto [name, t, keepdims, last] = GetParam();
  OpGraphBuilder b;
  // Few distinct values: ties decide between first and last index.
  TensorRef x = b.Input("x", {3, 9, 4}, Lo(t), 4.0f, t);
  TensorRef y = b.graph().AddNode(OpType(name), {x}, ArgReduceAttrs{1, keepdims, last});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(OpsTypesAndFlags, ArgReduceTest,
                         ::testing::Combine(::testing::Values("ArgMax", "ArgMin"),
                                            ::testing::ValuesIn(kNumericTypes), ::testing::Bool(),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  TypeName(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "_keepdims" : "") +
                                  (std::get<3>(info.param) ? "_last" : "");
                         });

class TopKTest : public ::testing::TestWithParam<std::tuple<DataType, bool, bool>> {};

TEST_P(TopKTest, MatchesReference) {
  const auto [t, largest, indices] = GetParam();
  OpGraphBuilder b;
  // Few distinct values: ties must come out lowest index first.
  TensorRef x = b.Input("x", {3, 11, 4}, Lo(t), 4.0f, t);
  TensorRef y =
      b.graph().AddNode(internal::kTopK, {x}, internal::TopKAttrs{1, 5, largest, indices});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(TypesAndFlags, TopKTest,
                         ::testing::Combine(::testing::ValuesIn(kNumericTypes), ::testing::Bool(),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return TypeName(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_largest" : "_smallest") +
                                  (std::get<2>(info.param) ? "_indices" : "_values");
                         });

class HardmaxTest : public ::testing::TestWithParam<std::tuple<DataType, int64_t, bool>> {};

TEST_P(HardmaxTest, MatchesReference) {
  const auto [t, axis, coerce] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 6, 5}, -1.0f, 1.0f, t);
  TensorRef y = b.graph().AddNode(internal::kHardmax, {x}, internal::HardmaxAttrs{axis, coerce});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(TypesAndAxes, HardmaxTest,
                         ::testing::Combine(::testing::Values(DataType::kFloat32,
                                                              DataType::kFloat16),
                                            ::testing::Values<int64_t>(1, -1), ::testing::Bool()),
                         [](const auto& info) {
                           return TypeName(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) < 0 ? "_axisLast" : "_axis1") +
                                  (std::get<2>(info.param) ? "_coerced" : "");
                         });

// The attention-mask chain of an exported BERT: an int64 mask [batch, seq]
// of 0/1 (a different mask per row) is unsqueezed, expanded to
// [batch, 1, seq, seq] as int64, cast to float, turned into
// (1 - mask) * -1e4 (or, in newer exports, into finfo.min where the
// inverted mask is true) and added to the attention scores before Softmax.
// Masked positions must come out exactly 0, as in the reference.
class AttentionMaskTest : public ::testing::TestWithParam<bool> {};

TEST_P(AttentionMaskTest, MasksScoresLikeTheReference) {
  const bool where_form = GetParam();
  constexpr int64_t kBatch = 2, kHeads = 3, kSeq = 9;
  OpGraphBuilder b;
  GraphBuilder& g = b.graph();
  TensorRef mask = b.Input("attention_mask", {kBatch, kSeq}, 0.0f, 2.0f, DataType::kInt64);
  TensorRef scores = b.Input("scores", {kBatch, kHeads, kSeq, kSeq}, -4.0f, 4.0f);
  TensorRef m4 = g.Reshape(mask, {kBatch, 1, 1, kSeq});
  TensorRef expanded =
      g.AddNode(OpType("Expand"), {m4}, internal::ExpandAttrs{{kBatch, 1, kSeq, kSeq}});
  TensorRef as_float = g.AddNode(internal::kCast, {expanded}, internal::CastAttrs{});
  TensorRef inverted = g.AddNode(OpType::kSub, {g.Constant("one", {}, {1.0f}), as_float});
  TensorRef additive;
  if (where_form) {
    TensorRef is_masked =
        g.AddNode(internal::kCast, {inverted}, internal::CastAttrs{DataType::kBool});
    additive = g.AddNode(internal::kWhere,
                         {is_masked, g.Constant("min", {}, {-3.4028234663852886e38f}), inverted});
  } else {
    additive = g.AddNode(OpType::kMul, {inverted, g.Constant("big", {}, {-1e4f})});
  }
  TensorRef probs = g.Softmax(g.Add(scores, additive), -1);
  // exp(-1e4) and exp(finfo.min) are 0 in float: masked entries are exact
  // zeros on both sides; the rest is a softmax of 9 terms.
  CheckOptions options;
  options.atol = 1e-6f;
  options.rtol = 1e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(probs), options);
}

INSTANTIATE_TEST_SUITE_P(Forms, AttentionMaskTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Where" : "MulAdd"; });

}  // namespace
}  // namespace recq::optest
