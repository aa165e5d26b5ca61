// EyeLike: ones on the k-th diagonal of a 2-D tensor of the input's shape,
// zeros elsewhere. Its values depend only on the input's (static) shape, so
// it folds at import into a constant of the dtype attribute's type (the
// input's when absent).
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"dtype", "k"}));
  std::vector<int64_t> dims;
  DataType from = DataType::kFloat32;
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0);
  if (c.ok() && *c != nullptr) {
    dims = (*c)->dims;
    from = (*c)->type();
  } else {
    RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
    dims = n.desc(x).shape;
    from = n.desc(x).dtype;
  }
  if (dims.size() != 2)
    return n.Invalid(absl::StrCat("input has rank ", dims.size(), "; expected 2"));
  RECQ_ASSIGN_OR_RETURN(int64_t k, n.Int("k", 0));
  DataType to = from;
  if (n.HasAttr("dtype")) {
    RECQ_ASSIGN_OR_RETURN(int64_t onnx_type, n.Int("dtype", 1));
    absl::StatusOr<DataType> t = DataTypeFromOnnx(static_cast<int32_t>(onnx_type));
    if (!t.ok()) return n.Unsupported(absl::StrCat("dtype ", t.status().message()));
    to = *t;
  }
  OnnxConstant out;
  out.dims = dims;
  out.dtype = to;
  out.is_float = IsFloatingPoint(to);
  const int64_t total = Numel(dims);
  RECQ_RETURN_IF_ERROR(n.ReserveFolded(total));
  for (int64_t i = 0; i < total; ++i) {
    const bool one = i % dims[1] - i / dims[1] == k;
    if (out.is_float) {
      out.floats.push_back(one ? 1.0f : 0.0f);
    } else {
      out.ints.push_back(one ? 1 : 0);
    }
  }
  return n.DefineConstant(std::move(out));
}

}  // namespace

RECQ_REGISTER_OPS(EyeLike) { return table.AddOnnx({"", "EyeLike", 9, kOnnxOpsetMax, Import}); }

}  // namespace recq::internal
