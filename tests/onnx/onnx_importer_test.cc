// LoadOnnx on small hand-built models: what it accepts, and a clear status
// for each kind of malformed model.
#include <algorithm>
#include <filesystem>
#include <fstream>
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
  void Output(const std::string& name, int32_t type = onnx::TensorProto::FLOAT) {
    onnx::ValueInfoProto* o = graph()->add_output();
    o->set_name(name);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(type);
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
  EXPECT_EQ(std::vector<float>(w.floats().begin(), w.floats().end()), Iota(4 * 3 * 3 * 3));
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
  EXPECT_THAT(g.status().message(), HasSubstr("Relu input 0 is 4 int32"));
  EXPECT_THAT(g.status().message(), HasSubstr("float32 only"));
}

TEST(OnnxImporterTest, ElementTypeRecqLacksIsUnimplemented) {
  ModelBuilder m;
  m.Input("x", {4}, onnx::TensorProto::BFLOAT16);
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("'x' has element type bfloat16"));
}

// float64 loads, but only the typed ops take it: a float32 kernel's op
// names the type.
TEST(OnnxImporterTest, Float64IntoAFloat32OpIsUnimplemented) {
  ModelBuilder m;
  m.Input("x", {4}, onnx::TensorProto::DOUBLE);
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("Relu input 0 is 4 float64"));
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
  EXPECT_THAT(g.status().message(), HasSubstr("dynamic ('N'"));
  EXPECT_THAT(g.status().message(), HasSubstr("--shapes"));
}

TEST(OnnxImporterTest, UnsupportedOpsetIsUnimplemented) {
  ModelBuilder m(/*opset=*/22);
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

// A float32 initializer stored as raw_data (as exporters write weights).
void RawInitializer(ModelBuilder& m, const std::string& name, std::vector<int64_t> dims,
                    const std::vector<float>& data) {
  onnx::TensorProto* t = m.graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(data.data()), data.size() * 4));
}

// Raw float32 initializers are checked when collected and decoded when a
// node reads them: as a value (Add's input), as a constant (folding both
// inputs of an Add), or both.
TEST(OnnxImporterTest, RawInitializersReadAsValuesAndConstants) {
  ModelBuilder m;
  m.Input("x", {4});
  RawInitializer(m, "c", {4}, {1, 2, 3, 4});
  RawInitializer(m, "d", {4}, {0.5f, 0.25f, -1, 8});
  m.Node("Add", {"x", "c"}, {"y"});
  m.Node("Add", {"c", "d"}, {"e"});  // both constant: folded at import
  m.Node("Add", {"y", "e"}, {"z"});
  m.Output("z");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(m.Bytes()));
  ASSERT_EQ(g.nodes().size(), 2u);
  const Value& c = g.value(g.nodes()[0].inputs[1]);
  ASSERT_EQ(c.kind, Value::Kind::kConstant);
  EXPECT_EQ(std::vector<float>(c.floats().begin(), c.floats().end()),
            (std::vector<float>{1, 2, 3, 4}));
  const Value& e = g.value(g.nodes()[1].inputs[1]);
  ASSERT_EQ(e.kind, Value::Kind::kConstant);
  EXPECT_EQ(std::vector<float>(e.floats().begin(), e.floats().end()),
            (std::vector<float>{1.5f, 2.25f, 2, 12}));
}

// A raw initializer no node reads is checked all the same.
TEST(OnnxImporterTest, UnusedRawInitializerIsChecked) {
  ModelBuilder m;
  m.Input("x", {4});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y");
  onnx::TensorProto* bad = m.graph()->add_initializer();
  bad->set_name("bad");
  bad->set_data_type(onnx::TensorProto::FLOAT);
  bad->add_dims(2);
  bad->set_raw_data(std::string(3, '\0'));
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("'bad' has 3 bytes of raw_data, its dims need 8"));
}

}  // namespace
}  // namespace recq

