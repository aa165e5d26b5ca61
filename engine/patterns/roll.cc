// A Concat of Slices of one tensor along the Concat's axis, as exporters
// write torch.roll (Swin's shifted windows: Concat(x[s:], x[:s]) on each
// rolled axis), becomes one Gather along that axis with the concatenated
// index ranges as constant indices: three dispatches become one.
#include <algorithm>
#include <utility>
#include <vector>

#include "engine/graph_edit.h"
#include "engine/ops/layout_attrs.h"
#include "engine/patterns/match_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// SliceRange returns the [begin, end) that Slice node `slice` takes along
// `axis` of its input (rank `rank`, that axis of `dim` elements), when it
// slices that axis only, by step 1, with no fused activation.
bool SliceRange(const Node& slice, int64_t axis, int64_t rank, int64_t dim, int64_t* begin,
                int64_t* end) {
  const auto* a = slice.attrs.get_if<SliceAttrs>();
  if (a == nullptr || slice.fused.kind != ActivationKind::kNone || slice.inputs.size() != 1) {
    return false;
  }
  if (a->starts.size() != 1 || a->ends.size() != 1 || a->axes.size() != 1) return false;
  if (!a->steps.empty() && (a->steps.size() != 1 || a->steps[0] != 1)) return false;
  const int64_t sliced = a->axes[0] < 0 ? a->axes[0] + rank : a->axes[0];
  if (sliced != axis) return false;
  auto clamp = [dim](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + dim : v, 0, dim); };
  *begin = clamp(a->starts[0]);
  *end = clamp(a->ends[0]);
  return *end > *begin;
}

absl::StatusOr<Graph> FuseRoll(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& concat = g.nodes[i];
    if (g.removed[i] || concat.op != OpType::kConcat || concat.inputs.size() < 2 ||
        concat.fused.kind != ActivationKind::kNone) {
      continue;
    }
    const auto* ca = concat.attrs.get_if<ConcatAttrs>();
    if (ca == nullptr) continue;
    std::vector<int> slices;
    ValueId x = kNoValue;
    for (ValueId in : concat.inputs) {
      const int p = PlainProducer(g, in, OpType("Slice"));
      if (p < 0 || (x != kNoValue && g.nodes[p].inputs[0] != x)) break;
      x = g.nodes[p].inputs[0];
      slices.push_back(p);
    }
    if (slices.size() != concat.inputs.size()) continue;
    const TensorDesc& xd = g.values[x].desc;
    if (xd.dtype != DataType::kFloat32) continue;
    const int64_t rank = static_cast<int64_t>(xd.shape.size());
    const int64_t axis = ca->axis < 0 ? ca->axis + rank : ca->axis;
    if (axis < 0 || axis >= rank) continue;
    GatherAttrs gather;
    gather.axis = axis;
    bool ok = true;
    for (int p : slices) {
      int64_t begin = 0, end = 0;
      if (!SliceRange(g.nodes[p], axis, rank, xd.shape[axis], &begin, &end)) {
        ok = false;
        break;
      }
      for (int64_t k = begin; k < end; ++k) gather.indices.push_back(k);
    }
    if (!ok) continue;
    gather.indices_shape = {static_cast<int64_t>(gather.indices.size())};
    if (gather.indices_shape[0] != g.values[concat.outputs[0]].desc.shape[axis]) continue;
    for (int p : slices) g.removed[p] = true;
    concat.op = OpType("Gather");
    concat.inputs = {x};
    concat.attrs = std::move(gather);
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(Roll) { return table.Add({"roll", FuseRoll}); }

}  // namespace recq::internal
