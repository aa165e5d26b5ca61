// SqueezeExcite (engine/ops/squeeze_excite.h) in two dispatches of
// squeeze_excite.cl, where the exported block takes four (the pool, two 1x1
// convolutions on 1x1 pixels, the Mul), each a few microseconds of launch
// for almost no work:
//   se_squeeze: work-group (g, n) averages a slice of the channels and adds
//     their terms of the first product into partial sums per slice
//     (scratch: N x slices x R floats);
//   se_excite: each work-group sums the slices' partials, applies the
//     activation, computes its channels' gates and scales them.
// On CPUs three kernels without barriers (se_mean_rows, an item a channel;
// se_hidden_rows and se_scale_rows, an item 16 hidden values or channels):
// PoCL runs a work-group as loops between barriers, and the two kernels
// above took 2.5 times the four exported dispatches' time on MobileNet
// V3-Small.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/op_table.h"
#include "engine/ops/op_util.h"
#include "engine/ops/squeeze_excite.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kOp("SqueezeExcite");

absl::Status ShapeError(const std::string& what, const Shape& got, const std::string& expected) {
  return absl::InvalidArgumentError(absl::StrCat(
      "SqueezeExcite: ", what, " has shape [", absl::StrJoin(got, ","), "], expected ", expected));
}

// A [rows, cols, 1...] weight.
bool IsMatrix(const Shape& w, int64_t rows, int64_t cols) {
  if (w.size() < 2 || w[0] != rows || w[1] != cols) return false;
  return std::all_of(w.begin() + 2, w.end(), [](int64_t d) { return d == 1; });
}

absl::StatusOr<TensorDesc> Infer(const OpAttrs& attrs, InferInputs in) {
  RECQ_RETURN_IF_ERROR(CheckInputCount(kOp, in, 2, 5));
  if (attrs.get_if<SqueezeExciteAttrs>() == nullptr) {
    return absl::InvalidArgumentError("SqueezeExcite: missing SqueezeExciteAttrs");
  }
  const Shape& x = in[0]->shape;
  if (x.size() < 3) return ShapeError("x", x, "[N, C, spatial...]");
  if (in.size() != 5 || in[3] == nullptr) {
    return absl::InvalidArgumentError(
        "SqueezeExcite: expected 5 inputs (x, w1, b1, w2, b2; the biases may be absent)");
  }
  const int64_t c = x[1];
  const int64_t r = in[1]->shape.empty() ? 0 : in[1]->shape[0];
  if (r < 1 || r > kSqueezeExciteMaxR || !IsMatrix(in[1]->shape, r, c)) {
    return ShapeError("w1", in[1]->shape,
                      absl::StrCat("[R, ", c, ", 1...] with 1 <= R <= ", kSqueezeExciteMaxR));
  }
  if (!IsMatrix(in[3]->shape, c, r)) {
    return ShapeError("w2", in[3]->shape, absl::StrCat("[", c, ", ", r, ", 1...]"));
  }
  if (in[2] != nullptr && in[2]->shape != Shape{r}) {
    return ShapeError("b1", in[2]->shape, absl::StrCat("[", r, "]"));
  }
  if (in[4] != nullptr && in[4]->shape != Shape{c}) {
    return ShapeError("b2", in[4]->shape, absl::StrCat("[", c, "]"));
  }
  return *in[0];
}

// How one block is split on a GPU: `local` items a work-group (a power of
// two, both kernels); se_squeeze: slices of `cpg` channels by `hws` elements
// (`slices` of them a batch item, `hs` along the elements), `tpc` items a
// channel (a power of two up to `local`); se_excite: one channel and `hwc`
// elements of it a work-group.
struct SeShape {
  size_t local = 256;
  int64_t tpc = 1;
  int64_t cpg = 1;
  int64_t hs = 1;
  int64_t hws = 1;
  int64_t slices = 1;
  int64_t hwc = 1;
};

