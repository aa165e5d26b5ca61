// DFT and STFT against the CPU reference (tests/reference/ops/signal.cc,
// summed in double). The device sums `length` float terms of magnitude up
// to 1 (|x| <= 1, |twiddle| = 1, window <= 1), so each element is held to
// |error| <= 1e-5 * length + 1e-4 * |expected|.
#include <string>
#include <tuple>

#include "engine/ops/signal.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::DFTAttrs;
using internal::STFTAttrs;

CheckOptions SumOf(int64_t terms) {
  CheckOptions o;
  o.atol = 1e-5f * static_cast<float>(terms);
  o.rtol = 1e-4f;
  return o;
}

// (channels, axis, length, inverse, onesided) on x [3, 12, 5, channels].
using DftCase = std::tuple<int64_t, int64_t, int64_t, bool, bool>;
std::string DftName(const ::testing::TestParamInfo<DftCase>& info) {
  const auto& [c, axis, len, inv, one] = info.param;
  return std::string(c == 1 ? "real" : "complex") + "_axis" + std::to_string(axis) + "_len" +
         std::to_string(len) + (inv ? "_inverse" : "") + (one ? "_onesided" : "");
}
class DftTest : public ::testing::TestWithParam<DftCase> {};

TEST_P(DftTest, MatchesReference) {
  const auto [channels, axis, length, inverse, onesided] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {3, 12, 5, channels});
  DFTAttrs a;
  a.axis = axis;
  a.length = length;
  a.inverse = inverse;
  a.onesided = onesided;
  TensorRef y = b.graph().AddNode(internal::kDFT, {x}, a);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), SumOf(length));
}

INSTANTIATE_TEST_SUITE_P(
    Forms, DftTest,
    ::testing::Values(DftCase{1, 1, 12, false, false},  // real input
                      DftCase{2, 1, 12, false, false},  // complex input
                      DftCase{2, 1, 12, true, false},   // inverse
                      DftCase{1, 1, 12, false, true},   // one-sided, even length
                      DftCase{1, 2, 5, false, true},    // one-sided, odd length, inner axis
                      DftCase{2, 0, 3, false, false},   // the first axis
                      DftCase{1, 1, 16, false, false},  // zero-padded
                      DftCase{2, 1, 7, true, false}),   // truncated
    DftName);

TEST(DftTest, RejectsTheLastAxis) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {4, 2});
  DFTAttrs a;
  a.axis = 1;
  a.length = 2;
  b.Output(b.AddNode(internal::kDFT, {x}, a), "y");
  absl::Status s = std::move(b).Build().status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("a dimension before the last"), std::string::npos) << s;
}

// (channels, window, onesided) on signal [2, 70, channels], frames of 16
// every 6 samples.
using StftCase = std::tuple<int64_t, bool, bool>;
std::string StftName(const ::testing::TestParamInfo<StftCase>& info) {
  const auto& [c, w, one] = info.param;
  return std::string(c == 1 ? "real" : "complex") + (w ? "_window" : "_rectangular") +
         (one ? "_onesided" : "_full");
}
class StftTest : public ::testing::TestWithParam<StftCase> {};

TEST_P(StftTest, MatchesReference) {
  const auto [channels, window, onesided] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("signal", {2, 70, channels});
  STFTAttrs a;
  a.frame_step = 6;
  a.frame_length = 16;
  a.onesided = onesided;
  std::vector<TensorRef> in = {x};
  if (window) in.push_back(b.Input("window", {16}, 0.0f, 1.0f));
  TensorRef y = b.graph().AddNode(internal::kSTFT, in, a);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), SumOf(16));
}

INSTANTIATE_TEST_SUITE_P(Forms, StftTest,
                         ::testing::Values(StftCase{1, false, true}, StftCase{1, true, true},
                                           StftCase{1, true, false}, StftCase{2, true, false}),
                         StftName);

// The table copied where the run-time size is the expected one (the
// mismatch, NaN everywhere, is run in tests/onnx/signal_quant_import_test.cc).
TEST(SizeCheckedConstantTest, CopiesTheTableForTheExpectedSize) {
  for (DataType t : {DataType::kInt32, DataType::kInt64}) {
    OpGraphBuilder b;
    TensorRef size = b.Input("size", {}, 7.0f, 8.0f, t);  // draws of [7, 8): 7
    TensorRef table = b.Constant("table", {3, 9}, -1.0f, 1.0f);
    TensorRef y = b.graph().AddNode(internal::kSizeCheckedConstant, {size, table},
                                    internal::SizeCheckedConstantAttrs{7});
    RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), Exact());
  }
}

}  // namespace
}  // namespace recq::optest
