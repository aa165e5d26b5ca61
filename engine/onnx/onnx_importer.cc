// LoadOnnx: onnx.ModelProto -> recq::Graph.
//
// The importer resolves every tensor name first (graph inputs, initializers,
// node outputs), orders the nodes topologically (reporting a missing producer
// or a cycle by name), then converts node by node, inferring each output's
// shape with InferOutputShape, and hands the parts to Graph::Create, which
// validates them again.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/onnx/onnx_tensor.h"
#include "engine/status_macros.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"

namespace recq {
namespace {

using onnx_import::DecodeTensor;
using onnx_import::HostTensorData;

constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 17;

constexpr const char* kSupportedOps[] = {
    "Conv",
    "BatchNormalization",
    "Relu",
    "Clip",
    "LeakyRelu",
    "Sigmoid",
    "HardSigmoid",
    "HardSwish",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "Gemm",
    "MatMul",
    "Flatten",
    "Reshape",
    "Transpose",
    "Concat",
    "Softmax",
    "Identity",
    "Dropout",
    "Constant",
};

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return absl::InvalidArgumentError(absl::StrCat("cannot read '", path, "'"));
  return contents.str();
}

absl::StatusOr<onnx::ModelProto> ParseModel(absl::string_view bytes) {
  if (bytes.empty()) return absl::InvalidArgumentError("the ONNX model is empty (0 bytes)");
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ONNX model is ", bytes.size(), " bytes; at most 2 GiB is supported"));
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a valid ONNX model: the ", bytes.size(),
                     " bytes do not parse as onnx.ModelProto (truncated or corrupt file?)"));
  }
  if (!model.has_graph()) {
    return absl::InvalidArgumentError("not a valid ONNX model: it has no graph");
  }
  return model;
}

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") return id.version();
  }
  return 0;
}

std::string ShapeOf(const onnx::ValueInfoProto& info, bool* dynamic) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) {
    if (dynamic) *dynamic = true;
    return "?";
  }
  std::vector<std::string> dims;
  for (const onnx::TensorShapeProto::Dimension& d : info.type().tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() > 0) {
      dims.push_back(absl::StrCat(d.dim_value()));
    } else {
      if (dynamic) *dynamic = true;
      dims.push_back(d.has_dim_param() && !d.dim_param().empty() ? d.dim_param()
                                                                 : absl::StrCat(d.dim_value()));
    }
  }
  return dims.empty() ? "scalar" : absl::StrJoin(dims, "x");
}

// Per-node conversion context.
class Importer {
 public:
  explicit Importer(const onnx::ModelProto& model) : model_(model), graph_(model.graph()) {}

  absl::StatusOr<Graph> Import();

 private:
  struct NodeRef {
    const onnx::NodeProto* proto;
    std::string name;  // the node's name or "<OpType>_<index>"
  };

  absl::Status Error(absl::StatusCode code, const NodeRef& n, const std::string& what) const {
    return absl::Status(code,
                        absl::StrCat("node '", n.name, "' (", n.proto->op_type(), "): ", what));
  }
  absl::Status Unsupported(const NodeRef& n, const std::string& what) const {
    return Error(absl::StatusCode::kUnimplemented, n, what);
  }
  absl::Status Invalid(const NodeRef& n, const std::string& what) const {
    return Error(absl::StatusCode::kInvalidArgument, n, what);
  }

  absl::Status AddGraphInputs();
  absl::Status CollectInitializers();
  absl::StatusOr<std::vector<int>> TopologicalOrder();
  absl::Status ConvertNode(const NodeRef& n);
  absl::Status ConvertConstantNode(const NodeRef& n);

  // Input `i` of the node as a graph value (materializing a constant), or
  // kNoValue when absent/empty and `optional`.
  absl::StatusOr<ValueId> DataInput(const NodeRef& n, int i, bool optional = false);
  // Input `i` as a constant (nullptr if absent).
  absl::StatusOr<const HostTensorData*> ConstInput(const NodeRef& n, int i);
  absl::Status Emit(const NodeRef& n, OpType op, std::vector<ValueId> inputs, OpAttrs attrs);
  absl::Status CheckOnlyFirstOutputUsed(const NodeRef& n);

  // Attribute helpers.
  const onnx::AttributeProto* Attr(const NodeRef& n, const char* name) const;
  absl::StatusOr<int64_t> IntAttr(const NodeRef& n, const char* name, int64_t def) const;
  absl::StatusOr<float> FloatAttr(const NodeRef& n, const char* name, float def) const;
  absl::StatusOr<std::vector<int64_t>> IntsAttr(const NodeRef& n, const char* name) const;
  absl::StatusOr<std::string> StringAttr(const NodeRef& n, const char* name,
                                         const std::string& def) const;
  absl::Status CheckKnownAttrs(const NodeRef& n, std::initializer_list<const char*> known) const;