SeShape ChooseSe(const DeviceFacts& device, int64_t c, int64_t hw, int64_t r) {
  SeShape s;
  s.local = GpuGroup(device, 256);
  const int64_t local = static_cast<int64_t>(s.local);
  // Slices enough to fill the GPU where the pool is large, while
  // se_excite's groups each sum at most about 4096 partials (slices x R).
  const int64_t max_slices = std::max<int64_t>(32, 4096 / r);
  // A channel's elements are split too where a slice of one channel would
  // still hold more than 16 elements an item (EfficientNet's first blocks:
  // 32-96 channels of 112x112 or 56x56).
  s.hws = hw;
  if (hw > 16 * local) {
    const int64_t hs = std::min(static_cast<int64_t>(CeilDiv(hw, 16 * local)),
                                std::max<int64_t>(1, max_slices / c));
    s.hws = static_cast<int64_t>(CeilDiv(hw, hs));
  }
  s.hs = static_cast<int64_t>(CeilDiv(hw, s.hws));
  // About eight elements an item for the pool.
  while (s.tpc < local && s.tpc * 8 < s.hws) s.tpc *= 2;
  s.cpg = std::max<int64_t>(local / s.tpc, static_cast<int64_t>(CeilDiv(c * s.hs, max_slices)));
  s.slices = static_cast<int64_t>(CeilDiv(c, s.cpg)) * s.hs;
  // Runs of up to 16 elements an item.
  s.hwc = std::min<int64_t>(hw, 16 * local);
  return s;
}

struct SeDims {
  int64_t n, c, hw, r;
};

SeDims DimsOf(const Node& node, const LoweringContext& ctx) {
  const Shape& x = ShapeOf(ctx, node.inputs[0]);
  return {x[0], x[1], Product(x, 2, x.size()), ShapeOf(ctx, node.inputs[1])[0]};
}

size_t Scratch(const Node& node, const LoweringContext& ctx) {
  const SeDims d = DimsOf(node, ctx);
  return sizeof(float) * size_t(d.n * ChooseSe(ctx.device(), d.c, d.hw, d.r).slices * d.r);
}

// w [rows, cols] read as [cols, rows].
std::shared_ptr<std::vector<float>> Transposed(absl::Span<const float> w, int64_t rows,
                                               int64_t cols) {
  auto t = std::make_shared<std::vector<float>>(w.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) (*t)[j * rows + i] = w[i * cols + j];
  }
  return t;
}

absl::Status Lower(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<SqueezeExciteAttrs>(node);
  const SeDims dims = DimsOf(node, ctx);
  const SeShape s = ChooseSe(ctx.device(), dims.c, dims.hw, dims.r);
  const std::vector<std::string> options = {absl::StrCat("-DRECQ_SE_L=", s.local),
                                            absl::StrCat("-DRECQ_SE_MAXR=", kSqueezeExciteMaxR)};
  // w1 [R, C] read as [C, R]: consecutive items, consecutive r.
  auto w1t = Transposed(ctx.graph().value(node.inputs[1]).floats(), dims.r, dims.c);
  Dispatch& squeeze = ctx.Emit(MakeDispatch(ctx, "squeeze_excite.cl", "se_squeeze",
                                            {size_t(s.slices) * s.local, size_t(dims.n)}, options));
  squeeze.local = {s.local, 1, 1};
  squeeze.args = {ctx.Arg(node.inputs[0]), ctx.ReplaceConstant(node.inputs[1], std::move(w1t)),
                  ctx.Scratch()};
  AddInts(squeeze, {dims.c, dims.hw, dims.r, s.slices, s.cpg, s.tpc, s.hs, s.hws});

  Dispatch& excite = ctx.Emit(
      MakeDispatch(ctx, "squeeze_excite.cl", "se_excite",
                   {CeilDiv(dims.hw, s.hwc) * s.local, size_t(dims.c), size_t(dims.n)}, options));
  excite.local = {s.local, 1, 1};
  excite.args = {ctx.Arg(node.inputs[0]), ctx.Scratch(),           ctx.Arg(node.inputs[2]),
                 ctx.Arg(node.inputs[3]), ctx.Arg(node.inputs[4]), ctx.Arg(node.outputs[0])};
  AddInts(excite, {dims.c, dims.hw, dims.r, s.slices, 1, s.hwc});
  AddActivation(excite, a.act);
  AddActivation(excite, a.gate);
  return absl::OkStatus();
}

