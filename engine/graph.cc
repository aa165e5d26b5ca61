#include "recq/graph.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/status_macros.h"

namespace recq {

const char* OpTypeName(OpType op) {
  switch (op) {
    case OpType::kConv2D:
      return "Conv2D";
    case OpType::kBatchNorm:
      return "BatchNorm";
    case OpType::kRelu:
      return "Relu";
    case OpType::kClip:
      return "Clip";
    case OpType::kLeakyRelu:
      return "LeakyRelu";
    case OpType::kSigmoid:
      return "Sigmoid";
    case OpType::kHardSigmoid:
      return "HardSigmoid";
    case OpType::kHardSwish:
      return "HardSwish";
    case OpType::kAdd:
      return "Add";
    case OpType::kSub:
      return "Sub";
    case OpType::kMul:
      return "Mul";
    case OpType::kDiv:
      return "Div";
    case OpType::kMaxPool:
      return "MaxPool";
    case OpType::kAveragePool:
      return "AveragePool";
    case OpType::kGlobalAveragePool:
      return "GlobalAveragePool";
    case OpType::kGemm:
      return "Gemm";
    case OpType::kMatMul:
      return "MatMul";
    case OpType::kFlatten:
      return "Flatten";
    case OpType::kReshape:
      return "Reshape";
    case OpType::kTranspose:
      return "Transpose";
    case OpType::kConcat:
      return "Concat";
    case OpType::kSoftmax:
      return "Softmax";
    case OpType::kIdentity:
      return "Identity";
  }
  return "?";
}

const char* ActivationKindName(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::kNone:
      return "None";
    case ActivationKind::kRelu:
      return "Relu";
    case ActivationKind::kClip:
      return "Clip";
    case ActivationKind::kLeakyRelu:
      return "LeakyRelu";
    case ActivationKind::kSigmoid:
      return "Sigmoid";
    case ActivationKind::kHardSigmoid:
      return "HardSigmoid";
    case ActivationKind::kHardSwish:
      return "HardSwish";
  }
  return "?";
}

Activation ActivationOfNode(const Node& node) {
  const auto* a = std::get_if<ActivationAttrs>(&node.attrs);
  const ActivationAttrs attrs = a ? *a : ActivationAttrs{};
  switch (node.op) {
    case OpType::kRelu:
      return {ActivationKind::kRelu, 0, 0};
    case OpType::kClip:
      return {ActivationKind::kClip, attrs.alpha, attrs.beta};
    case OpType::kLeakyRelu:
      return {ActivationKind::kLeakyRelu, attrs.alpha, 0};
    case OpType::kSigmoid:
      return {ActivationKind::kSigmoid, 0, 0};
    case OpType::kHardSigmoid:
      return {ActivationKind::kHardSigmoid, attrs.alpha, attrs.beta};
    case OpType::kHardSwish:
      return {ActivationKind::kHardSwish, 0, 0};
    default:
      return {};
  }
}

namespace {

using Shape = std::vector<int64_t>;

absl::Status Bad(OpType op, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(OpTypeName(op), ": ", what));
}

std::string S(const Shape& s) { return absl::StrCat("[", absl::StrJoin(s, ","), "]"); }

template <typename T>
absl::StatusOr<const T*> Attrs(OpType op, const OpAttrs& attrs) {
  if (std::holds_alternative<std::monostate>(attrs)) {
    static const T kDefault{};
    return &kDefault;
  }
  if (const T* a = std::get_if<T>(&attrs)) return a;
  return Bad(op, "attributes of the wrong kind for this op");
}

