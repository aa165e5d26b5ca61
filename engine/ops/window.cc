#include "engine/ops/window.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

// Window attributes beyond this are rejected before any arithmetic on them:
// no real model has a kernel, stride, dilation or pad of a million, and the
// bound keeps (kernel - 1) * dilation + in + pads far from int64 overflow.
constexpr int64_t kMaxWindowValue = int64_t{1} << 20;

absl::Status CheckWindowValues(OnnxNodeContext& n, absl::Span<const int64_t> kernel,
                               absl::Span<const int64_t> strides,
                               absl::Span<const int64_t> dilations,
                               absl::Span<const int64_t> pads) {
  for (const auto& [name, values, low] :
       {std::tuple<const char*, absl::Span<const int64_t>, int64_t>{"kernel", kernel, 1},
        {"strides", strides, 1},
        {"dilations", dilations, 1},
        {"pads", pads, 0}}) {
    for (int64_t v : values) {
      if (v < low || v > kMaxWindowValue) {
        return n.Invalid(absl::StrCat(name, " value ", v, " is out of range; expected ", low, "..",
                                      kMaxWindowValue));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Window> ResolveWindow(OnnxNodeContext& n, const TensorDesc& x,
                                     std::array<int64_t, 2> kernel, bool one_d) {
  if (x.shape.size() != 4) {
    return n.Unsupported(absl::StrCat("input is ", x.ToString(),
                                      "; only 1-D (N, C, L) and 2-D (NCHW) are supported"));
  }
  const size_t spatial = one_d ? 1 : 2;
  Window w;
  w.kernel = kernel;
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> strides, n.Ints("strides"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, n.Ints("dilations"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> pads, n.Ints("pads"));
  RECQ_ASSIGN_OR_RETURN(std::string auto_pad, n.String("auto_pad", "NOTSET"));
  if (strides.empty()) strides.assign(spatial, 1);
  if (dilations.empty()) dilations.assign(spatial, 1);
  if (strides.size() != spatial || dilations.size() != spatial) {
    return n.Invalid(absl::StrCat("strides and dilations must have ", spatial, " values for a ",
                                  spatial, "-D input"));
  }
  if (!pads.empty() && pads.size() != 2 * spatial) {
    return n.Invalid(
        absl::StrCat("pads must have ", 2 * spatial, " values for a ", spatial, "-D input"));
  }
  if (one_d) {
    // The H window of the view: kernel 1, stride 1, no padding.
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    if (!pads.empty()) pads = {0, pads[0], 0, pads[1]};
  }
  RECQ_RETURN_IF_ERROR(CheckWindowValues(n, kernel, strides, dilations, pads));
  for (int i = 0; i < 2; ++i) {
    w.strides[i] = strides[i];
    w.dilations[i] = dilations[i];
  }
  w.pads = {0, 0, 0, 0};
  if (auto_pad == "NOTSET") {
    if (!pads.empty()) {
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

namespace {

absl::StatusOr<OnnxNodeEmitter*> Emitter(OnnxNodeContext& n) {
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) {
    return n.Unsupported("a 1-D window needs an importer that can emit several graph nodes");
  }
  return e;
}

}  // namespace

absl::StatusOr<Conv2DAttrs> ResolveConvAttrs(OnnxNodeContext& n, const TensorDesc& x,
                                             const TensorDesc& w, bool one_d) {
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_shape, n.Ints("kernel_shape"));
  if (one_d && kernel_shape.size() == 1) kernel_shape.insert(kernel_shape.begin(), 1);
  if (!kernel_shape.empty() && (kernel_shape.size() != 2 || kernel_shape[0] != w.shape[2] ||
                                kernel_shape[1] != w.shape[3])) {
    return n.Invalid(absl::StrCat("kernel_shape [", absl::StrJoin(kernel_shape, ","),
                                  "] does not match weight ", w.ToString()));
  }
  RECQ_ASSIGN_OR_RETURN(Window win, ResolveWindow(n, x, {w.shape[2], w.shape[3]}, one_d));
  RECQ_ASSIGN_OR_RETURN(int64_t group, n.Int("group", 1));
  Conv2DAttrs attrs;
  attrs.strides = win.strides;
  attrs.dilations = win.dilations;
  attrs.pads = win.pads;
  attrs.groups = group;
  return attrs;
}

absl::StatusOr<Window3D> ResolveWindow3D(OnnxNodeContext& n, const std::vector<int64_t>& x,
                                         const std::array<int64_t, 3>& kernel) {
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> strides, n.Ints("strides"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, n.Ints("dilations"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> pads, n.Ints("pads"));
  RECQ_ASSIGN_OR_RETURN(std::string auto_pad, n.String("auto_pad", "NOTSET"));
  if (strides.empty()) strides.assign(3, 1);
  if (dilations.empty()) dilations.assign(3, 1);
  if (pads.empty() || auto_pad != "NOTSET") pads.assign(6, 0);
  if (strides.size() != 3 || dilations.size() != 3 || pads.size() != 6) {
    return n.Invalid("strides and dilations must have 3 values and pads 6 for a 3-D input");
  }
  RECQ_RETURN_IF_ERROR(CheckWindowValues(n, kernel, strides, dilations, pads));
  Window3D w;
  for (int i = 0; i < 3; ++i) {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t in = x[2 + i];
      const int64_t out = (in + strides[i] - 1) / strides[i];
      const int64_t span = (kernel[i] - 1) * dilations[i] + 1;
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + span - in);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[3 + i] = total - pads[i];
    } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
      return n.Unsupported(absl::StrCat("auto_pad '", auto_pad, "' is not supported"));
    }
    w.strides[i] = strides[i];
    w.dilations[i] = dilations[i];
  }
  for (int i = 0; i < 6; ++i) w.pads[i] = pads[i];
  return w;
}

absl::StatusOr<ValueId> ViewAs2D(OnnxNodeContext& n, ValueId x) {
  RECQ_ASSIGN_OR_RETURN(OnnxNodeEmitter * e, Emitter(n));
  const Shape& s = n.desc(x).shape;
  if (s.size() != 3) {
    return n.Invalid(absl::StrCat("input is ", n.desc(x).ToString(), "; expected (N, C, L)"));
  }
  return e->EmitValue(OpType::kReshape, {x}, ReshapeAttrs{{s[0], s[1], 1, s[2]}}, "as_2d");
}

absl::StatusOr<ValueId> WeightsAs2D(OnnxNodeContext& n, int i) {
  RECQ_ASSIGN_OR_RETURN(OnnxNodeEmitter * e, Emitter(n));
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* c, n.ConstantInput(i));
  if (c != nullptr) {
    if (c->dims.size() != 3) {
      return n.Invalid(absl::StrCat("the weights (input ", i, ") have rank ", c->dims.size(),
                                    "; a 1-D window needs [OC, C/group, K]"));
    }
    OnnxConstant w = *c;
    w.dims = {c->dims[0], c->dims[1], 1, c->dims[2]};
    return e->AddConstantValue(std::move(w), "weights_2d");
  }
  RECQ_ASSIGN_OR_RETURN(ValueId w, n.Input(i));
  const Shape& s = n.desc(w).shape;
  if (s.size() != 3) {
    return n.Invalid(absl::StrCat("the weights (input ", i, ") are ", n.desc(w).ToString(),
                                  "; a 1-D window needs [OC, C/group, K]"));
  }
  return e->EmitValue(OpType::kReshape, {w}, ReshapeAttrs{{s[0], s[1], 1, s[2]}}, "weights_2d");
}

absl::Status EmitFrom2D(OnnxNodeContext& n, OpType op, std::vector<ValueId> inputs, OpAttrs attrs) {
  RECQ_ASSIGN_OR_RETURN(OnnxNodeEmitter * e, Emitter(n));
  RECQ_ASSIGN_OR_RETURN(ValueId y, e->EmitValue(op, std::move(inputs), std::move(attrs), "2d"));
  const Shape& s = n.desc(y).shape;
  return n.Emit(OpType::kReshape, {y}, ReshapeAttrs{{s[0], s[1], s[3]}});
}

}  // namespace recq::internal