  // Window ops.
  struct Window {
    std::array<int64_t, 2> kernel, strides, dilations;
    std::array<int64_t, 4> pads;
  };
  absl::StatusOr<Window> ResolveWindow(const NodeRef& n, const TensorDesc& x,
                                       std::array<int64_t, 2> kernel);

  absl::Status ConvertConv(const NodeRef& n);
  absl::Status ConvertPool(const NodeRef& n, OpType op);

  ValueId AddValue(Value v) {
    values_.push_back(std::move(v));
    ValueId id = static_cast<ValueId>(values_.size() - 1);
    ids_[values_.back().name] = id;
    return id;
  }

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  int64_t opset_ = 0;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  absl::flat_hash_map<std::string, ValueId> ids_;            // names with a recq value
  absl::flat_hash_map<std::string, HostTensorData> consts_;  // initializers, folded Constants
  absl::flat_hash_set<std::string> used_;                    // names any node or output reads
  std::vector<NodeRef> node_refs_;
};

absl::Status Importer::AddGraphInputs() {
  absl::flat_hash_set<std::string> initializer_names;
  for (const onnx::TensorProto& t : graph_.initializer()) initializer_names.insert(t.name());
  for (const onnx::ValueInfoProto& in : graph_.input()) {
    if (initializer_names.contains(in.name())) continue;  // a weight, not a binding
    if (in.name().empty()) return absl::InvalidArgumentError("a graph input has no name");
    if (ids_.contains(in.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input '", in.name(), "' is declared twice"));
    }
    if (!in.type().has_tensor_type()) {
      return absl::UnimplementedError(absl::StrCat(
          "graph input '", in.name(), "' is not a tensor (sequence, map or optional)"));
    }
    const onnx::TypeProto::Tensor& tt = in.type().tensor_type();
    if (tt.elem_type() != onnx::TensorProto::FLOAT) {
      return absl::UnimplementedError(
          absl::StrCat("graph input '", in.name(), "' has element type ",
                       onnx_import::DataTypeName(tt.elem_type()), "; only float32 is supported"));
    }
    if (!tt.has_shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input '", in.name(), "' has no shape; recq needs static shapes"));
    }
    Value v;
    v.name = in.name();
    v.kind = Value::Kind::kInput;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const onnx::TensorShapeProto::Dimension& d = tt.shape().dim(i);
      if (!d.has_dim_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph input '", in.name(), "' dimension ", i, " is dynamic ('",
                         d.dim_param(), "') with no value; recq needs static shapes"));
      }
      if (d.dim_value() <= 0) {
        return absl::UnimplementedError(absl::StrCat("graph input '", in.name(), "' dimension ", i,
                                                     " is ", d.dim_value(),
                                                     "; only positive dimensions are supported"));
      }
      v.desc.shape.push_back(d.dim_value());
    }
    inputs_.push_back(AddValue(std::move(v)));
  }
  return absl::OkStatus();
}

absl::Status Importer::CollectInitializers() {
  for (const onnx::TensorProto& t : graph_.initializer()) {
    if (t.name().empty()) return absl::InvalidArgumentError("an initializer has no name");
    if (ids_.contains(t.name()) || consts_.contains(t.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("initializer '", t.name(), "' is declared twice"));
    }
    absl::StatusOr<HostTensorData> data = DecodeTensor(t);
    if (!data.ok()) {
      return absl::Status(data.status().code(),
                          absl::StrCat("initializer: ", data.status().message()));
    }
    consts_[t.name()] = *std::move(data);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> Importer::TopologicalOrder() {
  const int count = graph_.node_size();
  absl::flat_hash_map<std::string, int> producer;
  for (int i = 0; i < count; ++i) {
    const onnx::NodeProto& node = graph_.node(i);
    node_refs_.push_back(
        {&node, node.name().empty() ? absl::StrCat(node.op_type(), "_", i) : node.name()});
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      if (ids_.contains(out) || consts_.contains(out) || !producer.emplace(out, i).second) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node_refs_[i].name, "' (",
                                                       node.op_type(), ") writes '", out,
                                                       "', which already has a producer"));
      }
    }
  }
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> consumers(count);
  for (int i = 0; i < count; ++i) {
    const onnx::NodeProto& node = graph_.node(i);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      return Unsupported(node_refs_[i], absl::StrCat("op domain '", node.domain(),
                                                     "' is not supported (only the default ONNX "
                                                     "domain)"));
    }
    for (const std::string& in : node.input()) {
      if (in.empty()) continue;
      used_.insert(in);
      auto it = producer.find(in);
      if (it != producer.end()) {
        ++pending[i];
        consumers[it->second].push_back(i);
      } else if (!ids_.contains(in) && !consts_.contains(in)) {
        return Invalid(node_refs_[i],
                       absl::StrCat("input '", in,
                                    "' is not produced by any node, graph input or initializer"));
      }
    }
  }
  for (const onnx::ValueInfoProto& out : graph_.output()) {
    used_.insert(out.name());
    if (!producer.contains(out.name()) && !ids_.contains(out.name()) &&
        !consts_.contains(out.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", out.name(),
                       "' is not produced by any node, graph input or initializer"));
    }
  }
  std::vector<int> order;
  std::vector<int> ready;
  for (int i = count - 1; i >= 0; --i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    std::vector<int> next;
    for (int c : consumers[i]) {
      if (--pending[c] == 0) next.push_back(c);
    }
    std::sort(next.rbegin(), next.rend());
    ready.insert(ready.end(), next.begin(), next.end());
  }
  if (static_cast<int>(order.size()) != count) {
    for (int i = 0; i < count; ++i) {
      if (pending[i] != 0) {
        return Invalid(node_refs_[i], "the graph has a cycle through this node");
      }
    }
  }
  return order;
}

