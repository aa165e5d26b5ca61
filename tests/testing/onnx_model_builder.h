// OnnxModelBuilder writes small ONNX models for import tests: graph inputs
// and outputs, initializers, nodes and their attributes, serialized to the
// bytes recq::LoadOnnxFromBytes reads.
#ifndef RECQ_TESTS_TESTING_ONNX_MODEL_BUILDER_H_
#define RECQ_TESTS_TESTING_ONNX_MODEL_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace recq::testing {

class OnnxModelBuilder {
 public:
  // A model of IR version 8 importing `opset` of the default domain.
  explicit OnnxModelBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    onnx::OperatorSetIdProto* id = model_.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
  }

  onnx::GraphProto* graph() { return model_.mutable_graph(); }

  // Input declares a graph input of element type `type` and `shape` (empty:
  // a scalar).
  void Input(const std::string& name, const std::vector<int64_t>& shape, int32_t type) {
    onnx::ValueInfoProto* info = graph()->add_input();
    info->set_name(name);
    auto* tt = info->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    tt->mutable_shape();
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }

  // Output declares a graph output of element type `type`; `shape` empty:
  // no declared shape.
  void Output(const std::string& name, int32_t type = onnx::TensorProto::FLOAT,
              const std::vector<int64_t>& shape = {}) {
    onnx::ValueInfoProto* o = graph()->add_output();
    o->set_name(name);
    auto* tt = o->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }

  // Initializers: float32, int64, or `type` (float32, int64, or an integer
  // type stored in int32_data) from doubles.
  void Floats(const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<float>& data) {
    onnx::TensorProto* t = Initializer(name, dims, onnx::TensorProto::FLOAT);
    for (float f : data) t->add_float_data(f);
  }
  void Int64s(const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<int64_t>& data) {
    onnx::TensorProto* t = Initializer(name, dims, onnx::TensorProto::INT64);
    for (int64_t v : data) t->add_int64_data(v);
  }
  void Tensor(const std::string& name, const std::vector<int64_t>& dims, int32_t type,
              const std::vector<double>& data) {
    onnx::TensorProto* t = Initializer(name, dims, type);
    for (double v : data) {
      if (type == onnx::TensorProto::FLOAT) {
        t->add_float_data(static_cast<float>(v));
      } else if (type == onnx::TensorProto::INT64) {
        t->add_int64_data(static_cast<int64_t>(v));
      } else {
        t->add_int32_data(static_cast<int32_t>(v));  // int32, int8, uint8...
      }
    }
  }

  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out) {
    onnx::NodeProto* n = graph()->add_node();
    n->set_op_type(op);
    for (const std::string& s : in) n->add_input(s);
    for (const std::string& s : out) n->add_output(s);
    return n;
  }
  static void Int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void String(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::TensorProto* Initializer(const std::string& name, const std::vector<int64_t>& dims,
                                 int32_t type) {
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }

  onnx::ModelProto model_;
};

}  // namespace recq::testing

#endif  // RECQ_TESTS_TESTING_ONNX_MODEL_BUILDER_H_
