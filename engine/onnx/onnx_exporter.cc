// SaveOnnxToBytes: recq::Graph -> onnx.ModelProto, one node at a time
// through each op's export function (OpDef::export_onnx).
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/onnx/onnx_tensor.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq {
namespace {

void SetData(onnx::TensorProto* t, const std::string& name, const std::vector<int64_t>& dims,
             const HostData& data) {
  t->set_name(name);
  t->set_data_type(onnx_import::ToOnnxType(data.dtype()));
  for (int64_t d : dims) t->add_dims(d);
  std::string raw(data.byte_size(), '\0');
  if (!raw.empty()) std::memcpy(raw.data(), data.bytes(), raw.size());  // little-endian hosts
  t->set_raw_data(std::move(raw));
}

void SetValueInfo(onnx::ValueInfoProto* info, const Value& v) {
  info->set_name(v.name);
  onnx::TypeProto::Tensor* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx_import::ToOnnxType(v.desc.dtype));
  onnx::TensorShapeProto* shape = tt->mutable_shape();
  for (int64_t d : v.desc.shape) shape->add_dim()->set_dim_value(d);
}

class Writer final : public OnnxNodeWriter {
 public:
  Writer(onnx::GraphProto* graph, onnx::NodeProto* node) : graph_(graph), node_(node) {}

  void SetOpType(const std::string& op_type) override { node_->set_op_type(op_type); }
  void SetInt(const std::string& name, int64_t value) override {
    Attr(name, onnx::AttributeProto::INT)->set_i(value);
  }
  void SetFloat(const std::string& name, float value) override {
    Attr(name, onnx::AttributeProto::FLOAT)->set_f(value);
  }
  void SetInts(const std::string& name, std::vector<int64_t> values) override {
    onnx::AttributeProto* a = Attr(name, onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  void AddConstantInput(const std::string& name, std::vector<int64_t> dims,
                        std::vector<float> data) override {
    SetData(graph_->add_initializer(), name, dims, HostData(std::move(data)));
    node_->add_input(name);
  }
  void DropTrailingEmptyInputs() override {
    while (node_->input_size() > 0 && node_->input(node_->input_size() - 1).empty()) {
      node_->mutable_input()->RemoveLast();
    }
  }

 private:
  onnx::AttributeProto* Attr(const std::string& name, onnx::AttributeProto::AttributeType type) {
    onnx::AttributeProto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  }
  onnx::GraphProto* graph_;
  onnx::NodeProto* node_;
};

}  // namespace

absl::StatusOr<std::string> SaveOnnxToBytes(const Graph& g, const std::string& name) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("recq");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(name);
  for (ValueId id : g.inputs()) SetValueInfo(graph->add_input(), g.value(id));
  for (ValueId id : g.outputs()) SetValueInfo(graph->add_output(), g.value(id));
  for (const Value& v : g.values()) {
    if (v.kind == Value::Kind::kConstant) {
      SetData(graph->add_initializer(), v.name, v.desc.shape, *v.data);
    }
  }
  for (const Node& node : g.nodes()) {
    if (node.fused.kind != ActivationKind::kNone) {
      return absl::UnimplementedError(absl::StrCat("SaveOnnxToBytes: node '", node.name,
                                                   "' has a fused activation; export the graph "
                                                   "before Engine::Compile's passes"));
    }
    const OpDef* def = FindOp(node.op);
    if (def == nullptr || !def->export_onnx) {
      return absl::UnimplementedError(absl::StrCat("SaveOnnxToBytes: node '", node.name, "' (",
                                                   node.op.name(), ") has no ONNX export"));
    }
    onnx::NodeProto* n = graph->add_node();
    n->set_name(node.name);
    for (ValueId id : node.inputs) n->add_input(id == kNoValue ? "" : g.value(id).name);
    n->add_output(g.value(node.outputs[0]).name);
    Writer writer(graph, n);
    RECQ_RETURN_IF_ERROR(def->export_onnx(node, g, writer));
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InternalError("SaveOnnxToBytes: the model does not serialize");
  }
  return bytes;
}

}  // namespace recq
