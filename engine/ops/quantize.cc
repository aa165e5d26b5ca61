// Linear quantization (ONNX QuantizeLinear and DequantizeLinear, opsets 10
// to 21, and DynamicQuantizeLinear, opset 11 on): per tensor, per axis and
// per block scales and zero points, integer types of 8 and 16 bits
// (float8 and 4-bit types are Unimplemented). Quantize and dequantize of
// constants fold at import (QDQ models' weights become float constants);
// otherwise they run on the device. Rounding is half to even, results
// saturate to the type's range; the division x / scale is the device's
// single-precision division.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/quantize.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {

std::array<int64_t, 2> QuantRange(DataType t) {
  switch (t) {
    case DataType::kUInt8:
      return {0, 255};
    case DataType::kInt8:
      return {-128, 127};
    case DataType::kUInt16:
      return {0, 65535};
    case DataType::kInt16:
      return {-32768, 32767};
    case DataType::kInt32:
      return {INT32_MIN, INT32_MAX};
    default:
      return {0, 0};
  }
}

namespace {

bool IsQuantType(DataType t) {
  return t == DataType::kUInt8 || t == DataType::kInt8 || t == DataType::kUInt16 ||
         t == DataType::kInt16;
}
bool IsFloatType(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat16; }

// Where the scale's elements sit in x: x viewed as [outer, dim, inner]
// around the axis (per tensor: dim = inner = 1).
struct ParamLayout {
  int64_t inner = 1, dim = 1, block = 1, nblocks = 1;
  bool blocked = false;
  int64_t Index(int64_t i) const {
    const int64_t a = (i / inner) % dim;
    return blocked ? ((i / (inner * dim)) * nblocks + a / block) * inner + i % inner : a;
  }
};

// Layout checks the scale (and zero point) shape against x.
absl::StatusOr<ParamLayout> Layout(OpType op, const QuantizeAttrs& a, const Shape& x,
                                   const Shape& scale) {
  ParamLayout l;
  int64_t n = 1;
  for (int64_t d : scale) n *= d;
  if (a.block_size <= 0 && n == 1 && scale.size() <= 1) return l;
  RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, a.axis, int64_t(x.size()), false));
  l.dim = x[axis];
  l.inner = Product(x, axis + 1, x.size());
  if (a.block_size <= 0) {
    if (scale.size() != 1 || scale[0] != x[axis]) {
      return Bad(op, absl::StrCat("scale is ", S(scale), " for x ", S(x), " and axis ", a.axis,
                                  "; expected one element or [", x[axis], "]"));
    }
    return l;
  }
  l.blocked = true;
  l.block = a.block_size;
  l.nblocks = (x[axis] + a.block_size - 1) / a.block_size;
  Shape want = x;
  want[axis] = l.nblocks;
  if (scale != want) {
    return Bad(op, absl::StrCat("scale is ", S(scale), " for x ", S(x), ", axis ", a.axis,
                                " and block_size ", a.block_size, "; expected ", S(want)));
  }
  return l;
}

absl::StatusOr<TensorDesc> InferQuantize(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kQuantizeLinear, in, 2, 3));
  RECQ_ASSIGN_OR_RETURN(const QuantizeAttrs* a, AttrsOf<QuantizeAttrs>(kQuantizeLinear, attrs));
  if (!IsQuantType(a->to)) {
    return absl::UnimplementedError(absl::StrCat("QuantizeLinear: output type ",
                                                 DataTypeName(a->to),
                                                 " is not supported; expected uint8, int8, "
                                                 "uint16 or int16"));
  }
  if (!IsFloatType(in[0]->dtype) || in[1]->dtype != in[0]->dtype) {
    return Bad(kQuantizeLinear,
               absl::StrCat("x is ", in[0]->ToString(), " and scale ", in[1]->ToString(),
                            "; expected float32 or float16, both the same"));
  }
  if (in.size() > 2 && in[2] != nullptr &&
      (in[2]->dtype != a->to || in[2]->NumElements() != in[1]->NumElements())) {
    return Bad(kQuantizeLinear,
               absl::StrCat("zero point is ", in[2]->ToString(), "; expected ", DataTypeName(a->to),
                            " of the scale's shape ", S(in[1]->shape)));
  }
  RECQ_RETURN_IF_ERROR(Layout(kQuantizeLinear, *a, in[0]->shape, in[1]->shape).status());
  return TensorDesc{in[0]->shape, a->to};
}

