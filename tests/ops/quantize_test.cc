// Linear quantization ops against the CPU reference
// (tests/reference/ops/quantize.cc): QuantizeLinear and DequantizeLinear per
// tensor, per axis and per block for every integer type, the
// DynamicQuantizeLinear parameters, and the integer matrix products and
// convolutions (MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv).
// Integer outputs must match exactly: scales are powers of two where a
// division or a requantization would otherwise round (x / 2^e is exact),
// so the comparison does not depend on the device's division. Float
// outputs of DequantizeLinear are one float multiply of exact operands, so
// they match exactly too (DequantizeLinear runs under fp16 storage as
// well, within two half roundings). fp16 storage is not run for integer
// results: it rounds the float input of QuantizeLinear, which moves
// integers by one.
#include <random>
#include <string>
#include <vector>

#include "engine/ops/quantize.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::QuantizeAttrs;

CheckOptions IntegerExact() {
  CheckOptions o = Exact();
  o.precisions = {EngineOptions::Precision::kFp32};
  return o;
}

// Range of draws for an integer type: [lo, hi + 1), rounded down.
std::pair<float, float> Draws(DataType t) {
  switch (t) {
    case DataType::kUInt8:
      return {0.0f, 256.0f};
    case DataType::kInt8:
      return {-128.0f, 128.0f};
    case DataType::kUInt16:
      return {0.0f, 65536.0f};
    case DataType::kInt16:
      return {-32768.0f, 32768.0f};
    default:
      return {-100000.0f, 100000.0f};
  }
}

// PowerOfTwoScales returns n scales 2^e, e in [lo, hi].
std::vector<double> PowerOfTwoScales(int64_t n, int lo, int hi) {
  std::mt19937_64 rng(NextSeed());
  std::uniform_int_distribution<int> e(lo, hi);
  std::vector<double> v(n);
  for (double& s : v) s = std::ldexp(1.0, e(rng));
  return v;
}

// ZeroPoints returns n random values of t's range.
std::vector<double> ZeroPoints(int64_t n, DataType t) {
  std::mt19937_64 rng(NextSeed());
  const auto [lo, hi] = Draws(t);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& z : v) z = std::floor(u(rng));
  return v;
}

enum class Layout { kTensor, kAxis, kBlock };
const char* LayoutName(Layout l) {
  return l == Layout::kTensor ? "tensor" : l == Layout::kAxis ? "axis" : "block";
}

// The scale / zero-point shape for x [2, 7, 5] quantized along axis 1
// (blocks of 3 along it).
std::vector<int64_t> ParamShape(Layout l) {
  switch (l) {
    case Layout::kTensor:
      return {};
    case Layout::kAxis:
      return {7};
    case Layout::kBlock:
      return {2, 3, 5};
  }
  return {};
}
QuantizeAttrs AttrsFor(Layout l, DataType to) {
  QuantizeAttrs a;
  a.axis = l == Layout::kAxis ? -2 : 1;
  a.block_size = l == Layout::kBlock ? 3 : 0;
  a.to = to;
  return a;
}
int64_t Elements(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

class QuantizeLinearTest : public ::testing::TestWithParam<std::tuple<DataType, Layout>> {};

TEST_P(QuantizeLinearTest, MatchesReference) {
  const auto [to, layout] = GetParam();
  const std::vector<int64_t> ps = ParamShape(layout);
  OpGraphBuilder b;
  // Wide enough to saturate the 8-bit types on both sides.
  const float range = DataTypeSize(to) == 1 ? 600.0f : 40000.0f;
  TensorRef x = b.Input("x", {2, 7, 5}, -range, range);
  TensorRef scale = b.graph().Constant(
      "scale", ps,
      HostData::FromDoubles(DataType::kFloat32, PowerOfTwoScales(Elements(ps), -2, 2)));
  TensorRef zp =
      b.graph().Constant("zp", ps, HostData::FromDoubles(to, ZeroPoints(Elements(ps), to)));
  TensorRef y = b.graph().AddNode(internal::kQuantizeLinear, {x, scale, zp}, AttrsFor(layout, to));
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

INSTANTIATE_TEST_SUITE_P(TypesAndLayouts, QuantizeLinearTest,
                         ::testing::Combine(::testing::Values(DataType::kUInt8, DataType::kInt8,
                                                              DataType::kUInt16, DataType::kInt16),
                                            ::testing::Values(Layout::kTensor, Layout::kAxis,
                                                              Layout::kBlock)),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) + "_" +
                                  LayoutName(std::get<1>(info.param));
                         });

