#include "engine/passes.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "engine/status_macros.h"
#include "recq/engine.h"

namespace recq::internal {

namespace {

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
    return values[id].data.get();
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
    v.data = std::make_shared<const std::vector<float>>(std::move(data));
    values.push_back(std::move(v));
    return static_cast<ValueId>(values.size() - 1);
  }
  // ReplaceWeightsAndBias gives node `n` (a Conv2D or Gemm) new constant
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

bool AcceptsFusedActivation(OpType op) {
  switch (op) {
    case OpType::kConv2D:
    case OpType::kGemm:
    case OpType::kBatchNorm:
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kDiv:
    case OpType::kMaxPool:
    case OpType::kAveragePool:
    case OpType::kGlobalAveragePool:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<Graph> RemoveIdentities(const Graph& graph) {
  Editable g(graph);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    if (node.op != OpType::kIdentity || node.fused.kind != ActivationKind::kNone) continue;
    if (g.IsOutput(node.outputs[0])) continue;
    g.removed[i] = true;
    g.ReplaceUses(node.outputs[0], node.inputs[0]);
  }
  return g.Build();
}

absl::StatusOr<Graph> FoldBatchNorm(const Graph& graph) {
  Editable g(graph);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& bn = g.nodes[i];
    if (bn.op != OpType::kBatchNorm || g.removed[i] || bn.fused.kind != ActivationKind::kNone)
      continue;
    const std::vector<float>* scale = g.ConstantData(bn.inputs[1]);
    const std::vector<float>* shift = g.ConstantData(bn.inputs[2]);
    const std::vector<float>* mean = g.ConstantData(bn.inputs[3]);
    const std::vector<float>* var = g.ConstantData(bn.inputs[4]);
    if (!scale || !shift || !mean || !var) continue;
    ValueId x = bn.inputs[0];
    int p = g.Producer(x);
    if (p < 0 || g.Uses(x) != 1) continue;
    Node& prev = g.nodes[p];
    if (prev.fused.kind != ActivationKind::kNone) continue;
    const float eps = std::get<BatchNormAttrs>(bn.attrs).epsilon;
    const size_t channels = scale->size();
    std::vector<float> s(channels), t(channels);
    for (size_t c = 0; c < channels; ++c) {
      s[c] = (*scale)[c] / std::sqrt((*var)[c] + eps);
      t[c] = (*shift)[c] - (*mean)[c] * s[c];
    }
    if (prev.op == OpType::kConv2D) {
      const std::vector<float>* w = g.ConstantData(prev.inputs[1]);
      ValueId bias_id = prev.inputs.size() > 2 ? prev.inputs[2] : kNoValue;
      const std::vector<float>* b = g.ConstantData(bias_id);
      if (!w || (bias_id != kNoValue && !b)) continue;
      std::vector<float> w2 = *w;
      size_t per_oc = w2.size() / channels;
      for (size_t c = 0; c < channels; ++c) {
        for (size_t k = 0; k < per_oc; ++k) w2[c * per_oc + k] *= s[c];
      }
      std::vector<float> b2(channels);
      for (size_t c = 0; c < channels; ++c) b2[c] = (b ? (*b)[c] : 0.0f) * s[c] + t[c];
      g.ReplaceWeightsAndBias(p, std::move(w2), std::move(b2));
    } else if (prev.op == OpType::kGemm) {
      const GemmAttrs attrs = std::get<GemmAttrs>(prev.attrs);
      const std::vector<float>* w = g.ConstantData(prev.inputs[1]);
      ValueId c_id = prev.inputs.size() > 2 ? prev.inputs[2] : kNoValue;
      const std::vector<float>* c = g.ConstantData(c_id);
      if (!w ||
          (c_id != kNoValue && (!c || g.values[c_id].desc.NumElements() != int64_t(channels) ||
                                g.values[c_id].desc.shape.back() != int64_t(channels)))) {
        continue;
      }
      std::vector<float> w2 = *w;
      std::vector<int64_t> w_shape = g.values[prev.inputs[1]].desc.shape;
      const int64_t rows = w_shape[0], cols = w_shape[1];
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < cols; ++k) w2[r * cols + k] *= s[attrs.trans_b ? r : k];
      }
      std::vector<float> c2(channels);
      for (size_t n = 0; n < channels; ++n) {
        c2[n] = (c ? attrs.beta * (*c)[n] : 0.0f) * s[n] + t[n];
      }
      g.ReplaceWeightsAndBias(p, std::move(w2), std::move(c2));
      std::get<GemmAttrs>(g.nodes[p].attrs).beta = 1.0f;
    } else {
      continue;
    }
    // The folded op now writes the BatchNorm's output.
    g.nodes[p].outputs[0] = g.nodes[i].outputs[0];
    g.removed[i] = true;
  }
  return g.Build();
}

