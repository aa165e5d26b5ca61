// Tests of the CPU reference ops themselves: hand-computed cases with exact
// known numbers, plus cross-checks of the loop-reordered Conv2D and Gemm
// against direct transcriptions of their definitions.
#include "reference/reference_ops.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/graph.h"
#include "reference/reference_executor.h"

namespace recq::reference {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// Iota returns a tensor of `shape` holding start, start+1, ...
HostTensor Iota(std::vector<int64_t> shape, float start = 0.0f) {
  HostTensor t{std::move(shape), {}};
  t.data.resize(NumElements(t.shape));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = start + static_cast<float>(i);
  return t;
}

HostTensor Make(std::vector<int64_t> shape, std::vector<float> data) {
  return HostTensor{std::move(shape), std::move(data)};
}

// ---------------------------------------------------------------- Conv2D

TEST(Conv2DTest, ValidKernel2x2) {
  const HostTensor x = Iota({1, 1, 3, 3}, 1.0f);
  const HostTensor w = Make({1, 1, 2, 2}, {1, 1, 1, 1});
  absl::StatusOr<HostTensor> y = Conv2D(x, w, nullptr, {});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(y->data, ElementsAre(12, 16, 24, 28));
}

TEST(Conv2DTest, PaddedStride2WithBias) {
  const HostTensor x = Iota({1, 1, 3, 3}, 1.0f);
  const HostTensor w = Make({1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 2});
  const HostTensor b = Make({1}, {0.5f});
  Conv2DAttrs attrs;
  attrs.strides = {2, 2};
  attrs.pads = {1, 1, 1, 1};
  absl::StatusOr<HostTensor> y = Conv2D(x, w, &b, attrs);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 2, 2));
  // out(oy,ox) = x[2oy-1][2ox-1] + 2 * x[2oy+1][2ox+1] + 0.5, zero outside.
  EXPECT_THAT(y->data, ElementsAre(10.5f, 0.5f, 0.5f, 5.5f));
}

TEST(Conv2DTest, AsymmetricPads) {
  const HostTensor x = Iota({1, 1, 3, 3}, 1.0f);
  const HostTensor w = Make({1, 1, 2, 2}, {1, 2, 3, 4});
  Conv2DAttrs attrs;
  attrs.pads = {0, 1, 1, 0};  // top, left, bottom, right
  absl::StatusOr<HostTensor> y = Conv2D(x, w, nullptr, attrs);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 3, 3));
  EXPECT_THAT(y->data, ElementsAre(18, 37, 47, 36, 67, 77, 14, 23, 26));
}

TEST(Conv2DTest, Dilation2) {
  const HostTensor x = Iota({1, 1, 5, 5});
  const HostTensor w = Make({1, 1, 2, 2}, {1, 1, 1, 1});
  Conv2DAttrs attrs;
  attrs.dilations = {2, 2};
  absl::StatusOr<HostTensor> y = Conv2D(x, w, nullptr, attrs);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 3, 3));
  // x[y][x] + x[y][x+2] + x[y+2][x] + x[y+2][x+2] = 4 * (5y + x) + 24.
  EXPECT_THAT(y->data, ElementsAre(24, 28, 32, 44, 48, 52, 64, 68, 72));
}

TEST(Conv2DTest, Depthwise) {
  const HostTensor x = Iota({1, 2, 2, 2}, 1.0f);
  const HostTensor w = Make({2, 1, 1, 1}, {2, -1});
  Conv2DAttrs attrs;
  attrs.groups = 2;
  absl::StatusOr<HostTensor> y = Conv2D(x, w, nullptr, attrs);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->data, ElementsAre(2, 4, 6, 8, -5, -6, -7, -8));
}

TEST(Conv2DTest, TwoGroupsMixOnlyTheirChannels) {
  // 4 input channels filled with 1, 10, 100, 1000; 2 groups, 1x1 kernels of
  // ones: output 0 sees channels 0-1, output 1 channels 2-3.
  HostTensor x{{1, 4, 1, 1}, {1, 10, 100, 1000}};
  const HostTensor w = Make({2, 2, 1, 1}, {1, 1, 1, 1});
  Conv2DAttrs attrs;
  attrs.groups = 2;
  absl::StatusOr<HostTensor> y = Conv2D(x, w, nullptr, attrs);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->data, ElementsAre(11, 1100));
}

