// Resize against the CPU reference: nearest with every nearest_mode, linear
// and cubic, with every coordinate transformation mode, up and down, on the
// last two axes (the 2-D kernels: one output per item on GPUs; on CPUs
// strips of 16 outputs, in one pass or two) and on others (the general
// kernel).
#include <string>
#include <utility>
#include <vector>

#include "engine/ops/layout_attrs.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"

namespace recq::optest {
namespace {

using internal::ResizeAttrs;
using internal::ResizeCoordinates;
using internal::ResizeMode;
using internal::ResizeNearest;

absl::StatusOr<OpGraph> ResizeGraph(std::vector<int64_t> in, std::vector<int64_t> out,
                                    ResizeMode mode, ResizeCoordinates coordinates,
                                    ResizeNearest nearest, bool exclude_outside) {
  ResizeAttrs a;
  a.mode = mode;
  a.coordinates = coordinates;
  a.nearest = nearest;
  a.exclude_outside = exclude_outside;
  a.out_shape = out;
  for (size_t i = 0; i < in.size(); ++i) a.scales.push_back(double(out[i]) / double(in[i]));
  OpGraphBuilder b;
  TensorRef x = b.Input("x", std::move(in), -4.0f, 4.0f);
  TensorRef y = b.graph().AddNode(OpType("Resize"), {x}, std::move(a));
  return std::move(b).Build(y);
}

void ExpectResize(std::vector<int64_t> in, std::vector<int64_t> out, ResizeMode mode,
                  ResizeCoordinates coordinates,
                  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor,
                  bool exclude_outside = false) {
  CheckOptions options;  // float weights, summed in another order than the reference
  options.atol = 1e-5f;
  options.rtol = 1e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(
      ResizeGraph(std::move(in), std::move(out), mode, coordinates, nearest, exclude_outside),
      options);
}

// The kernels (the part of each dispatch label after the node's name) that
// the CPU family runs for a linear resize.
std::vector<std::string> CpuKernels(std::vector<int64_t> in, std::vector<int64_t> out,
                                    ResizeMode mode) {
  absl::StatusOr<OpGraph> op =
      ResizeGraph(std::move(in), std::move(out), mode, ResizeCoordinates::kHalfPixel,
                  ResizeNearest::kRoundPreferFloor, false);
  const absl::StatusOr<Context>& context = SharedContext();
  if (!op.ok() || !context.ok()) return {};
  EngineOptions options;
  options.kernel_target = EngineOptions::KernelTarget::kCpu;
  options.tuning = EngineOptions::Tuning::kOff;
  absl::StatusOr<Engine> engine = Engine::Compile(*context, op->graph, options);
  if (!engine.ok()) return {engine.status().ToString()};
  std::vector<std::string> kernels;
  for (const std::string& label : engine->DispatchLabels()) {
    kernels.push_back(label.substr(label.rfind('/') + 1));
  }
  return kernels;
}

const ResizeCoordinates kAllCoordinates[] = {
    ResizeCoordinates::kHalfPixel,        ResizeCoordinates::kHalfPixelSymmetric,
    ResizeCoordinates::kPytorchHalfPixel, ResizeCoordinates::kAlignCorners,
    ResizeCoordinates::kAsymmetric,       ResizeCoordinates::kTfHalfPixelForNn};

TEST(ResizeTest, BilinearUpsampleOfSegmentationHeads) {
  for (ResizeCoordinates c : kAllCoordinates) {
    SCOPED_TRACE(static_cast<int>(c));
    ExpectResize({1, 5, 7, 9}, {1, 5, 28, 36}, ResizeMode::kLinear, c);  // x4
    ExpectResize({2, 3, 5, 6}, {2, 3, 13, 11}, ResizeMode::kLinear, c);  // odd sizes
    ExpectResize({1, 2, 12, 10}, {1, 2, 5, 4}, ResizeMode::kLinear, c);  // down
  }
}

// The CPU family's paths for the last two axes: two passes where the output
// has 16 or more columns and no fewer rows (upsampling by 8 as in LRASPP,
// exactly one strip of 16, nearest on both axes, a partial last strip), and
// strips of 16 in one pass where the rows shrink; the cases above take the
// lane loop of narrower rows.
TEST(ResizeTest, StripsOfSixteenOutputs) {
  for (ResizeCoordinates c : {ResizeCoordinates::kHalfPixel, ResizeCoordinates::kAlignCorners}) {
    SCOPED_TRACE(static_cast<int>(c));
    ExpectResize({1, 3, 7, 7}, {1, 3, 56, 56}, ResizeMode::kLinear, c);  // two passes
    ExpectResize({2, 2, 3, 4}, {2, 2, 6, 16}, ResizeMode::kLinear, c);   // one strip
    ExpectResize({1, 2, 4, 5}, {1, 2, 16, 20}, ResizeMode::kNearest, c);
    ExpectResize({1, 3, 20, 10}, {1, 3, 8, 40}, ResizeMode::kLinear, c);  // rows shrink
  }
  using Kernels = std::vector<std::string>;
  EXPECT_EQ(CpuKernels({1, 3, 7, 7}, {1, 3, 56, 56}, ResizeMode::kLinear),
            (Kernels{"resize_2d_rows", "resize_2d_cols"}));
  EXPECT_EQ(CpuKernels({1, 2, 4, 5}, {1, 2, 16, 20}, ResizeMode::kNearest),
            (Kernels{"resize_2d_rows", "resize_2d_cols"}));
  EXPECT_EQ(CpuKernels({1, 3, 20, 10}, {1, 3, 8, 40}, ResizeMode::kLinear),
            Kernels{"resize_2d_strips"});
  EXPECT_EQ(CpuKernels({2, 3, 5, 6}, {2, 3, 13, 11}, ResizeMode::kLinear),
            Kernels{"resize_2d_strips"});
}

TEST(ResizeTest, NearestModes) {
  for (ResizeNearest n : {ResizeNearest::kRoundPreferFloor, ResizeNearest::kRoundPreferCeil,
                          ResizeNearest::kFloor, ResizeNearest::kCeil, ResizeNearest::kSimple}) {
    for (ResizeCoordinates c : kAllCoordinates) {
      SCOPED_TRACE(static_cast<int>(n) * 10 + static_cast<int>(c));
      ExpectResize({1, 3, 5, 6}, {1, 3, 12, 9}, ResizeMode::kNearest, c, n);
      ExpectResize({1, 3, 9, 8}, {1, 3, 4, 3}, ResizeMode::kNearest, c, n);
    }
  }
}

TEST(ResizeTest, Cubic) {
  ExpectResize({1, 2, 6, 5}, {1, 2, 11, 9}, ResizeMode::kCubic, ResizeCoordinates::kHalfPixel);
  ExpectResize({1, 2, 6, 5}, {1, 2, 11, 9}, ResizeMode::kCubic, ResizeCoordinates::kAsymmetric,
               ResizeNearest::kRoundPreferFloor, true);
}

TEST(ResizeTest, OtherAxesUseTheGeneralKernel) {
  ExpectResize({2, 3, 4, 5}, {4, 6, 4, 5}, ResizeMode::kLinear, ResizeCoordinates::kHalfPixel);
  ExpectResize({2, 3, 4, 5}, {3, 5, 7, 2}, ResizeMode::kLinear, ResizeCoordinates::kAlignCorners);
  ExpectResize({3, 4, 5}, {6, 4, 10}, ResizeMode::kNearest, ResizeCoordinates::kAsymmetric,
               ResizeNearest::kFloor);
}

}  // namespace
}  // namespace recq::optest