bool Gpu(const Node&, const LoweringContext& ctx) { return ctx.device().GpuKernels(); }

// The means [N, C] and the hidden vector [N, R], one after the other.
size_t RowsScratch(const Node& node, const LoweringContext& ctx) {
  const SeDims d = DimsOf(node, ctx);
  return sizeof(float) * size_t(d.n * (d.c + d.r));
}

// The rows kernels take 16 hidden values or channels an item (one float16
// FMA a term).
constexpr int64_t kRowsBlock = 16;

absl::Status LowerRows(LoweringContext& ctx, const Node& node) {
  const auto& a = AttrsOr<SqueezeExciteAttrs>(node);
  const SeDims dims = DimsOf(node, ctx);
  const int64_t hoff = dims.n * dims.c;  // the hidden vectors' start in the scratch
  // One local size a kernel whatever the layer: PoCL compiles a work-group
  // function per kernel and local size at the first enqueue, so that every
  // other size costs a cold start one more.
  auto rows = [&](const char* kernel, int64_t items, size_t local) -> Dispatch& {
    Dispatch& d =
        ctx.Emit(MakeDispatch(ctx, "squeeze_excite.cl", kernel, {size_t(items), size_t(dims.n)}));
    d.local = {local, 1, 1};
    d.global[0] = RoundUp(size_t(items), local);
    return d;
  };
  Dispatch& m = rows("se_mean_rows", dims.c, 16);
  m.args = {ctx.Arg(node.inputs[0]), ctx.Scratch()};
  AddInts(m, {dims.c, dims.hw});
  // A block a work-group: each is hundreds of FMAs and up to 16 channels'
  // elements, and 1-72 of them make a layer, to spread over the units.
  // The weights [R][C] and [C][R] as blocks of 16 rows, [ceil(R / 16)][C][16]
  // and [ceil(C / 16)][R][16]: one contiguous stream an item.
  Dispatch& h = rows("se_hidden_rows", static_cast<int64_t>(CeilDiv(dims.r, kRowsBlock)), 1);
  h.args = {ctx.Scratch(), PackPointwiseWeights(ctx, node.inputs[1], dims.r, dims.c, kRowsBlock),
            ctx.Arg(node.inputs[2])};
  AddInts(h, {dims.c, dims.r, hoff});
  AddActivation(h, a.act);
  Dispatch& s = rows("se_scale_rows", static_cast<int64_t>(CeilDiv(dims.c, kRowsBlock)), 1);
  s.args = {ctx.Arg(node.inputs[0]), ctx.Scratch(),
            PackPointwiseWeights(ctx, node.inputs[3], dims.c, dims.r, kRowsBlock),
            ctx.Arg(node.inputs[4]), ctx.Arg(node.outputs[0])};
  AddInts(s, {dims.c, dims.hw, dims.r, hoff});
  AddActivation(s, a.gate);
  return absl::OkStatus();
}

}  // namespace

RECQ_REGISTER_OPS(SqueezeExcite) {
  OpDef def;
  def.type = kOp;
  def.infer = Infer;
  def.variants = {{"squeeze_excite", Gpu, Lower}, {"squeeze_excite_rows", nullptr, LowerRows}};
  def.variants[0].scratch_bytes = Scratch;
  def.variants[1].scratch_bytes = RowsScratch;
  return table.Add(std::move(def));
}

}  // namespace recq::internal
