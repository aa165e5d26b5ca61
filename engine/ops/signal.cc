// ONNX DFT (opsets 17 to 21) and STFT (opset 17 on) as device kernels
// (signal.cl): a direct sum per output bin, O(n^2) per transform, not an
// FFT. Lengths, steps and axes must be constants known when the model is
// loaded (they set the output shape); the inverse of a one-sided spectrum
// (irfft) is Unimplemented.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/signal.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// --- DFT ---

absl::StatusOr<TensorDesc> InferDFT(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDFT, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const DFTAttrs* a, AttrsOf<DFTAttrs>(kDFT, attrs));
  const Shape& x = in[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 2 || (x.back() != 1 && x.back() != 2)) {
    return Bad(kDFT, absl::StrCat("x is ", S(x),
                                  "; expected [..., 1] (real) or [..., 2] "
                                  "(complex)"));
  }
  if (a->axis < 0 || a->axis >= rank - 1) {
    return Bad(kDFT, absl::StrCat("axis ", a->axis, " for x ", S(x),
                                  "; expected a dimension before the last"));
  }
  if (a->length < 1) return Bad(kDFT, absl::StrCat("length is ", a->length, "; expected >= 1"));
  if (a->inverse && a->onesided) {
    return absl::UnimplementedError("DFT: the inverse of a one-sided spectrum is not supported");
  }
  Shape y = x;
  y[a->axis] = a->onesided ? a->length / 2 + 1 : a->length;
  y.back() = 2;
  return TensorDesc{std::move(y), DataType::kFloat32};
}

absl::Status LowerDFT(LoweringContext& ctx, const Node& node) {
  const DFTAttrs& a = AttrsOr<DFTAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  const int64_t outer = Product(x, 0, a.axis);
  const int64_t inner = Product(x, a.axis + 1, x.size() - 1);
  const int64_t bins = y[a.axis];
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "signal.cl", "dft", {size_t(inner), size_t(bins), size_t(outer)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {x[a.axis], inner, x.back(), a.length, bins});
  d.args.push_back(DispatchArg::Scalar(a.inverse ? 1.0f : -1.0f));
  d.args.push_back(DispatchArg::Scalar(a.inverse ? 1.0f / static_cast<float>(a.length) : 1.0f));
  d.flops = 8.0 * outer * inner * bins * std::min(x[a.axis], a.length);
  return absl::OkStatus();
}

// ConstantInt reads optional input `i` as one integer constant (`def` when
// absent); Unimplemented when it is computed.
absl::StatusOr<int64_t> ConstantInt(OnnxNodeContext& n, int i, int64_t def, const char* what) {
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* c, n.ConstantInput(i));
  if (c == nullptr) return def;
  if (c->is_float || c->size() != 1) {
    return n.Invalid(absl::StrCat(what, " must be one integer"));
  }
  return c->ints[0];
}

absl::Status ImportDFT(OnnxNodeContext& n) {
  const bool axis_input = n.opset() >= 20;
  if (axis_input) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"inverse", "onesided"}));
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis", "inverse", "onesided"}));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const Shape& xs = n.desc(x).shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  DFTAttrs a;
  RECQ_ASSIGN_OR_RETURN(int64_t inverse, n.Int("inverse", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t onesided, n.Int("onesided", 0));
  a.inverse = inverse != 0;
  a.onesided = onesided != 0;
  int64_t axis = 0;
  if (axis_input) {
    RECQ_ASSIGN_OR_RETURN(axis, ConstantInt(n, 2, -2, "axis"));
  } else {
    RECQ_ASSIGN_OR_RETURN(axis, n.Int("axis", 1));
  }
  if (axis < -rank || axis >= rank - 1) {
    return n.Invalid(absl::StrCat("axis ", axis, " for x ", n.desc(x).ToString(),
                                  "; expected a dimension before the last"));
  }
  a.axis = axis < 0 ? axis + rank : axis;
  if (a.inverse && a.onesided) {
    return n.Unsupported("the inverse of a one-sided spectrum (irfft) is not supported");
  }
  RECQ_ASSIGN_OR_RETURN(a.length, ConstantInt(n, 1, xs[a.axis], "dft_length"));
  if (a.length < 1) return n.Invalid(absl::StrCat("dft_length is ", a.length, "; expected >= 1"));
  return n.Emit(kDFT, {x}, a);
}

