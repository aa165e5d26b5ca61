// A Concat whose inputs include Gathers of whole slices along its axis, each
// read only by it, becomes one PlaneConcat (engine/ops/plane_concat.h) that
// reads those slices from the Gathers' sources: ShuffleNet V2's blocks
// concatenate the half of the shuffled channels that bypasses the branch
// (a Gather after the channel_gather pattern) with the branch's output, so
// a copy per block goes. Runs after channel_gather (file-name order).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/graph_edit.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/op_util.h"
#include "engine/ops/plane_concat.h"
#include "engine/patterns/pattern_table.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// The Gather producing `v` that reads whole slices of its source along
// `axis` with constant indices, read once (by the Concat) and not a graph
// output; -1 otherwise.
int SliceGather(const Editable& g, ValueId v, int64_t axis) {
  if (g.Uses(v) != 1 || g.IsOutput(v)) return -1;
  const int p = g.Producer(v);
  if (p < 0) return -1;
  const Node& gather = g.nodes[p];
  if (gather.op != OpType("Gather") || gather.inputs.size() != 1) return -1;
  const auto* a = gather.attrs.get_if<GatherAttrs>();
  if (a == nullptr || a->indices_shape.size() != 1) return -1;
  const Shape& src = g.values[gather.inputs[0]].desc.shape;
  const int64_t rank = static_cast<int64_t>(src.size());
  const int64_t gather_axis = a->axis < 0 ? a->axis + rank : a->axis;
  if (gather_axis != axis || rank != static_cast<int64_t>(g.values[v].desc.shape.size())) {
    return -1;
  }
  return p;
}

absl::StatusOr<Graph> FusePlaneConcat(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& concat = g.nodes[i];
    if (g.removed[i] || concat.op != OpType::kConcat) continue;
    const TensorDesc& out = g.values[concat.outputs[0]].desc;
    if (out.dtype != DataType::kFloat32) continue;
    const int64_t rank = static_cast<int64_t>(out.shape.size());
    const int64_t raw_axis = AttrsOr<ConcatAttrs>(concat).axis;
    const int64_t axis = raw_axis < 0 ? raw_axis + rank : raw_axis;
    if (axis < 0 || axis >= rank) continue;
    PlaneConcatAttrs attrs;
    attrs.axis = axis;
    std::vector<ValueId> sources;
    std::vector<int> gathers;
    auto source_of = [&](ValueId v) {
      auto it = std::find(sources.begin(), sources.end(), v);
      if (it != sources.end()) return static_cast<int32_t>(it - sources.begin());
      sources.push_back(v);
      return static_cast<int32_t>(sources.size() - 1);
    };
    for (ValueId v : concat.inputs) {
      const int p = SliceGather(g, v, axis);
      if (p >= 0) {
        const ValueId src = g.nodes[p].inputs[0];
        const int64_t dim = g.values[src].desc.shape[size_t(axis)];
        const int32_t s = source_of(src);
        for (int64_t index : AttrsOr<GatherAttrs>(g.nodes[p]).indices) {
          attrs.source.push_back(s);
          attrs.plane.push_back(static_cast<int32_t>(index < 0 ? index + dim : index));
        }
        gathers.push_back(p);
      } else {
        const int32_t s = source_of(v);
        for (int64_t k = 0; k < g.values[v].desc.shape[size_t(axis)]; ++k) {
          attrs.source.push_back(s);
          attrs.plane.push_back(static_cast<int32_t>(k));
        }
      }
    }
    if (gathers.empty() || sources.size() > kPlaneConcatMaxSources) continue;
    Node& node = g.nodes[i];
    node.op = OpType("PlaneConcat");
    node.inputs = sources;
    node.attrs = std::move(attrs);
    for (int p : gathers) g.removed[p] = true;
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(PlaneConcat) { return table.Add({"plane_concat", FusePlaneConcat}); }

}  // namespace recq::internal
