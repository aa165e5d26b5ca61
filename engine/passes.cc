#include "engine/passes.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/fusion/elementwise_fusion.h"
#include "engine/graph_edit.h"
#include "engine/ops/op_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/engine.h"
#include "recq/math_op_attrs.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

// AbsorbsActivation tells whether the op's kernels apply a fused activation.
bool AbsorbsActivation(OpType op) {
  const OpDef* def = FindOp(op);
  return def != nullptr && def->absorbs_activation;
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
  auto constant = [&g](ValueId id) { return g.ConstantData(id); };
  auto desc = [&g](ValueId id) -> const TensorDesc& { return g.values[id].desc; };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& affine = g.nodes[i];
    if (g.removed[i] || affine.fused.kind != ActivationKind::kNone) continue;
    const OpDef* affine_def = FindOp(affine.op);
    if (affine_def == nullptr || !affine_def->as_channel_affine) continue;
    ValueId x = affine.inputs[0];
    int p = g.Producer(x);
    if (p < 0 || g.Uses(x) != 1) continue;
    Node& prev = g.nodes[p];
    if (prev.fused.kind != ActivationKind::kNone) continue;
    const OpDef* prev_def = FindOp(prev.op);
    if (prev_def == nullptr || !prev_def->fold_channel_affine) continue;
    auto scale_shift = affine_def->as_channel_affine(affine, constant);
    if (!scale_shift) continue;
    auto folded = prev_def->fold_channel_affine(prev, constant, desc, scale_shift->first,
                                                scale_shift->second);
    if (!folded) continue;
    g.ReplaceWeightsAndBias(p, std::move(folded->weights), std::move(folded->bias));
    g.nodes[p].attrs = std::move(folded->attrs);
    // The folded op now writes the affine op's output.
    g.nodes[p].outputs[0] = g.nodes[i].outputs[0];
    g.removed[i] = true;
  }
  return g.Build();
}

namespace {

// IsTranspose: `node` is a Transpose by `perm` without a fused activation.
bool IsTranspose(const Node& node, const std::vector<int64_t>& perm) {
  return node.op == OpType::kTranspose && node.fused.kind == ActivationKind::kNone &&
         TransposePerm(AttrsOr<TransposeAttrs>(node), perm.size()) == perm;
}

}  // namespace