// float16 x and scale, no zero point (0).
TEST(QuantizeLinearTest, HalfInputWithoutZeroPoint) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 4, 9}, -300.0f, 300.0f, DataType::kFloat16);
  TensorRef scale = b.graph().Constant(
      "scale", {4}, HostData::FromDoubles(DataType::kFloat16, PowerOfTwoScales(4, -1, 1)));
  TensorRef y = b.graph().AddNode(internal::kQuantizeLinear, {x, scale},
                                  AttrsFor(Layout::kAxis, DataType::kInt8));
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

// Half-integers x / scale round half to even: integers dequantized with
// scale 1/2 and quantized with scale 1.
TEST(QuantizeLinearTest, RoundsHalfToEven) {
  OpGraphBuilder b;
  TensorRef q = b.Input("q", {64}, -400.0f, 400.0f, DataType::kInt16);
  TensorRef half = b.graph().Constant("half", {}, std::vector<float>{0.5f});
  TensorRef one = b.graph().Constant("one", {}, std::vector<float>{1.0f});
  TensorRef x = b.graph().AddNode(internal::kDequantizeLinear, {q, half}, QuantizeAttrs{});
  TensorRef y = b.graph().AddNode(internal::kQuantizeLinear, {x, one},
                                  AttrsFor(Layout::kTensor, DataType::kInt8));
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

class DequantizeLinearTest : public ::testing::TestWithParam<std::tuple<DataType, Layout>> {};

TEST_P(DequantizeLinearTest, MatchesReference) {
  const auto [from, layout] = GetParam();
  const std::vector<int64_t> ps = ParamShape(layout);
  OpGraphBuilder b;
  const auto [lo, hi] = Draws(from);
  TensorRef x = b.Input("x", {2, 7, 5}, lo, hi, from);
  TensorRef scale = b.Constant("scale", ps, 0.001f, 2.0f);
  TensorRef zp =
      b.graph().Constant("zp", ps, HostData::FromDoubles(from, ZeroPoints(Elements(ps), from)));
  TensorRef y =
      b.graph().AddNode(internal::kDequantizeLinear, {x, scale, zp}, AttrsFor(layout, from));
  // Under fp16 storage too (a half scale and a half result) for the 8-bit
  // types; the wider ones reach past half's range (65504).
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y),
                                DataTypeSize(from) == 1 ? Exact() : IntegerExact());
}

INSTANTIATE_TEST_SUITE_P(
    TypesAndLayouts, DequantizeLinearTest,
    ::testing::Combine(::testing::Values(DataType::kUInt8, DataType::kInt8, DataType::kUInt16,
                                         DataType::kInt16, DataType::kInt32),
                       ::testing::Values(Layout::kTensor, Layout::kAxis, Layout::kBlock)),
    [](const auto& info) {
      return std::string(DataTypeName(std::get<0>(info.param))) + "_" +
             LayoutName(std::get<1>(info.param));
    });

// A float16 result (the scale's type): one rounding of the float product.
TEST(DequantizeLinearTest, HalfResult) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {5, 11}, -128.0f, 128.0f, DataType::kInt8);
  TensorRef scale = b.graph().Constant(
      "scale", {}, HostData::FromDoubles(DataType::kFloat16, std::vector<double>{0.0371}));
  TensorRef y = b.graph().AddNode(internal::kDequantizeLinear, {x, scale}, QuantizeAttrs{});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

TEST(QuantizeLinearTest, RejectsAScaleThatFitsNoLayout) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 7, 5});
  TensorRef scale = b.Constant("scale", {5}, std::vector<float>(5, 1.0f));
  b.Output(b.AddNode(internal::kQuantizeLinear, {x, scale}, QuantizeAttrs{}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("expected one element or [7]"), std::string::npos) << s;
}

// DynamicQuantizeLinear's parameters and the quantization with them (its
// import). The scale is a correctly rounded division where the device has
// fp64 (PoCL does); the zero point and y then match exactly.
class DynamicQuantizeTest : public ::testing::TestWithParam<int> {};

