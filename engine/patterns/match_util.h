// Small matchers shared by the pattern passes of engine/patterns/.
#ifndef RECQ_ENGINE_PATTERNS_MATCH_UTIL_H_
#define RECQ_ENGINE_PATTERNS_MATCH_UTIL_H_

#include <cmath>
#include <optional>

#include "engine/graph_edit.h"
#include "recq/graph.h"

namespace recq::internal {

// ScalarConstant returns the value of a one-element float constant.
inline std::optional<float> ScalarConstant(const Editable& g, ValueId id) {
  if (id == kNoValue || g.values[id].kind != Value::Kind::kConstant) return std::nullopt;
  if (g.values[id].floats().size() != 1) return std::nullopt;
  return g.values[id].floats()[0];
}

// IsScalar tells whether `id` is a one-element constant within `tol` of `v`.
inline bool IsScalar(const Editable& g, ValueId id, float v, float tol = 0.0f) {
  const std::optional<float> c = ScalarConstant(g, id);
  return c.has_value() && std::fabs(*c - v) <= tol;
}

// PlainProducer returns the index of the node of `op` that writes `id`, if
// that node applies no fused activation and `id` has exactly `uses` readers
// and is no graph output; -1 otherwise.
inline int PlainProducer(const Editable& g, ValueId id, OpType op, int uses = 1) {
  const int p = g.Producer(id);
  if (p < 0 || g.nodes[p].op != op || g.nodes[p].fused.kind != ActivationKind::kNone) return -1;
  if (g.Uses(id) != uses || g.IsOutput(id)) return -1;
  return p;
}

// OnlyConsumer returns the index of the one node that reads `id`, or -1 when
// it has another number of readers or is a graph output.
inline int OnlyConsumer(const Editable& g, ValueId id) {
  if (g.IsOutput(id) || g.Uses(id) != 1) return -1;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.removed[i]) continue;
    for (ValueId in : g.nodes[i].inputs) {
      if (in == id) return static_cast<int>(i);
    }
  }
  return -1;
}

// OtherOperand returns the operand of two-input node `n` that is not `id`
// (kNoValue when neither or both are).
inline ValueId OtherOperand(const Node& n, ValueId id) {
  if (n.inputs.size() != 2) return kNoValue;
  if (n.inputs[0] == id && n.inputs[1] != id) return n.inputs[1];
  if (n.inputs[1] == id && n.inputs[0] != id) return n.inputs[0];
  return kNoValue;
}

}  // namespace recq::internal

#endif  // RECQ_ENGINE_PATTERNS_MATCH_UTIL_H_
