// ONNX ops that exporters use to compute shapes: Shape, Size, Gather,
// Unsqueeze, Squeeze, ConstantOfShape, Range, Cast, Where. Every
// model input has a static shape, so on constants (and on Shape of any
// value) they are evaluated at import and become constants, the way
// onnxruntime and TensorRT fold them (Slice too); Add/Sub/Mul/Div and
// Concat fold the same way in their own files, Equal and Not in
// typed_elementwise.cc. Unsqueeze, Squeeze and a float-to-float Cast of
// computed data are views (Reshape, Identity); Slice of computed float data and Gather of computed
// data (or with indices computed at run time) emit the device ops Slice (strided_copy.cc) and
// Gather (gather.cc). A value that really depends on input data is Unimplemented, naming the node.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

OnnxConstant Ints(std::vector<int64_t> dims, std::vector<int64_t> values) {
  OnnxConstant c;
  c.is_float = false;
  c.dims = std::move(dims);
  c.ints = std::move(values);
  return c;
}

// The static shape of input `i`, constant or computed.
absl::StatusOr<std::vector<int64_t>> ShapeOfInput(OnnxNodeContext& n, int i) {
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
  if (c.ok() && *c != nullptr) return (*c)->dims;
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(i));
  return n.desc(x).shape;
}

absl::StatusOr<const OnnxConstant*> RequireConstant(OnnxNodeContext& n, int i, const char* what) {
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
  if (!c.ok() || *c == nullptr) {
    return n.Unsupported(absl::StrCat(what, " (input ", i,
                                      ") depends on the model's input data; only values known "
                                      "when the model is loaded are supported there"));
  }
  return *c;
}

absl::Status ImportShape(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"start", "end"}));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ShapeOfInput(n, 0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  RECQ_ASSIGN_OR_RETURN(int64_t start, n.Int("start", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t end, n.Int("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> dims(shape.begin() + start, shape.begin() + end);
  return n.DefineConstant(Ints({static_cast<int64_t>(dims.size())}, dims));
}

absl::Status ImportSize(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ShapeOfInput(n, 0));
  return n.DefineConstant(Ints({}, {Numel(shape)}));
}

absl::Status ImportConstantOfShape(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"value"}));
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* shape, RequireConstant(n, 0, "the shape"));
  OnnxConstant value;
  value.floats = {0.0f};
  if (n.HasAttr("value")) {
    RECQ_ASSIGN_OR_RETURN(value, n.Tensor("value"));
    if (value.size() != 1) return n.Invalid("attribute 'value' must hold one element");
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < shape->size(); ++i) {
    const int64_t d = ElementAsInt(*shape, i);
    if (d < 0) return n.Invalid(absl::StrCat("shape has a negative dimension ", d));
    dims.push_back(d);
  }
  const int64_t total = Numel(dims);
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(total));
  OnnxConstant out;
  out.dims = dims;
  out.is_float = value.is_float;
  out.dtype = value.dtype;  // a bool value makes a bool tensor
  if (value.is_float) {
    out.floats.assign(total, value.floats[0]);
  } else {
    out.ints.assign(total, value.ints[0]);
  }
  return n.DefineConstant(std::move(out));
}

absl::Status ImportRange(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* start, RequireConstant(n, 0, "start"));
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* limit, RequireConstant(n, 1, "limit"));
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* delta, RequireConstant(n, 2, "delta"));
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1) {
    return n.Invalid("start, limit and delta must be scalars");
  }
  const double s = ElementAsDouble(*start, 0), l = ElementAsDouble(*limit, 0),
               d = ElementAsDouble(*delta, 0);
  if (d == 0) return n.Invalid("delta is 0");
  const double steps = std::ceil((l - s) / d);
  // 2^62 stands in for a count past int64 (or NaN): ReserveFolded refuses it.
  const int64_t count =
      !(steps <= 0x1p62) ? int64_t{1} << 62 : std::max<int64_t>(0, static_cast<int64_t>(steps));
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(count));
  OnnxConstant out;
  out.is_float = start->is_float;
  out.dims = {count};
  for (int64_t i = 0; i < count; ++i) {
    if (out.is_float) {
      out.floats.push_back(static_cast<float>(s + i * d));
    } else {
      out.ints.push_back(static_cast<int64_t>(s + i * d));
    }
  }
  return n.DefineConstant(std::move(out));
}

