// GridSample against the reference (ONNX's reference algorithm): every
// mode, padding mode and align_corners setting, on odd sizes, with grid
// points reaching past [-1, 1] so that every padding path runs. Nearest
// sampling is discontinuous, so its grid holds multiples of 1/16 (Floor of
// a draw, scaled): device and reference then round the same exact
// coordinates, ties included (round half to even), and never disagree by a
// pixel over a last-bit difference.
#include <string>
#include <tuple>

#include "engine/ops/grid_sample.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"

namespace recq::optest {
namespace {

using internal::GridSampleAttrs;
using internal::GridSampleMode;
using internal::GridSamplePadding;

class GridSampleTest
    : public ::testing::TestWithParam<std::tuple<GridSampleMode, GridSamplePadding, bool>> {};

TEST_P(GridSampleTest, MatchesReference) {
  const auto& [mode, padding, align] = GetParam();
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 5, 7}, -1.0f, 1.0f);
  TensorRef grid;
  CheckOptions options;
  if (mode == GridSampleMode::kNearest) {
    TensorRef u = b.Input("u", {2, 4, 6, 2}, -24.0f, 24.0f);
    TensorRef q = b.graph().AddNode(OpType("Floor"), {u});
    // Under fp16 storage a draw may round across an integer before Floor,
    // so nearest sampling is checked at float32 only.
    options.precisions = {EngineOptions::Precision::kFp32};
    grid = b.graph().AddNode(
        OpType::kMul, {q, b.graph().Constant("sixteenth", {1}, std::vector<float>{0.0625f})});
  } else {
    grid = b.Input("grid", {2, 4, 6, 2}, -1.4f, 1.4f);
  }
  TensorRef y =
      b.graph().AddNode(internal::kGridSample, {x, grid}, GridSampleAttrs{mode, padding, align});
  // At most 16 taps of weights <= 1.5 on values <= 1; float coordinates
  // against double ones move a sample by about 1e-6 of its slope.
  options.atol = 2e-5f;
  options.rtol = 1e-4f;
  // One node (two for nearest, which the passes may fuse): optimize=false
  // would compile the same engine again.
  if (mode != GridSampleMode::kNearest) options.optimize = {true};
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
}

std::string CaseName(
    const ::testing::TestParamInfo<std::tuple<GridSampleMode, GridSamplePadding, bool>>& info) {
  static const char* kModes[] = {"nearest", "linear", "cubic"};
  static const char* kPads[] = {"zeros", "border", "reflection"};
  return std::string(kModes[static_cast<int>(std::get<0>(info.param))]) + "_" +
         kPads[static_cast<int>(std::get<1>(info.param))] +
         (std::get<2>(info.param) ? "_align" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Modes, GridSampleTest,
    ::testing::Combine(::testing::Values(GridSampleMode::kNearest, GridSampleMode::kLinear,
                                         GridSampleMode::kCubic),
                       ::testing::Values(GridSamplePadding::kZeros, GridSamplePadding::kBorder,
                                         GridSamplePadding::kReflection),
                       ::testing::Bool()),
    CaseName);

}  // namespace
}  // namespace recq::optest
