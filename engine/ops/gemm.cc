// Gemm (y = alpha * A' * B' + beta * C, GemmAttrs; FullyConnected is Gemm
// with trans_b) and MatMul (numpy semantics, batch broadcasting).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/matmul.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<TensorDesc> InferGemm(const OpAttrs& attrs, InferInputs in) {
  constexpr OpType op = OpType::kGemm;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 3));
  RECQ_ASSIGN_OR_RETURN(const GemmAttrs* a, AttrsOf<GemmAttrs>(op, attrs));
  const Shape& sa = in[0]->shape;
  const Shape& sb = in[1]->shape;
  if (sa.size() != 2 || sb.size() != 2) {
    return Bad(op, absl::StrCat("A and B must be rank 2, got ", S(sa), " and ", S(sb)));
  }
  int64_t m = a->trans_a ? sa[1] : sa[0];
  int64_t k = a->trans_a ? sa[0] : sa[1];
  int64_t kb = a->trans_b ? sb[1] : sb[0];
  int64_t n = a->trans_b ? sb[0] : sb[1];
  if (k != kb) {
    return Bad(op, absl::StrCat("inner dimensions differ: A ", S(sa), (a->trans_a ? "^T" : ""),
                                " and B ", S(sb), (a->trans_b ? "^T" : "")));
  }
  if (in.size() == 3 && in[2] != nullptr) {
    RECQ_ASSIGN_OR_RETURN(Shape c, Broadcast(op, in[2]->shape, {m, n}));
    if (c != Shape{m, n}) {
      return Bad(op,
                 absl::StrCat("C ", S(in[2]->shape), " does not broadcast to [", m, ",", n, "]"));
    }
  }
  return TensorDesc{{m, n}};
}

absl::StatusOr<TensorDesc> InferMatMul(const OpAttrs&, InferInputs in) {
  constexpr OpType op = OpType::kMatMul;
  RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 2));
  Shape a = in[0]->shape;
  Shape b = in[1]->shape;
  if (a.empty() || b.empty()) return Bad(op, "inputs must have rank >= 1");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2]) {
    return Bad(
        op, absl::StrCat("inner dimensions differ: ", S(in[0]->shape), " and ", S(in[1]->shape)));
  }
  RECQ_ASSIGN_OR_RETURN(
      Shape batch, Broadcast(op, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)));
  if (!a1) batch.push_back(a[a.size() - 2]);
  if (!b1) batch.push_back(b.back());
  return TensorDesc{batch};
}

absl::Status ImportGemm(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({"alpha", "beta", "transA", "transB"}));
  RECQ_ASSIGN_OR_RETURN(ValueId a, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId b, n.Input(1));
  RECQ_ASSIGN_OR_RETURN(ValueId c, n.Input(2, /*optional=*/true));
  GemmAttrs attrs;
  RECQ_ASSIGN_OR_RETURN(attrs.alpha, n.Float("alpha", 1.0f));
  RECQ_ASSIGN_OR_RETURN(attrs.beta, n.Float("beta", 1.0f));
  RECQ_ASSIGN_OR_RETURN(int64_t ta, n.Int("transA", 0));
  RECQ_ASSIGN_OR_RETURN(int64_t tb, n.Int("transB", 0));
  attrs.trans_a = ta != 0;
  attrs.trans_b = tb != 0;
  return n.Emit(OpType::kGemm, {a, b, c}, attrs);
}

absl::Status ImportMatMul(OnnxNodeContext& n) {
  RECQ_RETURN_IF_ERROR(n.CheckAttrs({}));
  RECQ_ASSIGN_OR_RETURN(ValueId a, n.Input(0));
  RECQ_ASSIGN_OR_RETURN(ValueId b, n.Input(1));
  return n.Emit(OpType::kMatMul, {a, b}, {});
}

// Arguments both kernels take: A, B, C, Y, M, N, K, [extra ints], alpha,
// beta, the C strides, the fused activation.
void SetGemmArgs(LoweringContext& ctx, const Node& node, const GemmShape& g,
                 std::initializer_list<int64_t> extra, Dispatch& d) {
  const auto& a = AttrsOr<GemmAttrs>(node);
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(COf(node)),
            ctx.Arg(node.outputs[0])};
  AddInts(d, {g.m, g.n, g.k});
  AddInts(d, extra);
  d.flops = 2.0 * double(g.m) * double(g.n) * double(g.k);
  d.args.push_back(DispatchArg::Scalar(a.alpha));
  d.args.push_back(DispatchArg::Scalar(a.beta));
  AddInts(d, {g.c_sm, g.c_sn});
  AddFusedActivation(ctx, d, node);
}