namespace recq {
namespace {

// A model with input x [N, 3, H, W] (symbolic N, H, W) flattened to [N, 3*H*W].
std::string SymbolicModel() {
  ModelBuilder m;
  onnx::ValueInfoProto* in = m.graph()->add_input();
  ModelBuilder::Info(in, "x", {}, onnx::TensorProto::FLOAT);
  auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->add_dim()->set_dim_param("N");
  shape->add_dim()->set_dim_value(3);
  shape->add_dim()->set_dim_param("H");
  shape->add_dim()->set_dim_param("W");
  m.Node("Relu", {"x"}, {"r"});
  onnx::NodeProto* f = m.Node("Flatten", {"r"}, {"y"});
  onnx::AttributeProto* a = f->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  m.Output("y");
  return m.Bytes();
}

TEST(OnnxOptionsTest, InputShapesFixSymbolicDimensions) {
  OnnxOptions options;
  options.input_shapes["x"] = {4, 3, 8, 5};
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(SymbolicModel(), options);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->value(g->inputs()[0]).desc.shape, (std::vector<int64_t>{4, 3, 8, 5}));
  EXPECT_EQ(g->value(g->outputs()[0]).desc.shape, (std::vector<int64_t>{4, 120}));
}

TEST(OnnxOptionsTest, DimValuesNameSymbolicDimensions) {
  OnnxOptions options;
  options.dim_values = {{"N", 2}, {"H", 7}, {"W", 6}};
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(SymbolicModel(), options);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->value(g->outputs()[0]).desc.shape, (std::vector<int64_t>{2, 126}));
}

TEST(OnnxOptionsTest, BadShapesAreInvalidArgument) {
  OnnxOptions wrong_fixed;
  wrong_fixed.input_shapes["x"] = {1, 4, 8, 8};  // dimension 1 is fixed at 3
  absl::Status s = LoadOnnxFromBytes(SymbolicModel(), wrong_fixed).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("dimension 1 is fixed at 3"));

  OnnxOptions wrong_rank;
  wrong_rank.input_shapes["x"] = {1, 3, 8};
  s = LoadOnnxFromBytes(SymbolicModel(), wrong_rank).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("has rank 4"));

  OnnxOptions unknown;
  unknown.input_shapes["images"] = {1, 3, 8, 8};
  s = LoadOnnxFromBytes(SymbolicModel(), unknown).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'images', the model's inputs are x"));

  OnnxOptions partial;
  partial.dim_values = {{"N", 2}};
  s = LoadOnnxFromBytes(SymbolicModel(), partial).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("dimension 2 is dynamic ('H'"));
}