absl::Status CheckInputCount(OpType op, absl::Span<const TensorDesc* const> in, size_t required,
                             size_t max) {
  if (in.size() < required || in.size() > max) {
    return Bad(op, absl::StrCat("takes ", required == max ? "" : "between ", required,
                                required == max ? "" : absl::StrCat(" and ", max), " inputs, got ",
                                in.size()));
  }
  for (size_t i = 0; i < required; ++i) {
    if (in[i] == nullptr) return Bad(op, absl::StrCat("input ", i, " is required"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> NormalizeAxis(OpType op, int64_t axis, int64_t rank, bool allow_rank) {
  int64_t hi = allow_rank ? rank : rank - 1;
  if (axis < -rank || axis > hi) {
    return Bad(op, absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<Shape> Broadcast(OpType op, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return Bad(op, absl::StrCat("shapes ", S(a), " and ", S(b), " do not broadcast"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

absl::StatusOr<int64_t> WindowOutput(OpType op, int64_t in, int64_t pad_begin, int64_t pad_end,
                                     int64_t kernel, int64_t stride, int64_t dilation,
                                     bool ceil_mode) {
  if (stride <= 0 || dilation <= 0 || kernel <= 0 || pad_begin < 0 || pad_end < 0) {
    return Bad(op, "kernel, strides and dilations must be positive and pads non-negative");
  }
  int64_t span = (kernel - 1) * dilation + 1;
  int64_t room = in + pad_begin + pad_end - span;
  if (room < 0) {
    return Bad(op, absl::StrCat("window of ", span, " does not fit input ", in, " with pads ",
                                pad_begin, "+", pad_end));
  }
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  // A window must start inside the input or the leading padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

absl::StatusOr<TensorDesc> InferImpl(OpType op, const OpAttrs& attrs,
                                     absl::Span<const TensorDesc* const> in) {
  switch (op) {
    case OpType::kConv2D: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 3));
      RECQ_ASSIGN_OR_RETURN(const Conv2DAttrs* a, Attrs<Conv2DAttrs>(op, attrs));
      const Shape& x = in[0]->shape;
      const Shape& w = in[1]->shape;
      if (x.size() != 4) return Bad(op, absl::StrCat("input must be NCHW (rank 4), got ", S(x)));
      if (w.size() != 4) return Bad(op, absl::StrCat("weight must be rank 4, got ", S(w)));
      if (a->groups <= 0 || x[1] % a->groups != 0 || w[0] % a->groups != 0) {
        return Bad(op, absl::StrCat("groups ", a->groups, " must divide input channels ", x[1],
                                    " and output channels ", w[0]));
      }
      if (w[1] * a->groups != x[1]) {
        return Bad(op,
                   absl::StrCat("weight ", S(w), " expects ", w[1] * a->groups,
                                " input channels with groups ", a->groups, ", input has ", x[1]));
      }
      if (in.size() == 3 && in[2] != nullptr && in[2]->shape != Shape{w[0]}) {
        return Bad(op, absl::StrCat("bias must be [", w[0], "], got ", S(in[2]->shape)));
      }
      Shape out = {x[0], w[0], 0, 0};
      for (int i = 0; i < 2; ++i) {
        RECQ_ASSIGN_OR_RETURN(out[2 + i],
                              WindowOutput(op, x[2 + i], a->pads[i], a->pads[2 + i], w[2 + i],
                                           a->strides[i], a->dilations[i], false));
      }
      return TensorDesc{out};
    }
    case OpType::kBatchNorm: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 5, 5));
      RECQ_RETURN_IF_ERROR(Attrs<BatchNormAttrs>(op, attrs).status());
      const Shape& x = in[0]->shape;
      if (x.size() < 2) return Bad(op, absl::StrCat("input must have rank >= 2, got ", S(x)));
      for (int i = 1; i < 5; ++i) {
        if (in[i]->shape != Shape{x[1]}) {
          return Bad(op,
                     absl::StrCat("parameter ", i, " must be [", x[1], "], got ", S(in[i]->shape)));
        }
      }
      return *in[0];
    }
    case OpType::kRelu:
    case OpType::kClip:
    case OpType::kLeakyRelu:
    case OpType::kSigmoid:
    case OpType::kHardSigmoid:
    case OpType::kHardSwish:
    case OpType::kIdentity: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
      if (op != OpType::kIdentity) RECQ_RETURN_IF_ERROR(Attrs<ActivationAttrs>(op, attrs).status());
      return *in[0];
    }
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kDiv: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 2));
      RECQ_ASSIGN_OR_RETURN(Shape out, Broadcast(op, in[0]->shape, in[1]->shape));
      return TensorDesc{out};
    }
    case OpType::kMaxPool:
    case OpType::kAveragePool: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
      RECQ_ASSIGN_OR_RETURN(const PoolAttrs* a, Attrs<PoolAttrs>(op, attrs));
      const Shape& x = in[0]->shape;
      if (x.size() != 4) return Bad(op, absl::StrCat("input must be NCHW (rank 4), got ", S(x)));
      Shape out = {x[0], x[1], 0, 0};
      for (int i = 0; i < 2; ++i) {
        if (a->pads[i] >= a->kernel[i] || a->pads[2 + i] >= a->kernel[i]) {
          return Bad(op, "pads must be smaller than the kernel");
        }
        RECQ_ASSIGN_OR_RETURN(out[2 + i],
                              WindowOutput(op, x[2 + i], a->pads[i], a->pads[2 + i], a->kernel[i],
                                           a->strides[i], a->dilations[i], a->ceil_mode));
      }
      return TensorDesc{out};
    }
    case OpType::kGlobalAveragePool: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
      Shape x = in[0]->shape;
      if (x.size() < 3) return Bad(op, absl::StrCat("input must have rank >= 3, got ", S(x)));
      for (size_t i = 2; i < x.size(); ++i) x[i] = 1;
      return TensorDesc{x};
    }
    case OpType::kGemm: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 3));
      RECQ_ASSIGN_OR_RETURN(const GemmAttrs* a, Attrs<GemmAttrs>(op, attrs));
      const Shape& sa = in[0]->shape;
      const Shape& sb = in[1]->shape;
      if (sa.size() != 2 || sb.size() != 2) {
        return Bad(op, absl::StrCat("A and B must be rank 2, got ", S(sa), " and ", S(sb)));
      }
      int64_t m = a->trans_a ? sa[1] : sa[0];
      int64_t k = a->trans_a ? sa[0] : sa[1];
      int64_t kb = a->trans_b ? sb[1] : sb[0];
      int64_t n = a->trans_b ? sb[0] : sb[1];
      if (k != kb) {
        return Bad(op, absl::StrCat("inner dimensions differ: A ", S(sa), (a->trans_a ? "^T" : ""),
                                    " and B ", S(sb), (a->trans_b ? "^T" : "")));
      }
      if (in.size() == 3 && in[2] != nullptr) {
        RECQ_ASSIGN_OR_RETURN(Shape c, Broadcast(op, in[2]->shape, {m, n}));
        if (c != Shape{m, n}) {
          return Bad(
              op, absl::StrCat("C ", S(in[2]->shape), " does not broadcast to [", m, ",", n, "]"));
        }
      }
      return TensorDesc{{m, n}};
    }
    case OpType::kMatMul: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 2, 2));
      Shape a = in[0]->shape;
      Shape b = in[1]->shape;
      if (a.empty() || b.empty()) return Bad(op, "inputs must have rank >= 1");
      bool a1 = a.size() == 1, b1 = b.size() == 1;
      if (a1) a.insert(a.begin(), 1);
      if (b1) b.push_back(1);
      if (a.back() != b[b.size() - 2]) {
        return Bad(op, absl::StrCat("inner dimensions differ: ", S(in[0]->shape), " and ",
                                    S(in[1]->shape)));
      }
      RECQ_ASSIGN_OR_RETURN(
          Shape batch, Broadcast(op, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)));
      if (!a1) batch.push_back(a[a.size() - 2]);
      if (!b1) batch.push_back(b.back());
      return TensorDesc{batch};
    }
    case OpType::kFlatten: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
      RECQ_ASSIGN_OR_RETURN(const FlattenAttrs* a, Attrs<FlattenAttrs>(op, attrs));
      const Shape& x = in[0]->shape;
      RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, a->axis, x.size(), true));
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i)
        (i < axis ? outer : inner) *= x[i];
      return TensorDesc{{outer, inner}};
    }
    case OpType::kReshape: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
      RECQ_ASSIGN_OR_RETURN(const ReshapeAttrs* a, Attrs<ReshapeAttrs>(op, attrs));
      const Shape& x = in[0]->shape;
      Shape out = a->shape;
      int infer = -1;
      int64_t known = 1;
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 0 && !a->allow_zero) {
          if (i >= x.size())
            return Bad(op, absl::StrCat("0 at position ", i, " has no input dimension"));
          out[i] = x[i];
        }
        if (out[i] == -1) {
          if (infer >= 0) return Bad(op, "more than one -1 in the target shape");
          infer = static_cast<int>(i);
          continue;
        }
        if (out[i] <= 0) return Bad(op, absl::StrCat("target shape ", S(a->shape), " is invalid"));
        known *= out[i];
      }
      int64_t total = in[0]->NumElements();
      if (infer >= 0) {
        if (known == 0 || total % known != 0) {
          return Bad(op, absl::StrCat("cannot reshape ", S(x), " to ", S(a->shape)));
        }
        out[infer] = total / known;
      } else if (known != total) {
        return Bad(op, absl::StrCat("cannot reshape ", S(x), " (", total, " elements) to ",
                                    S(a->shape), " (", known, " elements)"));
      }
      return TensorDesc{out};
    }
    case OpType::kTranspose: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
      RECQ_ASSIGN_OR_RETURN(const TransposeAttrs* a, Attrs<TransposeAttrs>(op, attrs));
      const Shape& x = in[0]->shape;
      std::vector<int64_t> perm = a->perm;
      if (perm.empty()) {
        perm.resize(x.size());
        std::iota(perm.rbegin(), perm.rend(), 0);
      }
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted.size() != x.size() || sorted[i] != static_cast<int64_t>(i)) {
          return Bad(op,
                     absl::StrCat("perm ", S(perm), " is not a permutation of rank ", x.size()));
        }
      }
      Shape out(x.size());
      for (size_t i = 0; i < x.size(); ++i) out[i] = x[perm[i]];
      return TensorDesc{out};
    }
    case OpType::kConcat: {
      if (in.empty()) return Bad(op, "needs at least one input");
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, in.size(), in.size()));
      RECQ_ASSIGN_OR_RETURN(const ConcatAttrs* a, Attrs<ConcatAttrs>(op, attrs));
      Shape out = in[0]->shape;
      RECQ_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(op, a->axis, out.size(), false));
      for (size_t i = 1; i < in.size(); ++i) {
        const Shape& s = in[i]->shape;
        bool ok = s.size() == out.size();
        for (size_t d = 0; ok && d < s.size(); ++d)
          ok = d == static_cast<size_t>(axis) || s[d] == out[d];
        if (!ok) {
          return Bad(op, absl::StrCat("input ", i, " ", S(s), " does not match ", S(in[0]->shape),
                                      " outside axis ", axis));
        }
        out[axis] += s[axis];
      }
      return TensorDesc{out};
    }
    case OpType::kSoftmax: {
      RECQ_RETURN_IF_ERROR(CheckInputCount(op, in, 1, 1));
      RECQ_ASSIGN_OR_RETURN(const SoftmaxAttrs* a, Attrs<SoftmaxAttrs>(op, attrs));
      RECQ_RETURN_IF_ERROR(NormalizeAxis(op, a->axis, in[0]->shape.size(), false).status());
      return *in[0];
    }
  }
  return Bad(op, "unknown op");
}

}  // namespace

