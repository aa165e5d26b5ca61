#include "tools/models/mobilenet_onnx.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"

namespace recq::models {
namespace {

void SetFloatData(onnx::TensorProto* t, const std::string& name, const std::vector<int64_t>& dims,
                  const std::vector<float>& data) {
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  std::string raw(data.size() * sizeof(float), '\0');
  if (!data.empty()) std::memcpy(raw.data(), data.data(), raw.size());  // little-endian hosts
  t->set_raw_data(std::move(raw));
}

void SetValueInfo(onnx::ValueInfoProto* info, const Value& v) {
  info->set_name(v.name);
  onnx::TypeProto::Tensor* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto* shape = tt->mutable_shape();
  for (int64_t d : v.desc.shape) shape->add_dim()->set_dim_value(d);
}

onnx::AttributeProto* AddAttr(onnx::NodeProto* n, const char* name,
                              onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

void AddInts(onnx::NodeProto* n, const char* name, std::initializer_list<int64_t> values) {
  onnx::AttributeProto* a = AddAttr(n, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

}  // namespace

absl::StatusOr<std::string> GraphToOnnxBytes(const Graph& g, const std::string& name) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("recq");
  model.set_producer_version("mobilenet_onnx");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(name);
  for (ValueId id : g.inputs()) SetValueInfo(graph->add_input(), g.value(id));
  for (ValueId id : g.outputs()) SetValueInfo(graph->add_output(), g.value(id));
  for (const Value& v : g.values()) {
    if (v.kind == Value::Kind::kConstant) {
      SetFloatData(graph->add_initializer(), v.name, v.desc.shape, *v.data);
    }
  }
  for (const Node& node : g.nodes()) {
    onnx::NodeProto* n = graph->add_node();
    n->set_name(node.name);
    for (ValueId id : node.inputs) n->add_input(id == kNoValue ? "" : g.value(id).name);
    n->add_output(g.value(node.outputs[0]).name);
    if (node.fused.kind != ActivationKind::kNone) {
      return absl::InternalError(absl::StrCat("node '", node.name, "' has a fused activation"));
    }
    if (node.op == OpType::kConv2D) {
      const auto& a = *node.attrs.get_if<Conv2DAttrs>();
      n->set_op_type("Conv");
      while (n->input_size() > 2 && n->input(n->input_size() - 1).empty()) {
        n->mutable_input()->RemoveLast();
      }
      const std::vector<int64_t>& w = g.value(node.inputs[1]).desc.shape;
      AddInts(n, "kernel_shape", {w[2], w[3]});
      AddInts(n, "strides", {a.strides[0], a.strides[1]});
      AddInts(n, "dilations", {a.dilations[0], a.dilations[1]});
      AddInts(n, "pads", {a.pads[0], a.pads[1], a.pads[2], a.pads[3]});
      AddAttr(n, "group", onnx::AttributeProto::INT)->set_i(a.groups);
    } else if (node.op == OpType::kBatchNorm) {
      n->set_op_type("BatchNormalization");
      AddAttr(n, "epsilon", onnx::AttributeProto::FLOAT)
          ->set_f((*node.attrs.get_if<BatchNormAttrs>()).epsilon);
    } else if (node.op == OpType::kRelu) {
      n->set_op_type("Relu");
    } else if (node.op == OpType::kClip) {
      // ReLU6 as opset-11+ Clip with scalar min/max initializers.
      const auto& a = (*node.attrs.get_if<ActivationAttrs>());
      n->set_op_type("Clip");
      SetFloatData(graph->add_initializer(), node.name + ".min", {}, {a.alpha});
      SetFloatData(graph->add_initializer(), node.name + ".max", {}, {a.beta});
      n->add_input(node.name + ".min");
      n->add_input(node.name + ".max");
    } else if (node.op == OpType::kAdd) {
      n->set_op_type("Add");
    } else if (node.op == OpType::kGlobalAveragePool) {
      n->set_op_type("GlobalAveragePool");
    } else if (node.op == OpType::kFlatten) {
      n->set_op_type("Flatten");
      AddAttr(n, "axis", onnx::AttributeProto::INT)
          ->set_i((*node.attrs.get_if<FlattenAttrs>()).axis);
    } else if (node.op == OpType::kGemm) {
      const auto& a = (*node.attrs.get_if<GemmAttrs>());
      n->set_op_type("Gemm");
      AddAttr(n, "alpha", onnx::AttributeProto::FLOAT)->set_f(a.alpha);
      AddAttr(n, "beta", onnx::AttributeProto::FLOAT)->set_f(a.beta);
      AddAttr(n, "transA", onnx::AttributeProto::INT)->set_i(a.trans_a ? 1 : 0);
      AddAttr(n, "transB", onnx::AttributeProto::INT)->set_i(a.trans_b ? 1 : 0);
    } else if (node.op == OpType::kSoftmax) {
      const auto& a = (*node.attrs.get_if<SoftmaxAttrs>());
      if (a.coerce_to_2d)
        return absl::InternalError("legacy Softmax cannot be written at opset 13");
      n->set_op_type("Softmax");
      AddAttr(n, "axis", onnx::AttributeProto::INT)->set_i(a.axis);
    } else {
      return absl::InternalError(
          absl::StrCat("GraphToOnnxBytes: op ", OpTypeName(node.op), " is not written"));
    }
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return absl::InternalError("cannot serialize the model");
  return bytes;
}

absl::StatusOr<std::string> MobileNetV1OnnxBytes(const MobileNetOptions& options) {
  absl::StatusOr<Graph> built = BuildMobileNetV1(options);
  if (!built.ok()) return built.status();
  return GraphToOnnxBytes(*built, "mobilenet_v1");
}

absl::StatusOr<std::string> MobileNetV2OnnxBytes(const MobileNetOptions& options) {
  absl::StatusOr<Graph> built = BuildMobileNetV2(options);
  if (!built.ok()) return built.status();
  return GraphToOnnxBytes(*built, "mobilenet_v2");
}

}  // namespace recq::models