TEST(Conv2DTest, RejectsBadShapes) {
  const HostTensor x = Iota({1, 3, 4, 4});
  EXPECT_EQ(Conv2D(x, Iota({2, 2, 1, 1}), nullptr, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  const HostTensor bias = Iota({3});
  EXPECT_EQ(Conv2D(x, Iota({2, 3, 1, 1}), &bias, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Conv2D(x, Iota({2, 3, 5, 5}), nullptr, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// NaiveConv2D transcribes the ONNX definition with no loop reordering.
HostTensor NaiveConv2D(const HostTensor& x, const HostTensor& w, const HostTensor* b,
                       const Conv2DAttrs& a) {
  const int64_t n_size = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t oc_size = w.shape[0], icpg = w.shape[1], kh_size = w.shape[2], kw_size = w.shape[3];
  const int64_t oh_size =
      (h + a.pads[0] + a.pads[2] - a.dilations[0] * (kh_size - 1) - 1) / a.strides[0] + 1;
  const int64_t ow_size =
      (wd + a.pads[1] + a.pads[3] - a.dilations[1] * (kw_size - 1) - 1) / a.strides[1] + 1;
  const int64_t ocpg = oc_size / a.groups;
  HostTensor y{{n_size, oc_size, oh_size, ow_size}, {}};
  for (int64_t n = 0; n < n_size; ++n) {
    for (int64_t oc = 0; oc < oc_size; ++oc) {
      for (int64_t oy = 0; oy < oh_size; ++oy) {
        for (int64_t ox = 0; ox < ow_size; ++ox) {
          double sum = b != nullptr ? b->data[oc] : 0.0;
          for (int64_t i = 0; i < icpg; ++i) {
            const int64_t ic = (oc / ocpg) * icpg + i;
            for (int64_t ky = 0; ky < kh_size; ++ky) {
              for (int64_t kx = 0; kx < kw_size; ++kx) {
                const int64_t iy = oy * a.strides[0] - a.pads[0] + ky * a.dilations[0];
                const int64_t ix = ox * a.strides[1] - a.pads[1] + kx * a.dilations[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                sum += static_cast<double>(x.data[((n * c + ic) * h + iy) * wd + ix]) *
                       w.data[((oc * icpg + i) * kh_size + ky) * kw_size + kx];
              }
            }
          }
          y.data.push_back(static_cast<float>(sum));
        }
      }
    }
  }
  return y;
}

struct ConvCase {
  std::vector<int64_t> x_shape;
  std::vector<int64_t> w_shape;
  Conv2DAttrs attrs;
  bool bias;
};

TEST(Conv2DTest, MatchesNaiveDefinition) {
  std::vector<ConvCase> cases;
  cases.push_back({{2, 3, 9, 8}, {4, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, true});
  cases.push_back({{1, 4, 10, 7}, {6, 2, 5, 5}, {{2, 2}, {1, 1}, {2, 2, 2, 2}, 2}, false});
  cases.push_back({{1, 6, 8, 8}, {6, 1, 3, 3}, {{2, 1}, {1, 1}, {0, 1, 2, 0}, 6}, true});
  cases.push_back({{1, 2, 11, 9}, {3, 2, 7, 2}, {{1, 2}, {2, 1}, {3, 0, 1, 1}, 1}, true});
  cases.push_back({{2, 2, 6, 6}, {2, 2, 3, 3}, {{3, 3}, {2, 2}, {1, 2, 3, 0}, 1}, false});
  uint64_t seed = 100;
  for (const ConvCase& c : cases) {
    const HostTensor x = RandomTensor(c.x_shape, seed++);
    const HostTensor w = RandomTensor(c.w_shape, seed++);
    const HostTensor b = RandomTensor({c.w_shape[0]}, seed++);
    const HostTensor* bias = c.bias ? &b : nullptr;
    absl::StatusOr<HostTensor> y = Conv2D(x, w, bias, c.attrs);
    ASSERT_TRUE(y.ok()) << y.status();
    const HostTensor expected = NaiveConv2D(x, w, bias, c.attrs);
    EXPECT_EQ(y->shape, expected.shape);
    const CompareResult r = Compare(y->data, expected.data, 1e-6f, 1e-6f);
    EXPECT_TRUE(r.ok()) << "case x " << ShapeString(c.x_shape) << ": " << r.ToString();
  }
}

// ---------------------------------------------------------------- BatchNorm

TEST(BatchNormTest, PerChannel) {
  const HostTensor x = Iota({1, 2, 1, 2}, 1.0f);
  absl::StatusOr<HostTensor> y =
      BatchNorm(x, Make({2}, {2, 1}), Make({2}, {0.5f, -1}), Make({2}, {1, 3}), Make({2}, {3, 0}),
                BatchNormAttrs{1.0f});
  ASSERT_TRUE(y.ok()) << y.status();
  // ch0: (x - 1) / 2 * 2 + 0.5; ch1: (x - 3) / 1 * 1 - 1.
  EXPECT_THAT(y->data, ElementsAre(0.5f, 1.5f, -1.0f, 0.0f));
}

TEST(BatchNormTest, RejectsWrongParamLength) {
  const HostTensor x = Iota({1, 2, 1, 2});
  const HostTensor p = Make({2}, {1, 1});
  EXPECT_EQ(BatchNorm(x, Make({3}, {1, 1, 1}), p, p, p, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- Activations

TEST(ActivationTest, Values) {
  EXPECT_THAT(Relu(Make({3}, {-1, 0, 2})).data, ElementsAre(0, 0, 2));
  EXPECT_THAT(Clip(Make({3}, {-1, 3, 7}), 0, 6).data, ElementsAre(0, 3, 6));
  EXPECT_THAT(LeakyRelu(Make({2}, {-2, 3}), 0.1f).data, ElementsAre(FloatEq(-0.2f), 3));
  EXPECT_THAT(Sigmoid(Make({2}, {0, std::log(3.0f)})).data,
              ElementsAre(FloatEq(0.5f), FloatEq(0.75f)));
  EXPECT_THAT(HardSigmoid(Make({4}, {-3, 0, 1, 3}), 0.2f, 0.5f).data,
              ElementsAre(0, 0.5f, FloatEq(0.7f), 1));
  EXPECT_THAT(HardSwish(Make({5}, {-4, -1, 0, 1, 4})).data,
              ElementsAre(0, FloatEq(-1.0f / 3.0f), 0, FloatEq(2.0f / 3.0f), 4));
}

TEST(ActivationTest, ApplyActivationMatchesOps) {
  const HostTensor x = RandomTensor({64}, 1, -8.0f, 8.0f);
  struct Case {
    Activation act;
    HostTensor expected;
  };
  const Case cases[] = {
      {{ActivationKind::kNone, 0, 0}, x},
      {{ActivationKind::kRelu, 0, 0}, Relu(x)},
      {{ActivationKind::kClip, 0, 6}, Clip(x, 0, 6)},
      {{ActivationKind::kLeakyRelu, 0.01f, 0}, LeakyRelu(x, 0.01f)},
      {{ActivationKind::kSigmoid, 0, 0}, Sigmoid(x)},
      {{ActivationKind::kHardSigmoid, 0.2f, 0.5f}, HardSigmoid(x, 0.2f, 0.5f)},
      {{ActivationKind::kHardSwish, 0, 0}, HardSwish(x)},
  };
  for (const Case& c : cases) {
    HostTensor y = x;
    ApplyActivation(c.act, y);
    EXPECT_THAT(y.data, ElementsAreArray(c.expected.data)) << ActivationKindName(c.act.kind);
  }
  EXPECT_EQ(ApplyActivation({ActivationKind::kClip, -1, 1}, 5.0f), 1.0f);
}

// ---------------------------------------------------------------- Binary ops

TEST(BinaryTest, SameShape) {
  absl::StatusOr<HostTensor> y = Sub(Make({2}, {5, 1}), Make({2}, {2, 3}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->data, ElementsAre(3, -2));
  y = Div(Make({2}, {1, 3}), Make({2}, {4, 2}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->data, ElementsAre(0.25f, 1.5f));
}

TEST(BinaryTest, BroadcastTrailingVector) {
  absl::StatusOr<HostTensor> y = Add(Iota({2, 3}), Make({3}, {10, 20, 30}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2, 3));
  EXPECT_THAT(y->data, ElementsAre(10, 21, 32, 13, 24, 35));
}

TEST(BinaryTest, BroadcastBothWays) {
  absl::StatusOr<HostTensor> y = Mul(Make({2, 1}, {1, 2}), Make({1, 3}, {1, 10, 100}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2, 3));
  EXPECT_THAT(y->data, ElementsAre(1, 10, 100, 2, 20, 200));
}

TEST(BinaryTest, BroadcastChannelVector) {
  // [1,2,2,2] + [2,1,1]: channel c gets 100 * (c + 1).
  absl::StatusOr<HostTensor> y = Add(Iota({1, 2, 2, 2}), Make({2, 1, 1}, {100, 200}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(1, 2, 2, 2));
  EXPECT_THAT(y->data, ElementsAre(100, 101, 102, 103, 204, 205, 206, 207));
}

TEST(BinaryTest, ScalarLike) {
  absl::StatusOr<HostTensor> y = Sub(Make({1}, {10}), Iota({2, 2}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2, 2));
  EXPECT_THAT(y->data, ElementsAre(10, 9, 8, 7));
  y = Mul(Iota({3}), Make({}, {2}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(3));
  EXPECT_THAT(y->data, ElementsAre(0, 2, 4));
}

TEST(BinaryTest, RejectsIncompatibleShapes) {
  absl::StatusOr<HostTensor> y = Add(Iota({2, 3}), Iota({2}));
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(y.status().message(), HasSubstr("[2,3]"));
}

// ---------------------------------------------------------------- Pools

TEST(PoolTest, OutputSize) {
  EXPECT_EQ(*PoolOutputSize(5, 2, 2, 1, 0, 0, false), 2);
  EXPECT_EQ(*PoolOutputSize(5, 2, 2, 1, 0, 0, true), 3);
  EXPECT_EQ(*PoolOutputSize(112, 3, 2, 1, 1, 1, false), 56);
  // ceil would give 3 windows, but the third starts at 3 = in + pad_begin,
  // entirely in the end padding, so ONNX drops it.
  EXPECT_EQ(*PoolOutputSize(3, 2, 2, 1, 1, 1, true), 2);
  EXPECT_EQ(*PoolOutputSize(7, 3, 1, 2, 0, 0, false), 3);
  EXPECT_FALSE(PoolOutputSize(2, 3, 1, 1, 0, 0, false).ok());
}

TEST(PoolTest, MaxPool) {
  PoolAttrs attrs;
  attrs.kernel = {2, 2};
  attrs.strides = {2, 2};
  absl::StatusOr<HostTensor> y = MaxPool(Iota({1, 1, 4, 4}), attrs);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(y->data, ElementsAre(5, 7, 13, 15));
}

TEST(PoolTest, MaxPoolCeilModeAndNegativeValues) {
  PoolAttrs attrs;
  attrs.kernel = {2, 2};
  attrs.strides = {2, 2};
  attrs.ceil_mode = true;
  HostTensor x = Iota({1, 1, 5, 5}, -100.0f);  // negative: padding must not win
  absl::StatusOr<HostTensor> y = MaxPool(x, attrs);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 3, 3));
  EXPECT_THAT(y->data, ElementsAre(-94, -92, -91, -84, -82, -81, -79, -77, -76));
}

TEST(PoolTest, MaxPoolPaddedDilated) {
  PoolAttrs attrs;
  attrs.kernel = {2, 2};
  attrs.dilations = {2, 2};
  attrs.pads = {1, 1, 1, 1};
  absl::StatusOr<HostTensor> y = MaxPool(Iota({1, 1, 3, 3}, -9.0f), attrs);
  ASSERT_TRUE(y.ok());
  // Output 3x3; taps at (oy-1, ox-1) + {0,2}^2; the largest valid tap wins.
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 3, 3));
  EXPECT_THAT(y->data, ElementsAre(-5, -4, -5, -2, -1, -2, -5, -4, -5));
}

TEST(PoolTest, AveragePoolPaddingCount) {
  PoolAttrs attrs;
  attrs.kernel = {2, 2};
  attrs.pads = {1, 1, 0, 0};
  const HostTensor x = Iota({1, 1, 3, 3}, 1.0f);
  absl::StatusOr<HostTensor> excl = AveragePool(x, attrs);
  ASSERT_TRUE(excl.ok());
  EXPECT_THAT(excl->shape, ElementsAre(1, 1, 3, 3));
  EXPECT_THAT(excl->data, ElementsAre(1, 1.5f, 2.5f, 2.5f, 3, 4, 5.5f, 6, 7));
  attrs.count_include_pad = true;
  absl::StatusOr<HostTensor> incl = AveragePool(x, attrs);
  ASSERT_TRUE(incl.ok());
  EXPECT_THAT(incl->data, ElementsAre(0.25f, 0.75f, 1.25f, 1.25f, 3, 4, 2.75f, 6, 7));
}

TEST(PoolTest, AveragePoolCeilModeNeverCountsBeyondPads) {
  PoolAttrs attrs;
  attrs.kernel = {2, 2};
  attrs.strides = {2, 2};
  attrs.ceil_mode = true;
  attrs.count_include_pad = true;
  const HostTensor x = Iota({1, 1, 3, 3}, 1.0f);
  absl::StatusOr<HostTensor> y = AveragePool(x, attrs);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(y->data, ElementsAre(3, 4.5f, 7.5f, 9));
  // With an explicit end pad of 1, the taps in it count.
  attrs.pads = {0, 0, 1, 1};
  y = AveragePool(x, attrs);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(y->data, ElementsAre(3, 2.25f, 3.75f, 2.25f));
}

TEST(PoolTest, GlobalAveragePool) {
  absl::StatusOr<HostTensor> y = GlobalAveragePool(Iota({1, 2, 2, 2}, 1.0f));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(1, 2, 1, 1));
  EXPECT_THAT(y->data, ElementsAre(2.5f, 6.5f));
}

// ---------------------------------------------------------------- Gemm, MatMul

class GemmTest : public ::testing::Test {
 protected:
  const HostTensor a_ = Make({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor a_t_ = Make({3, 2}, {1, 4, 2, 5, 3, 6});
  const HostTensor b_ = Make({3, 2}, {1, 0, 0, 1, 1, 1});
  const HostTensor b_t_ = Make({2, 3}, {1, 0, 1, 0, 1, 1});
  // a_ * b_ = [[4, 5], [10, 11]].
};

TEST_F(GemmTest, AllTransposesAlphaBetaBiasN) {
  const HostTensor c = Make({2}, {1, 2});
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      GemmAttrs attrs{2.0f, 0.5f, ta, tb};
      absl::StatusOr<HostTensor> y = Gemm(ta ? a_t_ : a_, tb ? b_t_ : b_, &c, attrs);
      ASSERT_TRUE(y.ok()) << y.status();
      EXPECT_THAT(y->shape, ElementsAre(2, 2));
      EXPECT_THAT(y->data, ElementsAre(8.5f, 11, 20.5f, 23)) << ta << tb;
    }
  }
}

TEST_F(GemmTest, BiasShapes) {
  GemmAttrs attrs{2.0f, 0.5f, false, false};
  const HostTensor col = Make({2, 1}, {1, 2});
  absl::StatusOr<HostTensor> y = Gemm(a_, b_, &col, attrs);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->data, ElementsAre(8.5f, 10.5f, 21, 23));
  const HostTensor full = Make({2, 2}, {2, 4, 6, 8});
  y = Gemm(a_, b_, &full, attrs);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->data, ElementsAre(9, 12, 23, 26));
  const HostTensor scalar = Make({}, {4});
  y = Gemm(a_, b_, &scalar, attrs);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->data, ElementsAre(10, 12, 22, 24));
  y = Gemm(a_, b_, nullptr, attrs);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->data, ElementsAre(8, 10, 20, 22));
  const HostTensor bad = Make({3}, {1, 2, 3});
  EXPECT_EQ(Gemm(a_, b_, &bad, attrs).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Gemm(a_, a_, nullptr, attrs).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GemmRandomTest, MatchesNaiveDefinition) {
  const HostTensor a = RandomTensor({7, 13}, 1);
  const HostTensor b = RandomTensor({5, 13}, 2);
  const HostTensor c = RandomTensor({7, 1}, 3);
  GemmAttrs attrs{0.75f, -1.25f, false, true};
  absl::StatusOr<HostTensor> y = Gemm(a, b, &c, attrs);
  ASSERT_TRUE(y.ok());
  std::vector<float> expected;
  for (int m = 0; m < 7; ++m) {
    for (int n = 0; n < 5; ++n) {
      double sum = 0;
      for (int k = 0; k < 13; ++k) sum += double{a.data[m * 13 + k]} * b.data[n * 13 + k];
      expected.push_back(static_cast<float>(0.75 * sum - 1.25 * c.data[m]));
    }
  }
  const CompareResult r = Compare(y->data, expected, 1e-6f, 1e-6f);
  EXPECT_TRUE(r.ok()) << r.ToString();
}

TEST(MatMulTest, TwoD) {
  absl::StatusOr<HostTensor> y =
      MatMul(Make({2, 3}, {1, 2, 3, 4, 5, 6}), Make({3, 2}, {1, 0, 0, 1, 1, 1}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2, 2));
  EXPECT_THAT(y->data, ElementsAre(4, 5, 10, 11));
}

TEST(MatMulTest, OneDimensional) {
  const HostTensor v = Make({3}, {1, 2, 3});
  absl::StatusOr<HostTensor> y = MatMul(v, Make({3, 2}, {1, 0, 0, 1, 1, 1}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2));
  EXPECT_THAT(y->data, ElementsAre(4, 5));
  y = MatMul(Make({2, 3}, {1, 2, 3, 4, 5, 6}), Make({3}, {1, 1, 1}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2));
  EXPECT_THAT(y->data, ElementsAre(6, 15));
  y = MatMul(v, Make({3}, {4, 5, 6}));
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(y->shape.empty());
  EXPECT_THAT(y->data, ElementsAre(32));
}

TEST(MatMulTest, BatchedBroadcast) {
  // a [2,1,2] holds [[1,2]] and [[3,4]]; b [2,1] is shared by both batches.
  absl::StatusOr<HostTensor> y = MatMul(Make({2, 1, 2}, {1, 2, 3, 4}), Make({2, 1}, {1, 10}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2, 1, 1));
  EXPECT_THAT(y->data, ElementsAre(21, 43));
  // a [1,2,1,1] x b [3,1,1]: batches broadcast to [2,3].
  y = MatMul(Make({2, 1, 1, 1}, {1, 2}), Make({3, 1, 1}, {1, 10, 100}));
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2, 3, 1, 1));
  EXPECT_THAT(y->data, ElementsAre(1, 10, 100, 2, 20, 200));
  EXPECT_FALSE(MatMul(Iota({2, 2, 3}), Iota({3, 3, 2})).ok());
}

// ---------------------------------------------------------------- Shape ops

TEST(ShapeOpsTest, Flatten) {
  const HostTensor x = Iota({2, 3, 4});
  EXPECT_THAT(Flatten(x, 1)->shape, ElementsAre(2, 12));
  EXPECT_THAT(Flatten(x, 0)->shape, ElementsAre(1, 24));
  EXPECT_THAT(Flatten(x, -1)->shape, ElementsAre(6, 4));
  EXPECT_THAT(Flatten(x, 3)->shape, ElementsAre(24, 1));
  EXPECT_EQ(Flatten(x, 1)->data, x.data);
  EXPECT_FALSE(Flatten(x, 4).ok());
}

TEST(ShapeOpsTest, Reshape) {
  const HostTensor x = Iota({2, 3, 4});
  EXPECT_THAT(Reshape(x, {{0, -1}, false})->shape, ElementsAre(2, 12));
  EXPECT_THAT(Reshape(x, {{-1}, false})->shape, ElementsAre(24));
  EXPECT_THAT(Reshape(x, {{4, 0, 2}, false})->shape, ElementsAre(4, 3, 2));
  EXPECT_EQ(Reshape(x, {{4, 0, 2}, false})->data, x.data);
  EXPECT_FALSE(Reshape(x, {{-1, -1}, false}).ok());
  EXPECT_FALSE(Reshape(x, {{5, -1}, false}).ok());
  EXPECT_FALSE(Reshape(x, {{2, 3, 5}, false}).ok());
}

TEST(ShapeOpsTest, Transpose) {
  absl::StatusOr<HostTensor> y = Transpose(Iota({2, 3}), {});
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(3, 2));
  EXPECT_THAT(y->data, ElementsAre(0, 3, 1, 4, 2, 5));
  // [2,3,4] with perm {2,0,1}: y[k][i][j] = x[i][j][k] = 12i + 4j + k.
  y = Transpose(Iota({2, 3, 4}), {2, 0, 1});
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(4, 2, 3));
  EXPECT_THAT(std::vector<float>(y->data.begin(), y->data.begin() + 8),
              ElementsAre(0, 4, 8, 12, 16, 20, 1, 5));
  EXPECT_EQ(y->data[23], 23);
  EXPECT_FALSE(Transpose(Iota({2, 3}), {0, 0}).ok());
}

TEST(ShapeOpsTest, Concat) {
  const HostTensor a = Make({2, 2}, {1, 2, 3, 4});
  const HostTensor b = Make({1, 2}, {5, 6});
  const HostTensor c = Make({2, 1}, {5, 6});
  const HostTensor* rows[] = {&a, &b};
  absl::StatusOr<HostTensor> y = Concat(rows, 0);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(3, 2));
  EXPECT_THAT(y->data, ElementsAre(1, 2, 3, 4, 5, 6));
  const HostTensor* cols[] = {&a, &c};
  y = Concat(cols, -1);
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->shape, ElementsAre(2, 3));
  EXPECT_THAT(y->data, ElementsAre(1, 2, 5, 3, 4, 6));
  EXPECT_FALSE(Concat(rows, 1).ok());
}

TEST(ShapeOpsTest, Identity) {
  const HostTensor x = Iota({2, 2});
  EXPECT_EQ(Identity(x).data, x.data);
  EXPECT_EQ(Identity(x).shape, x.shape);
}

// ---------------------------------------------------------------- Softmax

TEST(SoftmaxTest, RowsMatchHandValuesAndSumToOne) {
  absl::StatusOr<HostTensor> y = Softmax(Make({2, 3}, {1, 2, 3, 1000, 1000, 1000}), {});
  ASSERT_TRUE(y.ok());
  // exp(-2), exp(-1), 1 over their sum; the second row needs max subtraction.
  EXPECT_THAT(y->data,
              Pointwise(FloatEq(), std::vector<float>{0.09003057f, 0.24472847f, 0.66524096f,
                                                      1.0f / 3, 1.0f / 3, 1.0f / 3}));
  const HostTensor big = RandomTensor({4, 17}, 5, -20.0f, 20.0f);
  y = Softmax(big, {});
  ASSERT_TRUE(y.ok());
  for (int r = 0; r < 4; ++r) {
    double sum = 0;
    for (int i = 0; i < 17; ++i) sum += y->data[r * 17 + i];
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(SoftmaxTest, AxisVersusCoerceTo2D) {
  const float ln3 = std::log(3.0f);
  const HostTensor x = Make({1, 2, 2}, {0, 0, ln3, 0});
  // opset >= 13, axis 1: pairs (x[0][0][k], x[0][1][k]) are normalized.
  absl::StatusOr<HostTensor> y = Softmax(x, {1, false});
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->data, ElementsAre(FloatEq(0.25f), FloatEq(0.5f), FloatEq(0.75f), FloatEq(0.5f)));
  // opset < 13, axis 1: all four elements form one row.
  y = Softmax(x, {1, true});
  ASSERT_TRUE(y.ok());
  EXPECT_THAT(y->data,
              ElementsAre(FloatEq(1.0f / 6), FloatEq(1.0f / 6), FloatEq(0.5f), FloatEq(1.0f / 6)));
  EXPECT_FALSE(Softmax(x, {3, false}).ok());
}

// ---------------------------------------------------------------- Helpers

TEST(HelpersTest, RandomTensorIsDeterministicAndInRange) {
  const HostTensor a = RandomTensor({1000}, 42, -1.0f, 1.0f);
  const HostTensor b = RandomTensor({1000}, 42, -1.0f, 1.0f);
  const HostTensor c = RandomTensor({1000}, 43, -1.0f, 1.0f);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  float lo = 1, hi = -1;
  for (float v : a.data) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -1.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_LT(lo, -0.9f);  // actually spread over the range
  EXPECT_GT(hi, 0.9f);
}

TEST(HelpersTest, Compare) {
  const std::vector<float> e = {1, 2, 3, 100};
  EXPECT_TRUE(Compare(e, e, 0, 0).ok());
  CompareResult r = Compare({1, 2.5f, 3, 100.5f}, e, 1e-3f, 1e-2f);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.failures, 1u);  // 100.5 is within 1e-3 + 1e-2 * 100
  EXPECT_EQ(r.first_failure, 1);
  EXPECT_FLOAT_EQ(r.max_abs_err, 0.5);
  r = Compare({1, std::nanf(""), 3, 100}, e, 1, 1);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ(r.first_failure, 1);
  EXPECT_THAT(r.ToString(), HasSubstr("index 1"));
  EXPECT_FALSE(Compare({1, 2, 3}, e, 1, 1).ok());
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(Compare({-inf}, {-inf}, 0, 0).ok());
  EXPECT_EQ(IndexString({2, 3, 4}, 23), "[1,2,3]");
}

// ---------------------------------------------------------------- Executor

absl::StatusOr<Graph> SmallGraph() {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 1, 3, 3});
  TensorRef w = b.Constant("w", {1, 1, 2, 2}, {1, 2, 3, 4});
  TensorRef bias = b.Constant("b", {1}, {-40});
  Conv2DAttrs attrs;
  attrs.pads = {0, 1, 1, 0};
  TensorRef y = b.Conv2D(x, w, bias, attrs);
  b.SetFusedActivation(y, {ActivationKind::kRelu, 0, 0});
  TensorRef z = b.Add(y, b.Input("z", {3}));
  b.Output(z, "out");
  return std::move(b).Build();
}

