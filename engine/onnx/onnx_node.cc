#include "engine/onnx/onnx_node.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "recq/status_macros.h"

namespace recq::onnx_import {

ValueId ImportState::AddValue(Value v) {
  values.push_back(std::move(v));
  const ValueId id = static_cast<ValueId>(values.size() - 1);
  ids[values.back().name] = id;
  return id;
}

absl::StatusOr<const OnnxConstant*> ImportState::FindConstant(const std::string& name) {
  auto c = consts.find(name);
  if (c != consts.end()) return &c->second;
  auto raw = raw_initializers.find(name);
  if (raw == raw_initializers.end()) return nullptr;
  absl::StatusOr<HostTensorData> data = DecodeTensor(*raw->second, external_dir);
  if (!data.ok()) return InitializerError(data.status());
  raw_initializers.erase(raw);
  return &(consts[name] = ToConstant(*std::move(data)));
}

absl::Status InitializerError(const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("initializer: ", status.message()));
}

OnnxConstant ToConstant(HostTensorData data) {
  OnnxConstant c;
  c.name = std::move(data.name);
  c.dims = std::move(data.dims);
  c.is_float = data.is_float();
  c.dtype = data.dtype;
  c.floats = std::move(data.floats);
  c.doubles = std::move(data.doubles);
  c.ints = std::move(data.ints);
  return c;
}

std::optional<std::vector<int64_t>> StaticShapeOf(const onnx::ValueInfoProto& info) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) {
    return std::nullopt;
  }
  std::vector<int64_t> dims;
  for (const onnx::TensorShapeProto::Dimension& d : info.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() <= 0) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

std::optional<std::vector<int64_t>> NodeContext::DeclaredShape(int output) const {
  if (output < 0 || output >= proto_.output_size()) return std::nullopt;
  auto it = state_.declared_shapes.find(proto_.output(output));
  if (it == state_.declared_shapes.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<ValueId> NodeContext::Input(int i, bool optional) {
  if (i >= proto_.input_size() || proto_.input(i).empty()) {
    if (optional) return kNoValue;
    return Invalid(absl::StrCat("input ", i, " is required"));
  }
  const std::string& name = proto_.input(i);
  auto it = state_.ids.find(name);
  if (it != state_.ids.end()) return it->second;
  // The first read makes the constant's value; later reads find it in ids.
  std::vector<int64_t> dims;
  DataType type = DataType::kFloat32;
  std::shared_ptr<const HostData> data;
  auto raw = state_.raw_initializers.find(name);
  auto c = state_.consts.find(name);
  if (raw != state_.raw_initializers.end()) {
    dims.assign(raw->second->dims().begin(), raw->second->dims().end());
  } else if (c != state_.consts.end()) {
    dims = c->second.dims;
    type = c->second.type();
  } else {
    return Invalid(absl::StrCat("input '", name, "' has no producer"));
  }
  for (int64_t d : dims) {
    if (d <= 0) {
      return Unsupported(
          absl::StrCat("input '", name, "' is an empty tensor; empty tensors are not supported"));
    }
  }
  const bool initializer = state_.shared != nullptr && state_.initializer_names.contains(name);
  if (initializer) {
    std::lock_guard<std::mutex> lock(state_.shared->mu);
    auto found = state_.shared->data.find(name);
    if (found != state_.shared->data.end()) data = found->second;
  }
  if (data != nullptr) {
    // Another import of the same model decoded it.
  } else if (c != state_.consts.end()) {
    data = std::make_shared<const HostData>(c->second.ToHostData());
  } else {
    // A float32 initializer's raw_data (checked when it was collected).
    const std::string& bytes = raw->second->raw_data();
    RECQ_ASSIGN_OR_RETURN(
        HostData host, HostData::FromBytes(
                           type, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                     bytes.size())));
    data = std::make_shared<const HostData>(std::move(host));
  }
  if (initializer) {
    std::lock_guard<std::mutex> lock(state_.shared->mu);
    data = state_.shared->data.try_emplace(name, data).first->second;
  }
  Value v;
  v.name = name;
  v.kind = Value::Kind::kConstant;
  v.desc = {std::move(dims), type};
  v.data = data;
  return state_.AddValue(std::move(v));
}

absl::StatusOr<const OnnxConstant*> NodeContext::ConstantInput(int i) {
  if (i >= proto_.input_size() || proto_.input(i).empty()) return nullptr;
  const std::string& name = proto_.input(i);
  absl::StatusOr<const OnnxConstant*> c = state_.FindConstant(name);
  if (!c.ok()) {
    return absl::Status(c.status().code(), absl::StrCat("node '", name_, "' (", op_type(),
                                                        "): ", c.status().message()));
  }
  if (*c == nullptr) {
    return Unsupported(absl::StrCat("input '", name,
                                    "' must be a constant (an initializer or a Constant "
                                    "node); computed values are not supported there"));
  }
  return *c;
}

const onnx::AttributeProto* NodeContext::Attr(absl::string_view name) const {
  for (const onnx::AttributeProto& a : proto_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

absl::StatusOr<int64_t> NodeContext::Int(absl::string_view name, int64_t def) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return def;
  if (a->type() != onnx::AttributeProto::INT) {
    return Invalid(absl::StrCat("attribute '", name, "' must be an int"));
  }
  return a->i();
}

absl::StatusOr<float> NodeContext::Float(absl::string_view name, float def) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return def;
  if (a->type() != onnx::AttributeProto::FLOAT) {
    return Invalid(absl::StrCat("attribute '", name, "' must be a float"));
  }
  return a->f();
}

absl::StatusOr<std::vector<int64_t>> NodeContext::Ints(absl::string_view name) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return std::vector<int64_t>{};
  if (a->type() != onnx::AttributeProto::INTS) {
    return Invalid(absl::StrCat("attribute '", name, "' must be a list of ints"));
  }
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::StatusOr<std::vector<float>> NodeContext::Floats(absl::string_view name) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return std::vector<float>{};
  if (a->type() != onnx::AttributeProto::FLOATS) {
    return Invalid(absl::StrCat("attribute '", name, "' must be a list of floats"));
  }
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

absl::StatusOr<std::string> NodeContext::String(absl::string_view name,
                                                const std::string& def) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return def;
  if (a->type() != onnx::AttributeProto::STRING) {
    return Invalid(absl::StrCat("attribute '", name, "' must be a string"));
  }
  return a->s();
}

