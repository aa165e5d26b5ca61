// Integer matrix products and convolutions of quantized tensors: ONNX
// MatMulInteger and ConvInteger (opset 10 on; int32 results) and
// QLinearMatMul and QLinearConv (opset 10 on; requantized results). One
// work-item per output element sums the products of the zero-point-shifted
// int8 / uint8 operands exactly in int32 (integer_matmul.cl): a plain
// kernel, neither tiled nor vectorised. Convolutions are 2-D (NCHW), and
// 1-D (N, C, L) as 2-D on (N, C, 1, L) views; other ranks are
// Unimplemented.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/quantize.h"
#include "engine/ops/typed.h"
#include "engine/ops/window.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// CheckParam checks an optional per-tensor or per-`n` parameter (a scale
// or zero point) of element type `t` (kFloat32 for scales).
absl::Status CheckParam(OpType op, const char* what, const TensorDesc* d, DataType t, int64_t n,
                        bool required) {
  if (d == nullptr) {
    return required ? Bad(op, absl::StrCat(what, " is required")) : absl::OkStatus();
  }
  const int64_t count = d->NumElements();
  if (d->dtype != t || d->shape.size() > 1 || (count != 1 && count != n)) {
    return Bad(op, absl::StrCat(what, " is ", d->ToString(), "; expected ", DataTypeName(t),
                                " of one element", n > 1 ? absl::StrCat(" or [", n, "]") : ""));
  }
  return absl::OkStatus();
}

// Input positions of each op.
struct Slots {
  int a, b, azp, bzp, as = -1, bs = -1, ys = -1, yzp = -1, bias = -1;
};
constexpr Slots kIntegerSlots{0, 1, 2, 3};
constexpr Slots kQLinearSlots{0, 3, 2, 5, 1, 4, 6, 7, 8};

const TensorDesc* At(InferInputs in, int i) {
  return i >= 0 && i < static_cast<int>(in.size()) ? in[i] : nullptr;
}

// CheckOperands checks the quantized operands and returns the output type.
absl::StatusOr<DataType> CheckOperands(OpType op, InferInputs in, const Slots& s, int64_t rows,
                                       int64_t cols) {
  const TensorDesc* a = in[s.a];
  const TensorDesc* b = in[s.b];
  if (!Is8Bit(a->dtype) || !Is8Bit(b->dtype)) {
    return Bad(op, absl::StrCat("operands are ", a->ToString(), " and ", b->ToString(),
                                "; expected int8 or uint8"));
  }
  const bool qlinear = s.as >= 0;
  RECQ_RETURN_IF_ERROR(
      CheckParam(op, "the first zero point", At(in, s.azp), a->dtype, rows, qlinear));
  RECQ_RETURN_IF_ERROR(
      CheckParam(op, "the second zero point", At(in, s.bzp), b->dtype, cols, qlinear));
  if (!qlinear) return DataType::kInt32;
  RECQ_RETURN_IF_ERROR(
      CheckParam(op, "the first scale", At(in, s.as), DataType::kFloat32, rows, true));
  RECQ_RETURN_IF_ERROR(
      CheckParam(op, "the second scale", At(in, s.bs), DataType::kFloat32, cols, true));
  RECQ_RETURN_IF_ERROR(
      CheckParam(op, "the output scale", At(in, s.ys), DataType::kFloat32, 1, true));
  const TensorDesc* yzp = At(in, s.yzp);
  if (yzp == nullptr) return Bad(op, "the output zero point is required");
  if (!Is8Bit(yzp->dtype) || yzp->NumElements() != 1) {
    return Bad(op, absl::StrCat("the output zero point is ", yzp->ToString(),
                                "; expected one int8 or uint8 element"));
  }
  return yzp->dtype;
}

// --- matmul ---