absl::StatusOr<TensorDesc> InferDequantize(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDequantizeLinear, in, 2, 3));
  RECQ_ASSIGN_OR_RETURN(const QuantizeAttrs* a, AttrsOf<QuantizeAttrs>(kDequantizeLinear, attrs));
  if (!IsQuantType(in[0]->dtype) && in[0]->dtype != DataType::kInt32) {
    return absl::UnimplementedError(
        absl::StrCat("DequantizeLinear: x is ", in[0]->ToString(),
                     "; supported: uint8, int8, uint16, int16 and int32"));
  }
  if (!IsFloatType(in[1]->dtype)) {
    return Bad(kDequantizeLinear,
               absl::StrCat("scale is ", in[1]->ToString(), "; expected float32 or float16"));
  }
  if (in.size() > 2 && in[2] != nullptr &&
      (in[2]->dtype != in[0]->dtype || in[2]->NumElements() != in[1]->NumElements())) {
    return Bad(kDequantizeLinear, absl::StrCat("zero point is ", in[2]->ToString(),
                                               "; expected x's type ", DataTypeName(in[0]->dtype),
                                               " and the scale's shape ", S(in[1]->shape)));
  }
  RECQ_RETURN_IF_ERROR(Layout(kDequantizeLinear, *a, in[0]->shape, in[1]->shape).status());
  return TensorDesc{in[0]->shape, in[1]->dtype};
}

std::vector<std::string> QuantOptions(const char* kernel_define, DataType f, DataType q,
                                      const ParamLayout& l) {
  const std::array<int64_t, 2> r = QuantRange(q);
  return {kernel_define,
          absl::StrCat("-DF_HALF=", f == DataType::kFloat16 ? 1 : 0),
          absl::StrCat("-DQ_T=", TypedStorage(q)),
          absl::StrCat("-DQMIN=(", r[0], "L)"),
          absl::StrCat("-DQMAX=(", r[1], "L)"),
          absl::StrCat("-DBLOCKED=", l.blocked ? 1 : 0)};
}

absl::Status LowerQuantizeOrDequantize(LoweringContext& ctx, const Node& node, bool quantize) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  const TensorDesc& y = ctx.graph().value(node.outputs[0]).desc;
  const Shape& scale = ShapeOf(ctx, node.inputs[1]);
  const QuantizeAttrs& a = AttrsOr<QuantizeAttrs>(node);
  RECQ_ASSIGN_OR_RETURN(ParamLayout l, Layout(node.op, a, x.shape, scale));
  const ValueId zp = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  const DataType f = quantize ? x.dtype : y.dtype;
  const DataType q = quantize ? y.dtype : x.dtype;
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "quantize.cl", quantize ? "quantize_linear" : "dequantize_linear",
      {size_t(x.NumElements())}, QuantOptions(quantize ? "-DQUANTIZE" : "-DDEQUANTIZE", f, q, l)));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(zp),
            ctx.Arg(node.outputs[0])};
  AddInts(d, {l.inner, l.dim, l.block, l.nblocks, zp == kNoValue ? 0 : 1});
  return absl::OkStatus();
}

absl::StatusOr<TensorDesc> InferDynamicParams(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kDynamicQuantizeParams, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const DynamicQuantizeParamsAttrs* a,
                        AttrsOf<DynamicQuantizeParamsAttrs>(kDynamicQuantizeParams, attrs));
  if (!IsFloatType(in[0]->dtype)) {
    return Bad(kDynamicQuantizeParams,
               absl::StrCat("x is ", in[0]->ToString(), "; expected float32 or float16"));
  }
  return TensorDesc{{}, a->zero_point ? DataType::kUInt8 : in[0]->dtype};
}

