// Graph passes: each changes the graph as intended and keeps its outputs.
#include <cmath>
#include <random>
#include <string>

#include "engine/passes.h"
#include "gtest/gtest.h"
#include "recq/math_op_attrs.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using internal::EliminateDeadNodes;
using internal::FoldBatchNorm;
using internal::FoldConstants;
using internal::FuseActivations;
using internal::RemoveIdentities;

int Count(const Graph& g, OpType op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

std::vector<float> RunRef(const Graph& g, const reference::HostTensor& in) {
  return testing::ReferenceOutput(g, "x", in, "y");
}

TensorRef Const(GraphBuilder& b, const std::string& name, std::vector<int64_t> shape, uint64_t seed,
                float lo = -1.0f, float hi = 1.0f) {
  auto t = reference::RandomTensor(shape, seed, lo, hi);
  return b.Constant(name, t.shape, t.data);
}

// conv -> bn -> relu -> identity -> gemm-ish tail, plus a dead branch.
Graph ConvBnReluNet() {
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 4, 6, 6});
  Conv2DAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  TensorRef y = b.Conv2D(x, Const(b, "w", {6, 4, 3, 3}, 1), Const(b, "b", {6}, 2), attrs);
  y = b.BatchNorm(y, Const(b, "s", {6}, 3, 0.5f, 1.5f), Const(b, "t", {6}, 4),
                  Const(b, "m", {6}, 5), Const(b, "v", {6}, 6, 0.5f, 2.0f));
  y = b.Relu(y);
  y = b.AddNode(OpType::kIdentity, {y});
  b.Relu(x);  // dead
  y = b.GlobalAveragePool(y);
  y = b.Flatten(y);
  y = b.FullyConnected(y, Const(b, "fc", {5, 6}, 7), Const(b, "fcb", {5}, 8));
  y = b.BatchNorm(y, Const(b, "s2", {5}, 9, 0.5f, 1.5f), Const(b, "t2", {5}, 10),
                  Const(b, "m2", {5}, 11), Const(b, "v2", {5}, 12, 0.5f, 2.0f));
  y = b.Clip(y, -0.5f, 0.5f);
  b.Output(y, "y");
  return *std::move(b).Build();
}

TEST(PassesTest, EachPassDoesItsJobAndKeepsOutputs) {
  Graph g = ConvBnReluNet();
  auto in = reference::RandomTensor({2, 4, 6, 6}, 99);
  std::vector<float> expected = RunRef(g, in);

  RECQ_ASSERT_OK_AND_ASSIGN(Graph g1, RemoveIdentities(g));
  EXPECT_EQ(Count(g1, OpType::kIdentity), 0);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g2, EliminateDeadNodes(g1));
  EXPECT_EQ(Count(g2, OpType::kRelu), 1);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g3, FoldBatchNorm(g2));
  EXPECT_EQ(Count(g3, OpType::kBatchNorm), 0);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g4, FuseActivations(g3));
  EXPECT_EQ(Count(g4, OpType::kRelu), 0);
  EXPECT_EQ(Count(g4, OpType::kClip), 0);
  ASSERT_EQ(g4.nodes().size(), 4u);  // conv(+relu), pool, flatten, gemm(+clip)
  EXPECT_EQ(g4.nodes()[0].fused.kind, ActivationKind::kRelu);
  EXPECT_EQ(g4.nodes()[3].fused.kind, ActivationKind::kClip);

  for (const Graph* step : {&g1, &g2, &g3, &g4}) {
    auto cmp = reference::Compare(RunRef(*step, in), expected, 1e-5f, 1e-4f);
    EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  }
}

