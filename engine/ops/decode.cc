// The decode-loop ops (engine/ops/decode.h): the step's inputs made from the
// device-side state, the in-place KV cache write and the step's end. They
// are put into a graph by engine/decode/decoder_rewrite.cc, never imported.
#include "engine/ops/decode.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status CheckState(OpType op, const TensorDesc& state, int64_t length) {
  if (state.dtype != DataType::kInt64 || state.shape != Shape{kDecodeStateHeader + length}) {
    return Bad(op, absl::StrCat("the state is ", state.ToString(), "; expected [",
                                kDecodeStateHeader + length, "] int64"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorDesc> InferBegin(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDecodeBegin, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const DecodeAttrs* a, AttrsOf<DecodeAttrs>(kDecodeBegin, attrs));
  if (a->length < 2)
    return Bad(kDecodeBegin, absl::StrCat("length is ", a->length, "; expected >= 2"));
  if (in[0]->dtype != DataType::kInt64 || in[0]->shape != Shape{kDecodeControlSize}) {
    return Bad(kDecodeBegin, absl::StrCat("the control is ", in[0]->ToString(), "; expected [",
                                          kDecodeControlSize, "] int64"));
  }
  return TensorDesc{{kDecodeStateHeader + a->length}, DataType::kInt64};
}

absl::StatusOr<TensorDesc> InferInputs_(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDecodeInputs, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const DecodeAttrs* a, AttrsOf<DecodeAttrs>(kDecodeInputs, attrs));
  RECQ_RETURN_IF_ERROR(CheckState(kDecodeInputs, *in[0], a->length));
  if (a->which == DecodeAttrs::Which::kMask) return TensorDesc{{1, a->length}, DataType::kInt64};
  if (a->which == DecodeAttrs::Which::kStep) return TensorDesc{{1}, DataType::kInt64};
  if (a->rows < 1 || a->rows > a->length) {
    return Bad(kDecodeInputs, absl::StrCat("rows is ", a->rows, "; expected 1..", a->length));
  }
  return TensorDesc{{1, a->rows}, DataType::kInt64};
}

absl::StatusOr<TensorDesc> InferKvWrite(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kKvCacheWrite, in, 2, 2));
  RECQ_ASSIGN_OR_RETURN(const DecodeAttrs* a, AttrsOf<DecodeAttrs>(kKvCacheWrite, attrs));
  const TensorDesc& x = *in[0];
  if (a->heads > 0) {
    const int64_t last = a->offset + (a->heads - 1) * a->stride_h + (a->rows - 1) * a->stride_s +
                         (a->dim - 1) * a->stride_d;
    if (x.dtype != DataType::kFloat32 || a->dim < 1 || a->rows < 1 || a->rows > a->length ||
        a->offset < 0 || a->stride_h < 0 || a->stride_s < 0 || a->stride_d < 0 ||
        last >= x.NumElements()) {
      return Bad(kKvCacheWrite,
                 absl::StrCat("the source ", x.ToString(), " does not hold ", a->heads, "x",
                              a->rows, "x", a->dim, " elements from offset ", a->offset,
                              " by strides ", a->stride_h, ", ", a->stride_s, ", ", a->stride_d));
    }
    RECQ_RETURN_IF_ERROR(CheckState(kKvCacheWrite, *in[1], a->length));
    return TensorDesc{{1, a->heads, a->length, a->dim}, DataType::kFloat32};
  }
  if (a->rows < 1 || a->rows > a->length) {
    return Bad(kKvCacheWrite, absl::StrCat("rows is ", a->rows, "; expected 1..", a->length));
  }
  if (x.dtype != DataType::kFloat32 || x.shape.size() != 4 || x.shape[0] != 1 ||
      x.shape[2] != a->rows) {
    return Bad(kKvCacheWrite, absl::StrCat("the new rows are ", x.ToString(),
                                           "; expected [1,heads,", a->rows, ",dim] float32"));
  }
  RECQ_RETURN_IF_ERROR(CheckState(kKvCacheWrite, *in[1], a->length));
  return TensorDesc{{1, x.shape[1], a->length, x.shape[3]}, DataType::kFloat32};
}

absl::StatusOr<TensorDesc> InferAdvance(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDecodeAdvance, in, 3, 3));
  RECQ_ASSIGN_OR_RETURN(const DecodeAttrs* a, AttrsOf<DecodeAttrs>(kDecodeAdvance, attrs));
  if (in[0]->dtype != DataType::kInt64 || in[0]->NumElements() != 1) {
    return Bad(kDecodeAdvance,
               absl::StrCat("the sampled ids are ", in[0]->ToString(), "; expected one int64"));
  }
  RECQ_RETURN_IF_ERROR(CheckState(kDecodeAdvance, *in[1], a->length));
  if (in[2]->dtype != DataType::kInt64 || in[2]->shape != Shape{kDecodeControlSize}) {
    return Bad(kDecodeAdvance, absl::StrCat("the control is ", in[2]->ToString(), "; expected [",
                                            kDecodeControlSize, "] int64"));
  }
  return TensorDesc{{1}, DataType::kInt64};
}

