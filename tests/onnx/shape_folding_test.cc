// Shape subgraphs as exporters write them are evaluated at import and fold
// away; the data path that uses them runs and matches the reference.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using testing::NewTensor;
using testing::SharedContext;

class Model {
 public:
  explicit Model(int64_t opset = 13) {
    model_.set_ir_version(8);
    auto* id = model_.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
  }
  onnx::GraphProto* g() { return model_.mutable_graph(); }
  void Input(const std::string& name, std::vector<int64_t> shape) {
    auto* v = g()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void Output(const std::string& name) {
    auto* v = g()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  void Ints(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
    auto* t = g()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out) {
    auto* n = g()->add_node();
    n->set_op_type(op);
    n->set_name(out[0] + "_node");
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  static void IntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  std::string Bytes() {
    std::string b;
    model_.SerializeToString(&b);
    return b;
  }

 private:
  onnx::ModelProto model_;
};

// y = Relu(Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), Mul(Div([-60], 60), [60]))))
// and z = Squeeze(Unsqueeze(x)) + Where(Equal(Range(0,5,1) , Range), ...) folded.
std::string FlattenByShape() {
  Model m;
  m.Input("x", {2, 3, 4, 5});
  m.Ints("zero", {}, {0});
  m.Ints("axes0", {1}, {0});
  m.Ints("sixty", {1}, {60});
  m.Ints("minus60", {1}, {-60});
  m.Node("Shape", {"x"}, {"shape"});
  Model::IntAttr(m.Node("Gather", {"shape", "zero"}, {"batch"}), "axis", 0);
  m.Node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  m.Node("Div", {"minus60", "sixty"}, {"minus1"});
  m.Node("Mul", {"minus1", "sixty"}, {"minus60b"});
  m.Node("Div", {"minus60b", "minus1"}, {"sixty_b"});
  Model::IntAttr(m.Node("Concat", {"batch1", "sixty_b"}, {"target_full"}), "axis", 0);
  // Slice(target, [0], [2]) keeps both entries: a no-op exporters emit.
  m.Ints("s0", {1}, {0});
  m.Ints("s2", {1}, {2});
  m.Node("Slice", {"target_full", "s0", "s2"}, {"target"});
  m.Node("Reshape", {"x", "target"}, {"flat"});
  m.Node("Relu", {"flat"}, {"y"});
  m.Output("y");
  return m.Bytes();
}

TEST(ShapeFoldingTest, AFlattenBuiltFromShapeOpsFoldsToOneReshape) {
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(FlattenByShape()));
  ASSERT_EQ(g.nodes().size(), 2u);  // Reshape, Relu: the shape arithmetic folded away
  EXPECT_EQ(g.nodes()[0].op, OpType::kReshape);
  EXPECT_EQ(g.value(g.outputs()[0]).desc.shape, (std::vector<int64_t>{2, 60}));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  auto host = reference::RandomTensor({2, 3, 4, 5}, 5);
  std::vector<float> expected = host.data;
  for (float& v : expected) v = v > 0 ? v : 0;
  EXPECT_EQ(testing::RunRecorded(engine, "x", host, "y"), expected);
}

// A Pad whose pads are all zero (Swin pads its maps to a multiple of the
// window, by zero at 224x224) imports as an Identity and costs no dispatch;
// a Pad with padding still runs.
TEST(ShapeFoldingTest, ZeroPadIsNoDispatch) {
  for (int64_t pad : {0, 1}) {
    SCOPED_TRACE(pad);
    Model m(13);
    m.Input("x", {1, 2, 7, 7});
    m.Ints("pads", {8}, {0, 0, 0, 0, 0, 0, pad, pad});
    m.Node("Pad", {"x", "pads"}, {"p"});
    m.Node("Relu", {"p"}, {"y"});
    m.Output("y");
    RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(m.Bytes()));
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
    const std::vector<std::string> labels = engine.DispatchLabels();
    EXPECT_EQ(labels.size(), pad == 0 ? 1u : 2u) << absl::StrJoin(labels, ", ");
    auto host = reference::RandomTensor({1, 2, 7, 7}, 9);
    std::vector<float> expected;
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t h = 0; h < 7 + pad; ++h) {
        for (int64_t w = 0; w < 7 + pad; ++w) {
          const float v = h < 7 && w < 7 ? host.data[(c * 7 + h) * 7 + w] : 0.0f;
          expected.push_back(v > 0 ? v : 0);
        }
      }
    }
    EXPECT_EQ(testing::RunRecorded(engine, "x", host, "y"), expected);
  }
}