const onnx::AttributeProto* Importer::Attr(const NodeRef& n, const char* name) const {
  for (const onnx::AttributeProto& a : n.proto->attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

absl::StatusOr<int64_t> Importer::IntAttr(const NodeRef& n, const char* name, int64_t def) const {
  const onnx::AttributeProto* a = Attr(n, name);
  if (a == nullptr) return def;
  if (a->type() != onnx::AttributeProto::INT) {
    return Invalid(n, absl::StrCat("attribute '", name, "' must be an int"));
  }
  return a->i();
}

absl::StatusOr<float> Importer::FloatAttr(const NodeRef& n, const char* name, float def) const {
  const onnx::AttributeProto* a = Attr(n, name);
  if (a == nullptr) return def;
  if (a->type() != onnx::AttributeProto::FLOAT) {
    return Invalid(n, absl::StrCat("attribute '", name, "' must be a float"));
  }
  return a->f();
}

absl::StatusOr<std::vector<int64_t>> Importer::IntsAttr(const NodeRef& n, const char* name) const {
  const onnx::AttributeProto* a = Attr(n, name);
  if (a == nullptr) return std::vector<int64_t>{};
  if (a->type() != onnx::AttributeProto::INTS) {
    return Invalid(n, absl::StrCat("attribute '", name, "' must be a list of ints"));
  }
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::StatusOr<std::string> Importer::StringAttr(const NodeRef& n, const char* name,
                                                 const std::string& def) const {
  const onnx::AttributeProto* a = Attr(n, name);
  if (a == nullptr) return def;
  if (a->type() != onnx::AttributeProto::STRING) {
    return Invalid(n, absl::StrCat("attribute '", name, "' must be a string"));
  }
  return a->s();
}

absl::Status Importer::CheckKnownAttrs(const NodeRef& n,
                                       std::initializer_list<const char*> known) const {
  for (const onnx::AttributeProto& a : n.proto->attribute()) {
    bool ok = false;
    for (const char* k : known) ok |= a.name() == k;
    if (!ok) return Unsupported(n, absl::StrCat("attribute '", a.name(), "' is not supported"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ValueId> Importer::DataInput(const NodeRef& n, int i, bool optional) {
  if (i >= n.proto->input_size() || n.proto->input(i).empty()) {
    if (optional) return kNoValue;
    return Invalid(n, absl::StrCat("input ", i, " is required"));
  }
  const std::string& name = n.proto->input(i);
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  auto c = consts_.find(name);
  if (c == consts_.end()) {
    return Invalid(n, absl::StrCat("input '", name, "' has no producer"));
  }
  if (!c->second.is_float()) {
    return Unsupported(
        n, absl::StrCat("input '", name, "' is a ", onnx_import::DataTypeName(c->second.data_type),
                        " tensor; only float32 data is supported"));
  }
  Value v;
  v.name = name;
  v.kind = Value::Kind::kConstant;
  v.desc.shape = c->second.dims;
  v.data = std::make_shared<const std::vector<float>>(c->second.floats);
  return AddValue(std::move(v));
}

absl::StatusOr<const HostTensorData*> Importer::ConstInput(const NodeRef& n, int i) {
  if (i >= n.proto->input_size() || n.proto->input(i).empty()) return nullptr;
  const std::string& name = n.proto->input(i);
  auto c = consts_.find(name);
  if (c == consts_.end()) {
    return Unsupported(n, absl::StrCat("input '", name,
                                       "' must be a constant (an initializer or a Constant "
                                       "node); computed values are not supported there"));
  }
  return &c->second;
}

absl::Status Importer::CheckOnlyFirstOutputUsed(const NodeRef& n) {
  for (int i = 1; i < n.proto->output_size(); ++i) {
    const std::string& out = n.proto->output(i);
    if (!out.empty() && used_.contains(out)) {
      return Unsupported(n, absl::StrCat("output ", i, " ('", out,
                                         "') is used, but only the first output is supported"));
    }
  }
  return absl::OkStatus();
}

absl::Status Importer::Emit(const NodeRef& n, OpType op, std::vector<ValueId> inputs,
                            OpAttrs attrs) {
  if (n.proto->output_size() < 1 || n.proto->output(0).empty()) {
    return Invalid(n, "has no output");
  }
  std::vector<const TensorDesc*> descs;
  for (ValueId id : inputs) descs.push_back(id == kNoValue ? nullptr : &values_[id].desc);
  absl::StatusOr<TensorDesc> desc = InferOutputShape(op, attrs, descs);
  if (!desc.ok()) return Invalid(n, std::string(desc.status().message()));
  for (int64_t d : desc->shape) {
    if (d <= 0) {
      return Unsupported(n, absl::StrCat("output shape ", desc->ToString(),
                                         " has a zero dimension; empty tensors are not supported"));
    }
  }
  Value out;
  out.name = n.proto->output(0);
  out.desc = *std::move(desc);
  ValueId out_id = AddValue(std::move(out));
  Node node;
  node.op = op;
  node.name = n.name;
  node.inputs = std::move(inputs);
  node.outputs = {out_id};
  node.attrs = std::move(attrs);
  nodes_.push_back(std::move(node));
  return absl::OkStatus();
}

absl::StatusOr<Importer::Window> Importer::ResolveWindow(const NodeRef& n, const TensorDesc& x,
                                                         std::array<int64_t, 2> kernel) {
  if (x.shape.size() != 4) {
    return Unsupported(n,
                       absl::StrCat("input is ", x.ToString(), "; only 2-D (NCHW) is supported"));
  }
  Window w;
  w.kernel = kernel;
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> strides, IntsAttr(n, "strides"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, IntsAttr(n, "dilations"));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> pads, IntsAttr(n, "pads"));
  RECQ_ASSIGN_OR_RETURN(std::string auto_pad, StringAttr(n, "auto_pad", "NOTSET"));
  if (strides.empty()) strides = {1, 1};
  if (dilations.empty()) dilations = {1, 1};
  if (strides.size() != 2 || dilations.size() != 2) {
    return Invalid(n, "strides and dilations must have 2 values for a 2-D input");
  }
  for (int i = 0; i < 2; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0) {
      return Invalid(n, "kernel, strides and dilations must be positive");
    }
    w.strides[i] = strides[i];
    w.dilations[i] = dilations[i];
  }
  w.pads = {0, 0, 0, 0};
  if (auto_pad == "NOTSET") {
    if (!pads.empty()) {
      if (pads.size() != 4) return Invalid(n, "pads must have 4 values for a 2-D input");
      for (int i = 0; i < 4; ++i) w.pads[i] = pads[i];
    }
  } else if (auto_pad == "VALID") {
    // No padding.
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t in = x.shape[2 + i];
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t span = (kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + span - in);
      int64_t small = total / 2;
      int64_t big = total - small;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : big;
      w.pads[2 + i] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else {
    return Unsupported(n, absl::StrCat("auto_pad '", auto_pad, "' is not supported"));
  }
  return w;
}

absl::Status Importer::ConvertConv(const NodeRef& n) {
  RECQ_RETURN_IF_ERROR(
      CheckKnownAttrs(n, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}));
  RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
  RECQ_ASSIGN_OR_RETURN(ValueId w, DataInput(n, 1));
  RECQ_ASSIGN_OR_RETURN(ValueId b, DataInput(n, 2, /*optional=*/true));
  const TensorDesc& xd = values_[x].desc;
  const TensorDesc& wd = values_[w].desc;
  if (xd.shape.size() != 4) {
    return Unsupported(n,
                       absl::StrCat("input is ", xd.ToString(), "; only 2-D (NCHW) is supported"));
  }
  if (wd.shape.size() != 4) {
    return Invalid(n, absl::StrCat("weight '", values_[w].name, "' is ", wd.ToString(),
                                   "; a 2-D conv needs [OC, C/group, KH, KW]"));
  }
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_shape, IntsAttr(n, "kernel_shape"));
  if (!kernel_shape.empty() && (kernel_shape.size() != 2 || kernel_shape[0] != wd.shape[2] ||
                                kernel_shape[1] != wd.shape[3])) {
    return Invalid(n, absl::StrCat("kernel_shape [", absl::StrJoin(kernel_shape, ","),
                                   "] does not match weight ", wd.ToString()));
  }
  RECQ_ASSIGN_OR_RETURN(Window win, ResolveWindow(n, xd, {wd.shape[2], wd.shape[3]}));
  RECQ_ASSIGN_OR_RETURN(int64_t group, IntAttr(n, "group", 1));
  Conv2DAttrs attrs;
  attrs.strides = win.strides;
  attrs.dilations = win.dilations;
  attrs.pads = win.pads;
  attrs.groups = group;
  return Emit(n, OpType::kConv2D, {x, w, b}, attrs);
}

absl::Status Importer::ConvertPool(const NodeRef& n, OpType op) {
  const bool max = op == OpType::kMaxPool;
  if (max) {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"auto_pad", "ceil_mode", "dilations", "kernel_shape",
                                             "pads", "storage_order", "strides"}));
    RECQ_ASSIGN_OR_RETURN(int64_t storage_order, IntAttr(n, "storage_order", 0));
    if (storage_order != 0) {
      return Unsupported(n, absl::StrCat("storage_order ", storage_order, " is not supported"));
    }
    if (n.proto->output_size() > 1 && !n.proto->output(1).empty()) {
      return Unsupported(n, "the Indices output is not supported");
    }
  } else {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"auto_pad", "ceil_mode", "count_include_pad",
                                             "dilations", "kernel_shape", "pads", "strides"}));
  }
  RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
  RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, IntsAttr(n, "kernel_shape"));
  const TensorDesc& xd = values_[x].desc;
  if (xd.shape.size() != 4) {
    return Unsupported(n,
                       absl::StrCat("input is ", xd.ToString(), "; only 2-D (NCHW) is supported"));
  }
  if (kernel.size() != 2) return Invalid(n, "kernel_shape must have 2 values for a 2-D input");
  RECQ_ASSIGN_OR_RETURN(int64_t ceil_mode, IntAttr(n, "ceil_mode", 0));
  RECQ_ASSIGN_OR_RETURN(Window win, ResolveWindow(n, xd, {kernel[0], kernel[1]}));
  PoolAttrs attrs;
  attrs.kernel = win.kernel;
  attrs.strides = win.strides;
  attrs.dilations = win.dilations;
  attrs.pads = win.pads;
  attrs.ceil_mode = ceil_mode != 0;
  if (!max) {
    RECQ_ASSIGN_OR_RETURN(int64_t include, IntAttr(n, "count_include_pad", 0));
    attrs.count_include_pad = include != 0;
  }
  return Emit(n, op, {x}, attrs);
}

