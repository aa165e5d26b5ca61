// GELU's tanh approximation as GPT-2 (NewGELUActivation) and PyTorch's
// approximate="tanh" export it before ONNX opset 20:
//   y = Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), 0.044715)),
//                                     sqrt(2 / pi))), 1))
// or with the 0.5 applied last, Mul(Mul(x, a), 0.5), and the operands of
// Add and Mul in either order. It becomes one Gelu node with
// tanh_approximation: eight dispatches become one.
#include <cmath>

#include "engine/graph_edit.h"
#include "engine/patterns/match_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

constexpr float kTol = 1e-4f;

bool Plain(const Node& n) { return n.fused.kind == ActivationKind::kNone; }

// SoleProducer returns the plain node of `op` writing `id` when `id` has one
// reader and is no graph output; -1 otherwise.
int SoleProducer(const Editable& g, ValueId id, OpType op) {
  const int p = g.Producer(id);
  if (p < 0 || g.nodes[p].op != op || !Plain(g.nodes[p]) || g.Uses(id) != 1 || g.IsOutput(id)) {
    return -1;
  }
  return p;
}

// ScalarMul returns the other operand of Mul(v, c) with c within kTol of
// `c`, or kNoValue.
ValueId ScalarMul(const Editable& g, const Node& n, float c) {
  if (n.op != OpType::kMul || n.inputs.size() != 2) return kNoValue;
  for (int side = 0; side < 2; ++side) {
    if (IsScalar(g, n.inputs[side], c, kTol)) return n.inputs[1 - side];
  }
  return kNoValue;
}

absl::StatusOr<Graph> FuseGeluTanh(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  const float sqrt_2_over_pi = std::sqrt(2.0f / static_cast<float>(M_PI));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& tanh = g.nodes[i];
    if (g.removed[i] || tanh.op != OpType("Tanh") || !Plain(tanh)) continue;
    // u = v * sqrt(2 / pi)
    const int up = SoleProducer(g, tanh.inputs[0], OpType::kMul);
    if (up < 0) continue;
    const ValueId v = ScalarMul(g, g.nodes[up], sqrt_2_over_pi);
    // v = x + w, w = Pow(x, 3) * 0.044715
    const int vp = v == kNoValue ? -1 : SoleProducer(g, v, OpType::kAdd);
    if (vp < 0 || g.nodes[vp].inputs.size() != 2) continue;
    ValueId x = kNoValue;
    int wp = -1, pp = -1;
    for (int side = 0; side < 2 && x == kNoValue; ++side) {
      const int w = SoleProducer(g, g.nodes[vp].inputs[side], OpType::kMul);
      const ValueId p = w < 0 ? kNoValue : ScalarMul(g, g.nodes[w], 0.044715f);
      const int pow = p == kNoValue ? -1 : SoleProducer(g, p, OpType("Pow"));
      if (pow < 0 || g.nodes[pow].inputs.size() != 2 ||
          !IsScalar(g, g.nodes[pow].inputs[1], 3.0f) ||
          g.nodes[pow].inputs[0] != g.nodes[vp].inputs[1 - side]) {
        continue;
      }
      x = g.nodes[pow].inputs[0];
      wp = w;
      pp = pow;
    }
    if (x == kNoValue) continue;
    // a = tanh + 1
    const int ap = OnlyConsumer(g, tanh.outputs[0]);
    if (ap < 0 || g.nodes[ap].op != OpType::kAdd || !Plain(g.nodes[ap]) ||
        !IsScalar(g, OtherOperand(g.nodes[ap], tanh.outputs[0]), 1.0f)) {
      continue;
    }
    const ValueId a = g.nodes[ap].outputs[0];
    const int mp = OnlyConsumer(g, a);
    if (mp < 0 || g.nodes[mp].op != OpType::kMul || !Plain(g.nodes[mp])) continue;
    const ValueId other = OtherOperand(g.nodes[mp], a);
    int final_node = -1, half_node = -1;
    if (other == x) {
      // Mul(Mul(x, a), 0.5)
      const int hp = OnlyConsumer(g, g.nodes[mp].outputs[0]);
      if (hp >= 0 && ScalarMul(g, g.nodes[hp], 0.5f) == g.nodes[mp].outputs[0]) {
        final_node = hp;
        half_node = mp;
      }
    } else if (other != kNoValue) {
      // Mul(Mul(x, 0.5), a)
      const int hp = SoleProducer(g, other, OpType::kMul);
      if (hp >= 0 && ScalarMul(g, g.nodes[hp], 0.5f) == x) {
        final_node = mp;
        half_node = hp;
      }
    }
    if (final_node < 0 || !Plain(g.nodes[final_node])) continue;
    // Every step keeps x's shape (the constants are scalars).
    if (g.values[g.nodes[final_node].outputs[0]].desc != g.values[x].desc) continue;
    for (int r : {up, static_cast<int>(i), vp, wp, pp, ap, half_node}) g.removed[r] = true;
    Node& gelu = g.nodes[final_node];
    gelu.op = OpType("Gelu");
    gelu.inputs = {x};
    gelu.attrs = GeluAttrs{true};
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(GeluTanh) { return table.Add({"gelu_tanh", FuseGeluTanh}); }

}  // namespace recq::internal
