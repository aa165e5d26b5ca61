// MeanVarianceNormalization imported as ONNX's own function body:
//   y = (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9),
// the means over `axes` (default 0, 2, 3) kept as broadcast dimensions.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/onnx_emitter.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"axes"}));
  std::vector<int64_t> axes = {0, 2, 3};
  if (n.HasAttr("axes")) {
    RECQ_ASSIGN_OR_RETURN(axes, n.Ints("axes"));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  OnnxNodeEmitter* e = EmitterOf(n);
  if (e == nullptr) return n.Unsupported("MeanVarianceNormalization needs the importer's emitter");
  ReduceAttrs mean_attrs;
  mean_attrs.axes = axes;
  mean_attrs.keepdims = true;
  const OpType mean_op("ReduceMean");
  RECQ_ASSIGN_OR_RETURN(ValueId mean, e->EmitValue(mean_op, {x}, mean_attrs, "mean"));
  RECQ_ASSIGN_OR_RETURN(ValueId mean_sq, e->EmitValue(OpType::kMul, {mean, mean}, {}, "mean_sq"));
  RECQ_ASSIGN_OR_RETURN(ValueId sq, e->EmitValue(OpType::kMul, {x, x}, {}, "square"));
  RECQ_ASSIGN_OR_RETURN(ValueId sq_mean, e->EmitValue(mean_op, {sq}, mean_attrs, "square_mean"));
  RECQ_ASSIGN_OR_RETURN(ValueId var,
                        e->EmitValue(OpType::kSub, {sq_mean, mean_sq}, {}, "variance"));
  RECQ_ASSIGN_OR_RETURN(ValueId std, e->EmitValue(OpType("Sqrt"), {var}, {}, "std"));
  OnnxConstant eps;
  eps.floats = {1e-9f};
  eps.dtype = n.desc(x).dtype;
  RECQ_ASSIGN_OR_RETURN(ValueId epsilon, e->AddConstantValue(std::move(eps), "epsilon"));
  RECQ_ASSIGN_OR_RETURN(ValueId denom,
                        e->EmitValue(OpType::kAdd, {std, epsilon}, {}, "denominator"));
  RECQ_ASSIGN_OR_RETURN(ValueId centered, e->EmitValue(OpType::kSub, {x, mean}, {}, "centered"));
  return n.Emit(OpType::kDiv, {centered, denom}, {});
}

}  // namespace

RECQ_REGISTER_OPS(MeanVarianceNormalization) {
  return table.AddOnnx({"", "MeanVarianceNormalization", 9, kOnnxOpsetMax, Import});
}

}  // namespace recq::internal
