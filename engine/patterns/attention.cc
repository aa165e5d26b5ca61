// Attention as exporters write it becomes one Attention node
// (engine/ops/attention.h):
//
//   S = MatMul(Q', K'^T)            Q', K'^T: Q and K through Transposes,
//   S = S * c  or  S / c  ...       Reshapes, Gathers of one index (a packed
//   S = S + M  ...                  QKV projection's q, k, v) and scalar
//   (Reshape S keeping the last     Muls (SDPA's sqrt(scale) on both, Swin's
//    three dimensions)              q * scale)
//   P = Softmax(S, axis = last)
//   O = MatMul(P, V')               V' likewise, without scalars
//   O' = Transposes / Reshapes of O
//
// The views Q', K'^T, V' and O' fold into the op's strided index maps
// (AttentionView) where the strides allow, so the fused node reads the
// projections' outputs and writes the tensor the next projection reads:
// the TorchScript exporter's nn.MultiheadAttention in ViT (in-projection
// Reshape, Transpose, Gather, Reshape, Transpose, Reshape; output
// Transpose, Reshape), the dynamo exporter's SDPA (K as Reshape, Transpose,
// Reshape), BERT's hand-written attention (Div by sqrt(d), an additive
// [B, 1, 1, L] mask) and Swin's (q * scale, a [1, H, N, N] bias, and on
// shifted windows a Reshape to [B, nW, H, N, N], a [1, nW, 1, N, N] mask
// and a Reshape back). Several mask terms must be constants: they are
// summed into one. Nodes the fused one leaves unread are removed.
#include <algorithm>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/graph_edit.h"
#include "engine/ops/attention.h"
#include "engine/ops/layout_attrs.h"
#include "engine/patterns/match_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

using Shape = std::vector<int64_t>;

const OpType kAttention("Attention");
const OpType kMatMul("MatMul");
const OpType kGather("Gather");
const OpType kSlice("Slice");

// A view of a tensor's elements: dimension d of `shape` walks the strided
// parts dims[d] (size, stride), outermost first, as one mixed-radix index.
// Parts let a Reshape merge dimensions that are not contiguous in memory
// (a [B, H, L, D] view of a [B, L, H, D] tensor merged to [B * H, L, D],
// as the dynamo exporter writes K^T) and split them again later.
using Part = std::pair<int64_t, int64_t>;
struct StridedView {
  int64_t offset = 0;
  Shape shape;
  std::vector<std::vector<Part>> dims;
};

// Simplify drops parts of size 1 and merges adjacent contiguous ones.
std::vector<Part> Simplify(const std::vector<Part>& parts) {
  std::vector<Part> r;
  for (const Part& p : parts) {
    if (p.first == 1) continue;
    if (!r.empty() && r.back().second == p.first * p.second) {
      r.back() = {r.back().first * p.first, p.second};
    } else {
      r.push_back(p);
    }
  }
  return r;
}

StridedView Dense(const Shape& shape) {
  StridedView v;
  v.shape = shape;
  v.dims.resize(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i > 0; --i) {
    v.dims[i - 1] = Simplify({{shape[i - 1], stride}});
    stride *= shape[i - 1];
  }
  return v;
}

int64_t Numel(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>());
}

// Reshaped returns `v` viewed as `to`: the parts of every dimension, in
// order, regrouped from the innermost, splitting a part where a new
// dimension ends inside it (nullopt where its size does not divide).
std::optional<StridedView> Reshaped(const StridedView& v, const Shape& to) {
  if (Numel(v.shape) != Numel(to)) return std::nullopt;
  std::vector<Part> atoms;
  for (const auto& d : v.dims) atoms.insert(atoms.end(), d.begin(), d.end());
  StridedView r;
  r.offset = v.offset;
  r.shape = to;
  r.dims.resize(to.size());
  for (size_t d = to.size(); d > 0; --d) {
    int64_t need = to[d - 1];
    std::vector<Part> taken;  // innermost first
    while (need > 1) {
      if (atoms.empty()) return std::nullopt;
      Part& a = atoms.back();
      if (need % a.first == 0) {
        taken.push_back(a);
        need /= a.first;
        atoms.pop_back();
      } else if (a.first % need == 0) {
        taken.push_back({need, a.second});
        a = {a.first / need, a.second * need};
        need = 1;
      } else {
        return std::nullopt;
      }
    }
    r.dims[d - 1] = Simplify(std::vector<Part>(taken.rbegin(), taken.rend()));
  }
  if (!atoms.empty()) return std::nullopt;
  return r;
}