absl::StatusOr<TensorDesc> InferOutputShape(OpType op, const OpAttrs& attrs,
                                            absl::Span<const TensorDesc* const> inputs) {
  return InferImpl(op, attrs, inputs);
}

absl::StatusOr<Graph> Graph::Create(std::vector<Value> values, std::vector<Node> nodes,
                                    std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
  const int num_values = static_cast<int>(values.size());
  auto in_range = [&](ValueId id) { return id >= 0 && id < num_values; };
  absl::flat_hash_set<std::string> names;
  for (const Value& v : values) {
    if (!names.insert(v.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("tensor name '", v.name, "' is used twice"));
    }
    if (v.kind == Value::Kind::kConstant &&
        (v.data == nullptr || static_cast<int64_t>(v.data->size()) != v.desc.NumElements())) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant '", v.name, "' of shape ", v.desc.ToString(), " has ",
                       v.data ? v.data->size() : 0, " values, expected ", v.desc.NumElements()));
    }
  }
  std::vector<int> producer(num_values, -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    for (ValueId id : node.inputs) {
      if (id != kNoValue && !in_range(id)) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' refers to tensor #",
                                                       id, ", which does not exist"));
      }
    }
    if (node.outputs.size() != 1 || !in_range(node.outputs[0])) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node.name, "' must have exactly one valid output"));
    }
    ValueId out = node.outputs[0];
    if (values[out].kind != Value::Kind::kIntermediate) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' writes '",
                                                     values[out].name,
                                                     "', which is a graph input or constant"));
    }
    if (producer[out] != -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", values[out].name, "' is produced by two nodes"));
    }
    producer[out] = static_cast<int>(n);
  }
  for (ValueId id = 0; id < num_values; ++id) {
    if (values[id].kind == Value::Kind::kIntermediate && producer[id] == -1) {
      bool used = false;
      for (const Node& node : nodes) {
        used |= std::find(node.inputs.begin(), node.inputs.end(), id) != node.inputs.end();
      }
      used |= std::find(outputs.begin(), outputs.end(), id) != outputs.end();
      if (used) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", values[id].name, "' is used but no node produces it"));
      }
    }
  }
  for (ValueId id : inputs) {
    if (!in_range(id) || values[id].kind != Value::Kind::kInput) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input #", id, " is not an input tensor"));
    }
  }
  if (outputs.empty()) return absl::InvalidArgumentError("the graph has no outputs");
  for (ValueId id : outputs) {
    if (!in_range(id))
      return absl::InvalidArgumentError(absl::StrCat("graph output #", id, " does not exist"));
  }

  // Topological order (Kahn), stable with respect to the given order.
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> consumers(num_values);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId id : nodes[n].inputs) {
      if (id != kNoValue && producer[id] != -1) {
        ++pending[n];
        consumers[id].push_back(static_cast<int>(n));
      }
    }
  }
  std::vector<int> order;
  std::vector<int> ready;
  for (size_t n = nodes.size(); n-- > 0;) {
    if (pending[n] == 0) ready.push_back(static_cast<int>(n));
  }
  while (!ready.empty()) {
    int n = ready.back();
    ready.pop_back();
    order.push_back(n);
    std::vector<int> next;
    for (int c : consumers[nodes[n].outputs[0]]) {
      if (--pending[c] == 0) next.push_back(c);
    }
    std::sort(next.rbegin(), next.rend());
    ready.insert(ready.end(), next.begin(), next.end());
  }
  if (order.size() != nodes.size()) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (pending[n] != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("the graph has a cycle through node '", nodes[n].name, "'"));
      }
    }
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (int n : order) sorted.push_back(std::move(nodes[n]));
  for (size_t n = 0; n < sorted.size(); ++n) {
    Node& node = sorted[n];
    std::vector<const TensorDesc*> descs;
    for (ValueId id : node.inputs) descs.push_back(id == kNoValue ? nullptr : &values[id].desc);
    absl::StatusOr<TensorDesc> desc = InferImpl(node.op, node.attrs, descs);
    if (!desc.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node.name, "': ", desc.status().message()));
    }
    Value& out = values[node.outputs[0]];
    if (*desc != out.desc) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' produces ",
                                                     desc->ToString(), " but '", out.name,
                                                     "' is declared ", out.desc.ToString()));
    }
    out.producer_node = static_cast<ValueId>(n);
  }
  auto state = std::make_shared<State>();
  state->values = std::move(values);
  state->nodes = std::move(sorted);
  state->inputs = std::move(inputs);
  state->outputs = std::move(outputs);
  return Graph(std::move(state));
}