absl::Status LowerDynamicParams(LoweringContext& ctx, const Node& node) {
  const TensorDesc& x = ctx.graph().value(node.inputs[0]).desc;
  const int64_t n = x.NumElements();
  const size_t group = GroupForRow(ctx.device(), n, 1, 256);
  const bool zp = AttrsOr<DynamicQuantizeParamsAttrs>(node).zero_point;
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "quantize.cl", "dynamic_quantize_params", {group},
                            {"-DDYNAMIC_PARAMS", absl::StrCat("-DGROUP=", group),
                             absl::StrCat("-DF_HALF=", x.dtype == DataType::kFloat16 ? 1 : 0),
                             absl::StrCat("-DZERO_POINT=", zp ? 1 : 0)}));
  d.local[0] = group;
  d.args = {ctx.Arg(node.inputs[0])};
  AddInts(d, {n});
  d.args.push_back(ctx.Arg(node.outputs[0]));
  return absl::OkStatus();
}

// --- import ---

absl::StatusOr<QuantizeAttrs> ReadAttrs(OnnxNodeContext& n, bool quantize) {
  if (quantize) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis", "saturate", "block_size", "output_dtype"}));
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis", "block_size"}));
  }
  QuantizeAttrs a;
  RECQ_ASSIGN_OR_RETURN(a.axis, n.Int("axis", 1));
  RECQ_ASSIGN_OR_RETURN(a.block_size, n.Int("block_size", 0));
  if (a.block_size < 0) {
    return n.Invalid(absl::StrCat("block_size is ", a.block_size, "; expected 0 or more"));
  }
  return a;
}

// Quantize / Dequantize of constants, with the kernels' arithmetic.
absl::Status Fold(OnnxNodeContext& n, bool quantize, const QuantizeAttrs& a,
                  const std::vector<const OnnxConstant*>& c) {
  const OnnxConstant& x = *c[0];
  const OnnxConstant& scale = *c[1];
  const OnnxConstant* zp = c.size() > 2 ? c[2] : nullptr;
  absl::StatusOr<ParamLayout> l =
      Layout(quantize ? kQuantizeLinear : kDequantizeLinear, a, x.dims, scale.dims);
  if (!l.ok()) return n.Invalid(l.status().message());
  OnnxConstant out;
  out.dims = x.dims;
  const int64_t count = Numel(x.dims);
  if (quantize) {
    const std::array<int64_t, 2> r = QuantRange(a.to);
    out.is_float = false;
    out.dtype = a.to;
    out.ints.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t p = l->Index(i);
      const float v =
          static_cast<float>(ElementAsDouble(x, i)) / static_cast<float>(ElementAsDouble(scale, p));
      double q = std::isnan(v) ? 0.0 : std::nearbyint(double(v));
      q = std::min(std::max(q, -1e12), 1e12) + (zp ? double(ElementAsInt(*zp, p)) : 0.0);
      out.ints[i] = static_cast<int64_t>(std::min<double>(std::max<double>(q, r[0]), r[1]));
    }
  } else {
    out.is_float = true;
    out.dtype = scale.dtype;
    out.floats.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t p = l->Index(i);
      float d = static_cast<float>(ElementAsInt(x, i));
      if (zp) d -= static_cast<float>(ElementAsInt(*zp, p));
      out.floats[i] = d * static_cast<float>(ElementAsDouble(scale, p));
    }
  }
  return n.DefineConstant(std::move(out));
}

absl::Status ImportQuantize(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(QuantizeAttrs a, ReadAttrs(n, /*quantize=*/true));
  RECQ_ASSIGN_OR_RETURN(int64_t output_dtype, n.Int("output_dtype", 0));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId scale, n.Input(1));
  RECQ_ASSIGN_OR_RETURN(ValueId zp, n.Input(2, /*optional=*/true));
  if (output_dtype != 0) {
    absl::StatusOr<DataType> t = DataTypeFromOnnx(static_cast<int32_t>(output_dtype));
    if (!t.ok()) {
      return n.Unsupported(absl::StrCat("output_dtype ", output_dtype, " is not supported"));
    }
    a.to = *t;
  }
  if (zp != kNoValue) {
    if (output_dtype != 0 && n.desc(zp).dtype != a.to) {
      return n.Invalid(absl::StrCat("output_dtype is ", DataTypeName(a.to), ", the zero point is ",
                                    n.desc(zp).ToString()));
    }
    a.to = n.desc(zp).dtype;
  }
  std::vector<const OnnxConstant*> c;
  if (IsQuantType(a.to) && AllConstantInputs(n, &c)) return Fold(n, true, a, c);
  std::vector<ValueId> inputs = {x, scale};
  if (zp != kNoValue) inputs.push_back(zp);
  return n.Emit(kQuantizeLinear, std::move(inputs), a);
}