absl::StatusOr<TensorDesc> InferMatMul(OpType op, const Slots& s, InferInputs in) {
  const bool qlinear = s.as >= 0;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, qlinear ? 8 : 2, qlinear ? 8 : 4));
  const Shape& a = in[s.a]->shape;
  const Shape& b = in[s.b]->shape;
  if (a.size() < 2 || b.size() < 2) {
    return absl::UnimplementedError(absl::StrCat(op.name(), ": operands ", S(a), " and ", S(b),
                                                 "; only rank 2 or more is supported"));
  }
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (b[b.size() - 2] != k) {
    return Bad(op, absl::StrCat("operands ", S(a), " and ", S(b), " do not multiply"));
  }
  RECQ_ASSIGN_OR_RETURN(DataType yt, CheckOperands(op, in, s, m, n));
  RECQ_ASSIGN_OR_RETURN(
      Shape batch, Broadcast(op, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)));
  if (batch.size() > 8) return absl::UnimplementedError(absl::StrCat(op.name(), ": rank > 10"));
  batch.push_back(m);
  batch.push_back(n);
  return TensorDesc{std::move(batch), yt};
}

std::vector<std::string> Options(const char* kind, DataType a, DataType b, DataType y,
                                 bool qlinear) {
  std::vector<std::string> o = {
      kind, absl::StrCat("-DA_T=", TypedStorage(a)), absl::StrCat("-DB_T=", TypedStorage(b)),
      absl::StrCat("-DY_T=", TypedStorage(y)), absl::StrCat("-DQLINEAR=", qlinear ? 1 : 0)};
  if (qlinear) {
    const std::array<int64_t, 2> r = QuantRange(y);
    o.push_back(absl::StrCat("-DQMIN=", r[0]));
    o.push_back(absl::StrCat("-DQMAX=", r[1]));
  }
  return o;
}

ValueId InputAt(const Node& node, int i) {
  return i >= 0 && i < static_cast<int>(node.inputs.size()) ? node.inputs[i] : kNoValue;
}
int64_t CountOf(LoweringContext& ctx, ValueId v) {
  return v == kNoValue ? 0 : ctx.graph().value(v).desc.NumElements();
}

absl::Status LowerMatMul(LoweringContext& ctx, const Node& node, const Slots& s) {
  const bool qlinear = s.as >= 0;
  const TensorDesc& a = ctx.graph().value(node.inputs[s.a]).desc;
  const TensorDesc& b = ctx.graph().value(node.inputs[s.b]).desc;
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  const Shape batch(y.shape.begin(), y.shape.end() - 2);
  const int64_t batches = Product(batch, 0, batch.size());
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "integer_matmul.cl", "int_matmul",
                                      {size_t(n), size_t(m), size_t(batches)},
                                      Options("-DMATMUL", a.dtype, b.dtype, y.dtype, qlinear)));
  const ValueId azp = InputAt(node, s.azp), bzp = InputAt(node, s.bzp);
  d.args = {ctx.Arg(node.inputs[s.a]), ctx.Arg(node.inputs[s.b]), ctx.Arg(azp), ctx.Arg(bzp)};
  AddInts(d, {CountOf(ctx, azp), CountOf(ctx, bzp)});
  if (qlinear) {
    const ValueId yzp = InputAt(node, s.yzp);
    for (int i : {s.as, s.bs, s.ys}) d.args.push_back(ctx.Arg(node.inputs[i]));
    d.args.push_back(ctx.Arg(yzp));
    AddInts(d, {CountOf(ctx, node.inputs[s.as]), CountOf(ctx, node.inputs[s.bs]),
                yzp == kNoValue ? 0 : 1});
  }
  d.args.push_back(ctx.Arg(node.outputs[0]));
  AddInts(d, {m, n, k});
  d.args.push_back(DispatchArg::Scalar(Pad8(batch, 1)));
  d.args.push_back(
      DispatchArg::Scalar(BroadcastStrides(Shape(a.shape.begin(), a.shape.end() - 2), batch)));
  d.args.push_back(
      DispatchArg::Scalar(BroadcastStrides(Shape(b.shape.begin(), b.shape.end() - 2), batch)));
  d.flops = 2 * batches * m * n * k;
  return absl::OkStatus();
}

// --- conv ---

