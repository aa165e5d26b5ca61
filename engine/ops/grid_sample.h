// GridSample's attributes, shared by its op file (grid_sample.cc) and its
// CPU reference (tests/reference/ops/grid_sample.cc).
#ifndef RECQ_ENGINE_OPS_GRID_SAMPLE_H_
#define RECQ_ENGINE_OPS_GRID_SAMPLE_H_

#include "recq/graph.h"

namespace recq::internal {

inline constexpr OpType kGridSample("GridSample");

// The codes of grid_sample.cl.
enum class GridSampleMode { kNearest = 0, kLinear = 1, kCubic = 2 };
enum class GridSamplePadding { kZeros = 0, kBorder = 1, kReflection = 2 };

// GridSample: x [N, C, H, W] sampled at grid [N, Ho, Wo, 2] ((x, y) in
// [-1, 1] spanning the input's width and height) gives [N, C, Ho, Wo].
struct GridSampleAttrs {
  GridSampleMode mode = GridSampleMode::kLinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_GRID_SAMPLE_H_