// One part's stride, for a dimension of at most one part (0 for a
// dimension of size 1), or nullopt.
std::optional<int64_t> StrideOf(const std::vector<Part>& parts) {
  if (parts.empty()) return 0;
  if (parts.size() == 1) return parts[0].second;
  return std::nullopt;
}

// PermOf returns a Transpose node's permutation, made non-negative (empty
// reverses the dimensions).
std::vector<int64_t> PermOf(const Node& n, size_t rank) {
  const auto* a = n.attrs.get_if<TransposeAttrs>();
  std::vector<int64_t> perm;
  if (a == nullptr || a->perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
    return perm;
  }
  for (int64_t p : a->perm) perm.push_back(p < 0 ? p + static_cast<int64_t>(rank) : p);
  return perm;
}

bool IsView(OpType op) {
  const OpDef* def = FindOp(op);
  return def != nullptr && def->is_view;
}

bool Plain(const Node& n) { return n.fused.kind == ActivationKind::kNone; }

// ScaleOf returns c when `n` is Mul(x, c), Mul(c, x) or (as 1 / c) Div(x,
// c) by a one-element constant c, with `*x` set to x.
std::optional<float> ScaleOf(const Editable& g, const Node& n, ValueId* x) {
  if (!Plain(n) || n.inputs.size() != 2) return std::nullopt;
  if (n.op == OpType::kMul) {
    for (int side = 0; side < 2; ++side) {
      const std::optional<float> c = ScalarConstant(g, n.inputs[side]);
      if (c.has_value() && ScalarConstant(g, n.inputs[1 - side]) == std::nullopt) {
        *x = n.inputs[1 - side];
        return c;
      }
    }
  } else if (n.op == OpType::kDiv) {
    const std::optional<float> c = ScalarConstant(g, n.inputs[1]);
    if (c.has_value() && *c != 0.0f) {
      *x = n.inputs[0];
      return 1.0f / *c;
    }
  }
  return std::nullopt;
}

// Forward returns the view of node `n`'s output given the view `in` of
// the input it reads (a view op, a Transpose, a Gather of one index, a
// Slice with unit steps, or a scalar Mul or Div), or nullopt.
std::optional<StridedView> Forward(const Editable& g, const Node& n, const StridedView& in) {
  const Shape& out = g.values[n.outputs[0]].desc.shape;
  if (IsView(n.op)) return Reshaped(in, out);
  if (n.op == OpType::kTranspose) {
    const std::vector<int64_t> perm = PermOf(n, in.shape.size());
    if (perm.size() != in.shape.size()) return std::nullopt;
    StridedView r;
    r.offset = in.offset;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(in.shape.size())) return std::nullopt;
      r.shape.push_back(in.shape[p]);
      r.dims.push_back(in.dims[p]);
    }
    return r;
  }
  if (n.op == kGather) {
    const auto* a = n.attrs.get_if<GatherAttrs>();
    const int64_t rank = static_cast<int64_t>(in.shape.size());
    if (a == nullptr || a->indices.size() != 1 || n.inputs.size() != 1) return std::nullopt;
    const int64_t axis = a->axis < 0 ? a->axis + rank : a->axis;
    if (axis < 0 || axis >= rank || a->indices[0] < 0 || a->indices[0] >= in.shape[axis]) {
      return std::nullopt;
    }
    StridedView r;
    // The index as digits of the axis's parts, innermost first.
    r.offset = in.offset;
    int64_t index = a->indices[0];
    for (size_t i = in.dims[axis].size(); i > 0; --i) {
      const Part& part = in.dims[axis][i - 1];
      r.offset += index % part.first * part.second;
      index /= part.first;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) {
        for (int64_t s : a->indices_shape) {
          if (s != 1) return std::nullopt;
          r.shape.push_back(1);
          r.dims.push_back({});
        }
        continue;
      }
      r.shape.push_back(in.shape[d]);
      r.dims.push_back(in.dims[d]);
    }
    if (r.shape != out) return std::nullopt;
    return r;
  }
  if (n.op == kSlice) {
    // Unit steps along axes of one strided part (a packed QKV projection
    // split into q, k and v): an offset and a shorter axis.
    const auto* a = n.attrs.get_if<SliceAttrs>();
    const int64_t rank = static_cast<int64_t>(in.shape.size());
    if (a == nullptr || n.inputs.size() != 1) return std::nullopt;
    StridedView r = in;
    for (size_t k = 0; k < a->starts.size(); ++k) {
      int64_t axis = a->axes.empty() ? static_cast<int64_t>(k) : a->axes[k];
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank || k >= a->ends.size()) return std::nullopt;
      if (!a->steps.empty() && a->steps[k] != 1) return std::nullopt;
      const int64_t dim = in.shape[axis];
      auto clamp = [dim](int64_t v) {
        return std::min(std::max(v < 0 ? v + dim : v, int64_t{0}), dim);
      };
      const int64_t begin = clamp(a->starts[k]), end = clamp(a->ends[k]);
      if (end <= begin) return std::nullopt;
      if (begin == 0 && end == dim) continue;
      if (in.dims[axis].size() != 1) return std::nullopt;
      const int64_t stride = in.dims[axis][0].second;
      r.offset += begin * stride;
      r.shape[axis] = end - begin;
      r.dims[axis] = {{end - begin, stride}};
    }
    if (r.shape != out) return std::nullopt;
    return r;
  }
  ValueId x = kNoValue;
  if (ScaleOf(g, n, &x).has_value() && in.shape == out) return in;
  return std::nullopt;
}