TEST(OnnxOptionsTest, ParseShapesReadsTrtexecSyntax) {
  auto shapes = ParseShapes("input:4x3x224x224,mask:4x128");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)["input"], (std::vector<int64_t>{4, 3, 224, 224}));
  EXPECT_EQ((*shapes)["mask"], (std::vector<int64_t>{4, 128}));
  for (const char* bad : {"input", "input:4x0", "input:4xa", ":4", "a:1,a:2"}) {
    EXPECT_EQ(ParseShapes(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

// A model y = x + w with w [2,3] float32 stored in the external file
// `location`; the file holds `file_bytes` bytes of which w starts at 8.
std::string ExternalModel(const std::string& location) {
  ModelBuilder m;
  m.Input("x", {2, 3});
  onnx::TensorProto* t = m.graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->add_dims(3);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    onnx::StringStringEntryProto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", "8");
  add("length", "24");
  m.Node("Add", {"x", "w"}, {"y"});
  m.Output("y");
  return m.Bytes();
}

TEST(OnnxOptionsTest, ExternalDataIsReadFromTheModelsFolder) {
  const std::string dir = ::testing::TempDir() + "/recq_external_data";
  std::filesystem::create_directories(dir);
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  {
    std::ofstream f(dir + "/weights.bin", std::ios::binary);
    const char pad[8] = {};
    f.write(pad, 8);
    f.write(reinterpret_cast<const char*>(w.data()), 24);
  }
  {
    std::ofstream f(dir + "/model.onnx", std::ios::binary);
    f << ExternalModel("weights.bin");
  }
  absl::StatusOr<Graph> g = LoadOnnx(dir + "/model.onnx");
  ASSERT_TRUE(g.ok()) << g.status();
  bool found = false;
  for (const Value& v : g->values()) {
    if (v.name != "w") continue;
    found = true;
    EXPECT_EQ(std::vector<float>(v.floats().begin(), v.floats().end()), w);
  }
  EXPECT_TRUE(found);

  // From bytes, the folder must be given.
  absl::Status s = LoadOnnxFromBytes(ExternalModel("weights.bin")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("external_data_dir"));
  OnnxOptions options;
  options.external_data_dir = dir;
  EXPECT_TRUE(LoadOnnxFromBytes(ExternalModel("weights.bin"), options).ok());

  // A missing file, a short one, and a path outside the folder.
  s = LoadOnnxFromBytes(ExternalModel("missing.bin"), options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("missing.bin"));
  {
    std::ofstream f(dir + "/short.bin", std::ios::binary);
    f.write("0123456789", 10);
  }
  s = LoadOnnxFromBytes(ExternalModel("short.bin"), options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("too short"));
  s = LoadOnnxFromBytes(ExternalModel("../weights.bin"), options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("relative path inside"));
}

TEST(OnnxTypesTest, IntegerInputsAndOutputsKeepTheirType) {
  for (int32_t type :
       {onnx::TensorProto::INT64, onnx::TensorProto::INT32, onnx::TensorProto::INT8,
        onnx::TensorProto::UINT8, onnx::TensorProto::BOOL, onnx::TensorProto::FLOAT16}) {
    ModelBuilder m;
    m.Input("x", {2, 3}, type);
    m.Node("Reshape", {"x", "shape"}, {"y"});
    onnx::TensorProto* t = m.graph()->add_initializer();
    t->set_name("shape");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(6);
    m.Output("y", type);
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->value(g->outputs()[0]).desc.ToString(),
              absl::StrCat("6 ", DataTypeName(g->value(g->inputs()[0]).desc.dtype)));
  }
}

TEST(OnnxTypesTest, TypedInitializersBecomeTypedConstants) {
  ModelBuilder m;
  m.Input("x", {1});
  onnx::TensorProto* t = m.graph()->add_initializer();
  t->set_name("c");
  t->set_data_type(onnx::TensorProto::INT32);
  t->add_dims(3);
  for (int v : {7, -8, 9}) t->add_int32_data(v);
  m.Node("Identity", {"c"}, {"y"});
  m.Node("Relu", {"x"}, {"z"});
  m.Output("y", onnx::TensorProto::INT32);
  m.Output("z");
  absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(g.ok()) << g.status();
  bool found = false;
  // Identity of a constant folds, so the constant behind the output "y" is
  // the one int32 constant of the graph.
  for (const Value& v : g->values()) {
    if (v.kind != Value::Kind::kConstant || v.desc.dtype != DataType::kInt32) continue;
    found = true;
    ASSERT_EQ(v.desc.dtype, DataType::kInt32);
    EXPECT_EQ(std::vector<int32_t>(v.data->span<int32_t>().begin(), v.data->span<int32_t>().end()),
              (std::vector<int32_t>{7, -8, 9}));
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(g->value(g->outputs()[0]).desc.ToString(), "3 int32");
}

TEST(OnnxTypesTest, DeclaredOutputTypeMustMatch) {
  ModelBuilder m;
  m.Input("x", {4}, onnx::TensorProto::INT64);
  m.Node("Identity", {"x"}, {"y"});
  m.Output("y", onnx::TensorProto::INT32);
  absl::Status s = LoadOnnxFromBytes(m.Bytes()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph output 'y' is declared int32, its node makes 4 int64"));
}

// LayerNormalization's optional outputs Mean and InvStdDev: unread they are
// dropped; read by another node they are computed by graph nodes.
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

// Read, Mean becomes a ReduceMean over the normalized axes (the graph's
// semantics checked on the CPU reference against a direct mean of fresh
// random rows; the device runs of Mean and InvStdDev are the ONNX node
// cases test_layer_normalization_*).
TEST(OnnxImporterTest, LayerNormWithReadStatisticsComputesThem) {
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(LayerNormModel(true).Bytes()));
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> x(16);
  for (float& v : x) v = u(rng);
  const std::vector<float> z =
      testing::ReferenceOutput(g, "x", reference::HostTensor{{2, 8}, x}, "z");
  ASSERT_EQ(z.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    double mean = 0;
    for (int i = 0; i < 8; ++i) mean += x[r * 8 + i] / 8.0;
    EXPECT_NEAR(z[r], std::max(0.0, mean), 1e-6) << "row " << r;
  }
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
