// Editable: a mutable copy of a Graph that passes edit and rebuild.
#ifndef RECQ_ENGINE_GRAPH_EDIT_H_
#define RECQ_ENGINE_GRAPH_EDIT_H_

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "recq/graph.h"

namespace recq::internal {

// A mutable copy of a graph that a pass edits and rebuilds.
struct Editable {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::vector<bool> removed;

  explicit Editable(const Graph& g)
      : values(g.values()),
        nodes(g.nodes()),
        inputs(g.inputs()),
        outputs(g.outputs()),
        removed(g.nodes().size(), false) {}

  // Uses counts the node inputs and graph outputs that read `id`.
  int Uses(ValueId id) const {
    int n = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (removed[i]) continue;
      for (ValueId in : nodes[i].inputs) n += in == id;
    }
    for (ValueId out : outputs) n += out == id;
    return n;
  }
  bool IsOutput(ValueId id) const {
    return std::find(outputs.begin(), outputs.end(), id) != outputs.end();
  }
  int Producer(ValueId id) const {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!removed[i] && nodes[i].outputs[0] == id) return static_cast<int>(i);
    }
    return -1;
  }
  const std::vector<float>* ConstantData(ValueId id) const {
    if (id == kNoValue || values[id].kind != Value::Kind::kConstant) return nullptr;
    return values[id].data->float_vector();
  }
  ValueId AddConstant(const std::string& base, std::vector<int64_t> shape,
                      std::vector<float> data) {
    Value v;
    v.name = base;
    for (int i = 1; std::any_of(values.begin(), values.end(),
                                [&](const Value& o) { return o.name == v.name; });
         ++i) {
      v.name = absl::StrCat(base, "_", i);
    }
    v.desc.shape = std::move(shape);
    v.kind = Value::Kind::kConstant;
    v.data = std::make_shared<const HostData>(std::move(data));
    values.push_back(std::move(v));
    return static_cast<ValueId>(values.size() - 1);
  }
  // ReplaceWeightsAndBias gives node `n` (an op with fold_channel_affine) new constant
  // inputs 1 (same shape as the old ones) and 2 (a [channels] vector).
  void ReplaceWeightsAndBias(int n, std::vector<float> weights, std::vector<float> bias) {
    const std::string base = nodes[n].name;
    std::vector<int64_t> w_shape = values[nodes[n].inputs[1]].desc.shape;
    const int64_t channels = static_cast<int64_t>(bias.size());
    ValueId w =
        AddConstant(absl::StrCat(base, ".folded_w"), std::move(w_shape), std::move(weights));
    ValueId b = AddConstant(absl::StrCat(base, ".folded_b"), {channels}, std::move(bias));
    nodes[n].inputs.resize(3);
    nodes[n].inputs[1] = w;
    nodes[n].inputs[2] = b;
  }
  void ReplaceUses(ValueId from, ValueId to) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (removed[i]) continue;
      for (ValueId& in : nodes[i].inputs) {
        if (in == from) in = to;
      }
    }
  }

  absl::StatusOr<Graph> Build() {
    std::vector<Node> kept;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!removed[i]) kept.push_back(std::move(nodes[i]));
    }
    // Values no kept node produces or reads and that are not graph
    // inputs/outputs are left in place: Graph::Create accepts unused ones.
    for (Value& v : values) v.producer_node = -1;
    return Graph::Create(std::move(values), std::move(kept), std::move(inputs), std::move(outputs));
  }
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_GRAPH_EDIT_H_
