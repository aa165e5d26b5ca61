// SaveOnnxToBytes: a graph of every exportable op round-trips through ONNX
// into the same ops and the same reference outputs; the rest is a clear error.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "recq/onnx.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"

namespace recq {
namespace {

TensorRef Const(GraphBuilder& b, const std::string& name, std::vector<int64_t> shape,
                uint64_t seed) {
  auto t = reference::RandomTensor(shape, seed);
  return b.Constant(name, t.shape, t.data);
}

Graph EveryExportableOp() {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 3, 8, 8});
  Conv2DAttrs conv;
  conv.pads = {1, 1, 1, 1};
  TensorRef y = b.Conv2D(x, Const(b, "w", {4, 3, 3, 3}, 1), Const(b, "cb", {4}, 2), conv);
  y = b.BatchNorm(y, Const(b, "s", {4}, 3), Const(b, "t", {4}, 4), Const(b, "m", {4}, 5),
                  b.Constant("v", {4}, {1.0f, 2.0f, 0.5f, 1.5f}));
  y = b.AddNode(OpType::kLeakyRelu, {y}, ActivationAttrs{0.1f, 0.0f});
  y = b.AddNode(OpType::kHardSigmoid, {y}, ActivationAttrs{0.2f, 0.5f});
  y = b.Clip(y, 0.1f, 0.9f);
  PoolAttrs pool;
  pool.kernel = {2, 2};
  pool.strides = {2, 2};
  TensorRef m = b.AddNode(OpType::kMaxPool, {y}, pool);
  TensorRef a = b.AddNode(OpType::kAveragePool, {y}, pool);
  y = b.AddNode(OpType::kConcat, {m, a}, ConcatAttrs{1});
  y = b.AddNode(OpType::kSub, {y, b.AddNode(OpType("Erf"), {y})});
  y = b.AddNode(OpType::kTranspose, {y}, TransposeAttrs{{0, 1, 3, 2}});
  y = b.Relu(b.GlobalAveragePool(y));
  y = b.Flatten(y);
  y = b.FullyConnected(y, Const(b, "fc", {5, 8}, 6), Const(b, "fb", {5}, 7));
  y = b.AddNode(OpType::kMatMul, {y, Const(b, "mm", {5, 5}, 8)});
  y = b.Softmax(b.AddNode(OpType::kSigmoid, {y}));
  b.Output(y, "y");
  return *std::move(b).Build();
}

TEST(OnnxExporterTest, RoundTripKeepsOpsAndOutputs) {
  Graph g = EveryExportableOp();
  RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, SaveOnnxToBytes(g, "every_op"));
  RECQ_ASSERT_OK_AND_ASSIGN(Graph back, LoadOnnxFromBytes(bytes));
  ASSERT_EQ(back.nodes().size(), g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    EXPECT_EQ(back.nodes()[i].op, g.nodes()[i].op) << "node " << i;
  }
  auto in = reference::RandomTensor({1, 3, 8, 8}, 77);
  EXPECT_EQ(testing::ReferenceOutput(back, "x", in, "y"),
            testing::ReferenceOutput(g, "x", in, "y"));
}

TEST(OnnxExporterTest, UnexportableNodesAreAClearError) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 3});
  TensorRef y = b.Add(x, x);
  b.SetFusedActivation(y, {ActivationKind::kRelu, 0, 0});
  b.Output(y, "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, std::move(b).Build());
  absl::StatusOr<std::string> s = SaveOnnxToBytes(fused, "m");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(s.status().message(), "fused activation")) << s.status();

  GraphBuilder c;
  TensorRef z = c.Input("z", {2, 3});
  c.Output(c.Reshape(z, {3, 2}), "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph reshape, std::move(c).Build());
  s = SaveOnnxToBytes(reshape, "m");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(s.status().message(), "Reshape")) << s.status();
}

}  // namespace
}  // namespace recq
