// LoadOnnx: onnx.ModelProto -> recq::Graph.
//
// The importer resolves every tensor name first (graph inputs, initializers,
// node outputs), orders the nodes topologically (reporting a missing producer
// or a cycle by name), then converts node by node through the op registry:
// each node's (domain, op type, opset) finds the OnnxMapping of the op file
// that imports it (engine/ops/), which reads the node through a NodeContext
// (engine/onnx/onnx_node.h). Graph::Create validates the result again.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <filesystem>
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
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/onnx/onnx_node.h"
#include "engine/onnx/onnx_tensor.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq {
namespace {

using onnx_import::DecodeTensor;
using onnx_import::HostTensorData;

constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 21;

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

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// OpsetOf returns the opset the model imports for `domain`, or 0.
int64_t OpsetOf(const onnx::ModelProto& model, const std::string& domain) {
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (IsDefaultDomain(id.domain()) ? IsDefaultDomain(domain) : id.domain() == domain) {
      return id.version();
    }
  }
  return 0;
}

int64_t DefaultOpset(const onnx::ModelProto& model) { return OpsetOf(model, ""); }

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

// The model-level steps; nodes are converted by their ops' import functions.
class Importer {
 public:
  Importer(const onnx::ModelProto& model, const OnnxOptions& options,
           onnx_import::SharedInitializers* shared = nullptr)
      : model_(model), graph_(model.graph()), options_(options) {
    state_.external_dir = options.external_data_dir;
    state_.fold_budget = options.max_folded_elements;
    state_.shared = shared;
  }

  absl::StatusOr<Graph> Import();

 private:
  struct NodeRef {
    const onnx::NodeProto* proto;
    std::string name;  // the node's name or "<OpType>_<index>"
  };

  absl::Status Unsupported(const NodeRef& n, const std::string& what) const {
    return absl::UnimplementedError(
        absl::StrCat("node '", n.name, "' (", n.proto->op_type(), "): ", what));
  }
  absl::Status Invalid(const NodeRef& n, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", n.name, "' (", n.proto->op_type(), "): ", what));
  }

  absl::Status AddGraphInputs();
  absl::Status CollectInitializers();
  absl::StatusOr<std::vector<int>> TopologicalOrder();
  absl::Status ConvertNode(const NodeRef& n);

  absl::StatusOr<std::vector<int64_t>> InputShape(const onnx::ValueInfoProto& in);

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  const OnnxOptions& options_;
  onnx_import::ImportState state_;
  std::vector<NodeRef> node_refs_;
};

absl::Status Importer::AddGraphInputs() {
  absl::flat_hash_set<std::string> initializer_names;
  for (const onnx::TensorProto& t : graph_.initializer()) initializer_names.insert(t.name());
  for (const onnx::ValueInfoProto& in : graph_.input()) {
    if (initializer_names.contains(in.name())) continue;  // a weight, not a binding
    if (in.name().empty()) return absl::InvalidArgumentError("a graph input has no name");
    if (state_.ids.contains(in.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input '", in.name(), "' is declared twice"));
    }
    if (!in.type().has_tensor_type()) {
      return absl::UnimplementedError(absl::StrCat(
          "graph input '", in.name(), "' is not a tensor (sequence, map or optional)"));
    }
    Value v;
    v.name = in.name();
    v.kind = Value::Kind::kInput;
    RECQ_ASSIGN_OR_RETURN(v.desc.dtype,
                          onnx_import::FromOnnxType(in.type().tensor_type().elem_type(),
                                                    absl::StrCat("graph input '", in.name(), "'")));
    RECQ_ASSIGN_OR_RETURN(v.desc.shape, InputShape(in));
    state_.inputs.push_back(state_.AddValue(std::move(v)));
  }
  return absl::OkStatus();
}

// InputShape is the static shape of graph input `in`: its declared
// dimensions, with symbolic ones (and every one, where OnnxOptions gives the
// input's shape) taken from the options.
absl::StatusOr<std::vector<int64_t>> Importer::InputShape(const onnx::ValueInfoProto& in) {
  const onnx::TypeProto::Tensor& tt = in.type().tensor_type();
  const std::string label = absl::StrCat("graph input '", in.name(), "'");
  auto given = options_.input_shapes.find(in.name());
  if (!tt.has_shape() && given == options_.input_shapes.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, " has no shape; give one with OnnxOptions::input_shapes (recq run --shapes)"));
  }
  std::vector<int64_t> shape;
  const int rank = tt.has_shape() ? tt.shape().dim_size() : static_cast<int>(given->second.size());
  if (given != options_.input_shapes.end() && given->second.size() != static_cast<size_t>(rank)) {
    return absl::InvalidArgumentError(absl::StrCat(label, " has rank ", rank, " (",
                                                   ShapeOf(in, nullptr), "), the shape given is ",
                                                   ShapeToString(given->second)));
  }
  int64_t elements = 1;
  for (int i = 0; i < rank; ++i) {
    const onnx::TensorShapeProto::Dimension* d = tt.has_shape() ? &tt.shape().dim(i) : nullptr;
    const bool fixed = d != nullptr && d->has_dim_value();
    int64_t value = fixed ? d->dim_value() : 0;
    if (given != options_.input_shapes.end()) {
      if (fixed && value != given->second[i]) {
        return absl::InvalidArgumentError(absl::StrCat(
            label, " dimension ", i, " is fixed at ", value, " in the model, the shape given is ",
            ShapeToString(given->second), "; only symbolic dimensions can be chosen at load"));
      }
      value = given->second[i];
    } else if (!fixed) {
      const std::string param = d != nullptr ? d->dim_param() : "";
      auto named = options_.dim_values.find(param);
      if (param.empty() || named == options_.dim_values.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            label, " dimension ", i, " is dynamic ('", param, "', shape ", ShapeOf(in, nullptr),
            "); give its value with OnnxOptions::input_shapes or dim_values (recq run "
            "--shapes=",
            in.name(), ":...)"));
      }
      value = named->second;
    }
    if (value <= 0) {
      return absl::UnimplementedError(absl::StrCat(label, " dimension ", i, " is ", value,
                                                   "; only positive dimensions are supported"));
    }
    if (value > (int64_t{1} << 40) / elements) {
      return absl::InvalidArgumentError(absl::StrCat(label, " has shape ", ShapeToString(shape),
                                                     "x", value,
                                                     "...; at most 2^40 elements are supported"));
    }
    elements *= value;
    shape.push_back(value);
  }
  return shape;
}