TEST(PassesTest, DeviceOutputsAgreeWithPassesOnAndOff) {
  Graph g = ConvBnReluNet();
  auto in = reference::RandomTensor({2, 4, 6, 6}, 123);
  EngineOptions off;
  off.optimize = false;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine plain, Engine::Compile(testing::SharedContext(), g, off));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine optimized, Engine::Compile(testing::SharedContext(), g));
  EXPECT_LT(optimized.stats().dispatches, plain.stats().dispatches);
  std::vector<std::vector<float>> results;
  for (Engine* e : {&plain, &optimized}) {
    Tensor x = testing::NewTensor({in.shape}, in.data);
    Tensor y = testing::NewTensor(e->outputs()[0].desc);
    Bindings b;
    b.Set("x", x);
    b.Set("y", y);
    RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, e->Record());
    RECQ_ASSERT_OK(rec.Run(b));
    results.push_back(testing::Download(y));
  }
  auto cmp = reference::Compare(results[1], results[0], 1e-5f, 1e-4f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST(PassesTest, FuseActivationsCrossesAView) {
  // GPT-2's Conv1D: Gemm, Reshape, then GELU; the Gemm applies the GELU.
  GraphBuilder b;
  TensorRef x = b.Input("x", {6, 8});
  TensorRef y = b.FullyConnected(x, Const(b, "w", {12, 8}, 31), Const(b, "b", {12}, 32));
  y = b.Reshape(y, {2, 3, 12});
  b.Output(b.AddNode(OpType("Gelu"), {y}, GeluAttrs{true}), "y");
  Graph g = *std::move(b).Build();
  auto in = reference::RandomTensor({6, 8}, 33);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseActivations(g));
  ASSERT_EQ(fused.nodes().size(), 2u);
  EXPECT_EQ(fused.nodes()[0].fused.kind, ActivationKind::kGeluTanh);
  EXPECT_EQ(fused.nodes()[1].op, OpType::kReshape);
  auto cmp = reference::Compare(RunRef(fused, in), RunRef(g, in), 1e-6f, 1e-6f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(testing::SharedContext(), g));
  EXPECT_EQ(engine.stats().dispatches, 1u);
  cmp = reference::Compare(testing::RunRecorded(engine, "x", in, "y"), RunRef(g, in), 1e-5f, 1e-5f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST(PassesTest, FoldConstantsEvaluatesConstantSubgraphs) {
  // w2 = reshape(transpose(w) * 2) is all constant; only the MatMul and Add
  // depend on the input.
  GraphBuilder b;
  TensorRef x = b.Input("x", {3, 4});
  TensorRef w = Const(b, "w", {5, 4}, 21);
  TensorRef wt = b.AddNode(OpType::kTranspose, {w}, TransposeAttrs{{1, 0}});
  TensorRef w2 = b.AddNode(OpType::kMul, {wt, b.Constant("two", {1}, {2.0f})});
  TensorRef bias = b.Reshape(Const(b, "bias", {5, 1}, 22), {5});
  TensorRef y = b.AddNode(OpType::kMatMul, {x, w2});
  b.Output(b.Add(y, bias), "y");
  Graph g = *std::move(b).Build();
  auto in = reference::RandomTensor({3, 4}, 5);
  std::vector<float> expected = RunRef(g, in);

  RECQ_ASSERT_OK_AND_ASSIGN(Graph folded, FoldConstants(g, testing::SharedContext()));
  ASSERT_EQ(folded.nodes().size(), 2u);
  EXPECT_EQ(folded.nodes()[0].op, OpType::kMatMul);
  EXPECT_EQ(folded.nodes()[1].op, OpType::kAdd);
  auto cmp = reference::Compare(RunRef(folded, in), expected, 1e-6f, 1e-6f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST(PassesTest, FoldConstantsReadsAConstantTwice) {
  // Mul(d, d) of one constant d (a variance of constant weights, as
  // exported weight standardization computes it) folds too.
  const uint64_t seed = std::random_device{}();
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  GraphBuilder b;
  TensorRef x = b.Input("x", {4, 6});
  TensorRef d = b.AddNode(OpType::kSub, {Const(b, "w", {6}, seed), Const(b, "m", {1}, seed + 1)});
  TensorRef sq = b.AddNode(OpType::kMul, {d, d});
  b.Output(b.Add(x, sq), "y");
  Graph g = *std::move(b).Build();
  auto in = reference::RandomTensor({4, 6}, seed + 2);
  std::vector<float> expected = RunRef(g, in);

  RECQ_ASSERT_OK_AND_ASSIGN(Graph folded, FoldConstants(g, testing::SharedContext()));
  ASSERT_EQ(folded.nodes().size(), 1u);
  EXPECT_EQ(folded.nodes()[0].op, OpType::kAdd);
  auto cmp = reference::Compare(RunRef(folded, in), expected, 1e-6f, 1e-6f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST(PassesTest, FoldConstantsHandlesAConstantGraphOutput) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {4});
  b.Output(b.Relu(x), "y");
  TensorRef c = b.Clip(Const(b, "c", {4}, 3, -2.0f, 2.0f), -1.0f, 1.0f);
  b.Output(c, "c_out");
  Graph g = *std::move(b).Build();
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(testing::SharedContext(), g));
  auto in = reference::RandomTensor({4}, 8);
  Tensor tx = testing::NewTensor({{4}}, in.data);
  Tensor ty = testing::NewTensor({{4}});
  Tensor tc = testing::NewTensor({{4}});
  Bindings bindings;
  bindings.Set("x", tx);
  bindings.Set("y", ty);
  bindings.Set("c_out", tc);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record());
  RECQ_ASSERT_OK(rec.Run(bindings));
  absl::flat_hash_map<std::string, reference::HostTensor> feeds;
  feeds["x"] = in;
  auto expected = reference::RunReference(g, feeds);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(testing::Download(ty), expected->at("y").data);
  EXPECT_EQ(testing::Download(tc), expected->at("c_out").data);
}

TEST(PassesTest, NoFusionWhenTheProducerHasOtherConsumers) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 2, 3, 3});
  TensorRef y = b.Conv2D(x, Const(b, "w", {2, 2, 1, 1}, 1), {}, {});
  TensorRef r = b.Relu(y);
  b.Output(b.Add(r, y), "y");
  Graph g = *std::move(b).Build();
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseActivations(g));
  EXPECT_EQ(Count(fused, OpType::kRelu), 1);
}

}  // namespace
}  // namespace recq