// A tensor an attention operand can be read from: `value` seen through
// `view`, times `scale`.
struct Source {
  ValueId value = kNoValue;
  StridedView view;
  float scale = 1.0f;
};

// SourceOf walks back from `id` through the ops Forward folds (scalar Muls
// only with `allow_scale`) and returns the farthest tensor whose view the
// strides allow (`id` itself at worst).
Source SourceOf(const Editable& g, ValueId id, bool allow_scale) {
  std::vector<int> chain;      // chain[0] writes id
  std::vector<ValueId> reads;  // reads[i]: the input chain[i] folds through
  ValueId cur = id;
  while (chain.size() < 32) {
    const int p = g.Producer(cur);
    if (p < 0 || !Plain(g.nodes[p])) break;
    const Node& n = g.nodes[p];
    ValueId in = kNoValue;
    if (IsView(n.op) || n.op == OpType::kTranspose || n.op == kGather || n.op == kSlice) {
      if (n.inputs.empty()) break;
      in = n.inputs[0];
    } else if (!allow_scale || !ScaleOf(g, n, &in).has_value()) {
      break;
    }
    if (g.values[in].desc.dtype != DataType::kFloat32) break;
    chain.push_back(p);
    reads.push_back(in);
    cur = in;
  }
  for (size_t k = chain.size(); k > 0; --k) {
    Source s;
    s.value = reads[k - 1];
    s.view = Dense(g.values[s.value].desc.shape);
    bool ok = true;
    for (size_t i = k; i > 0 && ok; --i) {
      const Node& n = g.nodes[chain[i - 1]];
      std::optional<StridedView> next = Forward(g, n, s.view);
      ValueId x = kNoValue;
      if (std::optional<float> c = ScaleOf(g, n, &x); c.has_value()) s.scale *= *c;
      if (next.has_value()) {
        s.view = *next;
      } else {
        ok = false;
      }
    }
    if (ok) return s;
  }
  return Source{id, Dense(g.values[id].desc.shape), 1.0f};
}

// Canonical maps a view over [batch dims..., heads, rows, cols] (heads and
// batch dims optional) onto AttentionView: the batch dims of more than one
// element must merge into at most two strided runs.
std::optional<AttentionView> Canonical(const StridedView& v) {
  const size_t n = v.shape.size();
  if (n < 2) return std::nullopt;
  AttentionView r;
  r.offset = v.offset;
  const std::optional<int64_t> sr = StrideOf(v.dims[n - 2]), sc = StrideOf(v.dims[n - 1]),
                               sh = n >= 3 ? StrideOf(v.dims[n - 3]) : std::optional<int64_t>(0);
  if (!sr || !sc || !sh) return std::nullopt;
  r.sr = *sr;
  r.sc = *sc;
  r.sh = *sh;
  std::vector<Part> batch;
  for (size_t d = 0; d + 3 < n; ++d) batch.insert(batch.end(), v.dims[d].begin(), v.dims[d].end());
  const std::vector<Part> runs = Simplify(batch);
  if (runs.size() > 2) return std::nullopt;
  if (runs.empty()) {
    r.batch_mod = 1;
  } else if (runs.size() == 1) {
    r.batch_mod = runs[0].first;
    r.sb_lo = runs[0].second;
  } else {
    r.batch_mod = runs[1].first;
    r.sb_lo = runs[1].second;
    r.sb_hi = runs[0].second;
  }
  return r;
}

