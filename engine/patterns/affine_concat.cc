// A Concat along the channels read only by an inference BatchNorm with
// constant parameters becomes one AffineConcat (engine/ops/affine_concat.cc)
// that writes the normalized concatenation; activation fusion then moves
// the ReLU after it in too. DenseNet-121 concatenates and normalizes in
// each of its 58 layers: a batchnorm_rows dispatch per layer goes.
#include <vector>

#include "engine/graph_edit.h"
#include "engine/ops/op_util.h"
#include "engine/patterns/pattern_table.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<Graph> FuseAffineConcat(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  const OpDef* bn_def = FindOp(OpType::kBatchNorm);
  if (bn_def == nullptr || !bn_def->as_channel_affine) return graph;
  auto constant = [&g](ValueId id) { return g.ConstantData(id); };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& concat = g.nodes[i];
    if (g.removed[i] || concat.op != OpType::kConcat) continue;
    const ValueId v = concat.outputs[0];
    const TensorDesc& desc = g.values[v].desc;
    const int64_t rank = static_cast<int64_t>(desc.shape.size());
    const int64_t axis = AttrsOr<ConcatAttrs>(concat).axis;
    if (desc.dtype != DataType::kFloat32 || rank < 3 || (axis != 1 && axis != 1 - rank)) continue;
    if (g.Uses(v) != 1 || g.IsOutput(v)) continue;
    int bn = -1;
    for (size_t k = i + 1; k < g.nodes.size() && bn < 0; ++k) {
      if (!g.removed[k] && !g.nodes[k].inputs.empty() && g.nodes[k].inputs[0] == v) {
        bn = static_cast<int>(k);
      }
    }
    if (bn < 0 || g.nodes[bn].op != OpType::kBatchNorm ||
        g.nodes[bn].fused.kind != ActivationKind::kNone) {
      continue;
    }
    auto affine = bn_def->as_channel_affine(g.nodes[bn], constant);
    if (!affine || static_cast<int64_t>(affine->first.size()) != desc.shape[1]) continue;
    const int64_t channels = desc.shape[1];
    const std::string base = g.nodes[bn].name;
    const ValueId scale = g.AddConstant(base + ".scale", {channels}, std::move(affine->first));
    const ValueId shift = g.AddConstant(base + ".shift", {channels}, std::move(affine->second));
    Node& node = g.nodes[i];
    node.op = OpType("AffineConcat");
    node.inputs.push_back(scale);
    node.inputs.push_back(shift);
    node.attrs = {};
    node.outputs[0] = g.nodes[bn].outputs[0];
    g.removed[bn] = true;
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(AffineConcat) { return table.Add({"affine_concat", FuseAffineConcat}); }

}  // namespace recq::internal
