// OneHot imported as typed ops: indices (any numeric type, cast to int64;
// negative ones count from `depth`) compared with a constant 0..depth-1
// laid along `axis`, and a Where between the on and off values:
//   y = Where(Equal(Unsqueeze(idx, axis), arange), values[1], values[0]).
// Indices outside [-depth, depth - 1] give a line of off values, as ONNX
// says. `depth` must be a constant known when the model is loaded (it sets
// the output shape).
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/typed.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axis"}));
  if (n.num_inputs() != 3) {
    return n.Invalid(absl::StrCat("has ", n.num_inputs(), " inputs; expected 3"));
  }
  absl::StatusOr<const OnnxConstant*> depth_c = n.ConstantInput(1);
  if (!depth_c.ok() || *depth_c == nullptr) {
    return n.Unsupported(
        "depth (input 1) depends on the model's input data; it sets the output shape and must be "
        "a constant known when the model is loaded");
  }
  if ((*depth_c)->size() != 1) return n.Invalid("depth must hold one value");
  const int64_t depth = (*depth_c)->is_float
                            ? static_cast<int64_t>(std::trunc((*depth_c)->floats[0]))
                            : (*depth_c)->ints[0];
  if (depth < 1) return n.Invalid(absl::StrCat("depth is ", depth, "; expected 1 or more"));
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) return n.Unsupported("OneHot needs the importer's emitter");

  RECQ_ASSIGN_OR_RETURN(ValueId indices, n.Input(0));
  const TensorDesc idesc = n.desc(indices);
  const int64_t rank = static_cast<int64_t>(idesc.shape.size());
  RECQ_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", -1));
  if (axis < -(rank + 1) || axis > rank) {
    return n.Invalid(absl::StrCat("axis ", axis, " is outside [", -(rank + 1), ", ", rank, "]"));
  }
  if (axis < 0) axis += rank + 1;

  auto int_constant = [&](std::vector<int64_t> dims, std::vector<int64_t> values,
                          absl::string_view suffix) {
    OnnxConstant c;
    c.dims = std::move(dims);
    c.is_float = false;
    c.dtype = DataType::kInt64;
    c.ints = std::move(values);
    return e->AddConstantValue(std::move(c), suffix);
  };
  // int64 indices, negative ones moved up by depth.
  ValueId idx = indices;
  if (idesc.dtype != DataType::kInt64) {
    RECQ_ASSIGN_OR_RETURN(idx, e->EmitValue(kCast, {idx}, CastAttrs{DataType::kInt64}, "indices"));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId zero, int_constant({}, {0}, "zero"));
  RECQ_ASSIGN_OR_RETURN(ValueId d, int_constant({}, {depth}, "depth"));
  RECQ_ASSIGN_OR_RETURN(ValueId negative, e->EmitValue(kLess, {idx, zero}, {}, "negative"));
  RECQ_ASSIGN_OR_RETURN(ValueId wrapped, e->EmitValue(kIntAdd, {idx, d}, {}, "wrapped"));
  RECQ_ASSIGN_OR_RETURN(ValueId positive,
                        e->EmitValue(kWhere, {negative, wrapped, idx}, {}, "positive"));
  Shape unsqueezed = idesc.shape;
  unsqueezed.insert(unsqueezed.begin() + axis, 1);
  RECQ_ASSIGN_OR_RETURN(ValueId column, e->EmitValue(OpType::kReshape, {positive},
                                                     ReshapeAttrs{unsqueezed}, "column"));
  std::vector<int64_t> arange_dims(rank + 1, 1);
  arange_dims[axis] = depth;
  std::vector<int64_t> arange(depth);
  for (int64_t i = 0; i < depth; ++i) arange[i] = i;
  RECQ_ASSIGN_OR_RETURN(ValueId classes, int_constant(arange_dims, std::move(arange), "classes"));
  RECQ_ASSIGN_OR_RETURN(ValueId hot, e->EmitValue(kEqual, {column, classes}, {}, "hot"));

  // The on and off values: scalars from a constant `values`, else gathered.
  ValueId on = kNoValue, off = kNoValue;
  absl::StatusOr<const OnnxConstant*> values_c = n.ConstantInput(2);
  if (values_c.ok() && *values_c != nullptr) {
    const OnnxConstant& v = **values_c;
    if (v.size() != 2) return n.Invalid("values must hold 2 elements: off, on");
    for (int k = 0; k < 2; ++k) {
      OnnxConstant c;
      c.is_float = v.is_float;
      c.dtype = v.dtype;
      if (v.is_float) {
        c.floats = {v.floats[k]};
        if (v.doubles.size() == 2) c.doubles = {v.doubles[k]};
      } else {
        c.ints = {v.ints[k]};
      }
      RECQ_ASSIGN_OR_RETURN((k == 0 ? off : on),
                            e->AddConstantValue(std::move(c), k == 0 ? "off" : "on"));
    }
  } else {
    RECQ_ASSIGN_OR_RETURN(ValueId values, n.Input(2));
    if (n.desc(values).NumElements() != 2) return n.Invalid("values must hold 2 elements: off, on");
    for (int k = 0; k < 2; ++k) {
      RECQ_ASSIGN_OR_RETURN(
          (k == 0 ? off : on),
          e->EmitValue(OpType("Gather"), {values}, GatherAttrs{0, {k}, {}}, k == 0 ? "off" : "on"));
    }
  }
  return n.Emit(kWhere, {hot, on, off}, {});
}

}  // namespace

RECQ_REGISTER_OPS(OneHot) { return table.AddOnnx({"", "OneHot", 9, kOnnxOpsetMax, Import}); }

}  // namespace recq::internal