// Batch returns the product of the dimensions before the last three.
int64_t Batch(const Shape& s) { return s.size() <= 3 ? 1 : Numel(Shape(s.begin(), s.end() - 3)); }

// Tail returns the last `n` dimensions (with leading 1s below rank n).
Shape Tail(const Shape& s, size_t n) {
  Shape t(s.end() - static_cast<ptrdiff_t>(std::min(n, s.size())), s.end());
  while (t.size() < n) t.insert(t.begin(), 1);
  return t;
}

// BroadcastTo returns a row-major tensor of `shape` viewed over `to`
// (numpy broadcasting; stride 0 on broadcast dimensions), or nullopt.
std::optional<StridedView> BroadcastTo(const Shape& shape, const Shape& to) {
  if (shape.size() > to.size()) return std::nullopt;
  const StridedView dense = Dense(shape);
  StridedView r;
  r.shape = to;
  r.dims.resize(to.size());
  const size_t lead = to.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == to[lead + i]) {
      r.dims[lead + i] = dense.dims[i];
    } else if (shape[i] == 1) {
      r.dims[lead + i] = {{to[lead + i], 0}};
    } else {
      return std::nullopt;
    }
  }
  for (size_t i = 0; i < lead; ++i) r.dims[i] = {{to[i], 0}};
  return r;
}

// A mask term: an Add operand over the scores.
struct MaskTerm {
  ValueId value;
  AttentionView view;
};

// SumConstantMasks adds constant terms into one tensor [P, H, Lq, Lk] over
// the smallest batch period P they repeat with.
std::optional<MaskTerm> SumConstantMasks(Editable& g, const std::vector<MaskTerm>& terms,
                                         const AttentionAttrs& a, const std::string& name) {
  int64_t period = 1;
  for (const MaskTerm& t : terms) {
    if (g.ConstantData(t.value) == nullptr) return std::nullopt;
    const int64_t p = t.view.sb_hi != 0 ? a.batch : (t.view.sb_lo != 0 ? t.view.batch_mod : 1);
    period = std::lcm(period, p);
  }
  if (a.batch % period != 0) return std::nullopt;
  std::vector<float> sum(static_cast<size_t>(period * a.heads * a.lq * a.lk), 0.0f);
  for (const MaskTerm& t : terms) {
    const std::vector<float>& data = *g.ConstantData(t.value);
    size_t e = 0;
    for (int64_t b = 0; b < period; ++b) {
      for (int64_t h = 0; h < a.heads; ++h) {
        for (int64_t i = 0; i < a.lq; ++i) {
          for (int64_t j = 0; j < a.lk; ++j) sum[e++] += data[t.view.Offset(b, h, i, j)];
        }
      }
    }
  }
  MaskTerm r;
  r.value =
      g.AddConstant(absl::StrCat(name, ".mask"), {period, a.heads, a.lq, a.lk}, std::move(sum));
  r.view = DenseAttentionView(period, a.heads, a.lq, a.lk);
  r.view.batch_mod = period;
  return r;
}

// OutputView returns the view of value chain[0] (the attention output) in
// the row-major tensor chain.back() when the Reshapes and Transposes that
// produce chain[1..] from it allow, else nullopt.
std::optional<StridedView> OutputView(const Editable& g, const std::vector<int>& nodes,
                                      ValueId final_value) {
  StridedView v = Dense(g.values[final_value].desc.shape);
  for (size_t i = nodes.size(); i > 0; --i) {
    const Node& n = g.nodes[nodes[i - 1]];
    const Shape& in = g.values[n.inputs[0]].desc.shape;
    if (n.op == OpType::kTranspose) {
      const std::vector<int64_t> perm = PermOf(n, in.size());
      StridedView x;
      x.offset = v.offset;
      if (perm.size() != in.size()) return std::nullopt;
      x.shape.assign(in.size(), 0);
      x.dims.resize(in.size());
      for (size_t j = 0; j < perm.size(); ++j) {
        x.shape[perm[j]] = v.shape[j];
        x.dims[perm[j]] = v.dims[j];
      }
      v = x;
    } else {
      std::optional<StridedView> x = Reshaped(v, in);
      if (!x.has_value()) return std::nullopt;
      v = *x;
    }
  }
  return v;
}

