// DepthToSpace (DCR and CRD modes) and SpaceToDepth (BlockAttrs) on
// [N, C, H, W]: each is a Reshape to 6-D, a Transpose and a Reshape back,
// run as one strided copy (strided_copy.h), as Transpose is.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/strided_copy.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kDepthToSpace("DepthToSpace");
const OpType kSpaceToDepth("SpaceToDepth");

// The 6-D view of the input and the permutation that gives the output's
// 6-D view.
struct BlockView {
  Shape in6;
  std::vector<int64_t> perm;
};

BlockView ViewOf(OpType op, const Shape& x, const BlockAttrs& a) {
  const int64_t b = a.blocksize, n = x[0], c = x[1], h = x[2], w = x[3];
  if (op == kSpaceToDepth) return {{n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}};
  if (a.crd) return {{n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3}};
  return {{n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2}};
}

absl::StatusOr<TensorDesc> InferBlocks(OpType op, const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
  RECQ_ASSIGN_OR_RETURN(const BlockAttrs* a, AttrsOf<BlockAttrs>(op, attrs));
  const Shape& x = in[0]->shape;
  const int64_t b = a->blocksize;
  if (x.size() != 4) return Bad(op, absl::StrCat("input ", S(x), " must be [N,C,H,W]"));
  if (b <= 0) return Bad(op, absl::StrCat("blocksize ", b, " must be positive"));
  TensorDesc out = *in[0];
  if (op == kSpaceToDepth) {
    if (x[2] % b != 0 || x[3] % b != 0) {
      return Bad(op, absl::StrCat("H and W of ", S(x), " must be multiples of blocksize ", b));
    }
    out.shape = {x[0], x[1] * b * b, x[2] / b, x[3] / b};
  } else {
    if (x[1] % (b * b) != 0) {
      return Bad(op, absl::StrCat("C of ", S(x), " must be a multiple of blocksize^2 = ", b * b));
    }
    out.shape = {x[0], x[1] / (b * b), x[2] * b, x[3] * b};
  }
  return out;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  const BlockView v = ViewOf(node.op, x, AttrsOr<BlockAttrs>(node));
  Shape strides(6), out6(6), permuted(6);
  int64_t stride = 1;
  for (size_t i = 6; i-- > 0;) {
    strides[i] = stride;
    stride *= v.in6[i];
  }
  for (size_t i = 0; i < 6; ++i) {
    out6[i] = v.in6[v.perm[i]];
    permuted[i] = strides[v.perm[i]];
  }
  return EmitStridedCopy(ctx, node, 0, out6, permuted, out6);
}

absl::Status ImportDepthToSpace(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"blocksize", "mode"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  BlockAttrs a;
  RECQ_ASSIGN_OR_RETURN(a.blocksize, n.Int("blocksize", 0));
  RECQ_ASSIGN_OR_RETURN(std::string mode, n.String("mode", "DCR"));
  if (mode != "DCR" && mode != "CRD") {
    return n.Invalid(absl::StrCat("mode '", mode, "' must be DCR or CRD"));
  }
  a.crd = mode == "CRD";
  return n.Emit(kDepthToSpace, {x}, a);
}

absl::Status ImportSpaceToDepth(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"blocksize"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, n.Input(0));
  BlockAttrs a;
  RECQ_ASSIGN_OR_RETURN(a.blocksize, n.Int("blocksize", 0));
  return n.Emit(kSpaceToDepth, {x}, a);
}

}  // namespace

RECQ_REGISTER_OPS(DepthToSpace) {
  OpDef d2s;
  d2s.type = kDepthToSpace;
  d2s.onnx = {{"", "DepthToSpace", 1, kOnnxOpsetMax, ImportDepthToSpace}};
  d2s.infer = [](const OpAttrs& attrs, InferInputs in) {
    return InferBlocks(kDepthToSpace, attrs, in);
  };
  d2s.variants = {{"strided_copy", nullptr, Lower}};
  RECQ_RETURN_IF_ERROR(table.Add(std::move(d2s)));
  OpDef s2d;
  s2d.type = kSpaceToDepth;
  s2d.onnx = {{"", "SpaceToDepth", 1, kOnnxOpsetMax, ImportSpaceToDepth}};
  s2d.infer = [](const OpAttrs& attrs, InferInputs in) {
    return InferBlocks(kSpaceToDepth, attrs, in);
  };
  s2d.variants = {{"strided_copy", nullptr, Lower}};
  return table.Add(std::move(s2d));
}

}  // namespace recq::internal
