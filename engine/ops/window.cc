#include "engine/ops/window.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "recq/status_macros.h"

namespace recq::internal {

absl::StatusOr<Window> ResolveWindow(OnnxNodeContext& n, const TensorDesc& x,
                                     std::array<int64_t, 2> kernel) {
  if (x.shape.size() != 4) {
    return n.Unsupported(absl::StrCat("input is ", x.ToString(), "; only 2-D (NCHW) is supported"));
  }
  Window w;
  w.kernel = kernel;
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> strides, n.Ints("strides"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, n.Ints("dilations"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> pads, n.Ints("pads"));
  RECQ_ASSIGN_OR_RETURN(std::string auto_pad, n.String("auto_pad", "NOTSET"));
  if (strides.empty()) strides = {1, 1};
  if (dilations.empty()) dilations = {1, 1};
  if (strides.size() != 2 || dilations.size() != 2) {
    return n.Invalid("strides and dilations must have 2 values for a 2-D input");
  }
  for (int i = 0; i < 2; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0) {
      return n.Invalid("kernel, strides and dilations must be positive");
    }
    w.strides[i] = strides[i];
    w.dilations[i] = dilations[i];
  }
  w.pads = {0, 0, 0, 0};
  if (auto_pad == "NOTSET") {
    if (!pads.empty()) {
      if (pads.size() != 4) return n.Invalid("pads must have 4 values for a 2-D input");
      for (int i = 0; i < 4; ++i) w.pads[i] = pads[i];
    }
  } else if (auto_pad == "VALID") {
    // No padding.
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t in = x.shape[2 + i];
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t span = (kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + span - in);
      int64_t small = total / 2;
      int64_t big = total - small;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : big;
      w.pads[2 + i] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else {
    return n.Unsupported(absl::StrCat("auto_pad '", auto_pad, "' is not supported"));
  }
  return w;
}

}  // namespace recq::internal