// GPU, B transposed (FullyConnected): a work-group per output reduces the
// row dot product in local memory. Up to 64 work-items, more for long rows:
// `recq tune --exhaustive` on an H100 chose 64 for K 4096, 128 for 9216 and
// 256 for 25088 (VGG-11's and AlexNet's classifiers at batch 1).
size_t RowdotLocal(const LoweringContext& ctx, const Node& node) {
  const int64_t k = GemmShapeOf(ctx, node).k;
  return std::max(GroupForRow(ctx.device(), k / 4, 32, 64),
                  GroupForRow(ctx.device(), k / 96, 32, 256));
}

// local: the work-items (a power of two) that share one output's dot product.
std::vector<KernelParams> RowdotSpace(const Node& node, const LoweringContext& ctx) {
  std::vector<int64_t> locals;
  for (int64_t l : {32, 64, 128, 256}) {
    if (size_t(l) <= GpuGroup(ctx.device(), 256)) locals.push_back(l);
  }
  return ParamSpace({{"local", int64_t(RowdotLocal(ctx, node))}}, {{"local", locals}});
}

absl::Status LowerGemmRowdot(LoweringContext& ctx, const Node& node) {
  const GemmShape g = GemmShapeOf(ctx, node);
  RECQ_ASSIGN_OR_RETURN(const int64_t chosen,
                        Param(ctx, node, "local", int64_t(RowdotLocal(ctx, node)),
                              {1, 2, 4, 8, 16, 32, 64, 128, 256}));
  const size_t local = GpuGroup(ctx.device(), size_t(chosen));
  Dispatch& d =
      ctx.Emit(MakeDispatch(ctx, "gemm.cl", "gemm_rowdot", {size_t(g.n) * local, size_t(g.m)},
                            {absl::StrCat("-DRECQ_GEMM_LOCAL=", local)}));
  d.local = {local, 1, 1};
  SetGemmArgs(ctx, node, g, {}, d);
  return absl::OkStatus();
}

absl::Status LowerGemm(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<GemmAttrs>(node);
  const GemmShape g = GemmShapeOf(ctx, node);
  // wg: work-items per group along N (0: the driver chooses).
  RECQ_ASSIGN_OR_RETURN(const int64_t wg, ParamInRange(ctx, node, "wg", 0, 0, 1024));
  Dispatch& d = ctx.Emit(MakeDispatch(ctx, "gemm.cl", "gemm", {size_t(g.n), size_t(g.m)}));
  if (wg > 0) {
    const size_t local = GpuGroup(ctx.device(), size_t(wg));
    d.local = {local, 1, 1};
    d.global[0] = RoundUp(d.global[0], local);
  }
  SetGemmArgs(ctx, node, g, {a.trans_a ? 1 : 0, a.trans_b ? 1 : 0}, d);
  return absl::OkStatus();
}

absl::Status LowerMatMul(LoweringContext& ctx, const Node& node) {
  Shape a = ShapeOf(ctx, node.inputs[0]), b = ShapeOf(ctx, node.inputs[1]);
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), nn = b.back();
  const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  if (rank > 8) return Unsupported(node, "more than 8 batch dimensions");
  Shape batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - ab.size() ? 1 : ab[i - (rank - ab.size())];
    int64_t db = i < rank - bb.size() ? 1 : bb[i - (rank - bb.size())];
    batch[i] = std::max(da, db);
  }
  cl_int8 sa = BroadcastStrides(ab, batch), sb = BroadcastStrides(bb, batch);
  for (int i = 0; i < 8; ++i) {
    sa.s[i] *= static_cast<cl_int>(m * k);
    sb.s[i] *= static_cast<cl_int>(k * nn);
  }
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "gemm.cl", "matmul", {size_t(nn), size_t(m), size_t(Product(batch, 0, batch.size()))}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {m, nn, k});
  d.flops = 2.0 * double(m) * double(nn) * double(k) * double(Product(batch, 0, batch.size()));
  d.args.push_back(DispatchArg::Scalar(Pad8(batch, 1)));
  d.args.push_back(DispatchArg::Scalar(sa));
  d.args.push_back(DispatchArg::Scalar(sb));
  return absl::OkStatus();
}

