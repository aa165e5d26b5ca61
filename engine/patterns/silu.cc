// SiLU (swish) as exporters write it: Mul(x, Sigmoid(x)), or Mul(Sigmoid(x),
// x), where the Sigmoid's only reader is that Mul. It becomes one Silu node,
// which FuseActivations then moves into the op that produced x (the conv of
// an EfficientNet block): three dispatches become one.
#include <utility>

#include "engine/graph_edit.h"
#include "engine/patterns/pattern_table.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<Graph> FuseSilu(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& mul = g.nodes[i];
    if (g.removed[i] || mul.op != OpType::kMul || mul.inputs.size() != 2 ||
        mul.fused.kind != ActivationKind::kNone) {
      continue;
    }
    for (int side = 0; side < 2; ++side) {
      const ValueId s = mul.inputs[side];
      const ValueId x = mul.inputs[1 - side];
      const int p = g.Producer(s);
      if (p < 0) continue;
      const Node& sigmoid = g.nodes[p];
      if (sigmoid.op != OpType::kSigmoid || sigmoid.inputs[0] != x ||
          sigmoid.fused.kind != ActivationKind::kNone || g.Uses(s) != 1 || g.IsOutput(s)) {
        continue;
      }
      // Shapes: Mul(x, sigmoid(x)) needs no broadcast.
      if (g.values[x].desc != g.values[mul.outputs[0]].desc) continue;
      g.removed[p] = true;
      mul.op = OpType("Silu");
      mul.inputs = {x};
      mul.attrs = ActivationAttrs{};
      changed = true;
      break;
    }
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(Silu) { return table.Add({"silu", FuseSilu}); }

}  // namespace recq::internal