TEST_P(DynamicQuantizeTest, MatchesReference) {
  OpGraphBuilder b;
  // Ranges all positive, all negative and mixed (lo = min(0, min x)).
  const float lo = GetParam() == 0 ? -3.0f : GetParam() == 1 ? 0.5f : -9.0f;
  const float hi = GetParam() == 0 ? 5.0f : GetParam() == 1 ? 7.0f : -1.0f;
  TensorRef x = b.Input("x", {3, 331}, lo, hi);
  TensorRef scale = b.graph().AddNode(internal::kDynamicQuantizeParams, {x},
                                      internal::DynamicQuantizeParamsAttrs{false});
  TensorRef zp = b.graph().AddNode(internal::kDynamicQuantizeParams, {x},
                                   internal::DynamicQuantizeParamsAttrs{true});
  TensorRef y = b.graph().AddNode(internal::kQuantizeLinear, {x, scale, zp}, QuantizeAttrs{});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

INSTANTIATE_TEST_SUITE_P(Ranges, DynamicQuantizeTest, ::testing::Values(0, 1, 2));

TEST(DynamicQuantizeTest, ScaleAlone) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1000}, -2.0f, 3.0f);
  TensorRef scale = b.graph().AddNode(internal::kDynamicQuantizeParams, {x},
                                      internal::DynamicQuantizeParamsAttrs{false});
  // Under fp16 storage too (x and the scale in half).
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(scale), Exact());
}

// --- integer matrix products ---

enum class Zp { kNone, kTensor, kPerIndex };

class MatMulIntegerTest : public ::testing::TestWithParam<std::tuple<DataType, DataType, Zp>> {};