// Unsqueeze and Squeeze: axes from the attribute (opset < 13) or input 1.
absl::StatusOr<std::vector<int64_t>> AxesOf(OnnxNodeContext& n) {
  if (n.opset() < 13) return n.Ints("axes");
  if (n.num_inputs() < 2) return std::vector<int64_t>{};
  RECQ_ASSIGN_OR_RETURN(const OnnxConstant* axes, RequireConstant(n, 1, "axes"));
  std::vector<int64_t> out;
  for (int64_t i = 0; i < axes->size(); ++i) out.push_back(ElementAsInt(*axes, i));
  return out;
}

// Emits `x` under `shape`: a folded constant, or a Reshape view of data.
absl::Status Reshaped(OnnxNodeContext& n, std::vector<int64_t> shape) {
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0);
  if (c.ok() && *c != nullptr) {
    OnnxConstant out = **c;
    out.dims = std::move(shape);
    return n.DefineConstant(std::move(out));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  return n.Emit(OpType::kReshape, {x}, ReshapeAttrs{std::move(shape), true});
}

absl::Status ImportUnsqueeze(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axes"}));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> in, ShapeOfInput(n, 0));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesOf(n));
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank || inserted[axis]) {
      return n.Invalid(
          absl::StrCat("axes [", absl::StrJoin(axes, ","), "] are invalid for rank ", in.size()));
    }
    inserted[axis] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : in[next++]);
  return Reshaped(n, std::move(out));
}

absl::Status ImportSqueeze(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axes"}));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> in, ShapeOfInput(n, 0));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesOf(n));
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) drop[i] = in[i] == 1;
  }
  for (int64_t a : axes) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank || in[axis] != 1) {
      return n.Invalid(
          absl::StrCat("cannot squeeze axis ", a, " of shape [", absl::StrJoin(in, ","), "]"));
    }
    drop[axis] = true;
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(in[i]);
  }
  return Reshaped(n, std::move(out));
}

// Gather of computed data with constant indices: the device op Gather
// (gather.cc), indices checked and made non-negative here.
absl::Status EmitGather(OnnxNodeContext& n, const OnnxConstant& indices, int64_t axis) {
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const std::vector<int64_t>& shape = n.desc(x).shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < -rank || axis >= rank) {
    return n.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  const int64_t dim = shape[axis];
  GatherAttrs attrs;
  attrs.axis = axis;
  attrs.indices_shape = indices.dims;
  for (int64_t k = 0; k < indices.size(); ++k) {
    int64_t idx = ElementAsInt(indices, k);
    if (idx < -dim || idx >= dim) {
      return n.Invalid(
          absl::StrCat("index ", idx, " is out of range for dimension ", dim, " of axis ", axis));
    }
    attrs.indices.push_back(idx < 0 ? idx + dim : idx);
  }
  return n.Emit(OpType("Gather"), {x}, std::move(attrs));
}

absl::Status ImportGather(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis"}));
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", 0));
  absl::StatusOr<const OnnxConstant*> indices_or = n.ConstantInput(1);
  if (!indices_or.ok() || *indices_or == nullptr) {
    // Indices computed at run time (an embedding lookup of input_ids): the
    // device op Gather with the indices as its second input.
    RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
    RECQ_ASSIGN_OR_RETURN(ValueId indices, n.Input(1));
    const int64_t rank = static_cast<int64_t>(n.desc(x).shape.size());
    if (axis < -rank || axis >= rank) {
      return n.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    }
    GatherAttrs attrs;
    attrs.axis = axis < 0 ? axis + rank : axis;
    return n.Emit(OpType("Gather"), {x, indices}, std::move(attrs));
  }
  const OnnxConstant* indices = *indices_or;
  if (indices->is_float) return n.Invalid("indices must be an integer tensor");
  absl::StatusOr<const OnnxConstant*> data_or = n.ConstantInput(0);
  if (!data_or.ok() || *data_or == nullptr) return EmitGather(n, *indices, axis);
  const OnnxConstant* data = *data_or;
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  if (axis < -rank || axis >= rank) {
    return n.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  const int64_t outer = Numel({data->dims.begin(), data->dims.begin() + axis});
  const int64_t dim = data->dims[axis];
  const int64_t inner = Numel({data->dims.begin() + axis + 1, data->dims.end()});
  OnnxConstant out;
  out.is_float = data->is_float;
  out.dims.assign(data->dims.begin(), data->dims.begin() + axis);
  out.dims.insert(out.dims.end(), indices->dims.begin(), indices->dims.end());
  out.dims.insert(out.dims.end(), data->dims.begin() + axis + 1, data->dims.end());
  const int64_t total = Numel(out.dims);
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(total));
  for (int64_t k = 0; k < indices->size(); ++k) {
    const int64_t idx = ElementAsInt(*indices, k);
    if (idx < -dim || idx >= dim) {
      return n.Invalid(absl::StrCat("index ", idx, " is out of range for dimension ", dim));
    }
  }
  // An empty result (a zero dim) is not looped over: its other dims may be
  // up to 2^40.
  for (int64_t o = 0; total > 0 && o < outer; ++o) {
    for (int64_t k = 0; k < indices->size(); ++k) {
      int64_t idx = ElementAsInt(*indices, k);
      if (idx < 0) idx += dim;
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t from = (o * dim + idx) * inner + i;
        if (out.is_float) {
          out.floats.push_back(data->floats[from]);
        } else {
          out.ints.push_back(data->ints[from]);
        }
      }
    }
  }
  return n.DefineConstant(std::move(out));
}

