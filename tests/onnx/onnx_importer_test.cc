// LoadOnnx on small hand-built models: what it accepts, and a clear status
// for each kind of malformed model.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using ::testing::HasSubstr;

// A model under construction, with helpers for the common pieces.
class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    onnx::OperatorSetIdProto* id = model_.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
  }
  onnx::GraphProto* graph() { return model_.mutable_graph(); }

  void Input(const std::string& name, std::vector<int64_t> shape,
             int32_t type = onnx::TensorProto::FLOAT) {
    Info(graph()->add_input(), name, shape, type);
  }
  void Output(const std::string& name) {
    onnx::ValueInfoProto* o = graph()->add_output();
    o->set_name(name);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  void Initializer(const std::string& name, std::vector<int64_t> dims, std::vector<float> data) {
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float f : data) t->add_float_data(f);
  }
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out, const std::string& name = "") {
    onnx::NodeProto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string& s : in) n->add_input(s);
    for (const std::string& s : out) n->add_output(s);
    return n;
  }
  std::string Bytes() const {
    std::string bytes;
    EXPECT_TRUE(model_.SerializeToString(&bytes));
    return bytes;
  }

  static void Info(onnx::ValueInfoProto* info, const std::string& name,
                   const std::vector<int64_t>& shape, int32_t type) {
    info->set_name(name);
    onnx::TypeProto::Tensor* tt = info->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }

 private:
  onnx::ModelProto model_;
};

std::vector<float> Iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.01f * static_cast<float>(i);
  return v;
}

// A conv model with a weight initializer that is also listed as an input.
ModelBuilder ConvModel(std::vector<int64_t> weight_shape = {4, 3, 3, 3}) {
  ModelBuilder m;
  m.Input("x", {1, 3, 8, 8});
  m.Input("w", weight_shape);
  int64_t n = 1;
  for (int64_t d : weight_shape) n *= d;
  m.Initializer("w", weight_shape, Iota(n));
  onnx::NodeProto* conv = m.Node("Conv", {"x", "w"}, {"y"}, "conv1");
  onnx::AttributeProto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  m.Node("Relu", {"y"}, {"z"});
  m.Output("z");
  return m;
}

TEST(OnnxImporterTest, ImportsConvWithNamesAndWeights) {
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(ConvModel().Bytes()));
  ASSERT_EQ(g.inputs().size(), 1u);  // "w" is an initializer, not a binding
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "z");
  EXPECT_EQ(g.value(g.outputs()[0]).desc.shape, (std::vector<int64_t>{1, 4, 8, 8}));
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.nodes()[0].name, "conv1");
  EXPECT_EQ(g.nodes()[1].name, "Relu_1");
  const Value& w = g.value(g.nodes()[0].inputs[1]);
  EXPECT_EQ(w.kind, Value::Kind::kConstant);
  EXPECT_EQ(*w.data, Iota(4 * 3 * 3 * 3));
}

TEST(OnnxImporterTest, FoldsConstantNodeIntoReshapeShape) {
  ModelBuilder m;
  m.Input("x", {2, 3, 4});
  onnx::NodeProto* c = m.Node("Constant", {}, {"shape"});
  onnx::AttributeProto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->add_int64_data(0);
  a->mutable_t()->add_int64_data(-1);
  m.Node("Reshape", {"x", "shape"}, {"y"});
  m.Output("y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(m.Bytes()));
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].op, OpType::kReshape);
  EXPECT_EQ(g.value(g.outputs()[0]).desc.shape, (std::vector<int64_t>{2, 12}));
}

TEST(OnnxImporterTest, TruncatedFileIsInvalidArgument) {
  std::string bytes = ConvModel().Bytes();
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(bytes.substr(0, bytes.size() / 2));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
  EXPECT_THAT(g.status().message(), HasSubstr("truncated or corrupt"));
}

TEST(OnnxImporterTest, EmptyAndRandomBytesAreInvalidArgument) {
  EXPECT_EQ(LoadOnnxFromBytes("").status().code(), absl::StatusCode::kInvalidArgument);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::string bytes(1000, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(bytes);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.status().message(), "");
  }
}

TEST(OnnxImporterTest, MissingFileIsNotFound) {
  absl::StatusOr<Graph> g = LoadOnnx("/nonexistent/model.onnx");
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
}

TEST(OnnxImporterTest, UnknownOpIsUnimplementedNamingNodeAndOp) {
  ModelBuilder m;
  m.Input("x", {1, 4});
  m.Node("FancyOp", {"x"}, {"y"}, "fancy");
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("node 'fancy' (FancyOp)"));
  EXPECT_THAT(g.status().message(), HasSubstr("not supported"));
}

