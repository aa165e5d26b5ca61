// GlobalMaxPool: the largest element of each (n, c) over every spatial
// position, imported as a MaxPool whose window is the whole (N, C, H, W)
// or (N, C, L) input (pool.cc's kernels; a 1-D input as its (N, C, 1, L)
// view).
#include "absl/strings/str_cat.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/window.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::Status Import(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  const bool one_d = n.desc(x).shape.size() == 3;
  if (one_d) {
    RECQ_ASSIGN_OR_RETURN(x, ViewAs2D(n, x));
  }
  const Shape& s = n.desc(x).shape;
  if (s.size() != 4) {
    return n.Unsupported(absl::StrCat("input is ", n.desc(x).ToString(),
                                      "; only 1-D (N, C, L) and 2-D (NCHW) are supported"));
  }
  PoolAttrs attrs;
  attrs.kernel = {s[2], s[3]};
  if (one_d) return EmitFrom2D(n, OpType::kMaxPool, {x}, attrs);
  return n.Emit(OpType::kMaxPool, {x}, attrs);
}

}  // namespace

RECQ_REGISTER_OPS(GlobalMaxPool) {
  return table.AddOnnx({"", "GlobalMaxPool", 1, kOnnxOpsetMax, Import});
}

}  // namespace recq::internal