absl::Status Importer::ConvertConstantNode(const NodeRef& n) {
  if (n.proto->output_size() != 1 || n.proto->output(0).empty()) {
    return Invalid(n, "must have exactly one output");
  }
  if (n.proto->attribute_size() != 1) {
    return Invalid(n, "must have exactly one value attribute");
  }
  const onnx::AttributeProto& a = n.proto->attribute(0);
  HostTensorData data;
  if (a.name() == "value") {
    if (a.type() != onnx::AttributeProto::TENSOR) {
      return Invalid(n, "attribute 'value' must be a tensor");
    }
    absl::StatusOr<HostTensorData> t = DecodeTensor(a.t());
    if (!t.ok()) return Error(t.status().code(), n, std::string(t.status().message()));
    data = *std::move(t);
  } else if (a.name() == "value_float" && a.type() == onnx::AttributeProto::FLOAT) {
    data.data_type = onnx::TensorProto::FLOAT;
    data.floats = {a.f()};
  } else if (a.name() == "value_floats" && a.type() == onnx::AttributeProto::FLOATS) {
    data.data_type = onnx::TensorProto::FLOAT;
    data.floats.assign(a.floats().begin(), a.floats().end());
    data.dims = {static_cast<int64_t>(data.floats.size())};
  } else if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) {
    data.data_type = onnx::TensorProto::INT64;
    data.ints = {a.i()};
  } else if (a.name() == "value_ints" && a.type() == onnx::AttributeProto::INTS) {
    data.data_type = onnx::TensorProto::INT64;
    data.ints.assign(a.ints().begin(), a.ints().end());
    data.dims = {static_cast<int64_t>(data.ints.size())};
  } else {
    return Unsupported(n, absl::StrCat("attribute '", a.name(), "' is not supported"));
  }
  const std::string& out = n.proto->output(0);
  data.name = out;
  bool is_graph_output = false;
  for (const onnx::ValueInfoProto& o : graph_.output()) is_graph_output |= o.name() == out;
  if (is_graph_output) {
    // A graph output must be written by a node: materialize the constant
    // under another name and copy it with an Identity node.
    if (!data.is_float()) {
      return Unsupported(n, absl::StrCat("graph output '", out, "' is a ",
                                         onnx_import::DataTypeName(data.data_type),
                                         " tensor; only float32 is supported"));
    }
    for (int64_t d : data.dims) {
      if (d <= 0) return Unsupported(n, "empty tensors are not supported");
    }
    Value v;
    v.name = absl::StrCat(out, "/constant");
    v.kind = Value::Kind::kConstant;
    v.desc.shape = data.dims;
    v.data = std::make_shared<const std::vector<float>>(data.floats);
    ValueId id = AddValue(std::move(v));
    return Emit(n, OpType::kIdentity, {id}, {});
  }
  consts_[out] = std::move(data);
  return absl::OkStatus();
}