TEST_P(MatMulIntegerTest, BroadcastsBatchesAndMatchesReference) {
  const auto [ta, tb, zp] = GetParam();
  OpGraphBuilder b;
  const auto [la, ha] = Draws(ta);
  const auto [lb, hb] = Draws(tb);
  // K = 37: sums stay below 2^24, where the reference's floats are exact.
  TensorRef a = b.Input("a", {2, 1, 5, 37}, la, ha, ta);
  TensorRef bm = b.Input("b", {3, 37, 6}, lb, hb, tb);
  std::vector<TensorRef> in = {a, bm};
  if (zp != Zp::kNone) {
    in.push_back(b.Input("azp", {zp == Zp::kTensor ? 1 : 5}, la, ha, ta));
    in.push_back(b.Input("bzp", {zp == Zp::kTensor ? 1 : 6}, lb, hb, tb));
  }
  TensorRef y = b.graph().AddNode(internal::kMatMulInteger, in);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

INSTANTIATE_TEST_SUITE_P(Types, MatMulIntegerTest,
                         ::testing::Combine(::testing::Values(DataType::kUInt8, DataType::kInt8),
                                            ::testing::Values(DataType::kUInt8, DataType::kInt8),
                                            ::testing::Values(Zp::kNone, Zp::kTensor,
                                                              Zp::kPerIndex)),
                         [](const auto& info) {
                           const Zp z = std::get<2>(info.param);
                           return std::string(DataTypeName(std::get<0>(info.param))) + "_" +
                                  DataTypeName(std::get<1>(info.param)) + "_" +
                                  (z == Zp::kNone     ? "nozp"
                                   : z == Zp::kTensor ? "zp"
                                                      : "zp_per_row_col");
                         });

class QLinearMatMulTest : public ::testing::TestWithParam<std::tuple<DataType, bool>> {};

TEST_P(QLinearMatMulTest, MatchesReference) {
  const auto [t, per_index] = GetParam();
  OpGraphBuilder b;
  const auto [lo, hi] = Draws(t);
  const int64_t m = 9, k = 23, n = 7;
  TensorRef a = b.Input("a", {2, m, k}, lo, hi, t);
  TensorRef bm = b.Input("b", {k, n}, lo, hi, t);
  const int64_t sm = per_index ? m : 1, sn = per_index ? n : 1;
  auto scale = [&](const char* name, int64_t count, int e_lo, int e_hi) {
    return b.graph().Constant(
        name, {count},
        HostData::FromDoubles(DataType::kFloat32, PowerOfTwoScales(count, e_lo, e_hi)));
  };
  TensorRef as = scale("as", sm, -7, -5);
  TensorRef azp = b.Input("azp", {sm}, lo, hi, t);
  TensorRef bs = scale("bs", sn, -7, -5);
  TensorRef bzp = b.Input("bzp", {sn}, lo, hi, t);
  TensorRef ys = scale("ys", 1, -6, -4);
  TensorRef yzp = b.Input("yzp", {}, lo, hi, t);
  TensorRef y = b.graph().AddNode(internal::kQLinearMatMul, {a, as, azp, bm, bs, bzp, ys, yzp});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

INSTANTIATE_TEST_SUITE_P(Types, QLinearMatMulTest,
                         ::testing::Combine(::testing::Values(DataType::kUInt8, DataType::kInt8),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_per_row_col" : "_per_tensor");
                         });

TEST(MatMulIntegerTest, RejectsFloatOperands) {
  GraphBuilder b;
  TensorRef a = b.Input("a", {4, 3});
  TensorRef c = b.Input("b", {3, 2}, DataType::kUInt8);
  b.Output(b.AddNode(internal::kMatMulInteger, {a, c}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("expected int8 or uint8"), std::string::npos) << s;
}

// --- integer convolutions ---

Conv2DAttrs ConvAttrs() {
  Conv2DAttrs a;
  a.strides = {2, 1};
  a.dilations = {1, 2};
  a.pads = {1, 2, 0, 1};
  a.groups = 2;
  return a;
}

class ConvIntegerTest : public ::testing::TestWithParam<std::tuple<DataType, bool>> {};

TEST_P(ConvIntegerTest, MatchesReference) {
  const auto [t, per_channel] = GetParam();
  OpGraphBuilder b;
  const auto [lo, hi] = Draws(t);
  TensorRef x = b.Input("x", {2, 4, 9, 8}, lo, hi, t);
  TensorRef w = b.Input("w", {6, 2, 3, 3}, lo, hi, t);
  TensorRef xzp = b.Input("xzp", {}, lo, hi, t);
  TensorRef wzp = b.Input("wzp", {per_channel ? 6 : 1}, lo, hi, t);
  TensorRef y = b.graph().AddNode(internal::kConvInteger, {x, w, xzp, wzp}, ConvAttrs());
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

INSTANTIATE_TEST_SUITE_P(Types, ConvIntegerTest,
                         ::testing::Combine(::testing::Values(DataType::kUInt8, DataType::kInt8),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_per_channel" : "_per_tensor");
                         });

TEST(ConvIntegerTest, WithoutZeroPoints) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 3, 6, 7}, 0.0f, 256.0f, DataType::kUInt8);
  TensorRef w = b.Input("w", {5, 3, 2, 2}, -128.0f, 128.0f, DataType::kInt8);
  TensorRef y = b.graph().AddNode(internal::kConvInteger, {x, w}, Conv2DAttrs{});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

class QLinearConvTest : public ::testing::TestWithParam<std::tuple<DataType, bool>> {};

TEST_P(QLinearConvTest, MatchesReference) {
  const auto [t, bias] = GetParam();
  OpGraphBuilder b;
  const auto [lo, hi] = Draws(t);
  TensorRef x = b.Input("x", {2, 4, 9, 8}, lo, hi, t);
  TensorRef w = b.Input("w", {6, 2, 3, 3}, lo, hi, t);
  TensorRef xs = b.graph().Constant(
      "xs", {}, HostData::FromDoubles(DataType::kFloat32, PowerOfTwoScales(1, -6, -4)));
  TensorRef ws = b.graph().Constant(
      "ws", {6}, HostData::FromDoubles(DataType::kFloat32, PowerOfTwoScales(6, -6, -4)));
  TensorRef ys = b.graph().Constant(
      "ys", {}, HostData::FromDoubles(DataType::kFloat32, PowerOfTwoScales(1, -4, -2)));
  std::vector<TensorRef> in = {x,
                               xs,
                               b.Input("xzp", {}, lo, hi, t),
                               w,
                               ws,
                               b.Input("wzp", {6}, lo, hi, t),
                               ys,
                               b.Input("yzp", {}, lo, hi, t)};
  if (bias) in.push_back(b.Input("bias", {6}, -20000.0f, 20000.0f, DataType::kInt32));
  TensorRef y = b.graph().AddNode(internal::kQLinearConv, in, ConvAttrs());
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), IntegerExact());
}

INSTANTIATE_TEST_SUITE_P(Types, QLinearConvTest,
                         ::testing::Combine(::testing::Values(DataType::kUInt8, DataType::kInt8),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(DataTypeName(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_bias" : "_no_bias");
                         });

// The op's Unimplemented comes back through graph validation.
TEST(ConvIntegerTest, ThreeDimensionalIsRejected) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 2, 4, 4, 4}, DataType::kUInt8);
  TensorRef w = b.Input("w", {3, 2, 2, 2, 2}, DataType::kUInt8);
  b.Output(b.AddNode(internal::kConvInteger, {x, w}, Conv2DAttrs{}), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("only 2-D convolutions"), std::string::npos) << s;
}

}  // namespace
}  // namespace recq::optest
