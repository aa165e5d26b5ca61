// A Transpose that moves only dimensions of size 1 leaves every element
// where it was in memory: it becomes a Reshape to its output's shape, a
// view with no dispatch. torch's MultiheadAttention exports two per layer
// with batch 1 ([1, L, E] to [L, 1, E] and back: ViT-B/16's 24 copies).
// Runs after the attention pattern (file-name order), which matches the
// exporters' Transposes as they were written.
#include <cstdint>
#include <vector>

#include "engine/graph_edit.h"
#include "engine/ops/op_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

// KeepsMemoryOrder: the dimensions of `x` larger than 1 come out of `perm`
// in their original order.
bool KeepsMemoryOrder(const Shape& x, const std::vector<int64_t>& perm) {
  if (perm.size() != x.size()) return false;
  int64_t last = -1;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.size())) return false;
    if (x[size_t(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

absl::StatusOr<Graph> UnitTransposesToReshapes(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& node = g.nodes[i];
    if (g.removed[i] || node.op != OpType::kTranspose || node.inputs.size() != 1 ||
        node.fused.kind != ActivationKind::kNone) {
      continue;
    }
    const auto* t = node.attrs.get_if<TransposeAttrs>();
    const Shape& x = g.values[node.inputs[0]].desc.shape;
    if (t == nullptr || !KeepsMemoryOrder(x, TransposePerm(*t, x.size()))) continue;
    node.op = OpType::kReshape;
    node.attrs = ReshapeAttrs{g.values[node.outputs[0]].desc.shape};
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(UnitTranspose) {
  return table.Add({"unit_transpose", UnitTransposesToReshapes});
}

}  // namespace recq::internal