absl::Status ImportDequantize(OnnxNodeContext& n) {
  RECQ_ASSIGN_OR_RETURN(QuantizeAttrs a, ReadAttrs(n, /*quantize=*/false));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId scale, n.Input(1));
  RECQ_ASSIGN_OR_RETURN(ValueId zp, n.Input(2, /*optional=*/true));
  const DataType xt = n.desc(x).dtype;
  std::vector<const OnnxConstant*> c;
  if ((IsQuantType(xt) || xt == DataType::kInt32) && IsFloatType(n.desc(scale).dtype) &&
      AllConstantInputs(n, &c)) {
    return Fold(n, false, a, c);
  }
  std::vector<ValueId> inputs = {x, scale};
  if (zp != kNoValue) inputs.push_back(zp);
  return n.Emit(kDequantizeLinear, std::move(inputs), a);
}

// DynamicQuantizeLinear: the scale and zero point computed on the device
// (one reduction of x each), then QuantizeLinear with them.
absl::Status ImportDynamicQuantize(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  if (n.desc(x).dtype != DataType::kFloat32) {
    return n.Invalid(absl::StrCat("x is ", n.desc(x).ToString(), "; expected float32"));
  }
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) return n.Unsupported("DynamicQuantizeLinear needs the importer's emitter");
  RECQ_ASSIGN_OR_RETURN(ValueId scale, e->EmitValue(kDynamicQuantizeParams, {x},
                                                    DynamicQuantizeParamsAttrs{false}, "scale"));
  RECQ_ASSIGN_OR_RETURN(ValueId zp, e->EmitValue(kDynamicQuantizeParams, {x},
                                                 DynamicQuantizeParamsAttrs{true}, "zero_point"));
  RECQ_RETURN_IF_ERROR(n.Emit(kQuantizeLinear, {x, scale, zp}, QuantizeAttrs{}));
  for (int i = 1; i < 3; ++i) {
    if (i < n.num_outputs() && !n.output_name(i).empty()) {
      RECQ_RETURN_IF_ERROR(n.EmitOutput(i, OpType::kIdentity, {i == 1 ? scale : zp}, {}));
    }
  }
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(Quantize) {
  OpDef q;
  q.type = kQuantizeLinear;
  q.typed = true;
  q.onnx = {{"", "QuantizeLinear", 10, kOnnxOpsetMax, ImportQuantize}};
  q.infer = InferQuantize;
  q.variants = {{"quantize_linear", nullptr, [](LoweringContext& ctx, const Node& node) {
                   return LowerQuantizeOrDequantize(ctx, node, true);
                 }}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(q)));

  OpDef dq;
  dq.type = kDequantizeLinear;
  dq.typed = true;
  dq.onnx = {{"", "DequantizeLinear", 10, kOnnxOpsetMax, ImportDequantize}};
  dq.infer = InferDequantize;
  dq.variants = {{"dequantize_linear", nullptr, [](LoweringContext& ctx, const Node& node) {
                    return LowerQuantizeOrDequantize(ctx, node, false);
                  }}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(dq)));

  OpDef dyn;
  dyn.type = kDynamicQuantizeParams;
  dyn.typed = true;
  dyn.onnx = {{"", "DynamicQuantizeLinear", 11, kOnnxOpsetMax, ImportDynamicQuantize}};
  dyn.infer = InferDynamicParams;
  dyn.variants = {{"dynamic_quantize_params", nullptr, LowerDynamicParams}};
  return table.Add(std::move(dyn));
}

}  // namespace recq::internal