absl::Status Importer::ConvertNode(const NodeRef& n) {
  const std::string& op = n.proto->op_type();
  if (op == "Constant") return ConvertConstantNode(n);
  if (op == "Conv") return ConvertConv(n);
  if (op == "MaxPool") return ConvertPool(n, OpType::kMaxPool);
  if (op == "AveragePool") return ConvertPool(n, OpType::kAveragePool);
  if (op == "BatchNormalization") {
    RECQ_RETURN_IF_ERROR(
        CheckKnownAttrs(n, {"epsilon", "momentum", "spatial", "training_mode", "is_test"}));
    RECQ_ASSIGN_OR_RETURN(int64_t training, IntAttr(n, "training_mode", 0));
    if (training != 0) return Unsupported(n, "training_mode=1 is not supported (inference only)");
    RECQ_ASSIGN_OR_RETURN(int64_t spatial, IntAttr(n, "spatial", 1));
    if (spatial != 1) return Unsupported(n, "spatial=0 is not supported");
    for (int i = 1; i < n.proto->output_size(); ++i) {
      if (!n.proto->output(i).empty()) {
        return Unsupported(n, absl::StrCat("output ", i, " ('", n.proto->output(i),
                                           "', training statistics) is not supported"));
      }
    }
    RECQ_ASSIGN_OR_RETURN(float eps, FloatAttr(n, "epsilon", 1e-5f));
    std::vector<ValueId> in;
    for (int i = 0; i < 5; ++i) {
      RECQ_ASSIGN_OR_RETURN(ValueId id, DataInput(n, i));
      in.push_back(id);
    }
    return Emit(n, OpType::kBatchNorm, std::move(in), BatchNormAttrs{eps});
  }
  if (op == "Relu" || op == "Sigmoid" || op == "HardSwish") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    OpType t = op == "Relu"      ? OpType::kRelu
               : op == "Sigmoid" ? OpType::kSigmoid
                                 : OpType::kHardSwish;
    return Emit(n, t, {x}, ActivationAttrs{});
  }
  if (op == "LeakyRelu") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"alpha"}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    RECQ_ASSIGN_OR_RETURN(float alpha, FloatAttr(n, "alpha", 0.01f));
    return Emit(n, OpType::kLeakyRelu, {x}, ActivationAttrs{alpha, 0.0f});
  }
  if (op == "HardSigmoid") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"alpha", "beta"}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    RECQ_ASSIGN_OR_RETURN(float alpha, FloatAttr(n, "alpha", 0.2f));
    RECQ_ASSIGN_OR_RETURN(float beta, FloatAttr(n, "beta", 0.5f));
    return Emit(n, OpType::kHardSigmoid, {x}, ActivationAttrs{alpha, beta});
  }
  if (op == "Clip") {
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    float lo = -std::numeric_limits<float>::infinity();
    float hi = std::numeric_limits<float>::infinity();
    if (opset_ < 11) {
      RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"min", "max"}));
      RECQ_ASSIGN_OR_RETURN(lo, FloatAttr(n, "min", std::numeric_limits<float>::lowest()));
      RECQ_ASSIGN_OR_RETURN(hi, FloatAttr(n, "max", std::numeric_limits<float>::max()));
    } else {
      RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {}));
      for (int i = 1; i < 3; ++i) {
        RECQ_ASSIGN_OR_RETURN(const HostTensorData* c, ConstInput(n, i));
        if (c == nullptr) continue;
        if (!c->is_float() || c->floats.size() != 1) {
          return Unsupported(n, absl::StrCat(i == 1 ? "min" : "max", " '", n.proto->input(i),
                                             "' must be a float32 scalar"));
        }
        (i == 1 ? lo : hi) = c->floats[0];
      }
    }
    return Emit(n, OpType::kClip, {x}, ActivationAttrs{lo, hi});
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {}));
    RECQ_ASSIGN_OR_RETURN(ValueId a, DataInput(n, 0));
    RECQ_ASSIGN_OR_RETURN(ValueId b, DataInput(n, 1));
    OpType t = op == "Add"   ? OpType::kAdd
               : op == "Sub" ? OpType::kSub
               : op == "Mul" ? OpType::kMul
                             : OpType::kDiv;
    return Emit(n, t, {a, b}, {});
  }
  if (op == "GlobalAveragePool") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    return Emit(n, OpType::kGlobalAveragePool, {x}, {});
  }
  if (op == "Gemm") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"alpha", "beta", "transA", "transB"}));
    RECQ_ASSIGN_OR_RETURN(ValueId a, DataInput(n, 0));
    RECQ_ASSIGN_OR_RETURN(ValueId b, DataInput(n, 1));
    RECQ_ASSIGN_OR_RETURN(ValueId c, DataInput(n, 2, /*optional=*/true));
    GemmAttrs attrs;
    RECQ_ASSIGN_OR_RETURN(attrs.alpha, FloatAttr(n, "alpha", 1.0f));
    RECQ_ASSIGN_OR_RETURN(attrs.beta, FloatAttr(n, "beta", 1.0f));
    RECQ_ASSIGN_OR_RETURN(int64_t ta, IntAttr(n, "transA", 0));
    RECQ_ASSIGN_OR_RETURN(int64_t tb, IntAttr(n, "transB", 0));
    attrs.trans_a = ta != 0;
    attrs.trans_b = tb != 0;
    return Emit(n, OpType::kGemm, {a, b, c}, attrs);
  }
  if (op == "MatMul") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {}));
    RECQ_ASSIGN_OR_RETURN(ValueId a, DataInput(n, 0));
    RECQ_ASSIGN_OR_RETURN(ValueId b, DataInput(n, 1));
    return Emit(n, OpType::kMatMul, {a, b}, {});
  }
  if (op == "Flatten") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"axis"}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    RECQ_ASSIGN_OR_RETURN(int64_t axis, IntAttr(n, "axis", 1));
    return Emit(n, OpType::kFlatten, {x}, FlattenAttrs{axis});
  }
  if (op == "Reshape") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"allowzero"}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    RECQ_ASSIGN_OR_RETURN(const HostTensorData* shape, ConstInput(n, 1));
    if (shape == nullptr) return Invalid(n, "input 1 (shape) is required");
    if (!shape->is_int64() || shape->dims.size() != 1) {
      return Invalid(n, absl::StrCat("shape '", n.proto->input(1), "' must be a 1-D int64 tensor"));
    }
    RECQ_ASSIGN_OR_RETURN(int64_t allowzero, IntAttr(n, "allowzero", 0));
    return Emit(n, OpType::kReshape, {x}, ReshapeAttrs{shape->ints, allowzero != 0});
  }
  if (op == "Transpose") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"perm"}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    RECQ_ASSIGN_OR_RETURN(std::vector<int64_t> perm, IntsAttr(n, "perm"));
    return Emit(n, OpType::kTranspose, {x}, TransposeAttrs{std::move(perm)});
  }
  if (op == "Concat") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"axis"}));
    if (Attr(n, "axis") == nullptr) return Invalid(n, "attribute 'axis' is required");
    RECQ_ASSIGN_OR_RETURN(int64_t axis, IntAttr(n, "axis", 0));
    std::vector<ValueId> in;
    for (int i = 0; i < n.proto->input_size(); ++i) {
      RECQ_ASSIGN_OR_RETURN(ValueId id, DataInput(n, i));
      in.push_back(id);
    }
    return Emit(n, OpType::kConcat, std::move(in), ConcatAttrs{axis});
  }
  if (op == "Softmax") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"axis"}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    const bool legacy = opset_ < 13;
    RECQ_ASSIGN_OR_RETURN(int64_t axis, IntAttr(n, "axis", legacy ? 1 : -1));
    return Emit(n, OpType::kSoftmax, {x}, SoftmaxAttrs{axis, legacy});
  }
  if (op == "Identity") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {}));
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    return Emit(n, OpType::kIdentity, {x}, {});
  }
  if (op == "Dropout") {
    RECQ_RETURN_IF_ERROR(CheckKnownAttrs(n, {"ratio", "seed", "is_test"}));
    RECQ_RETURN_IF_ERROR(CheckOnlyFirstOutputUsed(n));
    if (n.proto->input_size() > 2 && !n.proto->input(2).empty()) {
      RECQ_ASSIGN_OR_RETURN(const HostTensorData* training, ConstInput(n, 2));
      bool on = training->size() != 1 ||
                (training->is_float() ? training->floats[0] != 0 : training->ints[0] != 0);
      if (on) return Unsupported(n, "training_mode must be a constant false");
    }
    RECQ_ASSIGN_OR_RETURN(ValueId x, DataInput(n, 0));
    return Emit(n, OpType::kIdentity, {x}, {});
  }
  return Unsupported(n, absl::StrCat("op type '", op, "' is not supported"));
}

