// Squeeze-and-excitation as exporters write it (torchvision's MobileNet V3,
// EfficientNet and RegNetY, timm's SE modules):
//   p = GlobalAveragePool(x); z = Conv1x1(p); a = act(z) (optional);
//   s = gate(Conv1x1(a)); y = Mul(x, s) or Mul(s, x)
// with each intermediate read once, constant weights and biases, 1x1
// pixels between the pool and the Mul. It becomes one SqueezeExcite node
// (engine/ops/squeeze_excite.h): two dispatches instead of four.
// Runs after the silu pattern (file-name order), so an EfficientNet SE's
// SiLU is one activation node here.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/graph_edit.h"
#include "engine/ops/squeeze_excite.h"
#include "engine/patterns/pattern_table.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

using Shape = std::vector<int64_t>;

bool IsFloat(const Editable& g, ValueId v) {
  return v != kNoValue && g.values[v].desc.dtype == DataType::kFloat32;
}

bool IsConstant(const Editable& g, ValueId v) {
  return v == kNoValue || g.values[v].kind == Value::Kind::kConstant;
}

// [N, channels, 1...]: the squeezed form, as wide as x.
bool IsSqueezed(const Shape& s, const Shape& x, int64_t channels) {
  if (s.size() != x.size() || s[0] != x[0] || s[1] != channels) return false;
  return std::all_of(s.begin() + 2, s.end(), [](int64_t d) { return d == 1; });
}

// The producer of `v` if it is read once (by the node being matched) and
// is not a graph output; -1 otherwise.
int SoleProducer(const Editable& g, ValueId v) {
  if (g.Uses(v) != 1 || g.IsOutput(v)) return -1;
  return g.Producer(v);
}

// A plain 1x1 convolution with constant weights and bias.
bool IsPointwiseConv(const Editable& g, int n) {
  if (n < 0) return false;
  const Node& conv = g.nodes[n];
  if (conv.op != OpType::kConv2D || conv.inputs.size() < 2) return false;
  const auto* a = conv.attrs.get_if<Conv2DAttrs>();
  if (a != nullptr && a->groups != 1) return false;
  const ValueId bias = conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue;
  if (conv.inputs[1] == kNoValue || !IsConstant(g, conv.inputs[1]) || !IsConstant(g, bias)) {
    return false;
  }
  // A 1x1 kernel (a wider one padded to 1x1 pixels would read only its
  // centre, which SqueezeExcite's weights do not express).
  const Shape& w = g.values[conv.inputs[1]].desc.shape;
  return w.size() >= 2 && std::all_of(w.begin() + 2, w.end(), [](int64_t d) { return d == 1; });
}

ValueId BiasOf(const Node& conv) { return conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue; }

// Matches the block whose Mul is node `m` (x the Mul's operand that is not
// the gate); rewrites it in place and returns true.
bool Rewrite(Editable& g, size_t m, int side) {
  Node& mul = g.nodes[m];
  const ValueId s = mul.inputs[side];
  const ValueId x = mul.inputs[1 - side];
  if (!IsFloat(g, x) || g.values[x].desc != g.values[mul.outputs[0]].desc) return false;
  const Shape& xs = g.values[x].desc.shape;
  if (xs.size() < 3) return false;
  const int64_t c = xs[1];

  const int gate = SoleProducer(g, s);
  if (gate < 0) return false;
  const Activation gate_act = ActivationOfNode(g.nodes[gate]);
  if (gate_act.kind == ActivationKind::kNone || g.nodes[gate].fused.kind != ActivationKind::kNone) {
    return false;
  }
  const ValueId z2 = g.nodes[gate].inputs[0];
  const int conv2 = SoleProducer(g, z2);
  if (!IsPointwiseConv(g, conv2) || g.nodes[conv2].fused.kind != ActivationKind::kNone)
    return false;

  // The activation between the convolutions: its own node, or one already
  // fused into the first convolution, or none.
  ValueId a1 = g.nodes[conv2].inputs[0];
  int act = SoleProducer(g, a1);
  if (act < 0) return false;
  Activation first{};
  ValueId z1 = a1;
  if (ActivationOfNode(g.nodes[act]).kind != ActivationKind::kNone) {
    if (g.nodes[act].fused.kind != ActivationKind::kNone) return false;
    first = ActivationOfNode(g.nodes[act]);
    z1 = g.nodes[act].inputs[0];
  } else {
    act = -1;
  }
  const int conv1 = act < 0 ? g.Producer(z1) : SoleProducer(g, z1);
  if (!IsPointwiseConv(g, conv1)) return false;
  if (g.nodes[conv1].fused.kind != ActivationKind::kNone) {
    if (act >= 0) return false;
    first = g.nodes[conv1].fused;
  }
  const ValueId p = g.nodes[conv1].inputs[0];
  const int pool = SoleProducer(g, p);
  if (pool < 0 || g.nodes[pool].op != OpType::kGlobalAveragePool || g.nodes[pool].inputs[0] != x ||
      g.nodes[pool].fused.kind != ActivationKind::kNone) {
    return false;
  }

  const ValueId w1 = g.nodes[conv1].inputs[1];
  const ValueId w2 = g.nodes[conv2].inputs[1];
  const Shape& w1s = g.values[w1].desc.shape;
  if (w1s.empty() || w1s[0] < 1 || w1s[0] > kSqueezeExciteMaxR) return false;
  const int64_t r = w1s[0];
  if (!IsSqueezed(g.values[p].desc.shape, xs, c) || !IsSqueezed(g.values[z1].desc.shape, xs, r) ||
      !IsSqueezed(g.values[a1].desc.shape, xs, r) || !IsSqueezed(g.values[z2].desc.shape, xs, c) ||
      !IsSqueezed(g.values[s].desc.shape, xs, c)) {
    return false;
  }
  for (ValueId v : {w1, w2, BiasOf(g.nodes[conv1]), BiasOf(g.nodes[conv2])}) {
    if (v != kNoValue && !IsFloat(g, v)) return false;
  }

  mul.op = OpType("SqueezeExcite");
  mul.inputs = {x, w1, BiasOf(g.nodes[conv1]), w2, BiasOf(g.nodes[conv2])};
  mul.attrs = SqueezeExciteAttrs{first, gate_act};
  for (int n : {pool, conv1, act, conv2, gate}) {
    if (n >= 0) g.removed[n] = true;
  }
  return true;
}

absl::StatusOr<Graph> FuseSqueezeExcite(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& mul = g.nodes[i];
    if (g.removed[i] || mul.op != OpType::kMul || mul.inputs.size() != 2 ||
        mul.fused.kind != ActivationKind::kNone) {
      continue;
    }
    for (int side = 0; side < 2; ++side) {
      if (Rewrite(g, i, side)) {
        changed = true;
        break;
      }
    }
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(SqueezeExcite) { return table.Add({"squeeze_excite", FuseSqueezeExcite}); }

}  // namespace recq::internal