// --- GraphBuilder ---

std::string GraphBuilder::UniqueName(const std::string& base) {
  for (;;) {
    std::string name = absl::StrCat(base, "_", counter_++);
    bool taken = false;
    for (const Value& v : values_) taken |= v.name == name;
    if (!taken) return name;
  }
}

TensorRef GraphBuilder::AddValue(Value value) {
  for (const Value& v : values_) {
    if (v.name == value.name) {
      if (status_.ok()) {
        status_ = absl::InvalidArgumentError(
            absl::StrCat("tensor name '", value.name, "' is used twice"));
      }
      return {};
    }
  }
  values_.push_back(std::move(value));
  return {static_cast<ValueId>(values_.size() - 1)};
}

TensorRef GraphBuilder::Input(std::string name, std::vector<int64_t> shape) {
  for (int64_t d : shape) {
    if (d <= 0) {
      if (status_.ok()) {
        status_ = absl::InvalidArgumentError(absl::StrCat("input '", name, "' has shape ", S(shape),
                                                          "; every dimension must be positive"));
      }
      return {};
    }
  }
  Value v;
  v.name = std::move(name);
  v.desc.shape = std::move(shape);
  v.kind = Value::Kind::kInput;
  TensorRef ref = AddValue(std::move(v));
  if (ref.valid()) inputs_.push_back(ref.id);
  return ref;
}