absl::StatusOr<Graph> Importer::Import() {
  opset_ = DefaultOpset(model_);
  if (opset_ < kMinOpset || opset_ > kMaxOpset) {
    return absl::UnimplementedError(absl::StrCat("the model imports opset ", opset_,
                                                 " of the default domain; recq supports ",
                                                 kMinOpset, " to ", kMaxOpset));
  }
  RECQ_RETURN_IF_ERROR(AddGraphInputs());
  RECQ_RETURN_IF_ERROR(CollectInitializers());
  RECQ_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder());
  for (int i : order) RECQ_RETURN_IF_ERROR(ConvertNode(node_refs_[i]));
  std::vector<ValueId> outputs;
  for (const onnx::ValueInfoProto& out : graph_.output()) {
    auto it = ids_.find(out.name());
    if (it == ids_.end()) {
      return absl::UnimplementedError(absl::StrCat(
          "graph output '", out.name(), "' is an initializer; constant outputs are not supported"));
    }
    if (values_[it->second].kind != Value::Kind::kIntermediate) {
      return absl::UnimplementedError(
          absl::StrCat("graph output '", out.name(),
                       "' is not computed by a node (it is a graph input or "
                       "constant); such outputs are not supported"));
    }
    if (out.type().has_tensor_type() && out.type().tensor_type().elem_type() != 0 &&
        out.type().tensor_type().elem_type() != onnx::TensorProto::FLOAT) {
      return absl::UnimplementedError(
          absl::StrCat("graph output '", out.name(), "' has element type ",
                       onnx_import::DataTypeName(out.type().tensor_type().elem_type()),
                       "; only float32 is supported"));
    }
    if (std::find(outputs.begin(), outputs.end(), it->second) != outputs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", out.name(), "' is listed twice"));
    }
    outputs.push_back(it->second);
  }
  return Graph::Create(std::move(values_), std::move(nodes_), std::move(inputs_),
                       std::move(outputs));
}

}  // namespace

