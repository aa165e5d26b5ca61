#include "recq/graph.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq {

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
    case ActivationKind::kSilu:
      return "Silu";
    case ActivationKind::kGelu:
      return "Gelu";
    case ActivationKind::kGeluTanh:
      return "GeluTanh";
  }
  return "?";
}

Activation ActivationOfNode(const Node& node) {
  const OpDef* def = FindOp(node.op);
  return def != nullptr && def->as_activation ? def->as_activation(node) : Activation{};
}

namespace {

std::string S(const std::vector<int64_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ","), "]");
}

// The most elements a tensor may have (2^40, 4 TiB of float32: far past any
// device, far from int64 overflow in any product of two such counts).
constexpr int64_t kMaxElements = int64_t{1} << 40;

// CheckShapeBounds: every dim in [0, 2^40] and the product of the non-zero
// dims at most 2^40, so that ops can multiply dims freely.
absl::Status CheckShapeBounds(OpType op, const std::vector<int64_t>& shape) {
  int64_t product = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxElements / product) {
      return absl::InvalidArgumentError(absl::StrCat(op.name(), ": shape ", S(shape),
                                                     " is out of range (at most 2^40 elements)"));
    }
    if (d != 0) product *= d;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TensorDesc> InferOutputShape(OpType op, const OpAttrs& attrs,
                                            absl::Span<const TensorDesc* const> inputs) {
  const OpDef* def = FindOp(op);
  if (def == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat("op '", op.name(), "' is not registered (see recq/op_registry.h)"));
  }
  // Shapes come from model files: bound them before any op multiplies dims.
  for (const TensorDesc* in : inputs) {
    if (in != nullptr) RECQ_RETURN_IF_ERROR(CheckShapeBounds(op, in->shape));
  }
  // An op that is not typed computes on float tensors: float32, or float16
  // where EngineOptions::precision stores them as half (ToHalfStorage); its
  // output is float16 when an input is (lowering checks the precision).
  bool half = false;
  if (!def->typed) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == nullptr) continue;
      half |= inputs[i]->dtype == DataType::kFloat16;
      if (inputs[i]->dtype != DataType::kFloat32 && inputs[i]->dtype != DataType::kFloat16) {
        return absl::UnimplementedError(
            absl::StrCat(op.name(), " input ", i, " is ", inputs[i]->ToString(),
                         "; the op takes float32 only (float16 under fp16 storage)"));
      }
    }
  }
  RECQ_ASSIGN_OR_RETURN(TensorDesc out, def->infer(attrs, inputs));
  if (half && out.dtype == DataType::kFloat32) out.dtype = DataType::kFloat16;
  RECQ_RETURN_IF_ERROR(CheckShapeBounds(op, out.shape));
  return out;
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
    if (v.kind == Value::Kind::kConstant && v.data->dtype() != v.desc.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("constant '", v.name, "' is declared ",
                                                     v.desc.ToString(), " but holds ",
                                                     DataTypeName(v.data->dtype()), " data"));
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
    absl::StatusOr<TensorDesc> desc = InferOutputShape(node.op, node.attrs, descs);
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

TensorRef GraphBuilder::Input(std::string name, std::vector<int64_t> shape, DataType dtype) {
  constexpr int64_t kMax = int64_t{1} << 40;
  int64_t elements = 1;
  for (int64_t d : shape) {
    const bool ok = d > 0 && d <= kMax / elements;
    if (ok) elements *= d;
    if (!ok) {
      if (status_.ok()) {
        status_ = absl::InvalidArgumentError(
            absl::StrCat("input '", name, "' has shape ", S(shape),
                         "; every dimension must be positive, and at most 2^40 elements"));
      }
      return {};
    }
  }
  Value v;
  v.name = std::move(name);
  v.desc.shape = std::move(shape);
  v.desc.dtype = dtype;
  v.kind = Value::Kind::kInput;
  TensorRef ref = AddValue(std::move(v));
  if (ref.valid()) inputs_.push_back(ref.id);
  return ref;
}

TensorRef GraphBuilder::Constant(std::string name, std::vector<int64_t> shape,
                                 std::vector<float> data) {
  return Constant(std::move(name), std::move(shape), HostData(std::move(data)));
}

TensorRef GraphBuilder::Constant(std::string name, std::vector<int64_t> shape, HostData data) {
  TensorDesc desc{std::move(shape), data.dtype()};
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
  v.data = std::make_shared<const HostData>(std::move(data));
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
  absl::StatusOr<TensorDesc> desc = InferOutputShape(op, node.attrs, descs);
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