// NanGuard finds SDPA's guard after the softmax P, Where(IsNaN(P), 0, P)
// (rows that see no key give zeros, not NaN), and returns its IsNaN and
// Where nodes. The fused kernel's softmax never makes NaN of finite scores,
// so the guard folds away; a NaN already in Q, K, V or the mask then stays
// NaN where the guard would have written 0.
std::optional<std::pair<int, int>> NanGuard(const Editable& g, ValueId p) {
  if (g.IsOutput(p) || g.Uses(p) != 2) return std::nullopt;
  int isnan = -1, where = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.removed[i]) continue;
    const Node& n = g.nodes[i];
    if (std::find(n.inputs.begin(), n.inputs.end(), p) == n.inputs.end()) continue;
    if (n.op == OpType("IsNaN") && n.inputs.size() == 1 && Plain(n)) {
      isnan = static_cast<int>(i);
    } else if (n.op == OpType("Where") && n.inputs.size() == 3 && Plain(n)) {
      where = static_cast<int>(i);
    }
  }
  if (isnan < 0 || where < 0) return std::nullopt;
  const Node& w = g.nodes[where];
  if (w.inputs[0] != g.nodes[isnan].outputs[0] || w.inputs[2] != p ||
      OnlyConsumer(g, w.inputs[0]) != where || !IsScalar(g, w.inputs[1], 0.0f) ||
      g.values[w.outputs[0]].desc != g.values[p].desc) {
    return std::nullopt;
  }
  return std::make_pair(isnan, where);
}