// Slice of a constant (opset 10 on: starts, ends, axes, steps as inputs),
// e.g. a shape vector cut to its spatial part.
absl::Status ImportSlice(OnnxNodeContext& n) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset() < 10) {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({"starts", "ends", "axes"}));
    RECQ_ASSIGN_OR_RETURN(starts, n.Ints("starts"));
    RECQ_ASSIGN_OR_RETURN(ends, n.Ints("ends"));
    RECQ_ASSIGN_OR_RETURN(axes, n.Ints("axes"));
  } else {
    RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
    auto ints = [&n](int i, const char* what) -> absl::StatusOr<std::vector<int64_t>> {
      absl::StatusOr<const OnnxConstant*> absent = n.ConstantInput(i);
      if (absent.ok() && *absent == nullptr) return std::vector<int64_t>{};
      RECQ_ASSIGN_OR_RETURN(const OnnxConstant* c, RequireConstant(n, i, what));
      std::vector<int64_t> v;
      for (int64_t k = 0; k < c->size(); ++k) v.push_back(ElementAsInt(*c, k));
      return v;
    };
    RECQ_ASSIGN_OR_RETURN(starts, ints(1, "starts"));
    RECQ_ASSIGN_OR_RETURN(ends, ints(2, "ends"));
    RECQ_ASSIGN_OR_RETURN(axes, ints(3, "axes"));
    RECQ_ASSIGN_OR_RETURN(steps, ints(4, "steps"));
  }
  absl::StatusOr<const OnnxConstant*> data_or = n.ConstantInput(0);
  if (!data_or.ok() || *data_or == nullptr) {
    // Computed data: the device op Slice (strided_copy.cc).
    RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
    return n.Emit(
        OpType("Slice"), {x},
        SliceAttrs{std::move(starts), std::move(ends), std::move(axes), std::move(steps)});
  }
  const OnnxConstant* data = *data_or;
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size())) {
    return n.Invalid("starts, ends, axes and steps must have the same length");
  }
  std::vector<int64_t> begin(rank, 0), step(rank, 1), count = data->dims;
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes.empty() ? static_cast<int64_t>(k) : axes[k];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
      return n.Invalid(absl::StrCat("axis out of range for rank ", rank));
    const int64_t dim = data->dims[axis];
    const int64_t st = steps.empty() ? 1 : steps[k];
    if (st == 0) return n.Invalid("a step is 0");
    int64_t b = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count[axis] = e > b ? (e - b + st - 1) / st : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count[axis] = b > e ? (b - e - st - 1) / -st : 0;
    }
    begin[axis] = b;
    step[axis] = st;
  }
  OnnxConstant out;
  out.is_float = data->is_float;
  out.dims = count;
  const int64_t total = Numel(count);
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(total));
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat, offset = 0, stride = 1;
    for (int64_t d = rank; d-- > 0;) {
      const int64_t idx = rem % count[d];
      rem /= count[d];
      offset += (begin[d] + idx * step[d]) * stride;
      stride *= data->dims[d];
    }
    if (out.is_float) {
      out.floats.push_back(data->floats[offset]);
    } else {
      out.ints.push_back(data->ints[offset]);
    }
  }
  return n.DefineConstant(std::move(out));
}

// ONNX TensorProto data types recq folds to.

absl::Status ImportCastTo(OnnxNodeContext& n, const absl::StatusOr<DataType>& to);