absl::StatusOr<TensorDesc> InferConv(OpType op, const Slots& s, const OpAttrs& attrs,
                                     InferInputs in) {
  const bool qlinear = s.as >= 0;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, qlinear ? 8 : 2, qlinear ? 9 : 4));
  RECQ_ASSIGN_OR_RETURN(const Conv2DAttrs* a, AttrsOf<Conv2DAttrs>(op, attrs));
  const Shape& x = in[s.a]->shape;
  const Shape& w = in[s.b]->shape;
  if (x.size() != 4 || w.size() != 4) {
    return absl::UnimplementedError(absl::StrCat(op.name(), ": x ", S(x), " and w ", S(w),
                                                 "; only 2-D convolutions (NCHW) are supported"));
  }
  if (a->groups < 1 || x[1] % a->groups != 0 || w[0] % a->groups != 0 || w[1] * a->groups != x[1]) {
    return Bad(op,
               absl::StrCat("x ", S(x), ", w ", S(w), " and ", a->groups, " groups do not match"));
  }
  // The input zero point is per tensor; the weights' per tensor or per
  // output channel.
  RECQ_ASSIGN_OR_RETURN(DataType yt, CheckOperands(op, in, s, 1, w[0]));
  if (qlinear) {
    const TensorDesc* bias = At(in, s.bias);
    if (bias != nullptr && (bias->dtype != DataType::kInt32 || bias->shape != Shape{w[0]})) {
      return Bad(op, absl::StrCat("bias is ", bias->ToString(), "; expected int32 [", w[0], "]"));
    }
  }
  Shape y = {x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    RECQ_ASSIGN_OR_RETURN(y[2 + i], WindowOutput(op, x[2 + i], a->pads[i], a->pads[2 + i], w[2 + i],
                                                 a->strides[i], a->dilations[i], false));
  }
  return TensorDesc{std::move(y), yt};
}

absl::Status LowerConv(LoweringContext& ctx, const Node& node, const Slots& s) {
  const bool qlinear = s.as >= 0;
  const auto& a = AttrsOr<Conv2DAttrs>(node);
  const TensorDesc& x = ctx.graph().value(node.inputs[s.a]).desc;
  const TensorDesc& w = ctx.graph().value(node.inputs[s.b]).desc;
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "integer_matmul.cl", "int_conv2d",
                   {size_t(y.shape[3]), size_t(y.shape[2]), size_t(y.shape[0] * y.shape[1])},
                   Options("-DCONV", x.dtype, w.dtype, y.dtype, qlinear)));
  const ValueId xzp = InputAt(node, s.azp), wzp = InputAt(node, s.bzp);
  d.args = {ctx.Arg(node.inputs[s.a]), ctx.Arg(node.inputs[s.b]), ctx.Arg(xzp), ctx.Arg(wzp)};
  AddInts(d, {CountOf(ctx, xzp), CountOf(ctx, wzp)});
  if (qlinear) {
    const ValueId yzp = InputAt(node, s.yzp), bias = InputAt(node, s.bias);
    for (int i : {s.as, s.bs, s.ys}) d.args.push_back(ctx.Arg(node.inputs[i]));
    d.args.push_back(ctx.Arg(yzp));
    AddInts(d, {CountOf(ctx, node.inputs[s.bs]), yzp == kNoValue ? 0 : 1});
    d.args.push_back(ctx.Arg(bias));
    AddInts(d, {bias == kNoValue ? 0 : 1});
  }
  d.args.push_back(ctx.Arg(node.outputs[0]));
  AddInts(d, {x.shape[1], x.shape[2], x.shape[3], y.shape[1], y.shape[2], y.shape[3], w.shape[2],
              w.shape[3], a.strides[0], a.strides[1], a.dilations[0], a.dilations[1], a.pads[0],
              a.pads[1], a.groups});
  d.flops = 2 * y.NumElements() * w.shape[1] * w.shape[2] * w.shape[3];
  return absl::OkStatus();
}

// --- import ---

absl::Status ImportMatMul(OnnxNodeContext& n, OpType op, int inputs) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  std::vector<ValueId> in;
  for (int i = 0; i < inputs; ++i) {
    RECQ_ASSIGN_OR_RETURN(ValueId v, n.Input(i, /*optional=*/true));
    in.push_back(v);
  }
  while (!in.empty() && in.back() == kNoValue) in.pop_back();
  return n.Emit(op, std::move(in), {});
}