// --- STFT ---

absl::StatusOr<TensorDesc> InferSTFT(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kSTFT, in, 1, 2));
  RECQ_ASSIGN_OR_RETURN(const STFTAttrs* a, AttrsOf<STFTAttrs>(kSTFT, attrs));
  const Shape& x = in[0]->shape;
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2)) {
    return Bad(kSTFT, absl::StrCat("signal is ", S(x), "; expected [batch, length, 1 or 2]"));
  }
  if (a->frame_step < 1 || a->frame_length < 1 || a->frame_length > x[1]) {
    return Bad(kSTFT, absl::StrCat("frame_step ", a->frame_step, " and frame_length ",
                                   a->frame_length, " for signal ", S(x),
                                   "; expected >= 1, the frame no longer than the signal"));
  }
  if (a->onesided && x[2] == 2) return Bad(kSTFT, "onesided needs a real signal");
  if (in.size() > 1 && in[1] != nullptr && in[1]->shape != Shape{a->frame_length}) {
    return Bad(kSTFT,
               absl::StrCat("window is ", in[1]->ToString(), "; expected [", a->frame_length, "]"));
  }
  const int64_t frames = 1 + (x[1] - a->frame_length) / a->frame_step;
  const int64_t bins = a->onesided ? a->frame_length / 2 + 1 : a->frame_length;
  return TensorDesc{{x[0], frames, bins, 2}, DataType::kFloat32};
}

absl::Status LowerSTFT(LoweringContext& ctx, const Node& node) {
  const STFTAttrs& a = AttrsOr<STFTAttrs>(node);
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  const ValueId window = node.inputs.size() > 1 ? node.inputs[1] : kNoValue;
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "signal.cl", "stft", {size_t(y[2]), size_t(y[1]), size_t(y[0])}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(window), ctx.Arg(node.outputs[0])};
  AddInts(d, {x[1], x[2], a.frame_step, a.frame_length, y[1], y[2], window == kNoValue ? 0 : 1});
  d.flops = 8.0 * y[0] * y[1] * y[2] * a.frame_length;
  return absl::OkStatus();
}

absl::Status ImportSTFT(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"onesided"}));
  RECQ_ASSIGN_OR_RETURN(ValueId signal, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId window, n.Input(2, /*optional=*/true));
  STFTAttrs a;
  RECQ_ASSIGN_OR_RETURN(int64_t onesided, n.Int("onesided", 1));
  a.onesided = onesided != 0;
  RECQ_ASSIGN_OR_RETURN(a.frame_step, ConstantInt(n, 1, 0, "frame_step"));
  RECQ_ASSIGN_OR_RETURN(int64_t frame_length, ConstantInt(n, 3, 0, "frame_length"));
  if (window != kNoValue) {
    const Shape& w = n.desc(window).shape;
    if (w.size() != 1) {
      return n.Invalid(absl::StrCat("window is ", n.desc(window).ToString(), "; expected 1-D"));
    }
    if (frame_length != 0 && frame_length != w[0]) {
      return n.Invalid(
          absl::StrCat("frame_length ", frame_length, " and a window of ", w[0], " samples"));
    }
    frame_length = w[0];
  }
  if (frame_length == 0) return n.Invalid("needs a window or a frame_length");
  a.frame_length = frame_length;
  std::vector<ValueId> in = {signal};
  if (window != kNoValue) in.push_back(window);
  return n.Emit(kSTFT, std::move(in), a);
}

}  // namespace

RECQ_REGISTER_OPS(Signal) {
  OpDef dft;
  dft.type = kDFT;
  dft.onnx = {{"", "DFT", 17, kOnnxOpsetMax, ImportDFT}};
  dft.infer = InferDFT;
  dft.variants = {{"dft_direct", nullptr, LowerDFT}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(dft)));

  OpDef stft;
  stft.type = kSTFT;
  stft.onnx = {{"", "STFT", 17, kOnnxOpsetMax, ImportSTFT}};
  stft.infer = InferSTFT;
  stft.variants = {{"stft_direct", nullptr, LowerSTFT}};
  return table.Add(std::move(stft));
}

}  // namespace recq::internal