TEST(ReferenceExecutorTest, RunsNodesWithFusedActivation) {
  absl::StatusOr<Graph> g = SmallGraph();
  ASSERT_TRUE(g.ok()) << g.status();
  absl::flat_hash_map<std::string, HostTensor> in;
  in["x"] = Iota({1, 1, 3, 3}, 1.0f);
  in["z"] = Make({3}, {0.5f, 0.25f, 0});
  absl::StatusOr<absl::flat_hash_map<std::string, HostTensor>> out = RunReference(*g, in);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->contains("out"));
  // The AsymmetricPads conv minus 40, through relu, plus z per column.
  EXPECT_THAT(out->at("out").data, ElementsAre(0.5f, 0.25f, 7, 0.5f, 27.25f, 37, 0.5f, 0.25f, 0));
}

TEST(ReferenceExecutorTest, RejectsBadInputs) {
  absl::StatusOr<Graph> g = SmallGraph();
  ASSERT_TRUE(g.ok()) << g.status();
  absl::flat_hash_map<std::string, HostTensor> in;
  in["x"] = Iota({1, 1, 3, 3});
  absl::Status s = RunReference(*g, in).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'z'"));
  in["z"] = Iota({4});
  s = RunReference(*g, in).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'z'"));
  in["z"] = Iota({3});
  in["extra"] = Iota({3});
  s = RunReference(*g, in).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'extra'"));
}

}  // namespace
}  // namespace recq::reference