absl::Status Importer::CollectInitializers() {
  for (const onnx::TensorProto& t : graph_.initializer()) {
    if (t.name().empty()) return absl::InvalidArgumentError("an initializer has no name");
    if (state_.ids.contains(t.name()) || state_.HasConstant(t.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("initializer '", t.name(), "' is declared twice"));
    }
    state_.initializer_names.insert(t.name());
    if (t.data_type() == onnx::TensorProto::FLOAT && t.has_raw_data() &&
        t.data_location() != onnx::TensorProto::EXTERNAL) {
      absl::Status checked = onnx_import::CheckRawTensor(t);
      if (!checked.ok()) return onnx_import::InitializerError(checked);
      state_.raw_initializers[t.name()] = &t;
      continue;
    }
    absl::StatusOr<HostTensorData> data = DecodeTensor(t, options_.external_data_dir);
    if (!data.ok()) return onnx_import::InitializerError(data.status());
    state_.consts[t.name()] = onnx_import::ToConstant(*std::move(data));
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
    // A Constant node's value is its attribute: the same in every import.
    if (IsDefaultDomain(node.domain()) && node.op_type() == "Constant" && node.output_size() == 1) {
      state_.initializer_names.insert(node.output(0));
    }
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      if (state_.ids.contains(out) || state_.HasConstant(out) || !producer.emplace(out, i).second) {
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
    if (!IsDefaultDomain(node.domain()) && OpsetOf(model_, node.domain()) == 0) {
      return Invalid(node_refs_[i], absl::StrCat("op domain '", node.domain(),
                                                 "' is not in the model's opset_import"));
    }
    for (const std::string& in : node.input()) {
      if (in.empty()) continue;
      state_.used.insert(in);
      auto it = producer.find(in);
      if (it != producer.end()) {
        ++pending[i];
        consumers[it->second].push_back(i);
      } else if (!state_.ids.contains(in) && !state_.HasConstant(in)) {
        return Invalid(node_refs_[i],
                       absl::StrCat("input '", in,
                                    "' is not produced by any node, graph input or initializer"));
      }
    }
  }
  for (const onnx::ValueInfoProto& out : graph_.output()) {
    state_.used.insert(out.name());
    if (!producer.contains(out.name()) && !state_.ids.contains(out.name()) &&
        !state_.HasConstant(out.name())) {
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

absl::Status Importer::ConvertNode(const NodeRef& n) {
  const onnx::NodeProto& node = *n.proto;
  const int64_t opset = OpsetOf(model_, node.domain());
  const OnnxMapping* mapping = FindOnnxMapping(node.domain(), node.op_type(), opset);
  if (mapping == nullptr) {
    const std::string domain = IsDefaultDomain(node.domain()) ? "" : node.domain() + ":";
    const std::string opsets = OnnxOpsetsOf(node.domain(), node.op_type());
    if (!opsets.empty()) {
      return Unsupported(
          n, absl::StrCat("op type '", domain, node.op_type(), "' is supported at opsets ", opsets,
                          ", the model imports opset ", opset));
    }
    if (!IsDefaultDomain(node.domain())) {
      return Unsupported(n, absl::StrCat("op domain '", node.domain(), "' has no op '",
                                         node.op_type(), "' (custom ops: recq/op_registry.h)"));
    }
    return Unsupported(n, absl::StrCat("op type '", node.op_type(), "' is not supported"));
  }
  onnx_import::NodeContext ctx(state_, node, n.name, opset);
  return mapping->import(ctx);
}

absl::StatusOr<Graph> Importer::Import() {
  const int64_t opset = DefaultOpset(model_);
  if (opset < kMinOpset || opset > kMaxOpset) {
    return absl::UnimplementedError(absl::StrCat("the model imports opset ", opset,
                                                 " of the default domain; recq supports ",
                                                 kMinOpset, " to ", kMaxOpset));
  }
  for (const onnx::ValueInfoProto& out : graph_.output()) state_.graph_outputs.insert(out.name());
  for (const auto* infos : {&graph_.output(), &graph_.value_info()}) {
    for (const onnx::ValueInfoProto& info : *infos) {
      std::optional<std::vector<int64_t>> dims = onnx_import::StaticShapeOf(info);
      if (dims.has_value()) state_.declared_shapes.emplace(info.name(), *std::move(dims));
    }
  }
  RECQ_RETURN_IF_ERROR(AddGraphInputs());
  RECQ_RETURN_IF_ERROR(CollectInitializers());
  RECQ_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalOrder());
  for (int i : order) RECQ_RETURN_IF_ERROR(ConvertNode(node_refs_[i]));
  std::vector<ValueId> outputs;
  for (const onnx::ValueInfoProto& out : graph_.output()) {
    auto it = state_.ids.find(out.name());
    if (it == state_.ids.end()) {
      return absl::UnimplementedError(absl::StrCat(
          "graph output '", out.name(), "' is an initializer; constant outputs are not supported"));
    }
    if (state_.values[it->second].kind != Value::Kind::kIntermediate) {
      return absl::UnimplementedError(
          absl::StrCat("graph output '", out.name(),
                       "' is not computed by a node (it is a graph input or "
                       "constant); such outputs are not supported"));
    }
    if (out.type().has_tensor_type() && out.type().tensor_type().elem_type() != 0) {
      const std::string label = absl::StrCat("graph output '", out.name(), "'");
      RECQ_ASSIGN_OR_RETURN(DataType declared,
                            onnx_import::FromOnnxType(out.type().tensor_type().elem_type(), label));
      const TensorDesc& computed = state_.values[it->second].desc;
      if (declared != computed.dtype) {
        return absl::InvalidArgumentError(absl::StrCat(label, " is declared ",
                                                       DataTypeName(declared), ", its node makes ",
                                                       computed.ToString()));
      }
    }
    if (std::find(outputs.begin(), outputs.end(), it->second) != outputs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", out.name(), "' is listed twice"));
    }
    outputs.push_back(it->second);
  }
  return Graph::Create(std::move(state_.values), std::move(state_.nodes), std::move(state_.inputs),
                       std::move(outputs));
}

}  // namespace

bool IsSupportedOnnxOp(absl::string_view op_type) {
  for (const OnnxMapping* m : RegisteredOnnxMappings()) {
    if (m->domain.empty() && m->op_type == op_type) return true;
  }
  return false;
}

namespace {

// CheckInputName fails unless the model has a graph input `name`.
absl::Status CheckInputName(const onnx::ModelProto& model, const std::string& name) {
  for (const onnx::ValueInfoProto& in : model.graph().input()) {
    if (in.name() == name) return absl::OkStatus();
  }
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& in : model.graph().input()) names.push_back(in.name());
  return absl::InvalidArgumentError(absl::StrCat("a shape is given for input '", name,
                                                 "', the model's inputs are ",
                                                 absl::StrJoin(names, ", ")));
}

// ImportModel is LoadOnnxFromBytes after the parse: fixed profiles become
// input shapes, a range is an error (one Graph has one shape).
absl::StatusOr<Graph> ImportModel(const onnx::ModelProto& model, const OnnxOptions& options,
                                  onnx_import::SharedInitializers* shared) {
  for (const auto& [name, shape] : options.input_shapes) {
    RECQ_RETURN_IF_ERROR(CheckInputName(model, name));
  }
  OnnxOptions resolved = options;
  for (const auto& [name, profile] : options.profiles) {
    RECQ_RETURN_IF_ERROR(CheckInputName(model, name));
    std::vector<int64_t> shape;
    for (const DimProfile& d : profile) {
      if (!d.fixed()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", name, "' has the range profile ", InputProfileToString(profile),
                         "; one graph has one shape: serve ranges with a ShapedEngine "
                         "(recq/shaped_engine.h) or give fixed sizes"));
      }
      shape.push_back(d.min);
    }
    resolved.input_shapes.try_emplace(name, std::move(shape));
  }
  RECQ_ASSIGN_OR_RETURN(Graph graph, Importer(model, resolved, shared).Import());
  RECQ_RETURN_IF_ERROR(ApplyPrePostProcessing(graph, options.prepost));
  return graph;
}

}  // namespace

