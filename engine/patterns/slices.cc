// A Slice whose only reader is another Slice, the two on different axes,
// becomes one Slice over the union of their axes (Swin's crop of a padded
// window grid: x[:, :H] then [:, :, :W]): two dispatches become one.
#include <algorithm>
#include <utility>

#include "engine/graph_edit.h"
#include "engine/ops/layout_attrs.h"
#include "engine/patterns/match_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// Normalized returns `a` with one entry per sliced axis, axes non-negative
// and steps filled in, or false when it is not of that form.
bool Normalized(const SliceAttrs& a, int64_t rank, SliceAttrs* out) {
  const size_t n = a.starts.size();
  if (a.ends.size() != n || a.axes.size() != n || (!a.steps.empty() && a.steps.size() != n)) {
    return false;
  }
  *out = a;
  if (out->steps.empty()) out->steps.assign(n, 1);
  for (int64_t& axis : out->axes) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
  }
  return true;
}

absl::StatusOr<Graph> MergeSlices(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& outer = g.nodes[i];
    if (g.removed[i] || outer.op != OpType("Slice") || outer.inputs.size() != 1 ||
        outer.fused.kind != ActivationKind::kNone) {
      continue;
    }
    const int p = PlainProducer(g, outer.inputs[0], OpType("Slice"));
    if (p < 0 || g.nodes[p].inputs.size() != 1) continue;
    const SliceAttrs* a = g.nodes[p].attrs.get_if<SliceAttrs>();
    const SliceAttrs* b = outer.attrs.get_if<SliceAttrs>();
    const int64_t rank = static_cast<int64_t>(g.values[outer.inputs[0]].desc.shape.size());
    SliceAttrs first, second;
    if (a == nullptr || b == nullptr || !Normalized(*a, rank, &first) ||
        !Normalized(*b, rank, &second)) {
      continue;
    }
    bool disjoint = true;
    for (int64_t axis : second.axes) {
      disjoint &= std::find(first.axes.begin(), first.axes.end(), axis) == first.axes.end();
    }
    if (!disjoint) continue;
    // The first slice's bounds refer to its input's dims, the second's to
    // the first's output, which equal the input's on the second's axes.
    for (size_t k = 0; k < second.axes.size(); ++k) {
      first.starts.push_back(second.starts[k]);
      first.ends.push_back(second.ends[k]);
      first.axes.push_back(second.axes[k]);
      first.steps.push_back(second.steps[k]);
    }
    outer.inputs = g.nodes[p].inputs;
    outer.attrs = std::move(first);
    g.removed[p] = true;
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(Slices) { return table.Add({"slices", MergeSlices}); }

}  // namespace recq::internal
