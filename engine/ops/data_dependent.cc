// ONNX ops whose output shape depends on the values of their inputs:
// NonZero, Unique, Compress, NonMaxSuppression, and Loop (its trip count
// and its scan outputs). recq plans memory and records dispatches for
// static shapes, so these import only where the values are known when the
// model is loaded (NonZero of a constant folds); otherwise the import is
// Unimplemented naming the node and why, rather than "unknown op".
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/constant_eval.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status DataDependent(OnnxNodeContext& n, const std::string& what) {
  return n.Unsupported(absl::StrCat(
      "its output shape depends on the values of its inputs (", what,
      "); recq compiles a model for static shapes, so this works only where those values are "
      "constants known when the model is loaded"));
}

// NonZero: the indices [rank, count] of the non-zero elements, folded on a
// constant.
absl::Status ImportNonZero(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  absl::StatusOr<const OnnxConstant*> c = n.ConstantInput(0);
  if (!c.ok() || *c == nullptr) return DataDependent(n, "the number of non-zero elements");
  const OnnxConstant& x = **c;
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (rank == 0)
    return n.Unsupported("NonZero of a scalar: its [0, count] output is not supported");
  std::vector<std::vector<int64_t>> coords(rank);
  for (int64_t i = 0; i < x.size(); ++i) {
    if (ElementAsDouble(x, i) == 0) continue;
    int64_t rest = i;
    for (int64_t d = rank - 1; d >= 0; --d) {
      coords[d].push_back(rest % x.dims[d]);
      rest /= x.dims[d];
    }
  }
  const int64_t count = static_cast<int64_t>(coords[0].size());
  if (count == 0) return n.Unsupported("no element is non-zero: empty tensors are not supported");
  OnnxConstant out;
  out.is_float = false;
  out.dtype = DataType::kInt64;
  out.dims = {rank, count};
  for (int64_t d = 0; d < rank; ++d) {
    out.ints.insert(out.ints.end(), coords[d].begin(), coords[d].end());
  }
  return n.DefineConstant(std::move(out));
}

}  // namespace

RECQ_REGISTER_OPS(DataDependent) {
  RECQ_RETURN_IF_ERROR(table.AddOnnx({"", "NonZero", 9, kOnnxOpsetMax, ImportNonZero}));
  const struct {
    const char* type;
    int64_t min_opset;
    const char* what;
  } ops[] = {
      {"Unique", 11, "the number of distinct elements"},
      {"Compress", 9, "the number of true elements of the condition"},
      {"NonMaxSuppression", 10, "the number of boxes kept"},
      {"Loop", 1,
       "the trip count and the condition are evaluated at run time, and scan outputs grow with "
       "them; recq does not import subgraphs"},
  };
  for (const auto& op : ops) {
    const std::string what = op.what;
    RECQ_RETURN_IF_ERROR(
        table.AddOnnx({"", op.type, op.min_opset, kOnnxOpsetMax,
                       [what](OnnxNodeContext& n) { return DataDependent(n, what); }}));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