absl::Status ImportConv(OnnxNodeContext& n, OpType op, const Slots& s, int inputs) {
  RECQ_RETURN_IF_ERROR(
      n.CheckAttrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}));
  std::vector<ValueId> in;
  for (int i = 0; i < inputs; ++i) {
    RECQ_ASSIGN_OR_RETURN(ValueId v, n.Input(i, /*optional=*/true));
    in.push_back(v);
  }
  while (!in.empty() && in.back() == kNoValue) in.pop_back();
  if (in.size() <= static_cast<size_t>(s.b) || in[s.a] == kNoValue || in[s.b] == kNoValue) {
    return n.Invalid("x and w are required");
  }
  // A 1-D convolution (N, C, L) runs as the 2-D one on (N, C, 1, L).
  const bool one_d = n.desc(in[s.a]).shape.size() == 3;
  if (one_d) {
    RECQ_ASSIGN_OR_RETURN(in[s.a], ViewAs2D(n, in[s.a]));
    RECQ_ASSIGN_OR_RETURN(in[s.b], WeightsAs2D(n, s.b));
  }
  const TensorDesc& xd = n.desc(in[s.a]);
  const TensorDesc& wd = n.desc(in[s.b]);
  if (xd.shape.size() != 4 || wd.shape.size() != 4) {
    return n.Unsupported(absl::StrCat("x is ", xd.ToString(), " and w ", wd.ToString(),
                                      "; only 1-D (N, C, L) and 2-D (NCHW) convolutions are "
                                      "supported"));
  }
  RECQ_ASSIGN_OR_RETURN(const Conv2DAttrs attrs, ResolveConvAttrs(n, xd, wd, one_d));
  if (one_d) return EmitFrom2D(n, op, std::move(in), attrs);
  return n.Emit(op, std::move(in), attrs);
}

OpDef MatMulDef(OpType op, const char* onnx, const Slots& s, int inputs, const char* variant) {
  OpDef def;
  def.type = op;
  def.typed = true;
  def.onnx = {{"", onnx, 10, kOnnxOpsetMax,
               [op, inputs](OnnxNodeContext& n) { return ImportMatMul(n, op, inputs); }}};
  def.infer = [op, s](const OpAttrs&, InferInputs in) { return InferMatMul(op, s, in); };
  def.variants = {{variant, nullptr, [s](LoweringContext& ctx, const Node& node) {
                     return LowerMatMul(ctx, node, s);
                   }}};
  return def;
}

OpDef ConvDef(OpType op, const char* onnx, const Slots& s, int inputs, const char* variant) {
  OpDef def;
  def.type = op;
  def.typed = true;
  def.onnx = {{"", onnx, 10, kOnnxOpsetMax,
               [op, s, inputs](OnnxNodeContext& n) { return ImportConv(n, op, s, inputs); }}};
  def.infer = [op, s](const OpAttrs& attrs, InferInputs in) { return InferConv(op, s, attrs, in); };
  def.variants = {{variant, nullptr, [s](LoweringContext& ctx, const Node& node) {
                     return LowerConv(ctx, node, s);
                   }}};
  return def;
}

}  // namespace

RECQ_REGISTER_OPS(IntegerMatMul) {
  RECQ_RETURN_IF_ERROR(
      table.Add(MatMulDef(kMatMulInteger, "MatMulInteger", kIntegerSlots, 4, "int_matmul")));
  RECQ_RETURN_IF_ERROR(
      table.Add(MatMulDef(kQLinearMatMul, "QLinearMatMul", kQLinearSlots, 8, "qlinear_matmul")));
  RECQ_RETURN_IF_ERROR(
      table.Add(ConvDef(kConvInteger, "ConvInteger", kIntegerSlots, 4, "int_conv2d")));
  return table.Add(ConvDef(kQLinearConv, "QLinearConv", kQLinearSlots, 9, "qlinear_conv2d"));
}

}  // namespace recq::internal