// Range, ConstantOfShape, Cast, Equal, Where and Squeeze/Unsqueeze of data.
TEST(ShapeFoldingTest, IntegerOpsFoldAndDataViewsRun) {
  Model m(13);
  m.Input("x", {1, 6});
  m.Ints("start", {}, {0});
  m.Ints("limit", {}, {6});
  m.Ints("delta", {}, {1});
  m.Ints("three", {}, {3});
  m.Ints("axes", {1}, {0});
  m.Ints("shape6", {1}, {6});
  m.Node("Range", {"start", "limit", "delta"}, {"r"});  // [0..5]
  m.Node("Equal", {"r", "three"}, {"is3"});             // [0,0,0,1,0,0]
  m.Node("ConstantOfShape", {"shape6"}, {"zeros"});     // float zeros [6]
  m.Node("Cast", {"r"}, {"rf"});
  Model::IntAttr(m.g()->mutable_node(3), "to", 1);  // float
  m.Node("Where", {"is3", "rf", "zeros"}, {"w"});   // [0,0,0,3,0,0]
  m.Node("Squeeze", {"x", "axes"}, {"xs"});         // [6]
  m.Node("Add", {"xs", "w"}, {"sum"});
  m.Node("Unsqueeze", {"sum", "axes"}, {"y"});  // [1,6]
  m.Output("y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(m.Bytes()));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  auto host = reference::RandomTensor({1, 6}, 6);
  Tensor in = NewTensor({host.shape}, host.data);
  Tensor out = NewTensor(engine.outputs()[0].desc);
  Bindings b;
  b.Set("x", in);
  b.Set("y", out);
  RECQ_ASSERT_OK(engine.RunUnrecorded(b));
  std::vector<float> got = Download(out);
  ASSERT_EQ(got.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], host.data[i] + (i == 3 ? 3.0f : 0.0f)) << i;
}

TEST(ShapeFoldingTest, MalformedIntegerSubgraphsNameTheNode) {
  {
    Model m;
    m.Input("x", {2, 3});
    m.Ints("idx", {}, {5});
    m.Node("Shape", {"x"}, {"s"});
    m.Node("Gather", {"s", "idx"}, {"bad"});
    m.Node("Unsqueeze", {"bad", "idx"}, {"y"});
    m.Output("y");
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "bad_node")) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "out of range")) << g.status();
  }
  {
    Model m;
    m.Input("x", {2, 3});
    m.Ints("target", {2}, {4, -7});
    m.Node("Reshape", {"x", "target"}, {"y"});
    m.Output("y");
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "y_node")) << g.status();
  }
  {
    // A range whose limit comes from the input data cannot fold.
    Model m;
    m.Input("x", {1});
    m.Ints("start", {}, {0});
    m.Node("Range", {"start", "x", "start"}, {"y"});
    m.Output("y");
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "input data")) << g.status();
  }
}

// Slice, Split and Gather of computed data run on the device (the folding
// path above keeps constants); indices are checked at import.
TEST(ShapeFoldingTest, SliceSplitAndGatherOfDataRunOnTheDevice) {
  auto ints_attr = [](onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t i : v) a->add_ints(i);
  };
  const auto host = reference::RandomTensor({2, 7}, 11);
  auto run = [&](const std::string& bytes, const std::string& out) -> std::vector<float> {
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(bytes);
    EXPECT_TRUE(g.ok()) << g.status();
    if (!g.ok()) return {};
    absl::StatusOr<Engine> engine = Engine::Compile(SharedContext(), *g);
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) return {};
    return testing::RunRecorded(*engine, "x", host, out);
  };
  auto columns = [&](int64_t from, int64_t to) {
    std::vector<float> v;
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = from; c < to; ++c) v.push_back(host.data[r * 7 + c]);
    }
    return v;
  };
  {
    // Opset 13: split sizes as an input.
    Model m(13);
    m.Input("x", {2, 7});
    m.Ints("split", {2}, {2, 5});
    onnx::NodeProto* n = m.Node("Split", {"x", "split"}, {"a", "b"});
    Model::IntAttr(n, "axis", 1);
    m.Output("b");  // "a" is left unused
    EXPECT_EQ(run(m.Bytes(), "b"), columns(2, 7));
  }
  {
    // Opset 9: Slice with attributes.
    Model m(9);
    m.Input("x", {2, 7});
    onnx::NodeProto* n = m.Node("Slice", {"x"}, {"y"});
    ints_attr(n, "starts", {-5});
    ints_attr(n, "ends", {100});
    ints_attr(n, "axes", {1});
    m.Output("y");
    EXPECT_EQ(run(m.Bytes(), "y"), columns(2, 7));
  }
  {
    // Gather with a negative index.
    Model m(13);
    m.Input("x", {2, 7});
    m.Ints("idx", {2}, {-1, 0});
    Model::IntAttr(m.Node("Gather", {"x", "idx"}, {"y"}), "axis", 1);
    m.Output("y");
    const std::vector<float> want = {host.data[6], host.data[0], host.data[13], host.data[7]};
    EXPECT_EQ(run(m.Bytes(), "y"), want);
  }
  {
    Model m(13);
    m.Input("x", {2, 7});
    m.Ints("idx", {1}, {7});
    Model::IntAttr(m.Node("Gather", {"x", "idx"}, {"y"}), "axis", 1);
    m.Output("y");
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "y_node")) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "out of range")) << g.status();
  }
}