absl::StatusOr<Graph> LoadOnnxFromBytes(absl::string_view bytes, const OnnxOptions& options) {
  RECQ_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModel(bytes));
  return ImportModel(model, options, nullptr);
}

struct OnnxModel::State {
  onnx::ModelProto model;
  std::string path;
  std::string external_data_dir;
  std::vector<OnnxModel::Input> inputs;
  mutable onnx_import::SharedInitializers shared;
};

absl::StatusOr<OnnxModel> OnnxModel::FromBytes(absl::string_view bytes,
                                               const std::string& external_data_dir) {
  auto state = std::make_shared<State>();
  RECQ_ASSIGN_OR_RETURN(state->model, ParseModel(bytes));
  state->external_data_dir = external_data_dir;
  absl::flat_hash_set<std::string> inits;
  for (const onnx::TensorProto& t : state->model.graph().initializer()) inits.insert(t.name());
  for (const onnx::ValueInfoProto& in : state->model.graph().input()) {
    if (inits.contains(in.name())) continue;
    Input input{in.name(), {}, {}};
    if (in.type().has_tensor_type()) {
      absl::StatusOr<DataType> dtype =
          onnx_import::FromOnnxType(in.type().tensor_type().elem_type(), in.name());
      if (dtype.ok()) input.dtype = *dtype;
    }
    if (in.type().has_tensor_type() && in.type().tensor_type().has_shape()) {
      for (const auto& d : in.type().tensor_type().shape().dim()) {
        input.dims.push_back(d.has_dim_value() ? d.dim_value() : 0);
        input.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
    state->inputs.push_back(std::move(input));
  }
  return OnnxModel(std::move(state));
}

absl::StatusOr<OnnxModel> OnnxModel::Read(const std::string& path,
                                          const std::string& external_data_dir) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  std::string dir = external_data_dir;
  if (dir.empty()) {
    dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
  }
  absl::StatusOr<OnnxModel> model = FromBytes(bytes, dir);
  if (!model.ok()) {
    return absl::Status(model.status().code(), absl::StrCat(path, ": ", model.status().message()));
  }
  std::const_pointer_cast<State>(model->state_)->path = path;
  return model;
}

absl::StatusOr<Graph> OnnxModel::Import(const OnnxOptions& options) const {
  OnnxOptions with_dir = options;
  with_dir.external_data_dir = state_->external_data_dir;
  absl::StatusOr<Graph> graph = ImportModel(state_->model, with_dir, &state_->shared);
  if (!graph.ok() && !state_->path.empty()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(state_->path, ": ", graph.status().message()));
  }
  return graph;
}

