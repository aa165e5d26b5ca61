// Resize against the CPU reference: nearest with every nearest_mode, linear
// and cubic, with every coordinate transformation mode, up and down, on the
// last two axes (the 2-D kernel) and on others (the general kernel).
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

void ExpectResize(std::vector<int64_t> in, std::vector<int64_t> out, ResizeMode mode,
                  ResizeCoordinates coordinates,
                  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor,
                  bool exclude_outside = false) {
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
  CheckOptions options;  // float weights, summed in another order than the reference
  options.atol = 1e-5f;
  options.rtol = 1e-5f;
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
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