absl::StatusOr<TensorDesc> InferPrefillAdvance(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDecodePrefillAdvance, in, 2, 1 << 20));
  RECQ_ASSIGN_OR_RETURN(const DecodeAttrs* a, AttrsOf<DecodeAttrs>(kDecodePrefillAdvance, attrs));
  RECQ_RETURN_IF_ERROR(CheckState(kDecodePrefillAdvance, *in[0], a->length));
  if (in[1]->dtype != DataType::kInt64 || in[1]->shape != Shape{kDecodeControlSize}) {
    return Bad(kDecodePrefillAdvance, absl::StrCat("the control is ", in[1]->ToString(),
                                                   "; expected [", kDecodeControlSize, "] int64"));
  }
  if (a->rows < 1 || a->rows > a->length) {
    return Bad(kDecodePrefillAdvance,
               absl::StrCat("rows is ", a->rows, "; expected 1..", a->length));
  }
  return TensorDesc{{1}, DataType::kInt64};
}

absl::Status LowerPrefillAdvance(LoweringContext& ctx, const Node& node) {
  const DecodeAttrs& a = AttrsOr<DecodeAttrs>(node);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "decode.cl", "decode_prefill_advance", {1}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {a.length, a.rows});
  return absl::OkStatus();
}

absl::StatusOr<TensorDesc> InferArgMax(const OpAttrs&, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDecodeArgMax, in, 1, 1));
  const TensorDesc& x = *in[0];
  if (x.dtype != DataType::kFloat32 || x.shape.empty() || x.NumElements() != x.shape.back() ||
      x.shape.back() < 1) {
    return Bad(kDecodeArgMax,
               absl::StrCat("the logits are ", x.ToString(), "; expected one float32 row"));
  }
  return TensorDesc{Shape(x.shape.begin(), x.shape.end() - 1), DataType::kInt64};
}

absl::Status LowerArgMax(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const size_t group = GpuGroup(ctx.device(), 256);
  Dispatch& d = ctx.Emit(
      MakeDispatch(ctx, "decode.cl", "decode_argmax", {group}, {absl::StrCat("-DGROUP=", group)}));
  SetRange(d, {group, 1, 1}, {group, 1, 1});
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {x.back()});
  return absl::OkStatus();
}

absl::Status LowerBegin(LoweringContext&, const Node&) { return absl::OkStatus(); }

absl::Status LowerInputs(LoweringContext& ctx, const Node& node) {
  const DecodeAttrs& a = AttrsOr<DecodeAttrs>(node);
  const char* kernel = a.which == DecodeAttrs::Which::kToken  ? "decode_token"
                       : a.which == DecodeAttrs::Which::kMask ? "decode_mask"
                                                              : "decode_position";
  const size_t global = a.which == DecodeAttrs::Which::kMask   ? size_t(a.length)
                        : a.which == DecodeAttrs::Which::kStep ? 1
                                                               : size_t(a.rows);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "decode.cl", kernel, {global}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.outputs[0])};
  AddInts(d, {a.length, a.which == DecodeAttrs::Which::kStep ? 1 : a.rows});
  return absl::OkStatus();
}

absl::Status LowerKvWrite(LoweringContext& ctx, const Node& node) {
  const DecodeAttrs& a = AttrsOr<DecodeAttrs>(node);
  const Shape& y = ShapeOf(ctx, node.outputs[0]);
  const int64_t heads = y[1], dim = y[3];
  const bool strided = a.heads > 0;
  const int64_t rows = a.rows;
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "decode.cl", "kv_cache_write", {size_t(heads * dim * rows)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {heads, a.length, dim, strided ? a.offset : 0, strided ? a.stride_h : rows * dim,
              strided ? a.stride_d : 1, rows, strided ? a.stride_s : dim});
  return absl::OkStatus();
}

absl::Status LowerAdvance(LoweringContext& ctx, const Node& node) {
  const DecodeAttrs& a = AttrsOr<DecodeAttrs>(node);
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "decode.cl", "decode_advance", {1}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.inputs[2]),
            ctx.Arg(node.outputs[0])};
  AddInts(d, {a.length});
  return absl::OkStatus();
}

OpDef Make(OpType type, decltype(OpDef::infer) infer,
           std::function<absl::Status(LoweringContext&, const Node&)> lower, const char* variant) {
  OpDef def;
  def.type = type;
  def.typed = true;
  def.infer = std::move(infer);
  def.variants = {{variant, nullptr, std::move(lower)}};
  return def;
}

}  // namespace

RECQ_REGISTER_OPS(Decode) {
  RECQ_RETURN_IF_ERROR(table.Add(Make(kDecodeBegin, InferBegin, LowerBegin, "decode_begin")));
  RECQ_RETURN_IF_ERROR(table.Add(Make(kDecodeInputs, InferInputs_, LowerInputs, "decode_inputs")));
  RECQ_RETURN_IF_ERROR(
      table.Add(Make(kKvCacheWrite, InferKvWrite, LowerKvWrite, "kv_cache_write")));
  RECQ_RETURN_IF_ERROR(
      table.Add(Make(kDecodeAdvance, InferAdvance, LowerAdvance, "decode_advance")));
  RECQ_RETURN_IF_ERROR(table.Add(Make(kDecodePrefillAdvance, InferPrefillAdvance,
                                      LowerPrefillAdvance, "decode_prefill_advance")));
  return table.Add(Make(kDecodeArgMax, InferArgMax, LowerArgMax, "decode_argmax"));
}

}  // namespace recq::internal
