// ONNX sliding-window attributes (strides, dilations, pads, auto_pad) of a
// 2-D Conv or pool, resolved to explicit pads.
#ifndef RECQ_ENGINE_OPS_WINDOW_H_
#define RECQ_ENGINE_OPS_WINDOW_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "recq/op_registry.h"

namespace recq::internal {

struct Window {
  std::array<int64_t, 2> kernel, strides, dilations;
  std::array<int64_t, 4> pads;  // top, left, bottom, right
};

// ResolveWindow reads strides, dilations, pads and auto_pad (NOTSET, VALID,
// SAME_UPPER, SAME_LOWER) for an NCHW input `x` and a `kernel`. With
// `one_d`, x is a 1-D op's (N, C, L) input viewed as (N, C, 1, L): the
// attributes have one value per side of L and the H window is 1.
[[nodiscard]] absl::StatusOr<Window> ResolveWindow(OnnxNodeContext& n, const TensorDesc& x,
                                                   std::array<int64_t, 2> kernel,
                                                   bool one_d = false);

// ResolveConvAttrs reads a 2-D convolution's kernel_shape (checked against
// the weights `w`, [OC, C/group, KH, KW]), window (ResolveWindow) and group
// into Conv2DAttrs, for Conv and the integer convolutions alike. With
// `one_d`, x and w are a 1-D convolution's viewed as 2-D (ViewAs2D,
// WeightsAs2D) and kernel_shape may have one value.
[[nodiscard]] absl::StatusOr<Conv2DAttrs> ResolveConvAttrs(OnnxNodeContext& n, const TensorDesc& x,
                                                           const TensorDesc& w, bool one_d);

// The window of a 3-D (N, C, D, H, W) Conv or pool, each array in (D, H, W)
// order; pads as ONNX orders them (the three begins, then the three ends).
struct Window3D {
  std::array<int64_t, 3> strides, dilations;
  std::array<int64_t, 6> pads;
};

// ResolveWindow3D reads strides, dilations, pads and auto_pad for input
// shape `x` (rank 5) and `kernel` (3 values), as ResolveWindow does for 2-D.
[[nodiscard]] absl::StatusOr<Window3D> ResolveWindow3D(OnnxNodeContext& n,
                                                       const std::vector<int64_t>& x,
                                                       const std::array<int64_t, 3>& kernel);

// 1-D window ops (Conv, MaxPool, AveragePool on (N, C, L), as Whisper's and
// wav2vec2's front ends have) run as the 2-D ones on views with H = 1:
// ViewAs2D gives x (N, C, L) as (N, C, 1, L) (a Reshape, no copy);
// WeightsAs2D gives input `i` ([OC, C/group, K]) as [OC, C/group, 1, K], a
// constant where it is one; EmitFrom2D emits `op` writing a 4-D value and
// the node's output as its (N, C, L') view.
[[nodiscard]] absl::StatusOr<ValueId> ViewAs2D(OnnxNodeContext& n, ValueId x);
[[nodiscard]] absl::StatusOr<ValueId> WeightsAs2D(OnnxNodeContext& n, int i);
[[nodiscard]] absl::Status EmitFrom2D(OnnxNodeContext& n, OpType op, std::vector<ValueId> inputs,
                                      OpAttrs attrs);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_WINDOW_H_