const std::vector<OnnxModel::Input>& OnnxModel::inputs() const { return state_->inputs; }
const std::string& OnnxModel::path() const { return state_->path; }
std::string OnnxModel::SerializeToBytes() const { return state_->model.SerializeAsString(); }

absl::StatusOr<Graph> LoadOnnx(const std::string& path, const OnnxOptions& options) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  OnnxOptions with_dir = options;
  if (with_dir.external_data_dir.empty()) {
    with_dir.external_data_dir = std::filesystem::path(path).parent_path().string();
    if (with_dir.external_data_dir.empty()) with_dir.external_data_dir = ".";
  }
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes, with_dir);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(), absl::StrCat(path, ": ", graph.status().message()));
  }
  return graph;
}

absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseShapes(absl::string_view text) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    const size_t colon = part.rfind(':');
    const auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("bad shape '", part, "': ", why,
                                                     "; expected NAME:DxDx... such as "
                                                     "input:4x3x224x224"));
    };
    if (colon == absl::string_view::npos || colon == 0) return bad("no input name");
    std::vector<int64_t> dims;
    for (absl::string_view d : absl::StrSplit(part.substr(colon + 1), 'x')) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(d, &v) || v <= 0)
        return bad(absl::StrCat("'", d, "' is not a positive dimension"));
      dims.push_back(v);
    }
    if (!shapes.emplace(std::string(part.substr(0, colon)), std::move(dims)).second) {
      return bad("the input is given twice");
    }
  }
  return shapes;
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