absl::StatusOr<Graph> FuseActivations(const Graph& graph) {
  Editable g(graph);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& act = g.nodes[i];
    if (ActivationOfNode(act).kind == ActivationKind::kNone || g.removed[i] ||
        act.fused.kind != ActivationKind::kNone)
      continue;
    ValueId x = act.inputs[0];
    int p = g.Producer(x);
    if (p < 0 || g.Uses(x) != 1) continue;
    Node& prev = g.nodes[p];
    if (!AcceptsFusedActivation(prev.op) || prev.fused.kind != ActivationKind::kNone) continue;
    prev.fused = ActivationOfNode(act);
    prev.outputs[0] = act.outputs[0];
    g.removed[i] = true;
  }
  return g.Build();
}

absl::StatusOr<Graph> EliminateDeadNodes(const Graph& graph) {
  Editable g(graph);
  std::vector<bool> live(g.values.size(), false);
  for (ValueId id : g.outputs) live[id] = true;
  for (size_t i = g.nodes.size(); i-- > 0;) {  // nodes are topologically ordered
    if (!live[g.nodes[i].outputs[0]]) {
      g.removed[i] = true;
      continue;
    }
    for (ValueId in : g.nodes[i].inputs) {
      if (in != kNoValue) live[in] = true;
    }
  }
  return g.Build();
}

absl::StatusOr<Graph> FoldConstants(const Graph& graph, const Context& context) {
  Editable g(graph);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    bool all_constant = !node.inputs.empty();
    for (ValueId in : node.inputs) {
      all_constant &= in == kNoValue || g.values[in].kind == Value::Kind::kConstant;
    }
    if (!all_constant) continue;
    // A one-node graph over copies of the constants, run once unoptimized.
    std::vector<Value> values;
    Node single = node;
    for (ValueId& in : single.inputs) {
      if (in == kNoValue) continue;
      values.push_back(g.values[in]);
      in = static_cast<ValueId>(values.size() - 1);
    }
    Value out = g.values[node.outputs[0]];
    out.producer_node = -1;
    values.push_back(out);
    const ValueId out_id = static_cast<ValueId>(values.size() - 1);
    single.outputs = {out_id};
    RECQ_ASSIGN_OR_RETURN(Graph one, Graph::Create(std::move(values), {single}, {}, {out_id}));
    EngineOptions options;
    options.optimize = false;
    RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, one, options));
    RECQ_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(context, out.desc));
    Bindings bindings;
    bindings.Set(out.name, result);
    absl::Status run = engine.RunUnrecorded(bindings);
    if (!run.ok()) {
      return absl::Status(run.code(),
                          absl::StrCat("folding constant node '", node.name, "': ", run.message()));
    }
    RECQ_ASSIGN_OR_RETURN(std::vector<float> data, result.Download());
    Value& folded = g.values[node.outputs[0]];
    folded.kind = Value::Kind::kConstant;
    folded.data = std::make_shared<const std::vector<float>>(std::move(data));
    g.removed[i] = true;
  }
  return g.Build();
}

absl::StatusOr<Graph> Optimize(const Graph& graph, const Context& context) {
  RECQ_ASSIGN_OR_RETURN(Graph g, RemoveIdentities(graph));
  RECQ_ASSIGN_OR_RETURN(g, EliminateDeadNodes(g));
  RECQ_ASSIGN_OR_RETURN(g, FoldConstants(g, context));
  RECQ_ASSIGN_OR_RETURN(g, FoldBatchNorm(g));
  RECQ_ASSIGN_OR_RETURN(g, FuseActivations(g));
  return g;
}

}  // namespace recq::internal