// Split of opset 18: num_outputs with a smaller last part (7 = 3 + 3 + 1).
TEST(ShapeFoldingTest, SplitOpset18NumOutputs) {
  const auto host = reference::RandomTensor({2, 7}, 12);
  for (const char* out : {"b", "c"}) {
    Model m(18);
    m.Input("x", {2, 7});
    onnx::NodeProto* n = m.Node("Split", {"x"}, {"a", "b", "c"});
    Model::IntAttr(n, "axis", -1);
    Model::IntAttr(n, "num_outputs", 3);
    m.Output(out);
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
    if (absl::IsUnimplemented(g.status()) &&
        absl::StrContains(g.status().message(), "recq supports 7 to 17")) {
      GTEST_SKIP() << "opset 18 models are not accepted yet: " << g.status();
    }
    RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, std::move(g));
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), graph));
    const int64_t from = out[0] == 'b' ? 3 : 6, to = out[0] == 'b' ? 6 : 7;
    std::vector<float> want;
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = from; c < to; ++c) want.push_back(host.data[r * 7 + c]);
    }
    EXPECT_EQ(testing::RunRecorded(engine, "x", host, out), want) << out;
  }
}

}  // namespace
}  // namespace recq

namespace recq {
namespace {

// Swin's shape arithmetic and attention-mask construction: Mod (fmod 0) of
// a shape, Reshape, Transpose and ScatterND of constants fold at import,
// leaving only the data's Reshape and Add.
TEST(ShapeFoldingTest, ModTransposeAndScatterNDOfConstantsFold) {
  Model m(17);
  m.Input("x", {2, 5});
  m.Ints("one", {}, {1});
  m.Ints("seven", {}, {7});
  m.Ints("five", {}, {5});
  m.Ints("axes0", {1}, {0});
  m.Ints("minus1", {1}, {-1});
  m.Ints("mask_shape", {1}, {2});
  m.Ints("shape25", {2}, {2, 5});
  m.Ints("rows", {2, 2}, {0, 1, 1, -1});  // (0, 1) and (1, 4)
  auto* updates = m.g()->add_initializer();
  updates->set_name("updates");
  updates->set_data_type(onnx::TensorProto::FLOAT);
  updates->add_dims(2);
  updates->add_float_data(-100.0f);
  updates->add_float_data(100.0f);
  m.Node("Shape", {"x"}, {"shape"});
  Model::IntAttr(m.Node("Gather", {"shape", "one"}, {"w"}), "axis", 0);  // 5
  m.Node("Mod", {"w", "seven"}, {"w_mod"});                              // 5
  m.Node("Sub", {"seven", "w_mod"}, {"gap"});                            // 2
  m.Node("Mod", {"gap", "seven"}, {"pad"});                              // 2
  m.Node("Mul", {"pad", "five"}, {"rows10"});                            // 10
  m.Node("Unsqueeze", {"rows10", "axes0"}, {"rows10v"});
  Model::IntAttr(m.Node("Concat", {"rows10v", "minus1"}, {"target"}), "axis", 0);  // [10, -1]
  m.Node("ConstantOfShape", {"shape25"}, {"zeros"});
  m.Node("ScatterND", {"zeros", "rows", "updates"}, {"mask"});
  m.Node("Transpose", {"mask"}, {"mask_t"});  // [5, 2]
  m.Node("Reshape", {"mask_t", "target"}, {"mask_col"});
  m.Node("Reshape", {"x", "target"}, {"x_col"});
  m.Node("Add", {"x_col", "mask_col"}, {"y"});
  m.Output("y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(m.Bytes()));
  ASSERT_EQ(g.nodes().size(), 2u);  // Reshape, Add
  EXPECT_EQ(g.value(g.outputs()[0]).desc.shape, (std::vector<int64_t>{10, 1}));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  auto host = reference::RandomTensor({2, 5}, 7);
  // The mask is [[0, -100, 0, 0, 0], [0, 0, 0, 0, 100]], transposed and
  // flattened: -100 lands at 2 (row 1, column 0) and 100 at 9.
  std::vector<float> expected = host.data;
  expected[2] += -100.0f;
  expected[9] += 100.0f;
  EXPECT_EQ(testing::RunRecorded(engine, "x", host, "y"), expected);
}

TEST(ShapeFoldingTest, ModByZeroAndScatterNDOutOfRangeNameTheNode) {
  {
    Model m(17);
    m.Input("x", {2});
    m.Ints("a", {1}, {5});
    m.Ints("zero", {1}, {0});
    m.Node("Mod", {"a", "zero"}, {"bad"});
    m.Node("Reshape", {"x", "bad"}, {"y"});
    m.Output("y");
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "bad_node")) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "modulo by zero")) << g.status();
  }
  {
    Model m(17);
    m.Input("x", {3});
    m.Ints("data", {3}, {1, 2, 3});
    m.Ints("idx", {1, 1}, {3});
    m.Ints("upd", {1}, {9});
    m.Node("ScatterND", {"data", "idx", "upd"}, {"bad"});
    m.Node("Reshape", {"x", "bad"}, {"y"});
    m.Output("y");
    absl::StatusOr<Graph> g = LoadOnnxFromBytes(m.Bytes());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "bad_node")) << g.status();
    EXPECT_TRUE(absl::StrContains(g.status().message(), "out of range")) << g.status();
  }
}

}  // namespace
}  // namespace recq

