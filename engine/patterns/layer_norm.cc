// LayerNorm as exporters before ONNX opset 17 write it (PyTorch's
// decomposition):
//   m = ReduceMean(x, trailing axes)      d = Sub(x, m)
//   v = ReduceMean(Pow(d, 2), same axes)  s = Sqrt(Add(v, epsilon))
//   y = Add(Mul(Div(d, s), gamma), beta)
// with Pow(d, 2) also as Mul(d, d), the Add and Mul operands in either order,
// and gamma and beta (constants) optional. It becomes one
// LayerNormalization node: nine dispatches become one.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/graph_edit.h"
#include "engine/patterns/match_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/math_op_attrs.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

const OpType kReduceMean("ReduceMean");

// The first normalised axis of a ReduceMean over trailing axes with
// keepdims, or -1.
int64_t TrailingAxis(const Editable& g, const Node& n) {
  const ReduceAttrs* a = n.attrs.get_if<ReduceAttrs>();
  if (a == nullptr || !a->keepdims || a->axes.empty()) return -1;
  const int64_t rank = static_cast<int64_t>(g.values[n.inputs[0]].desc.shape.size());
  std::vector<int64_t> axes;
  for (int64_t ax : a->axes) axes.push_back(ax < 0 ? ax + rank : ax);
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i)) return -1;
  }
  return axes[0];
}

// Whether constant `id` fits LayerNormalization's scale or bias for
// normalised shape `normalized` (that shape, possibly with leading 1s).
bool FitsParams(const Editable& g, ValueId id, const std::vector<int64_t>& normalized) {
  if (id == kNoValue || g.values[id].kind != Value::Kind::kConstant) return false;
  std::vector<int64_t> s = g.values[id].desc.shape;
  while (s.size() > normalized.size() && s.front() == 1) s.erase(s.begin());
  while (s.size() < normalized.size()) s.insert(s.begin(), 1);
  return s == normalized;
}

absl::StatusOr<Graph> FuseLayerNorm(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& div = g.nodes[i];
    if (g.removed[i] || div.op != OpType::kDiv || div.inputs.size() != 2 ||
        div.fused.kind != ActivationKind::kNone) {
      continue;
    }
    const ValueId d = div.inputs[0];
    // d = x - mean(x), read by the variance's square and this Div.
    const int sub = g.Producer(d);
    if (sub < 0 || g.nodes[sub].op != OpType::kSub || g.IsOutput(d) ||
        g.nodes[sub].fused.kind != ActivationKind::kNone) {
      continue;
    }
    const ValueId x = g.nodes[sub].inputs[0];
    const int mean = PlainProducer(g, g.nodes[sub].inputs[1], kReduceMean);
    if (mean < 0 || g.nodes[mean].inputs[0] != x) continue;
    const int64_t axis = TrailingAxis(g, g.nodes[mean]);
    if (axis < 0) continue;
    // s = sqrt(var + eps)
    const int sqrt = PlainProducer(g, div.inputs[1], OpType("Sqrt"));
    if (sqrt < 0) continue;
    const int add_eps = PlainProducer(g, g.nodes[sqrt].inputs[0], OpType::kAdd);
    if (add_eps < 0 || g.nodes[add_eps].inputs.size() != 2) continue;
    int var = -1;
    float epsilon = 0.0f;
    for (int side = 0; side < 2 && var < 0; ++side) {
      const std::optional<float> e = ScalarConstant(g, g.nodes[add_eps].inputs[side]);
      if (!e.has_value()) continue;
      var = PlainProducer(g, g.nodes[add_eps].inputs[1 - side], kReduceMean);
      epsilon = *e;
    }
    if (var < 0 || TrailingAxis(g, g.nodes[var]) != axis) continue;
    // var = mean(d^2), the square as Pow(d, 2) or Mul(d, d).
    const ValueId sq_v = g.nodes[var].inputs[0];
    int square = PlainProducer(g, sq_v, OpType("Pow"));
    if (square >= 0 &&
        (g.nodes[square].inputs[0] != d || !IsScalar(g, g.nodes[square].inputs[1], 2.0f))) {
      square = -1;
    }
    if (square < 0) {
      square = PlainProducer(g, sq_v, OpType::kMul);
      if (square >= 0 && (g.nodes[square].inputs[0] != d || g.nodes[square].inputs[1] != d)) {
        square = -1;
      }
    }
    if (square < 0 || g.Uses(d) != (g.nodes[square].op == OpType::kMul ? 3 : 2)) continue;
    const TensorDesc& x_desc = g.values[x].desc;
    if (g.values[div.outputs[0]].desc != x_desc) continue;
    const std::vector<int64_t> normalized(x_desc.shape.begin() + axis, x_desc.shape.end());

    // Optional y * gamma, then optional + beta.
    std::vector<int> removed = {mean, sub, square, var, add_eps, sqrt};
    int last = static_cast<int>(i);
    ValueId gamma = kNoValue, beta = kNoValue;
    int next = OnlyConsumer(g, div.outputs[0]);
    if (next >= 0 && g.nodes[next].op == OpType::kMul &&
        g.nodes[next].fused.kind == ActivationKind::kNone &&
        FitsParams(g, OtherOperand(g.nodes[next], g.nodes[last].outputs[0]), normalized) &&
        g.values[g.nodes[next].outputs[0]].desc == x_desc) {
      gamma = OtherOperand(g.nodes[next], g.nodes[last].outputs[0]);
      removed.push_back(last);
      last = next;
      next = OnlyConsumer(g, g.nodes[last].outputs[0]);
    }
    if (next >= 0 && g.nodes[next].op == OpType::kAdd &&
        g.nodes[next].fused.kind == ActivationKind::kNone &&
        FitsParams(g, OtherOperand(g.nodes[next], g.nodes[last].outputs[0]), normalized) &&
        g.values[g.nodes[next].outputs[0]].desc == x_desc) {
      beta = OtherOperand(g.nodes[next], g.nodes[last].outputs[0]);
      removed.push_back(last);
      last = next;
    }
    if (gamma == kNoValue) {
      int64_t n = 1;
      for (int64_t v : normalized) n *= v;
      gamma = g.AddConstant(absl::StrCat(g.nodes[last].name, ".scale"), normalized,
                            std::vector<float>(static_cast<size_t>(n), 1.0f));
    }
    for (int r : removed) g.removed[r] = true;
    Node& ln = g.nodes[last];
    ln.op = OpType("LayerNormalization");
    ln.inputs = {x, gamma, beta};
    NormalizationAttrs attrs;
    attrs.axis = axis;
    attrs.epsilon = epsilon;
    ln.attrs = attrs;
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(LayerNorm) { return table.Add({"layer_norm", FuseLayerNorm}); }

}  // namespace recq::internal