TensorRef GraphBuilder::Constant(std::string name, std::vector<int64_t> shape,
                                 std::vector<float> data) {
  TensorDesc desc{std::move(shape)};
  if (static_cast<int64_t>(data.size()) != desc.NumElements()) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(absl::StrCat("constant '", name, "' of shape ",
                                                        desc.ToString(), " got ", data.size(),
                                                        " values, expected ", desc.NumElements()));
    }
    return {};
  }
  Value v;
  v.name = std::move(name);
  v.desc = std::move(desc);
  v.kind = Value::Kind::kConstant;
  v.data = std::make_shared<const std::vector<float>>(std::move(data));
  return AddValue(std::move(v));
}

bool GraphBuilder::Check(TensorRef t, const char* what) {
  if (t.valid() && t.id < static_cast<ValueId>(values_.size())) return true;
  if (status_.ok()) {
    status_ = absl::InvalidArgumentError(absl::StrCat(what, ": invalid tensor reference"));
  }
  return false;
}

TensorRef GraphBuilder::AddNode(OpType op, std::vector<TensorRef> inputs, OpAttrs attrs,
                                std::string name) {
  if (!status_.ok()) return {};
  if (name.empty()) name = UniqueName(OpTypeName(op));
  Node node{op, name, {}, {}, std::move(attrs), {}};
  std::vector<const TensorDesc*> descs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid()) {
      node.inputs.push_back(kNoValue);
      descs.push_back(nullptr);
      continue;
    }
    if (!Check(inputs[i], name.c_str())) return {};
    node.inputs.push_back(inputs[i].id);
    descs.push_back(&values_[inputs[i].id].desc);
  }
  absl::StatusOr<TensorDesc> desc = InferImpl(op, node.attrs, descs);
  if (!desc.ok()) {
    status_ =
        absl::InvalidArgumentError(absl::StrCat("node '", name, "': ", desc.status().message()));
    return {};
  }
  Value out;
  out.name = UniqueName(name);
  out.desc = *std::move(desc);
  out.producer_node = static_cast<ValueId>(nodes_.size());
  TensorRef ref = AddValue(std::move(out));
  if (!ref.valid()) return {};
  node.outputs.push_back(ref.id);
  nodes_.push_back(std::move(node));
  return ref;
}