TEST(OnnxImporterTest, ConvWithWrongWeightShapeIsInvalidArgument) {
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(ConvModel({4, 5, 3, 3}).Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("node 'conv1' (Conv)"));
  EXPECT_THAT(g.status().message(), HasSubstr("input channels"));
}

TEST(OnnxImporterTest, CycleIsInvalidArgument) {
  ModelBuilder m;
  m.Input("x", {4});
  m.Node("Add", {"x", "b"}, {"a"}, "first");
  m.Node("Relu", {"a"}, {"b"}, "second");
  m.Output("b");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("cycle"));
}

TEST(OnnxImporterTest, MissingProducerIsInvalidArgument) {
  ModelBuilder m;
  m.Input("x", {4});
  m.Node("Add", {"x", "ghost"}, {"y"}, "add");
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("node 'add' (Add)"));
  EXPECT_THAT(g.status().message(), HasSubstr("'ghost'"));
}

TEST(OnnxImporterTest, NonFloatInputIsUnimplemented) {
  ModelBuilder m;
  m.Input("x", {4}, onnx::TensorProto::INT32);
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("'x' has element type int32"));
}

TEST(OnnxImporterTest, DynamicDimensionIsInvalidArgument) {
  ModelBuilder m;
  onnx::ValueInfoProto* in = m.graph()->add_input();
  ModelBuilder::Info(in, "x", {}, onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("N");
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("dynamic ('N')"));
}

TEST(OnnxImporterTest, UnsupportedOpsetIsUnimplemented) {
  ModelBuilder m(/*opset=*/18);
  m.Input("x", {4});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y");
  EXPECT_EQ(LoadOnnxFromBytes(m.Bytes()).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(OnnxImporterTest, UnsupportedAttributeValueIsUnimplemented) {
  ModelBuilder m;
  m.Input("x", {1, 1, 4, 4});
  onnx::NodeProto* n = m.Node("MaxPool", {"x"}, {"y"}, "pool");
  onnx::AttributeProto* k = n->add_attribute();
  k->set_name("kernel_shape");
  k->set_type(onnx::AttributeProto::INTS);
  k->add_ints(2);
  k->add_ints(2);
  onnx::AttributeProto* so = n->add_attribute();
  so->set_name("storage_order");
  so->set_type(onnx::AttributeProto::INT);
  so->set_i(1);
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("node 'pool' (MaxPool): storage_order 1"));
}

TEST(OnnxImporterTest, WrongRawDataSizeIsInvalidArgument) {
  ModelBuilder m = ConvModel();
  onnx::TensorProto* w = m.graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_raw_data(std::string(10, '\0'));
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("'w' has 10 bytes of raw_data"));
}

}  // namespace
}  // namespace recq

namespace recq {
namespace {

// LayerNormalization's optional outputs Mean and InvStdDev: unread they are
// dropped; read by another node they are a clear Unimplemented.
ModelBuilder LayerNormModel(bool read_mean) {
  ModelBuilder m(17);
  m.Input("x", {2, 8});
  m.Initializer("scale", {8}, Iota(8));
  m.Node("LayerNormalization", {"x", "scale"}, {"y", "mean", "inv_std"}, "ln");
  m.Output("y");
  if (read_mean) {
    m.Node("Relu", {"mean"}, {"z"});
    m.Output("z");
  }
  return m;
}

TEST(OnnxImporterTest, LayerNormWithUnreadStatisticsImports) {
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(LayerNormModel(false).Bytes()));
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0].op, OpType("LayerNormalization"));
}

TEST(OnnxImporterTest, LayerNormWithReadStatisticsIsUnimplemented) {
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(LayerNormModel(true).Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("node 'ln' (LayerNormalization)"));
  EXPECT_THAT(g.status().message(), HasSubstr("Mean and InvStdDev"));
}

TEST(OnnxImporterTest, ReduceAxesFromComputedValueIsUnimplemented) {
  ModelBuilder m(13);
  m.Input("x", {2, 8});
  m.Input("a", {1});
  m.Node("Relu", {"a"}, {"axes"});
  m.Node("ReduceSum", {"x", "axes"}, {"y"}, "sum");
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("node 'sum' (ReduceSum)"));
}

TEST(OnnxImporterTest, ReduceWithRepeatedAxisIsInvalidArgument) {
  ModelBuilder m(13);
  m.Input("x", {2, 8});
  onnx::NodeProto* n = m.Node("ReduceMean", {"x"}, {"y"}, "mean");
  onnx::AttributeProto* axes = n->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(1);
  axes->add_ints(-1);
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("listed twice"));
}

}  // namespace
}  // namespace recq