absl::StatusOr<std::vector<std::string>> NodeContext::Strings(absl::string_view name) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return std::vector<std::string>{};
  if (a->type() != onnx::AttributeProto::STRINGS) {
    return Invalid(absl::StrCat("attribute '", name, "' must be a list of strings"));
  }
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

absl::StatusOr<OnnxConstant> NodeContext::Tensor(absl::string_view name) const {
  const onnx::AttributeProto* a = Attr(name);
  if (a == nullptr) return absl::NotFoundError(absl::StrCat("no attribute '", name, "'"));
  if (a->type() != onnx::AttributeProto::TENSOR) {
    return Invalid(absl::StrCat("attribute '", name, "' must be a tensor"));
  }
  absl::StatusOr<HostTensorData> t = DecodeTensor(a->t(), state_.external_dir);
  if (!t.ok()) {
    return absl::Status(t.status().code(), absl::StrCat("node '", name_, "' (", op_type(),
                                                        "): ", t.status().message()));
  }
  return ToConstant(*std::move(t));
}

std::vector<std::string> NodeContext::AttrNames() const {
  std::vector<std::string> names;
  for (const onnx::AttributeProto& a : proto_.attribute()) names.push_back(a.name());
  return names;
}

absl::Status NodeContext::CheckAttrs(std::initializer_list<const char*> known) const {
  for (const onnx::AttributeProto& a : proto_.attribute()) {
    bool ok = false;
    for (const char* k : known) ok |= a.name() == k;
    if (!ok) return Unsupported(absl::StrCat("attribute '", a.name(), "' is not supported"));
  }
  return absl::OkStatus();
}

bool NodeContext::OutputUsed(int i) const {
  return i < proto_.output_size() && !proto_.output(i).empty() &&
         state_.used.contains(proto_.output(i));
}