// y * s[n] + t[n] folded into B (input 1) and C (input 2).
std::optional<OpDef::FoldedWeights> FoldChannelAffine(
    const Node& node, const std::function<const std::vector<float>*(ValueId)>& constant,
    const std::function<const TensorDesc&(ValueId)>& desc, const std::vector<float>& s,
    const std::vector<float>& t) {
  GemmAttrs attrs = AttrsOr<GemmAttrs>(node);
  const std::vector<float>* w = constant(node.inputs[1]);
  const ValueId c_id = COf(node);
  const std::vector<float>* c = c_id == kNoValue ? nullptr : constant(c_id);
  const int64_t channels = static_cast<int64_t>(s.size());
  if (!w || (c_id != kNoValue &&
             (!c || desc(c_id).NumElements() != channels || desc(c_id).shape.back() != channels))) {
    return std::nullopt;
  }
  OpDef::FoldedWeights out{*w, std::vector<float>(channels), {}};
  const Shape& w_shape = desc(node.inputs[1]).shape;
  const int64_t rows = w_shape[0], cols = w_shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) out.weights[r * cols + k] *= s[attrs.trans_b ? r : k];
  }
  for (int64_t n = 0; n < channels; ++n) {
    out.bias[n] = (c ? attrs.beta * (*c)[n] : 0.0f) * s[n] + t[n];
  }
  attrs.beta = 1.0f;
  out.attrs = attrs;
  return out;
}

}  // namespace

RECQ_REGISTER_OPS(Gemm) {
  OpDef gemm;
  gemm.type = OpType::kGemm;
  gemm.onnx = {{"", "Gemm", 1, kOnnxOpsetMax, ImportGemm}};
  gemm.infer = InferGemm;
  gemm.variants = {GemmGemvGpuVariant(), GemmMmaGpuVariant()};
  for (KernelVariant& v : GemmLocalGpuVariants()) gemm.variants.push_back(std::move(v));
  gemm.variants.push_back(GemmGemvCpuVariant());
  gemm.variants.push_back(GemmPackedCpuVariant());
  gemm.variants.insert(
      gemm.variants.end(),
      {{"gemm_rowdot",
        [](const Node& node, const LoweringContext& ctx) {
          const auto& a = AttrsOr<GemmAttrs>(node);
          return ctx.device().GpuKernels() && !a.trans_a && a.trans_b;
        },
        LowerGemmRowdot, false, RowdotSpace},
       {"gemm", nullptr, LowerGemm, false, [](const Node&, const LoweringContext&) {
          return ParamSpace({{"wg", 0}}, {{"wg", {0, 16, 64}}});
        }}});
  gemm.export_onnx = [](const Node& node, const Graph&, OnnxNodeWriter& out) {
    const auto& a = AttrsOr<GemmAttrs>(node);
    out.SetOpType("Gemm");
    out.DropTrailingEmptyInputs();
    out.SetFloat("alpha", a.alpha);
    out.SetFloat("beta", a.beta);
    out.SetInt("transA", a.trans_a ? 1 : 0);
    out.SetInt("transB", a.trans_b ? 1 : 0);
    return absl::OkStatus();
  };
  gemm.absorbs_activation = true;
  gemm.fold_channel_affine = FoldChannelAffine;
  RECQ_RETURN_IF_ERROR(table.Add(std::move(gemm)));

  OpDef matmul;
  matmul.type = OpType::kMatMul;
  matmul.onnx = {{"", "MatMul", 1, kOnnxOpsetMax, ImportMatMul}};
  matmul.infer = InferMatMul;
  matmul.export_onnx = [](const Node&, const Graph&, OnnxNodeWriter& out) {
    out.SetOpType("MatMul");
    return absl::OkStatus();
  };
  matmul.variants = {MatMulGemvGpuVariant(), MatMulMmaGpuVariant()};
  for (KernelVariant& v : MatMulLocalGpuVariants()) matmul.variants.push_back(std::move(v));
  matmul.variants.push_back(MatMulGemvCpuVariant());
  matmul.variants.push_back(MatMulPackedCpuVariant());
  matmul.variants.push_back(MatMulTiledVariant());
  matmul.variants.push_back({"matmul", nullptr, LowerMatMul});
  return table.Add(std::move(matmul));
}

}  // namespace recq::internal