bool IsSupportedOnnxOp(absl::string_view op_type) {
  for (const char* op : kSupportedOps) {
    if (op_type == op) return true;
  }
  return false;
}

absl::StatusOr<Graph> LoadOnnxFromBytes(absl::string_view bytes) {
  RECQ_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModel(bytes));
  return Importer(model).Import();
}

absl::StatusOr<Graph> LoadOnnx(const std::string& path) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(), absl::StrCat(path, ": ", graph.status().message()));
  }
  return graph;
}

absl::StatusOr<OnnxModelSummary> SummarizeOnnx(const std::string& path) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  RECQ_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModel(bytes));
  const onnx::GraphProto& g = model.graph();
  OnnxModelSummary s;
  s.ir_version = model.ir_version();
  s.opset = DefaultOpset(model);
  s.producer = absl::StrCat(model.producer_name(), " ", model.producer_version());
  absl::flat_hash_set<std::string> inits;
  for (const onnx::TensorProto& t : g.initializer()) inits.insert(t.name());
  s.initializers = g.initializer_size();
  auto describe = [](const onnx::ValueInfoProto& v) {
    OnnxModelSummary::Tensor t;
    t.name = v.name();
    t.shape = ShapeOf(v, nullptr);
    t.dtype = v.type().has_tensor_type()
                  ? onnx_import::DataTypeName(v.type().tensor_type().elem_type())
                  : "non-tensor";
    return t;
  };
  for (const onnx::ValueInfoProto& v : g.input()) {
    if (!inits.contains(v.name())) s.inputs.push_back(describe(v));
  }
  for (const onnx::ValueInfoProto& v : g.output()) s.outputs.push_back(describe(v));
  std::set<std::string> unsupported;
  for (const onnx::NodeProto& n : g.node()) {
    std::string op = n.domain().empty() || n.domain() == "ai.onnx"
                         ? n.op_type()
                         : absl::StrCat(n.domain(), ".", n.op_type());
    ++s.op_counts[op];
    if (!IsSupportedOnnxOp(op)) unsupported.insert(op);
  }
  s.unsupported_ops.assign(unsupported.begin(), unsupported.end());
  return s;
}

}  // namespace recq
