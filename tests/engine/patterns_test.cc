// Pattern passes (engine/patterns/): each rewrites the subgraph it knows and
// keeps the outputs, leaves look-alikes alone, and the engine runs the
// result.
#include <cmath>

#include "engine/passes.h"
#include "engine/patterns/pattern_table.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using testing::NewTensor;
using testing::SharedContext;

int Count(const Graph& g, OpType op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

// conv -> x; y = Mul(x, Sigmoid(x)) (as PyTorch exports SiLU), operands in
// either order.
Graph ConvSilu(bool sigmoid_first) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 4, 7, 7});
  auto w = reference::RandomTensor({8, 4, 3, 3}, 11);
  Conv2DAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  TensorRef c = b.Conv2D(x, b.Constant("w", w.shape, w.data), {}, attrs);
  TensorRef s = b.AddNode(OpType::kSigmoid, {c});
  TensorRef y = sigmoid_first ? b.AddNode(OpType::kMul, {s, c}) : b.AddNode(OpType::kMul, {c, s});
  b.Output(y, "y");
  return *std::move(b).Build();
}

TEST(PatternsTest, TheSiluPatternIsRegistered) {
  bool found = false;
  for (const internal::PatternPass& p : internal::PatternPasses()) found |= p.name == "silu";
  EXPECT_TRUE(found);
}

TEST(PatternsTest, SiluBecomesOneActivationFusedIntoTheConv) {
  for (bool sigmoid_first : {false, true}) {
    SCOPED_TRACE(sigmoid_first ? "Mul(sigmoid, x)" : "Mul(x, sigmoid)");
    Graph g = ConvSilu(sigmoid_first);
    RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
    EXPECT_EQ(Count(fused, OpType::kSigmoid), 0);
    EXPECT_EQ(Count(fused, OpType::kMul), 0);
    EXPECT_EQ(Count(fused, OpType("Silu")), 1);

    RECQ_ASSERT_OK_AND_ASSIGN(Graph optimized, internal::Optimize(g, SharedContext()));
    ASSERT_EQ(optimized.nodes().size(), 1u);
    EXPECT_EQ(optimized.nodes()[0].fused.kind, ActivationKind::kSilu);

    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
    EXPECT_EQ(engine.stats().dispatches, 1u);
    auto host = reference::RandomTensor({1, 4, 7, 7}, 12, -2.0f, 2.0f);
    // The unfused graph is the reference.
    auto cmp = reference::Compare(testing::RunRecorded(engine, "x", host, "y"),
                                  testing::ReferenceOutput(g, "x", host, "y"), 1e-5f, 1e-4f);
    EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  }
}

TEST(PatternsTest, LookAlikesAreLeftAlone) {
  // A gate: Mul(y, Sigmoid(x)) with y != x (a squeeze-excitation block).
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 8});
  TensorRef z = b.Input("z", {2, 8});
  TensorRef gate = b.AddNode(OpType::kMul, {z, b.AddNode(OpType::kSigmoid, {x})});
  b.Output(gate, "y");
  // The sigmoid also read elsewhere.
  TensorRef s2 = b.AddNode(OpType::kSigmoid, {z});
  b.Output(b.AddNode(OpType::kMul, {z, s2}), "y2");
  b.Output(s2, "s2");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, std::move(b).Build());
  RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(after, OpType::kSigmoid), 2);
  EXPECT_EQ(Count(after, OpType::kMul), 2);
  EXPECT_EQ(Count(after, OpType("Silu")), 0);
}

}  // namespace
}  // namespace recq
