// MatMul's register-tiled kernel (matmul.cl): the batched products of
// attention (Q*K^T, P*V) and the 2-D products with weights that exporters
// write as MatMul (ViT's MLP, Swin's projections). The plain one-output-per-
// work-item `matmul` in gemm.cl stays as the fallback for small N or M.
#include "engine/ops/matmul.h"

#include <algorithm>

#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/status_macros.h"

namespace recq::internal {
namespace {

constexpr int64_t kTileM = 4;
constexpr int64_t kTileN = 8;

struct MatMulShape {
  int64_t m = 0, n = 0, k = 0;
  Shape batch;
  cl_int8 sa{}, sb{};
};

MatMulShape ShapeOfMatMul(const LoweringContext& ctx, const Node& node) {
  Shape a = ShapeOf(ctx, node.inputs[0]), b = ShapeOf(ctx, node.inputs[1]);
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulShape s;
  s.m = a[a.size() - 2];
  s.k = a.back();
  s.n = b.back();
  Shape ab(a.begin(), a.end() - 2);
  const Shape bb(b.begin(), b.end() - 2);
  if (Product(bb, 0, bb.size()) == 1 && bb.size() <= ab.size()) {
    // B is one matrix for every batch (weights): A's batches are rows of
    // one product, [batch * M, K] x [K, N] (ViT's [197, 1, 768] x [768, N]).
    s.m *= Product(ab, 0, ab.size());
    ab.assign(ab.size(), 1);
  }
  const size_t rank = std::max(ab.size(), bb.size());
  s.batch.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - ab.size() ? 1 : ab[i - (rank - ab.size())];
    const int64_t db = i < rank - bb.size() ? 1 : bb[i - (rank - bb.size())];
    s.batch[i] = std::max(da, db);
  }
  if (rank > 8) return s;
  s.sa = BroadcastStrides(ab, s.batch);
  s.sb = BroadcastStrides(bb, s.batch);
  for (int i = 0; i < 8; ++i) {
    s.sa.s[i] *= static_cast<cl_int>(s.m * s.k);
    s.sb.s[i] *= static_cast<cl_int>(s.k * s.n);
  }
  return s;
}

bool Fits(const Node& node, const LoweringContext& ctx) {
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  return s.batch.size() <= 8 && s.n >= kTileN && s.m >= kTileM;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const MatMulShape s = ShapeOfMatMul(ctx, node);
  const int64_t batch = Product(s.batch, 0, s.batch.size());
  Dispatch& d = ctx.Emit(MakeDispatch(
      ctx, "matmul.cl", "matmul_tiled",
      {size_t((s.n + kTileN - 1) / kTileN), size_t((s.m + kTileM - 1) / kTileM), size_t(batch)}));
  d.args = {ctx.Arg(node.inputs[0]), ctx.Arg(node.inputs[1]), ctx.Arg(node.outputs[0])};
  AddInts(d, {s.m, s.n, s.k});
  d.flops = 2.0 * double(s.m) * double(s.n) * double(s.k) * double(batch);
  d.args.push_back(DispatchArg::Scalar(Pad8(s.batch, 1)));
  d.args.push_back(DispatchArg::Scalar(s.sa));
  d.args.push_back(DispatchArg::Scalar(s.sb));
  return absl::OkStatus();
}

}  // namespace

KernelVariant MatMulTiledVariant() { return {"matmul_tiled", Fits, Lower}; }

}  // namespace recq::internal