absl::Status ImportCast(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"to", "saturate"}));
  RECQ_ASSIGN_OR_RETURN(int64_t to_onnx, n.Int("to", 0));
  return ImportCastTo(n, DataTypeFromOnnx(static_cast<int32_t>(to_onnx)));
}

// CastLike (opset 15): Cast to the element type of input 1.
absl::Status ImportCastLike(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"saturate"}));
  absl::StatusOr<const OnnxConstant*> like = n.ConstantInput(1);
  if (like.ok() && *like != nullptr) return ImportCastTo(n, (*like)->type());
  RECQ_ASSIGN_OR_RETURN(ValueId target, n.Input(1));
  return ImportCastTo(n, n.desc(target).dtype);
}

absl::Status ImportCastTo(OnnxNodeContext& n, const absl::StatusOr<DataType>& to) {
  if (!to.ok()) return n.Unsupported(absl::StrCat("Cast to ", to.status().message()));
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0);
  if (c.ok() && *c != nullptr) {
    // Folded with the device kernel's conversions (typed.cl).
    const OnnxConstant& in = **c;
    RECQ_RETURN_IF_ERROR(n.ReserveFolded(in.size()));
    OnnxConstant out;
    out.dims = in.dims;
    out.dtype = *to;
    out.is_float = IsFloatingPoint(*to);
    std::vector<double> values(in.size());
    for (int64_t i = 0; i < in.size(); ++i) values[i] = ElementAsDouble(in, i);
    const HostData converted = HostData::FromDoubles(*to, values);
    for (size_t i = 0; i < converted.size(); ++i) {
      if (out.is_float) {
        out.floats.push_back(static_cast<float>(converted.at(i)));
      } else {
        out.ints.push_back(static_cast<int64_t>(converted.at(i)));
      }
    }
    return n.DefineConstant(std::move(out));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  if (n.desc(x).dtype == *to) return n.Emit(OpType::kIdentity, {x}, {});
  return n.Emit(kCast, {x}, CastAttrs{*to});
}

// Element-wise ops that only run on constants here.
absl::Status ImportFoldedElementwise(OnnxNodeContext& n, size_t arity, bool int_result,
                                     std::function<double(absl::Span<const double>)> f) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  std::vector<const OnnxConstant*> in;
  for (size_t i = 0; i < arity; ++i) {
    RECQ_ASSIGN_OR_RETURN(const OnnxConstant* c, RequireConstant(n, static_cast<int>(i), "input"));
    in.push_back(c);
  }
  // Where picks its result type from its value inputs.
  if (!int_result && arity == 3) int_result = !in[1]->is_float && !in[2]->is_float;
  absl::StatusOr<OnnxConstant> out = BroadcastConstants(n, in, int_result, f);
  if (!out.ok()) return out.status();
  out->dtype = arity == 3 ? in[1]->type() : DataType::kBool;
  return n.DefineConstant(*std::move(out));
}

// Where folds when its three inputs are constants and runs on the device
// otherwise (a bool mask from the model's inputs).
absl::Status ImportWhere(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  bool all_constant = true;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(i);
    all_constant &= c.ok() && *c != nullptr;
  }
  if (!all_constant) {
    std::vector<ValueId> in;
    for (int i = 0; i < 3; ++i) {
      RECQ_ASSIGN_OR_RETURN(ValueId id, n.Input(i));
      in.push_back(id);
    }
    return n.Emit(kWhere, std::move(in), {});
  }
  return ImportFoldedElementwise(
      n, 3, false, [](absl::Span<const double> v) { return v[0] != 0 ? v[1] : v[2]; });
}

}  // namespace

RECQ_REGISTER_OPS(ShapeFolding) {
  const struct {
    const char* type;
    int64_t min_opset;
    std::function<absl::Status(OnnxNodeContext&)> import;
  } mappings[] = {
      {"Shape", 1, ImportShape},
      {"Size", 1, ImportSize},
      {"ConstantOfShape", 9, ImportConstantOfShape},
      {"Range", 11, ImportRange},
      {"Unsqueeze", 1, ImportUnsqueeze},
      {"Squeeze", 1, ImportSqueeze},
      {"Gather", 1, ImportGather},
      {"Slice", 1, ImportSlice},
      {"Cast", 6, ImportCast},
      {"CastLike", 15, ImportCastLike},
      {"Where", 9, ImportWhere},
  };
  for (const auto& m : mappings) {
    RECQ_RETURN_IF_ERROR(table.AddOnnx({"", m.type, m.min_opset, kOnnxOpsetMax, m.import}));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