TensorRef GraphBuilder::Conv2D(TensorRef x, TensorRef w, TensorRef bias, const Conv2DAttrs& attrs) {
  return AddNode(OpType::kConv2D, {x, w, bias}, attrs);
}
TensorRef GraphBuilder::BatchNorm(TensorRef x, TensorRef scale, TensorRef bias, TensorRef mean,
                                  TensorRef var, float epsilon) {
  return AddNode(OpType::kBatchNorm, {x, scale, bias, mean, var}, BatchNormAttrs{epsilon});
}
TensorRef GraphBuilder::Relu(TensorRef x) { return AddNode(OpType::kRelu, {x}, ActivationAttrs{}); }
TensorRef GraphBuilder::Clip(TensorRef x, float min, float max) {
  return AddNode(OpType::kClip, {x}, ActivationAttrs{min, max});
}
TensorRef GraphBuilder::Add(TensorRef a, TensorRef b) { return AddNode(OpType::kAdd, {a, b}); }
TensorRef GraphBuilder::GlobalAveragePool(TensorRef x) {
  return AddNode(OpType::kGlobalAveragePool, {x});
}
TensorRef GraphBuilder::Gemm(TensorRef a, TensorRef b, TensorRef c, const GemmAttrs& attrs) {
  return AddNode(OpType::kGemm, {a, b, c}, attrs);
}
TensorRef GraphBuilder::FullyConnected(TensorRef x, TensorRef w, TensorRef bias) {
  GemmAttrs attrs;
  attrs.trans_b = true;
  return Gemm(x, w, bias, attrs);
}
TensorRef GraphBuilder::Softmax(TensorRef x, int64_t axis) {
  return AddNode(OpType::kSoftmax, {x}, SoftmaxAttrs{axis, false});
}
TensorRef GraphBuilder::Flatten(TensorRef x, int64_t axis) {
  return AddNode(OpType::kFlatten, {x}, FlattenAttrs{axis});
}
TensorRef GraphBuilder::Reshape(TensorRef x, std::vector<int64_t> shape) {
  return AddNode(OpType::kReshape, {x}, ReshapeAttrs{std::move(shape), false});
}

