// MaxPool, AveragePool and GlobalAveragePool against the CPU reference:
// with and without padding, asymmetric pads, ceil_mode (including ONNX's
// dropped last window), dilation, and count_include_pad.
#include <array>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

struct PoolCase {
  std::string name;
  std::vector<int64_t> x;
  PoolAttrs attrs;
};

// PrintTo names the case in gtest messages.
void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.name; }

PoolAttrs P(std::array<int64_t, 2> kernel, std::array<int64_t, 2> strides,
            std::array<int64_t, 4> pads, bool ceil_mode = false,
            std::array<int64_t, 2> dilations = {1, 1}) {
  PoolAttrs a;
  a.kernel = kernel;
  a.strides = strides;
  a.pads = pads;
  a.ceil_mode = ceil_mode;
  a.dilations = dilations;
  return a;
}

const auto kPoolCases = ::testing::Values(
    PoolCase{"k2_s2", {1, 4, 8, 8}, P({2, 2}, {2, 2}, {0, 0, 0, 0})},
    PoolCase{"k3_s2_pad1", {1, 4, 9, 9}, P({3, 3}, {2, 2}, {1, 1, 1, 1})},
    PoolCase{"k3_s1_pad1_batch2", {2, 3, 7, 7}, P({3, 3}, {1, 1}, {1, 1, 1, 1})},
    PoolCase{"k3_s2_asym_pads", {1, 3, 8, 8}, P({3, 3}, {2, 2}, {0, 0, 1, 1})},
    PoolCase{"k2_s2_ceil", {1, 2, 7, 7}, P({2, 2}, {2, 2}, {0, 0, 0, 0}, true)},
    PoolCase{"k3_s2_pad1_ceil", {1, 2, 8, 8}, P({3, 3}, {2, 2}, {1, 1, 1, 1}, true)},
    // ceil gives 3 windows per axis; the third starts in the end padding and
    // is dropped: 2x2 output.
    PoolCase{"k2_s2_pad1_ceil_dropped", {1, 2, 3, 3}, P({2, 2}, {2, 2}, {1, 1, 1, 1}, true)},
    PoolCase{"k2_s2_ceil_end_pad", {1, 2, 5, 6}, P({2, 2}, {2, 2}, {0, 0, 1, 1}, true)},
    PoolCase{"k2_dilation2_pad1", {1, 2, 7, 7}, P({2, 2}, {1, 1}, {1, 1, 1, 1}, false, {2, 2})},
    PoolCase{"k3x2_s2x1", {1, 2, 9, 8}, P({3, 2}, {2, 1}, {1, 0, 1, 1})},
    PoolCase{"k7_global_like", {1, 8, 7, 7}, P({7, 7}, {1, 1}, {0, 0, 0, 0})},
    PoolCase{"k1_s2", {1, 3, 6, 6}, P({1, 1}, {2, 2}, {0, 0, 0, 0})},
    // Rows of 8 outputs and more (max_pool_rows' vector taps and its shifted
    // last strip): GoogLeNet's 3x3 stride 1 and stride 2 ceil-mode pools.
    PoolCase{"k3_s1_pad1_wide_batch2", {2, 3, 6, 29}, P({3, 3}, {1, 1}, {1, 1, 1, 1})},
    PoolCase{"k3_s2_ceil_wide", {1, 2, 11, 41}, P({3, 3}, {2, 2}, {0, 0, 0, 0}, true)},
    // AveragePool's rows on the CPU (avg_pool_rows): Inception-v3's 3x3
    // stride 1 on a 17-wide map, DenseNet-121's 2x2 stride 2 (the even lanes
    // of one load).
    PoolCase{"k3_s1_pad1_w17", {1, 3, 5, 17}, P({3, 3}, {1, 1}, {1, 1, 1, 1})},
    PoolCase{"k2_s2_w56", {1, 2, 4, 56}, P({2, 2}, {2, 2}, {0, 0, 0, 0})});

std::string PoolCaseName(const ::testing::TestParamInfo<PoolCase>& info) { return info.param.name; }

class MaxPoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(MaxPoolTest, MatchesReference) {
  const PoolCase& c = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", c.x);
  TensorRef y = b.graph().AddNode(OpType::kMaxPool, {x}, c.attrs);
  // A maximum selects one input: exact.
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

INSTANTIATE_TEST_SUITE_P(Shapes, MaxPoolTest, kPoolCases, PoolCaseName);

// MaxPool of all-negative values: a padded tap must never win with 0.
TEST(MaxPoolNegativeTest, PaddingNeverWins) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 3, 6, 6}, -2.0f, -1.0f);
  TensorRef y =
      b.graph().AddNode(OpType::kMaxPool, {x}, P({3, 3}, {2, 2}, {1, 1, 1, 1}, /*ceil=*/true));
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
}

using AveragePoolParam = std::tuple<PoolCase, bool>;  // case, count_include_pad

class AveragePoolTest : public ::testing::TestWithParam<AveragePoolParam> {};

TEST_P(AveragePoolTest, MatchesReference) {
  PoolCase c = std::get<0>(GetParam());
  c.attrs.count_include_pad = std::get<1>(GetParam());
  OpGraphBuilder b;
  TensorRef x = b.Input("x", c.x);
  TensorRef y = b.graph().AddNode(OpType::kAveragePool, {x}, c.attrs);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

INSTANTIATE_TEST_SUITE_P(Shapes, AveragePoolTest, ::testing::Combine(kPoolCases, ::testing::Bool()),
                         [](const ::testing::TestParamInfo<AveragePoolParam>& info) {
                           return std::get<0>(info.param).name +
                                  (std::get<1>(info.param) ? "_include_pad" : "_exclude_pad");
                         });

class GlobalAveragePoolTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(GlobalAveragePoolTest, MatchesReference) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", GetParam());
  TensorRef y = b.graph().GlobalAveragePool(x);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y));
}

INSTANTIATE_TEST_SUITE_P(Shapes, GlobalAveragePoolTest,
                         ::testing::Values(std::vector<int64_t>{1, 8, 7, 7},
                                           std::vector<int64_t>{2, 16, 1, 1},
                                           std::vector<int64_t>{1, 1024, 7, 7},
                                           std::vector<int64_t>{2, 3, 5, 9},
                                           std::vector<int64_t>{1, 4, 32, 32}),
                         [](const ::testing::TestParamInfo<std::vector<int64_t>>& info) {
                           std::string name;
                           for (int64_t d : info.param) {
                             name += (name.empty() ? "" : "x") + std::to_string(d);
                           }
                           return name;
                         });

}  // namespace
}  // namespace recq::optest
