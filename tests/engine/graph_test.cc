// GraphBuilder and Graph::Create: shape inference and validation errors.
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using ::testing::HasSubstr;

TEST(GraphBuilderTest, InfersConvShapes) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 3, 224, 224});
  Conv2DAttrs attrs;
  attrs.strides = {2, 2};
  attrs.pads = {1, 1, 1, 1};
  TensorRef y =
      b.Conv2D(x, b.Constant("w", {32, 3, 3, 3}, std::vector<float>(864, 0.5f)), {}, attrs);
  EXPECT_EQ(b.desc(y).shape, (std::vector<int64_t>{1, 32, 112, 112}));
  b.Output(y, "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, std::move(b).Build());
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
}

TEST(GraphBuilderTest, WrongWeightShapeNamesTheNode) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 3, 8, 8});
  b.AddNode(OpType::kConv2D, {x, b.Constant("w", {4, 2, 3, 3}, std::vector<float>(72, 1.0f))},
            Conv2DAttrs{}, "conv1");
  auto g = std::move(b).Build();
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("conv1"));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("input channels"));
}

TEST(GraphBuilderTest, ConstantSizeMismatch) {
  GraphBuilder b;
  b.Constant("w", {2, 2}, {1.0f, 2.0f, 3.0f});
  auto g = std::move(b).Build();
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("'w'"));
}

TEST(GraphBuilderTest, BroadcastAndReshapeShapes) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 4, 5});
  TensorRef c = b.Constant("c", {3, 1, 1}, {1, 2, 3});
  TensorRef y = b.AddNode(OpType::kMul, {x, c});
  EXPECT_EQ(b.desc(y).shape, (std::vector<int64_t>{2, 3, 4, 5}));
  TensorRef r = b.Reshape(y, {0, -1});
  EXPECT_EQ(b.desc(r).shape, (std::vector<int64_t>{2, 60}));
  TensorRef bad = b.Reshape(r, {7, -1});
  EXPECT_FALSE(bad.valid());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("cannot reshape"));
}

TEST(GraphTest, CreateRejectsCyclesAndMissingProducers) {
  std::vector<Value> values(3);
  values[0] = {"x", {{4}}, Value::Kind::kInput, nullptr, -1};
  values[1] = {"a", {{4}}, Value::Kind::kIntermediate, nullptr, -1};
  values[2] = {"b", {{4}}, Value::Kind::kIntermediate, nullptr, -1};
  std::vector<Node> cycle = {{OpType::kAdd, "n1", {0, 2}, {1}, {}, {}},
                             {OpType::kRelu, "n2", {1}, {2}, ActivationAttrs{}, {}}};
  auto g = Graph::Create(values, cycle, {0}, {2});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("cycle"));

  std::vector<Node> orphan = {{OpType::kAdd, "n1", {0, 2}, {1}, {}, {}}};
  g = Graph::Create(values, orphan, {0}, {1});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("'b' is used but no node produces it"));
}

TEST(GraphTest, CreateSortsNodesTopologically) {
  std::vector<Value> values(3);
  values[0] = {"x", {{4}}, Value::Kind::kInput, nullptr, -1};
  values[1] = {"a", {{4}}, Value::Kind::kIntermediate, nullptr, -1};
  values[2] = {"b", {{4}}, Value::Kind::kIntermediate, nullptr, -1};
  std::vector<Node> nodes = {{OpType::kRelu, "second", {1}, {2}, ActivationAttrs{}, {}},
                             {OpType::kRelu, "first", {0}, {1}, ActivationAttrs{}, {}}};
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, Graph::Create(values, nodes, {0}, {2}));
  EXPECT_EQ(g.nodes()[0].name, "first");
  EXPECT_EQ(g.nodes()[1].name, "second");
}

}  // namespace
}  // namespace recq
