// Attributes of the data-movement and resampling ops (Slice, Pad, Gather,
// Tile, Expand, Resize, ConvTranspose), shared by their op files under
// engine/ops/ and their CPU references under tests/reference/ops/.
#ifndef RECQ_ENGINE_OPS_LAYOUT_ATTRS_H_
#define RECQ_ENGINE_OPS_LAYOUT_ATTRS_H_

#include <array>
#include <cstdint>
#include <vector>

namespace recq::internal {

// Slice with ONNX semantics (opset 10 on): for each k, axis axes[k] (all
// axes in order when empty, negative counts from the end) runs from
// starts[k] to ends[k] (exclusive) by steps[k] (1 when empty; negative walks
// backwards); starts and ends count from the end when negative and are
// clamped to the dimension.
struct SliceAttrs {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<int64_t> axes;
  std::vector<int64_t> steps;
};

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Pad: pads[i] (begin) and pads[rank + i] (end) elements on axis i; negative
// pads crop.
struct PadAttrs {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> pads;
  float value = 0.0f;
};

// Gather along `axis` of float data with constant indices (already made
// non-negative and checked at import); the output shape is
// data[:axis] + indices_shape + data[axis+1:].
struct GatherAttrs {
  int64_t axis = 0;
  std::vector<int64_t> indices;
  std::vector<int64_t> indices_shape;
};

// Tile: output dim i = input dim i * repeats[i].
struct TileAttrs {
  std::vector<int64_t> repeats;
};

// Expand: numpy broadcast of the input with `shape`.
struct ExpandAttrs {
  std::vector<int64_t> shape;
};

// DepthToSpace (DCR, or CRD when `crd`) and SpaceToDepth with square
// blocks of `blocksize`.
struct BlockAttrs {
  int64_t blocksize = 1;
  bool crd = false;
};

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class ResizeCoordinates {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,  // (o + 0.5) / scale
};
enum class ResizeNearest {
  kRoundPreferFloor,
  kRoundPreferCeil,
  kFloor,
  kCeil,
  kSimple,  // Upsample and Resize-10: truncate when upsampling, ceil when downsampling
};

// Resize of every axis i from the input's size to out_shape[i], with
// scales[i] the scale the coordinate transform uses (out/in when the model
// gave sizes).
struct ResizeAttrs {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoordinates coordinates = ResizeCoordinates::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  std::vector<int64_t> out_shape;
  std::vector<double> scales;
};

// 2-D ConvTranspose: input [N, C, H, W], weights [C, OC/groups, KH, KW],
// optional bias [OC]; out_size = stride * (in - 1) + output_padding +
// (k - 1) * dilation + 1 - pad_begin - pad_end.
struct ConvTransposeAttrs {
  std::array<int64_t, 2> strides = {1, 1};
  std::array<int64_t, 2> dilations = {1, 1};
  std::array<int64_t, 4> pads = {0, 0, 0, 0};  // top, left, bottom, right
  std::array<int64_t, 2> output_padding = {0, 0};
  int64_t groups = 1;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_LAYOUT_ATTRS_H_