absl::StatusOr<Graph> LayerNormOnChannelsFirst(const Graph& graph) {
  Editable g(graph);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.removed[i] || g.nodes[i].op != OpType("LayerNormalization")) continue;
    NormalizationAttrs a = AttrsOr<NormalizationAttrs>(g.nodes[i]);
    if (a.channels_first_input || a.channels_first_output) continue;
    const ValueId in = g.nodes[i].inputs[0];
    const size_t rank = g.values[in].desc.shape.size();
    if (rank < 3 || (a.axis != -1 && a.axis != static_cast<int64_t>(rank) - 1)) continue;
    // The Transpose before, read by the LayerNorm alone.
    const int p = g.Producer(in);
    if (p >= 0 && g.Uses(in) == 1 && !g.IsOutput(in) &&
        IsTranspose(g.nodes[p], ChannelsLastPerm(rank))) {
      a.channels_first_input = true;
      g.nodes[i].inputs[0] = g.nodes[p].inputs[0];
      g.removed[p] = true;
    }
    // The Transpose after, the LayerNorm's only reader.
    const ValueId out = g.nodes[i].outputs[0];
    if (g.nodes[i].fused.kind == ActivationKind::kNone && g.Uses(out) == 1 && !g.IsOutput(out)) {
      for (size_t k = 0; k < g.nodes.size(); ++k) {
        if (g.removed[k] || g.nodes[k].inputs.empty() || g.nodes[k].inputs[0] != out) continue;
        if (!IsTranspose(g.nodes[k], ChannelsFirstPerm(rank))) break;
        a.channels_first_output = true;
        g.nodes[i].outputs[0] = g.nodes[k].outputs[0];
        g.removed[k] = true;
        break;
      }
    }
    g.nodes[i].attrs = a;
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
    // Through a view read once (GPT-2's Conv1D: Gemm, Reshape, GELU): the
    // op before the view applies the activation, and the view then gives
    // the activation's output.
    int view = -1;
    if (const OpDef* def = FindOp(g.nodes[p].op); def != nullptr && def->is_view) {
      const ValueId v = g.nodes[p].inputs[0];
      const int pp = g.Producer(v);
      if (pp >= 0 && g.Uses(v) == 1 && !g.IsOutput(v) && AbsorbsActivation(g.nodes[pp].op)) {
        view = p;
        p = pp;
      }
    }
    Node& prev = g.nodes[p];
    if (!AbsorbsActivation(prev.op) || prev.fused.kind != ActivationKind::kNone) continue;
    prev.fused = ActivationOfNode(act);
    (view >= 0 ? g.nodes[view] : prev).outputs[0] = act.outputs[0];
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
    // A one-node graph over copies of the constants (one copy of a
    // constant read twice, as Mul(d, d) does), run once unoptimized.
    std::vector<Value> values;
    absl::flat_hash_map<ValueId, ValueId> copies;
    Node single = node;
    for (ValueId& in : single.inputs) {
      if (in == kNoValue) continue;
      auto [copy, fresh] = copies.try_emplace(in, static_cast<ValueId>(values.size()));
      if (fresh) values.push_back(g.values[in]);
      in = copy->second;
    }
    Value out = g.values[node.outputs[0]];
    out.producer_node = -1;
    values.push_back(out);
    const ValueId out_id = static_cast<ValueId>(values.size() - 1);
    single.outputs = {out_id};
    RECQ_ASSIGN_OR_RETURN(Graph one, Graph::Create(std::move(values), {single}, {}, {out_id}));
    EngineOptions options;
    options.optimize = false;
    options.warm_up = false;  // run once right below
    RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, one, options));
    RECQ_ASSIGN_OR_RETURN(Tensor result, Tensor::Allocate(context, out.desc));
    Bindings bindings;
    bindings.Set(out.name, result);
    absl::Status run = engine.RunUnrecorded(bindings);
    if (!run.ok()) {
      return absl::Status(run.code(),
                          absl::StrCat("folding constant node '", node.name, "': ", run.message()));
    }
    RECQ_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, result.DownloadBytes());
    RECQ_ASSIGN_OR_RETURN(HostData data, HostData::FromBytes(out.desc.dtype, bytes));
    Value& folded = g.values[node.outputs[0]];
    folded.kind = Value::Kind::kConstant;
    folded.data = std::make_shared<const HostData>(std::move(data));
    g.removed[i] = true;
  }
  return g.Build();
}

bool FusionDisabledByEnvironment() {
  const char* env = std::getenv("RECQ_FUSION");
  return env != nullptr && absl::string_view(env) == "off";
}

absl::StatusOr<Graph> Optimize(const Graph& graph, const Context& context, bool fuse_elementwise,
                               bool read_transposes) {
  RECQ_ASSIGN_OR_RETURN(Graph g, RemoveIdentities(graph));
  RECQ_ASSIGN_OR_RETURN(g, EliminateDeadNodes(g));
  RECQ_ASSIGN_OR_RETURN(g, FoldConstants(g, context));
  RECQ_ASSIGN_OR_RETURN(g, RunPatternPasses(g));
  RECQ_ASSIGN_OR_RETURN(g, FoldBatchNorm(g));
  RECQ_ASSIGN_OR_RETURN(g, FuseActivations(g));
  if (fuse_elementwise && read_transposes) {
    RECQ_ASSIGN_OR_RETURN(g, LayerNormOnChannelsFirst(g));
  }
  if (fuse_elementwise) {
    RECQ_ASSIGN_OR_RETURN(g, FuseElementwise(g, read_transposes));
  }
  return g;
}

}  // namespace recq::internal