namespace recq {
namespace {

// BERT's embedding lookup: Gather(table initializer, input_ids) with int64
// ids from a graph input, run recorded (twice, new ids) and unrecorded;
// negative ids wrap, ids past the vocabulary are clamped (gather.cc).
TEST(ShapeFoldingTest, EmbeddingLookupOfInputIdsRunsOnTheDevice) {
  Model m(13);
  auto* ids_in = m.g()->add_input();
  ids_in->set_name("input_ids");
  auto* tt = ids_in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::INT64);
  for (int64_t d : {2, 4}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  const int64_t vocab = 6, hidden = 3;
  auto* table = m.g()->add_initializer();
  table->set_name("table");
  table->set_data_type(onnx::TensorProto::FLOAT);
  table->add_dims(vocab);
  table->add_dims(hidden);
  for (int i = 0; i < vocab * hidden; ++i) table->add_float_data(0.5f * i - 3.0f);
  Model::IntAttr(m.Node("Gather", {"table", "input_ids"}, {"y"}), "axis", 0);
  m.Output("y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(m.Bytes()));
  ASSERT_EQ(g.value(g.inputs()[0]).desc.dtype, DataType::kInt64);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording recording, engine.Record());
  const std::vector<std::vector<int64_t>> runs = {{0, 5, 2, 2, 1, 3, 4, 0},
                                                  {-1, -6, 7, 100, -9, 3, 0, 5}};
  for (size_t run = 0; run < runs.size() * 2; ++run) {
    const std::vector<int64_t>& ids = runs[run % runs.size()];
    RECQ_ASSERT_OK_AND_ASSIGN(Tensor in,
                              Tensor::Allocate(SharedContext(), {{2, 4}, DataType::kInt64}));
    RECQ_ASSERT_OK(in.Upload(absl::MakeConstSpan(ids)));
    Tensor out = NewTensor(engine.outputs()[0].desc);  // NaN-poisoned
    Bindings b;
    b.Set("input_ids", in);
    b.Set("y", out);
    if (run < runs.size()) {
      RECQ_ASSERT_OK(recording.Run(b));
    } else {
      RECQ_ASSERT_OK(engine.RunUnrecorded(b));
    }
    std::vector<float> got = Download(out);
    ASSERT_EQ(got.size(), 8u * hidden);
    for (int k = 0; k < 8; ++k) {
      int64_t row = ids[k] < 0 ? ids[k] + vocab : ids[k];
      row = std::clamp<int64_t>(row, 0, vocab - 1);
      for (int h = 0; h < hidden; ++h) {
        EXPECT_EQ(got[k * hidden + h], 0.5f * (row * hidden + h) - 3.0f)
            << "run " << run << " id " << ids[k];
      }
    }
  }
}

}  // namespace
}  // namespace recq