// TryFuse fuses the attention whose score MatMul is node `qk`; false when
// the nodes around it do not form the pattern.
bool TryFuse(Editable& g, int qk) {
  const Node& qk_node = g.nodes[qk];
  if (qk_node.inputs.size() != 2 || !Plain(qk_node)) return false;
  const Shape scores_shape = g.values[qk_node.outputs[0]].desc.shape;
  if (scores_shape.size() < 2) return false;
  const Shape head_tail = Tail(scores_shape, 3);  // [H, Lq, Lk]

  // Scores -> scale -> masks (-> Reshapes keeping [H, Lq, Lk]) -> Softmax.
  float scale = 1.0f;
  std::vector<std::pair<ValueId, StridedView>> masks;
  std::vector<int> removed = {qk};
  ValueId cur = qk_node.outputs[0];
  int softmax = -1;
  while (softmax < 0) {
    const int n = OnlyConsumer(g, cur);
    if (n < 0 || !Plain(g.nodes[n])) return false;
    const Node& node = g.nodes[n];
    const Shape& shape = g.values[cur].desc.shape;
    const Shape& out = g.values[node.outputs[0]].desc.shape;
    ValueId x = kNoValue;
    if (std::optional<float> c = ScaleOf(g, node, &x); c.has_value() && x == cur) {
      if (!masks.empty() || out != shape) return false;
      scale *= *c;
    } else if (node.op == OpType::kAdd && node.inputs.size() == 2 && out == shape) {
      const ValueId m = OtherOperand(node, cur);
      if (m == kNoValue || g.values[m].desc.dtype != DataType::kFloat32) return false;
      std::optional<StridedView> view = BroadcastTo(g.values[m].desc.shape, shape);
      if (!view.has_value()) return false;
      masks.push_back({m, *view});
    } else if (IsView(node.op)) {
      if (out.size() < 3 || shape.size() < 3 || Tail(out, 3) != head_tail) return false;
    } else if (node.op == OpType::kSoftmax) {
      const auto* a = node.attrs.get_if<SoftmaxAttrs>();
      const int64_t rank = static_cast<int64_t>(shape.size());
      const int64_t axis = a == nullptr ? -1 : (a->axis < 0 ? a->axis + rank : a->axis);
      if (axis != rank - 1 || shape != scores_shape) return false;
      softmax = n;
    } else {
      return false;
    }
    removed.push_back(n);
    cur = node.outputs[0];
  }
  if (std::optional<std::pair<int, int>> guard = NanGuard(g, cur)) {
    removed.push_back(guard->first);
    removed.push_back(guard->second);
    cur = g.nodes[guard->second].outputs[0];
  }
  const int pv = OnlyConsumer(g, cur);
  if (pv < 0 || g.nodes[pv].op != kMatMul || !Plain(g.nodes[pv]) ||
      g.nodes[pv].inputs.size() != 2 || g.nodes[pv].inputs[0] != cur ||
      g.nodes[pv].inputs[1] == cur) {
    return false;
  }

  // The operands.
  const Source q = SourceOf(g, qk_node.inputs[0], true);
  Source kt = SourceOf(g, qk_node.inputs[1], true);
  const Source v = SourceOf(g, g.nodes[pv].inputs[1], false);
  const ValueId pv_out = g.nodes[pv].outputs[0];
  const Shape o_shape = g.values[pv_out].desc.shape;
  const size_t rank = scores_shape.size();
  if (q.view.shape.size() != rank || kt.view.shape.size() != rank || v.view.shape.size() != rank ||
      o_shape.size() != rank) {
    return false;
  }
  // K^T [.., Dk, Lk] as K [.., Lk, Dk].
  std::swap(kt.view.shape[rank - 1], kt.view.shape[rank - 2]);
  std::swap(kt.view.dims[rank - 1], kt.view.dims[rank - 2]);
  const Shape batch_dims(scores_shape.begin(), scores_shape.end() - 2);
  for (const Shape* s : std::initializer_list<const Shape*>{&q.view.shape, &kt.view.shape,
                                                            &v.view.shape, &o_shape}) {
    if (Shape(s->begin(), s->end() - 2) != batch_dims) return false;
  }

  AttentionAttrs a;
  a.batch = Batch(scores_shape);
  a.heads = head_tail[0];
  a.lq = scores_shape[rank - 2];
  a.lk = scores_shape[rank - 1];
  a.dk = q.view.shape[rank - 1];
  a.dv = v.view.shape[rank - 1];
  a.scale = scale * q.scale * kt.scale;
  if (a.dk > 256 || a.dv > 256) return false;

  // The output: the longest chain of Reshapes and Transposes after the
  // product whose strides fold.
  std::vector<int> out_chain;
  {
    ValueId o = pv_out;
    while (out_chain.size() < 16) {
      const int n = OnlyConsumer(g, o);
      if (n < 0 || !Plain(g.nodes[n]) ||
          !(IsView(g.nodes[n].op) || g.nodes[n].op == OpType::kTranspose)) {
        break;
      }
      out_chain.push_back(n);
      o = g.nodes[n].outputs[0];
    }
  }
  std::optional<StridedView> o_view;
  while (true) {
    const ValueId final_value = out_chain.empty() ? pv_out : g.nodes[out_chain.back()].outputs[0];
    o_view = OutputView(g, out_chain, final_value);
    if (o_view.has_value() || out_chain.empty()) break;
    out_chain.pop_back();
  }
  if (!o_view.has_value()) return false;

  std::optional<AttentionView> cq = Canonical(q.view), ck = Canonical(kt.view),
                               cv = Canonical(v.view), co = Canonical(*o_view);
  if (!cq || !ck || !cv || !co) return false;
  a.q = *cq;
  a.k = *ck;
  a.v = *cv;
  a.o = *co;

  // The mask: one term as it is, several constants summed.
  std::vector<MaskTerm> terms;
  for (const auto& [value, view] : masks) {
    std::optional<AttentionView> c = Canonical(view);
    if (!c.has_value()) return false;
    terms.push_back({value, *c});
  }
  std::optional<MaskTerm> mask;
  if (terms.size() == 1) {
    mask = terms[0];
  } else if (terms.size() > 1) {
    mask = SumConstantMasks(g, terms, a, g.nodes[softmax].name);
    if (!mask.has_value()) return false;
  }

  // The fused node takes the place of the last node of the output chain.
  const int last = out_chain.empty() ? pv : out_chain.back();
  removed.push_back(pv);
  for (int n : out_chain) removed.push_back(n);
  a.out_shape = g.values[g.nodes[last].outputs[0]].desc.shape;
  std::vector<ValueId> inputs = {q.value, kt.value, v.value};
  if (mask.has_value()) {
    inputs.push_back(mask->value);
    a.mask = mask->view;
  }
  for (int n : removed) g.removed[n] = n != last;
  Node& fused = g.nodes[last];
  fused.op = kAttention;
  fused.inputs = std::move(inputs);
  fused.attrs = a;
  return true;
}

// RemoveUnread drops nodes none of whose outputs is read (the views the
// fused nodes read past).
void RemoveUnread(Editable& g) {
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.removed[i]) continue;
      bool read = false;
      for (ValueId out : g.nodes[i].outputs) read |= out != kNoValue && g.Uses(out) > 0;
      if (!read) {
        g.removed[i] = true;
        again = true;
      }
    }
  }
}

absl::StatusOr<Graph> FuseAttention(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.removed[i] || g.nodes[i].op != kMatMul) continue;
    changed |= TryFuse(g, static_cast<int>(i));
  }
  if (!changed) return graph;
  RemoveUnread(g);
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(Attention) { return table.Add({"attention", FuseAttention}); }

}  // namespace recq::internal
