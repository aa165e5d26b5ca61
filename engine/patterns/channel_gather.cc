// A Slice of a Transpose seen through views (Reshape, Flatten...) that
// selects whole slices of one axis of the Transpose's source becomes a
// Gather of those slices from the source: ShuffleNet's channel shuffle
// (Reshape [n, 2, c/2, h, w], Transpose (0, 2, 1, 3, 4), Reshape back)
// read by the Slices that split its channels in two. Where every reader of
// the Transpose goes so, the Transpose goes too: per block, three copies
// become two.
//
// The match is decided on values, not on the shapes' form: the chain is
// replayed on the flat indices of the source, and the result must read
// along one axis only, the Slice's, with every other coordinate kept.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "engine/graph_edit.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_util.h"
#include "engine/passes.h"
#include "engine/patterns/pattern_table.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// The largest source the chain is replayed on (its flat indices are held
// at compile time).
constexpr int64_t kMaxElements = int64_t{1} << 22;

// Permuted returns `a` (row-major, of shape `shape`) transposed by `perm`,
// and sets `shape` to the result's.
std::vector<int64_t> Permuted(const std::vector<int64_t>& a, Shape& shape,
                              const std::vector<int64_t>& perm) {
  const size_t rank = shape.size();
  const Shape in_strides = RowMajor(shape);
  Shape out_shape(rank);
  std::vector<int64_t> strides(rank);  // the input stride of each output axis
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = shape[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  std::vector<int64_t> out(a.size());
  std::vector<int64_t> coord(rank, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += coord[i] * strides[i];
    out[o] = a[src];
    for (size_t i = rank; i-- > 0;) {
      if (++coord[i] < out_shape[i]) break;
      coord[i] = 0;
    }
  }
  shape = std::move(out_shape);
  return out;
}

// SliceIndices: the positions along `axis` that a one-axis Slice of a
// dimension `dim` keeps, or empty when it is not of that form.
std::vector<int64_t> SliceIndices(const SliceAttrs& a, const Shape& in, int64_t* axis) {
  if (a.starts.size() != 1 || a.ends.size() != 1 || a.axes.size() != 1 ||
      (!a.steps.empty() && a.steps.size() != 1)) {
    return {};
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  *axis = a.axes[0] < 0 ? a.axes[0] + rank : a.axes[0];
  if (*axis < 0 || *axis >= rank) return {};
  const int64_t dim = in[*axis];
  const int64_t step = a.steps.empty() ? 1 : a.steps[0];
  if (step <= 0) return {};  // reversed slices: left to Slice
  const int64_t start =
      std::clamp<int64_t>(a.starts[0] < 0 ? a.starts[0] + dim : a.starts[0], 0, dim);
  const int64_t end = std::clamp<int64_t>(a.ends[0] < 0 ? a.ends[0] + dim : a.ends[0], 0, dim);
  std::vector<int64_t> kept;
  for (int64_t i = start; i < end; i += step) kept.push_back(i);
  return kept;
}

// GatheredIndices replays `chain` (the nodes from the source's reader to
// the Slice's input, in order) and the Slice on the source's flat indices
// and returns the gathered positions along `axis` of the source, or empty
// when the result is not one Gather along `axis`.
std::vector<int64_t> GatheredIndices(const Editable& g, const std::vector<int>& chain,
                                     const Shape& source, const SliceAttrs& slice, const Shape& out,
                                     int64_t* axis) {
  std::vector<int64_t> a(static_cast<size_t>(Product(source, 0, source.size())));
  std::iota(a.begin(), a.end(), int64_t{0});
  Shape shape = source;
  for (int n : chain) {
    const Node& node = g.nodes[n];
    if (node.op == OpType::kTranspose) {
      const auto* t = node.attrs.get_if<TransposeAttrs>();
      if (t == nullptr) return {};
      a = Permuted(a, shape, TransposePerm(*t, shape.size()));
    } else {
      shape = g.values[node.outputs[0]].desc.shape;  // a view: the data as it was
    }
  }
  const std::vector<int64_t> kept = SliceIndices(slice, shape, axis);
  if (kept.empty() || out.size() != shape.size() || source.size() != shape.size()) return {};
  // The Slice on the replayed indices: [outer, kept, inner] of `shape`.
  const int64_t outer = Product(shape, 0, size_t(*axis));
  const int64_t inner = Product(shape, size_t(*axis) + 1, shape.size());
  const int64_t dim = shape[*axis];
  for (size_t d = 0; d < source.size(); ++d) {
    if (int64_t(d) != *axis && source[d] != shape[d]) return {};
  }
  // What the source's axis holds at each kept position, from the first
  // outer and inner element, then checked at every element.
  std::vector<int64_t> gathered(kept.size());
  for (size_t j = 0; j < kept.size(); ++j) {
    const int64_t src = a[size_t(kept[j] * inner)];
    if (src % inner != 0) return {};
    gathered[j] = (src / inner) % source[*axis];
  }
  const int64_t source_dim = source[*axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < kept.size(); ++j) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t got = a[size_t((o * dim + kept[j]) * inner + i)];
        if (got != (o * source_dim + gathered[j]) * inner + i) return {};
      }
    }
  }
  return gathered;
}

absl::StatusOr<Graph> GatherShuffledSlices(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& node = g.nodes[i];
    if (g.removed[i] || node.op != OpType("Slice") || node.inputs.size() != 1 ||
        node.fused.kind != ActivationKind::kNone) {
      continue;
    }
    const auto* slice = node.attrs.get_if<SliceAttrs>();
    if (slice == nullptr) continue;
    // Back through views to one Transpose, then through views to the source.
    std::vector<int> chain;
    ValueId v = node.inputs[0];
    bool transposed = false;
    for (;;) {
      const int p = g.Producer(v);
      if (p < 0 || g.nodes[p].inputs.empty() || g.nodes[p].fused.kind != ActivationKind::kNone) {
        break;
      }
      const OpDef* def = FindOp(g.nodes[p].op);
      const bool transpose = g.nodes[p].op == OpType::kTranspose && !transposed;
      if (def == nullptr || !(def->is_view || transpose)) break;
      transposed |= transpose;
      chain.push_back(p);
      v = g.nodes[p].inputs[0];
    }
    if (!transposed) continue;
    std::reverse(chain.begin(), chain.end());
    const Shape& source = g.values[v].desc.shape;
    const Shape& out = g.values[node.outputs[0]].desc.shape;
    if (source.empty() || Product(source, 0, source.size()) > kMaxElements) continue;
    int64_t axis = 0;
    std::vector<int64_t> gathered = GatheredIndices(g, chain, source, *slice, out, &axis);
    if (gathered.empty()) continue;
    GatherAttrs gather;
    gather.axis = axis;
    gather.indices_shape = {static_cast<int64_t>(gathered.size())};
    gather.indices = std::move(gathered);
    node.op = OpType("Gather");
    node.inputs = {v};
    node.attrs = std::move(gather);
    changed = true;
  }
  if (!changed) return graph;
  // The Transposes that no reader needs any more.
  RECQ_ASSIGN_OR_RETURN(Graph rewritten, g.Build());
  return EliminateDeadNodes(rewritten);
}

}  // namespace

RECQ_REGISTER_PATTERN(ChannelGather) { return table.Add({"channel_gather", GatherShuffledSlices}); }

}  // namespace recq::internal
