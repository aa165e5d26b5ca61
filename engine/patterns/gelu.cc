// GELU as exporters before ONNX opset 20 write it:
//   y = Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5)
// or with the 0.5 applied to x first, Mul(Mul(x, 0.5), Add(...)), the
// division written as Mul(x, 1/sqrt(2)), and the operands of Add and Mul in
// either order. It becomes one Gelu node: five dispatches become one.
#include <cmath>
#include <utility>

#include "engine/graph_edit.h"
#include "engine/patterns/match_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr float kTol = 1e-4f;

// The x of z = x / sqrt(2) or x * (1 / sqrt(2)), or kNoValue.
ValueId ScaledInput(const Editable& g, const Node& n) {
  if (n.inputs.size() != 2) return kNoValue;
  if (n.op == OpType::kDiv && IsScalar(g, n.inputs[1], std::sqrt(2.0f), kTol)) return n.inputs[0];
  if (n.op == OpType::kMul) {
    for (int side = 0; side < 2; ++side) {
      if (IsScalar(g, n.inputs[side], std::sqrt(0.5f), kTol)) return n.inputs[1 - side];
    }
  }
  return kNoValue;
}

absl::StatusOr<Graph> FuseGelu(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& erf = g.nodes[i];
    if (g.removed[i] || erf.op != OpType("Erf") || erf.fused.kind != ActivationKind::kNone) {
      continue;
    }
    const int zp = g.Producer(erf.inputs[0]);
    if (zp < 0 || g.nodes[zp].fused.kind != ActivationKind::kNone || g.Uses(erf.inputs[0]) != 1 ||
        g.IsOutput(erf.inputs[0])) {
      continue;
    }
    const ValueId x = ScaledInput(g, g.nodes[zp]);
    if (x == kNoValue) continue;
    // a = erf + 1
    const int ap = OnlyConsumer(g, erf.outputs[0]);
    if (ap < 0 || g.nodes[ap].op != OpType::kAdd ||
        g.nodes[ap].fused.kind != ActivationKind::kNone ||
        !IsScalar(g, OtherOperand(g.nodes[ap], erf.outputs[0]), 1.0f)) {
      continue;
    }
    const ValueId a = g.nodes[ap].outputs[0];
    const int mp = OnlyConsumer(g, a);
    if (mp < 0 || g.nodes[mp].op != OpType::kMul ||
        g.nodes[mp].fused.kind != ActivationKind::kNone) {
      continue;
    }
    const ValueId other = OtherOperand(g.nodes[mp], a);
    int final_node = -1;
    int half_node = -1;
    if (other == x) {
      // Mul(Mul(x, a), 0.5)
      const int hp = OnlyConsumer(g, g.nodes[mp].outputs[0]);
      if (hp >= 0 && g.nodes[hp].op == OpType::kMul &&
          IsScalar(g, OtherOperand(g.nodes[hp], g.nodes[mp].outputs[0]), 0.5f)) {
        final_node = hp;
        half_node = static_cast<int>(mp);
      }
    } else if (other != kNoValue) {
      // Mul(Mul(x, 0.5), a)
      const int hp = PlainProducer(g, other, OpType::kMul);
      if (hp >= 0 && OtherOperand(g.nodes[hp], x) != kNoValue &&
          IsScalar(g, OtherOperand(g.nodes[hp], x), 0.5f)) {
        final_node = mp;
        half_node = hp;
      }
    }
    if (final_node < 0 || g.nodes[final_node].fused.kind != ActivationKind::kNone) continue;
    // Every step keeps x's shape (the constants are scalars).
    if (g.values[g.nodes[final_node].outputs[0]].desc != g.values[x].desc) continue;
    for (int r : {zp, static_cast<int>(i), ap, half_node}) g.removed[r] = true;
    Node& gelu = g.nodes[final_node];
    gelu.op = OpType("Gelu");
    gelu.inputs = {x};
    gelu.attrs = GeluAttrs{false};
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(Gelu) { return table.Add({"gelu", FuseGelu}); }

}  // namespace recq::internal