absl::StatusOr<ValueId> NodeContext::AddNode(const std::string& out_name, OpType op,
                                             std::vector<ValueId> inputs, OpAttrs attrs) {
  std::vector<const TensorDesc*> descs;
  for (ValueId id : inputs) descs.push_back(id == kNoValue ? nullptr : &state_.values[id].desc);
  absl::StatusOr<TensorDesc> desc = InferOutputShape(op, attrs, descs);
  if (!desc.ok()) {
    // An element type the op has no kernel for is unsupported, not invalid.
    return desc.status().code() == absl::StatusCode::kUnimplemented
               ? Unsupported(desc.status().message())
               : Invalid(desc.status().message());
  }
  for (int64_t d : desc->shape) {
    if (d <= 0) {
      return Unsupported(absl::StrCat("output shape ", desc->ToString(),
                                      " has a zero dimension; empty tensors are not supported"));
    }
  }
  Value out;
  out.name = out_name;
  out.desc = *std::move(desc);
  const ValueId out_id = state_.AddValue(std::move(out));
  Node node;
  node.op = op;
  node.name = name_;
  node.inputs = std::move(inputs);
  node.outputs = {out_id};
  node.attrs = std::move(attrs);
  state_.nodes.push_back(std::move(node));
  return out_id;
}

absl::Status NodeContext::EmitOutput(int output, OpType op, std::vector<ValueId> inputs,
                                     OpAttrs attrs) {
  if (output < 0 || proto_.output_size() <= output || proto_.output(output).empty()) {
    return Invalid(absl::StrCat("has no output ", output));
  }
  return AddNode(proto_.output(output), op, std::move(inputs), std::move(attrs)).status();
}

const std::string* NodeContext::FirstOutputName() const {
  for (const std::string& name : proto_.output()) {
    if (!name.empty()) return &name;
  }
  return nullptr;
}

absl::StatusOr<ValueId> NodeContext::EmitValue(OpType op, std::vector<ValueId> inputs,
                                               OpAttrs attrs, absl::string_view suffix) {
  const std::string* base = FirstOutputName();
  if (base == nullptr) return Invalid("has no output");
  return AddNode(absl::StrCat(*base, "/", suffix), op, std::move(inputs), std::move(attrs));
}

absl::StatusOr<ValueId> NodeContext::AddConstantValue(OnnxConstant data, absl::string_view suffix) {
  const std::string* base = FirstOutputName();
  if (base == nullptr) return Invalid("has no output");
  for (int64_t d : data.dims) {
    if (d <= 0) return Unsupported("empty tensors are not supported");
  }
  Value v;
  v.name = absl::StrCat(*base, "/", suffix);
  v.kind = Value::Kind::kConstant;
  v.desc = {data.dims, data.type()};
  v.data = std::make_shared<const HostData>(data.ToHostData());
  return state_.AddValue(std::move(v));
}

absl::Status NodeContext::ReserveFolded(int64_t elements) {
  constexpr int64_t kMaxFoldedConstant = int64_t{1} << 26;
  if (elements > kMaxFoldedConstant) {
    return Unsupported(absl::StrCat("a constant of ", elements,
                                    " elements is too large to fold; at most ", kMaxFoldedConstant,
                                    " are folded"));
  }
  if (elements > state_.fold_budget) {
    return Unsupported(
        absl::StrCat("folding ", elements, " more elements exceeds the import's folding budget, ",
                     state_.fold_budget, " elements left (OnnxOptions::max_folded_elements)"));
  }
  state_.fold_budget -= elements;
  return absl::OkStatus();
}

absl::Status NodeContext::DefineConstant(OnnxConstant data) {
  if (proto_.output_size() < 1 || proto_.output(0).empty()) return Invalid("has no output");
  const std::string& out = proto_.output(0);
  data.name = out;
  if (state_.graph_outputs.contains(out)) {
    // A graph output must be written by a node: materialize the constant
    // under another name and copy it with an Identity node.
    for (int64_t d : data.dims) {
      if (d <= 0) return Unsupported("empty tensors are not supported");
    }
    Value v;
    v.name = absl::StrCat(out, "/constant");
    v.kind = Value::Kind::kConstant;
    v.desc = {data.dims, data.type()};
    v.data = std::make_shared<const HostData>(data.ToHostData());
    const ValueId id = state_.AddValue(std::move(v));
    return Emit(OpType::kIdentity, {id}, {});
  }
  state_.consts[out] = std::move(data);
  return absl::OkStatus();
}

}  // namespace recq::onnx_import
