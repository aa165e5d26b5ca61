// A convolution (groups 1, constant weights) of a Gather of whole channels
// (constant indices, read only by it) is the convolution of the Gather's
// source with the weights scattered to the gathered channels and zero on
// the others: the copy goes, at the price of the skipped channels' products.
// ShuffleNet V2's blocks feed the half of the shuffled channels that runs
// through the branch (a Gather after the channel_gather pattern) to a 1x1
// convolution: the gather's dispatch, 6-9 us on an H100, cost more than
// the convolution's doubled work. Only where the source has at most twice
// the gathered channels.
#include <cstdint>
#include <vector>

#include "engine/graph_edit.h"
#include "engine/ops/layout_attrs.h"
#include "engine/patterns/pattern_table.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

absl::StatusOr<Graph> FuseGatheredConv(const Graph& graph) {
  Editable g(graph);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& conv = g.nodes[i];
    if (g.removed[i] || conv.op != OpType::kConv2D || conv.inputs.size() < 2) continue;
    const auto* attrs = conv.attrs.get_if<Conv2DAttrs>();
    if (attrs != nullptr && attrs->groups != 1) continue;
    const std::vector<float>* w = g.ConstantData(conv.inputs[1]);
    const ValueId x = conv.inputs[0];
    if (w == nullptr || g.Uses(x) != 1 || g.IsOutput(x)) continue;
    const int p = g.Producer(x);
    if (p < 0 || g.nodes[p].op != OpType("Gather") || g.nodes[p].inputs.size() != 1) continue;
    const auto* gather = g.nodes[p].attrs.get_if<GatherAttrs>();
    const ValueId src = g.nodes[p].inputs[0];
    const std::vector<int64_t>& src_shape = g.values[src].desc.shape;
    if (gather == nullptr || gather->indices_shape.size() != 1 || src_shape.size() != 4 ||
        (gather->axis != 1 && gather->axis != -3) ||
        g.values[src].desc.dtype != DataType::kFloat32) {
      continue;
    }
    const std::vector<int64_t> w_shape = g.values[conv.inputs[1]].desc.shape;
    const int64_t oc = w_shape[0];
    const int64_t c = w_shape[1];
    const int64_t taps = w_shape[2] * w_shape[3];
    const int64_t c_src = src_shape[1];
    if (static_cast<int64_t>(gather->indices.size()) != c || c_src > 2 * c) continue;
    std::vector<float> scattered(size_t(oc * c_src * taps), 0.0f);
    for (int64_t o = 0; o < oc; ++o) {
      for (int64_t j = 0; j < c; ++j) {
        const int64_t k = gather->indices[size_t(j)];
        for (int64_t t = 0; t < taps; ++t) {
          scattered[size_t((o * c_src + k) * taps + t)] += (*w)[size_t((o * c + j) * taps + t)];
        }
      }
    }
    const ValueId w_new = g.AddConstant(g.nodes[i].name + ".gathered_w",
                                        {oc, c_src, w_shape[2], w_shape[3]}, std::move(scattered));
    g.nodes[i].inputs[0] = src;
    g.nodes[i].inputs[1] = w_new;
    g.removed[p] = true;
    changed = true;
  }
  if (!changed) return graph;
  return g.Build();
}

}  // namespace

RECQ_REGISTER_PATTERN(GatheredConv) { return table.Add({"gathered_conv", FuseGatheredConv}); }

}  // namespace recq::internal
