// ONNX sliding-window attributes (strides, dilations, pads, auto_pad) of a
// 2-D Conv or pool, resolved to explicit pads.
#ifndef RECQ_ENGINE_OPS_WINDOW_H_
#define RECQ_ENGINE_OPS_WINDOW_H_

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "recq/op_registry.h"

namespace recq::internal {

struct Window {
  std::array<int64_t, 2> kernel, strides, dilations;
  std::array<int64_t, 4> pads;  // top, left, bottom, right
};

// ResolveWindow reads strides, dilations, pads and auto_pad (NOTSET, VALID,
// SAME_UPPER, SAME_LOWER) for an NCHW input `x` and a `kernel`.
[[nodiscard]] absl::StatusOr<Window> ResolveWindow(OnnxNodeContext& n, const TensorDesc& x,
                                                   std::array<int64_t, 2> kernel);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_WINDOW_H_