void GraphBuilder::SetFusedActivation(TensorRef t, Activation activation) {
  if (!status_.ok() || !Check(t, "SetFusedActivation")) return;
  ValueId producer = values_[t.id].producer_node;
  if (values_[t.id].kind != Value::Kind::kIntermediate || producer < 0) {
    status_ = absl::InvalidArgumentError(
        absl::StrCat("SetFusedActivation: '", values_[t.id].name, "' is not produced by a node"));
    return;
  }
  nodes_[producer].fused = activation;
}

void GraphBuilder::Output(TensorRef t, std::string name) {
  if (!status_.ok() || !Check(t, "Output")) return;
  if (std::find(outputs_.begin(), outputs_.end(), t.id) != outputs_.end()) {
    status_ = absl::InvalidArgumentError(
        absl::StrCat("tensor '", values_[t.id].name, "' is marked as an output twice"));
    return;
  }
  if (!name.empty() && name != values_[t.id].name) {
    for (const Value& v : values_) {
      if (v.name == name) {
        status_ =
            absl::InvalidArgumentError(absl::StrCat("output name '", name, "' is already used"));
        return;
      }
    }
    values_[t.id].name = std::move(name);
  }
  outputs_.push_back(t.id);
}

const TensorDesc& GraphBuilder::desc(TensorRef t) const {
  static const TensorDesc kEmpty{};
  if (!t.valid() || t.id >= static_cast<ValueId>(values_.size())) return kEmpty;
  return values_[t.id].desc;
}

absl::StatusOr<Graph> GraphBuilder::Build() && {
  RECQ_RETURN_IF_ERROR(status_);
  return Graph::Create(std::move(values_), std::move(nodes_), std::move(inputs_),
                       std::move(outputs_));
}

}  // namespace recq
