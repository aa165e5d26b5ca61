#include "engine/fusion/elementwise_fusion.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/fusion/elementwise_expr.h"
#include "engine/graph_edit.h"
#include "engine/ops/fused_elementwise.h"
#include "engine/ops/op_util.h"
#include "recq/op_registry.h"

namespace recq::internal {
namespace {

// Operands a0 .. a(n-1): the names the expression of a node is asked with
// to see whether it has one.
std::vector<std::string> Placeholders(size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(absl::StrCat("a", i));
  return names;
}

bool HasSpace(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return absl::ascii_isspace(c); });
}

// AbsorbsResidualAdd: some variant of the op adds a residual (or a bias) in
// its epilogue (KernelVariant::absorbs_residual_add).
bool AbsorbsResidualAdd(OpType op) {
  const OpDef* def = FindOp(op);
  if (def == nullptr) return false;
  return std::any_of(def->variants.begin(), def->variants.end(),
                     [](const KernelVariant& v) { return v.absorbs_residual_add; });
}

class Fuser {
 public:
  Fuser(const Graph& graph, bool read_transposes) : g_(graph), read_transposes_(read_transposes) {
    uses_.assign(g_.values.size(), 0);
    producer_.assign(g_.values.size(), -1);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      for (ValueId in : g_.nodes[i].inputs) {
        if (in != kNoValue) ++uses_[in];
      }
      for (ValueId out : g_.nodes[i].outputs) producer_[out] = static_cast<int>(i);
    }
    for (ValueId out : g_.outputs) ++uses_[out];
    fusible_.assign(g_.nodes.size(), false);
    for (size_t i = 0; i < g_.nodes.size(); ++i) fusible_[i] = Fusible(static_cast<int>(i));
  }

  absl::StatusOr<Graph> Run() {
    std::vector<bool> taken(g_.nodes.size(), false);
    // Roots from the end: the last node of a tree is its root.
    for (size_t r = g_.nodes.size(); r-- > 0;) {
      if (!fusible_[r] || taken[r]) continue;
      std::vector<int> members = Grow(static_cast<int>(r), taken);
      for (int m : members) taken[m] = true;
      // One op alone fuses where it reads a Transpose it can take.
      if (members.size() >= 2 || ReadsTranspose(members)) Replace(std::move(members));
    }
    return g_.Build();
  }

 private:
  bool Fusible(int i) const {
    const Node& node = g_.nodes[i];
    const OpDef* def = FindOp(node.op);
    if (def == nullptr || !def->elementwise || node.outputs.size() != 1) return false;
    const Value& out = g_.values[node.outputs[0]];
    if (out.desc.dtype != DataType::kFloat32 || out.desc.shape.size() > 8) return false;
    if (node.inputs.empty() || node.inputs.size() > kFusedElementwiseMaxInputs) return false;
    for (ValueId in : node.inputs) {
      if (in == kNoValue || g_.values[in].desc.dtype != DataType::kFloat32) return false;
    }
    const std::string expr = def->elementwise(node, Placeholders(node.inputs.size()));
    if (expr.empty() || HasSpace(expr)) return false;
    if (node.fused.kind != ActivationKind::kNone && ActivationExpr(node.fused, "x").empty()) {
      return false;
    }
    // An Add that the op before it may take into its epilogue (lowering's
    // PairResidualAdds; the Add's own activation goes with it).
    if (def->is_residual_add) {
      for (ValueId in : node.inputs) {
        const int p = producer_[in];
        if (p >= 0 && uses_[in] == 1 && g_.nodes[p].fused.kind == ActivationKind::kNone &&
            AbsorbsResidualAdd(g_.nodes[p].op)) {
          return false;
        }
      }
    }
    return true;
  }

  // TransposeOf returns the Transpose node producing `leaf` that a fused
  // node can read through instead (FusedElementwiseAttrs::input_perms):
  // `leaf` is its only use, not a graph output, float32 of rank 8 or less,
  // no activation; else -1.
  int TransposeOf(ValueId leaf) const {
    if (!read_transposes_) return -1;
    const int p = producer_[leaf];
    if (p < 0 || g_.removed[p]) return -1;
    const Node& t = g_.nodes[p];
    if (t.op != OpType::kTranspose || t.inputs.size() != 1 ||
        t.fused.kind != ActivationKind::kNone || t.attrs.get_if<TransposeAttrs>() == nullptr) {
      return -1;
    }
    if (uses_[leaf] != 1 || g_.IsOutput(leaf)) return -1;
    const TensorDesc& src = g_.values[t.inputs[0]].desc;
    if (src.dtype != DataType::kFloat32 || src.shape.size() > 8) return -1;
    return p;
  }

  bool ReadsTranspose(const std::vector<int>& members) const {
    for (ValueId leaf : Leaves(members)) {
      if (TransposeOf(leaf) >= 0) return true;
    }
    return false;
  }

  // Leaves lists the distinct inputs of `members` that no member produces,
  // in first-use order (members in graph order).
  std::vector<ValueId> Leaves(std::vector<int> members) const {
    std::sort(members.begin(), members.end());
    std::vector<ValueId> leaves;
    for (int m : members) {
      for (ValueId in : g_.nodes[m].inputs) {
        const int p = producer_[in];
        const bool inside = p >= 0 && std::find(members.begin(), members.end(), p) != members.end();
        if (!inside && std::find(leaves.begin(), leaves.end(), in) == leaves.end()) {
          leaves.push_back(in);
        }
      }
    }
    return leaves;
  }

  // Grow collects the tree rooted at `root`: producers of members' inputs
  // that are fusible, read once (by that member), not graph outputs and of
  // the root's shape.
  std::vector<int> Grow(int root, const std::vector<bool>& taken) const {
    const std::vector<int64_t>& shape = g_.values[g_.nodes[root].outputs[0]].desc.shape;
    std::vector<int> members = {root};
    for (size_t next = 0; next < members.size(); ++next) {
      for (ValueId in : g_.nodes[members[next]].inputs) {
        const int p = producer_[in];
        if (p < 0 || !fusible_[p] || taken[p] || uses_[in] != 1 || g_.IsOutput(in)) continue;
        if (std::find(members.begin(), members.end(), p) != members.end()) continue;
        if (g_.values[in].desc.shape != shape) continue;
        members.push_back(p);
        if (Leaves(members).size() > kFusedElementwiseMaxInputs) members.pop_back();
      }
    }
    return members;
  }

  void Replace(std::vector<int> members) {
    std::sort(members.begin(), members.end());
    const int root = members.back();
    const std::vector<ValueId> leaves = Leaves(members);
    std::vector<std::string> var(g_.values.size());
    for (size_t k = 0; k < leaves.size(); ++k) var[leaves[k]] = absl::StrCat("a", k);
    FusedElementwiseAttrs attrs;
    std::vector<std::string> ops;
    std::vector<ValueId> step_id(g_.values.size(), kNoValue);
    for (size_t k = 0; k < leaves.size(); ++k) step_id[leaves[k]] = static_cast<ValueId>(k);
    int next = 0;
    auto let = [&](const std::string& expr) {
      std::string t = absl::StrCat("t", next++);
      absl::StrAppend(&attrs.body, "RECQ_LET(", t, ",", expr, ")");
      return t;
    };
    for (int m : members) {
      const Node& node = g_.nodes[m];
      std::vector<std::string> operands;
      for (ValueId in : node.inputs) operands.push_back(var[in]);
      std::string t = let(FindOp(node.op)->elementwise(node, operands));
      if (node.fused.kind != ActivationKind::kNone) t = let(ActivationExpr(node.fused, t));
      var[node.outputs[0]] = t;
      Node step = node;
      for (ValueId& in : step.inputs) in = step_id[in];
      step_id[node.outputs[0]] = static_cast<ValueId>(leaves.size() + attrs.steps.size());
      step.outputs = {step_id[node.outputs[0]]};
      attrs.steps.push_back(std::move(step));
      ops.push_back(node.op.name());
      if (node.fused.kind != ActivationKind::kNone) {
        ops.push_back(ActivationKindName(node.fused.kind));
      }
    }
    // Leaves produced by a Transpose only they read: the fused node reads
    // the Transpose's input through its permutation, and the copy goes.
    std::vector<ValueId> inputs = leaves;
    std::vector<std::vector<int64_t>> perms(leaves.size());
    bool permuted = false;
    for (size_t k = 0; k < leaves.size(); ++k) {
      const int t = TransposeOf(leaves[k]);
      if (t < 0) continue;
      const Node& transpose = g_.nodes[t];
      inputs[k] = transpose.inputs[0];
      perms[k] = TransposePerm(*transpose.attrs.get_if<TransposeAttrs>(),
                               g_.values[transpose.inputs[0]].desc.shape.size());
      g_.removed[t] = true;
      permuted = true;
    }
    if (permuted) attrs.input_perms = std::move(perms);
    const Node& r = g_.nodes[root];
    attrs.result = var[r.outputs[0]];
    attrs.out_shape = g_.values[r.outputs[0]].desc.shape;
    attrs.ops = absl::StrJoin(ops, ",");
    Node fused;
    fused.op = kFusedElementwise;
    fused.name = r.name;
    fused.inputs = inputs;
    fused.outputs = r.outputs;
    fused.attrs = std::move(attrs);
    for (int m : members) g_.removed[m] = true;
    g_.removed[root] = false;
    g_.nodes[root] = std::move(fused);
  }

  Editable g_;
  bool read_transposes_;
  std::vector<int> uses_;
  std::vector<int> producer_;
  std::vector<bool> fusible_;
};

}  // namespace

absl::StatusOr<Graph> FuseElementwise(const Graph& graph, bool read_transposes) {
  return Fuser(graph, read_transposes).Run();
}

}  // namespace recq::internal
