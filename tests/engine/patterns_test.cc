// Pattern passes (engine/patterns/): each rewrites the subgraph it knows and
// keeps the outputs, leaves look-alikes alone, and the engine runs the
// result.
#include <cmath>

#include "engine/ops/layout_attrs.h"
#include "engine/passes.h"
#include "engine/patterns/pattern_table.h"
#include "gtest/gtest.h"
#include "recq/math_op_attrs.h"
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

// Compiles `g` with the passes on and compares its output with the unfused
// graph run by the reference executor.
void ExpectMatchesUnfused(const Graph& g, const std::vector<int64_t>& shape, uint64_t seed) {
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  auto host = reference::RandomTensor(shape, seed, -3.0f, 3.0f);
  auto cmp = reference::Compare(testing::RunRecorded(engine, "x", host, "y"),
                                testing::ReferenceOutput(g, "x", host, "y"), 1e-5f, 1e-4f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TensorRef Scalar(GraphBuilder& b, const std::string& name, float v) {
  return b.Constant(name, {}, {v});
}

// PyTorch's LayerNorm decomposition over the trailing axes from `axis` on.
struct LayerNormForm {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<int64_t> axes;
  bool pow;  // the square as Pow(d, 2), else Mul(d, d)
  bool gamma, beta, swapped;
};

Graph DecomposedLayerNorm(const LayerNormForm& f) {
  GraphBuilder b;
  TensorRef x = b.Input("x", f.shape);
  const ReduceAttrs mean_attrs{f.axes, true, false};
  TensorRef m = b.AddNode(OpType("ReduceMean"), {x}, mean_attrs);
  TensorRef d = b.AddNode(OpType::kSub, {x, m});
  TensorRef sq = f.pow ? b.AddNode(OpType("Pow"), {d, Scalar(b, "two", 2.0f)})
                       : b.AddNode(OpType::kMul, {d, d});
  TensorRef var = b.AddNode(OpType("ReduceMean"), {sq}, mean_attrs);
  TensorRef eps = Scalar(b, "eps", 1e-5f);
  TensorRef ve =
      f.swapped ? b.AddNode(OpType::kAdd, {eps, var}) : b.AddNode(OpType::kAdd, {var, eps});
  TensorRef s = b.AddNode(OpType("Sqrt"), {ve});
  TensorRef y = b.AddNode(OpType::kDiv, {d, s});
  std::vector<int64_t> normalized(f.shape.end() - static_cast<ptrdiff_t>(f.axes.size()),
                                  f.shape.end());
  if (f.gamma) {
    auto w = reference::RandomTensor(normalized, 21, 0.5f, 2.0f);
    TensorRef gamma = b.Constant("gamma", w.shape, w.data);
    y = f.swapped ? b.AddNode(OpType::kMul, {gamma, y}) : b.AddNode(OpType::kMul, {y, gamma});
  }
  if (f.beta) {
    auto w = reference::RandomTensor(normalized, 22, -1.0f, 1.0f);
    TensorRef beta = b.Constant("beta", w.shape, w.data);
    y = f.swapped ? b.AddNode(OpType::kAdd, {beta, y}) : b.AddNode(OpType::kAdd, {y, beta});
  }
  b.Output(y, "y");
  return *std::move(b).Build();
}

TEST(PatternsTest, DecomposedLayerNormBecomesOneNode) {
  for (const LayerNormForm& f :
       {LayerNormForm{"pytorch", {2, 5, 16}, {-1}, true, true, true, false},
        LayerNormForm{"swapped_two_axes", {2, 3, 6, 7}, {2, 3}, true, true, true, true},
        LayerNormForm{"mul_square_no_affine", {4, 33}, {1}, false, false, false, false},
        LayerNormForm{"gamma_only", {1, 49, 96}, {-1}, true, true, false, true}}) {
    SCOPED_TRACE(f.name);
    Graph g = DecomposedLayerNorm(f);
    RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
    ASSERT_EQ(fused.nodes().size(), 1u);
    EXPECT_EQ(fused.nodes()[0].op, OpType("LayerNormalization"));
    ExpectMatchesUnfused(g, f.shape, 23);
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
    EXPECT_EQ(engine.stats().dispatches, 1u);
  }
}

TEST(PatternsTest, LayerNormLookAlikesAreLeftAlone) {
  // The mean over a leading axis, not the trailing ones.
  LayerNormForm f{"axis0", {4, 6}, {0}, true, true, true, false};
  Graph g = DecomposedLayerNorm(f);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(after, OpType("LayerNormalization")), 0);
  EXPECT_EQ(Count(after, OpType("ReduceMean")), 2);
  ExpectMatchesUnfused(g, f.shape, 24);
}

// GELU before opset 20: x * (erf(x / sqrt 2) + 1) * 0.5, in PyTorch's order
// or with the 0.5 applied to x first, and x * (1 / sqrt 2) for the division.
Graph DecomposedGelu(bool half_first, bool mul_form, float divisor = 1.41421356f) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 7, 19});
  TensorRef z = mul_form ? b.AddNode(OpType::kMul, {Scalar(b, "c", 1.0f / divisor), x})
                         : b.AddNode(OpType::kDiv, {x, Scalar(b, "c", divisor)});
  TensorRef e = b.AddNode(OpType("Erf"), {z});
  TensorRef a = b.AddNode(OpType::kAdd, {Scalar(b, "one", 1.0f), e});
  TensorRef y;
  if (half_first) {
    TensorRef h = b.AddNode(OpType::kMul, {x, Scalar(b, "half", 0.5f)});
    y = b.AddNode(OpType::kMul, {a, h});
  } else {
    TensorRef m = b.AddNode(OpType::kMul, {x, a});
    y = b.AddNode(OpType::kMul, {m, Scalar(b, "half", 0.5f)});
  }
  b.Output(y, "y");
  return *std::move(b).Build();
}

TEST(PatternsTest, DecomposedGeluBecomesOneNode) {
  for (bool half_first : {false, true}) {
    for (bool mul_form : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "half_first " << half_first << " mul " << mul_form);
      Graph g = DecomposedGelu(half_first, mul_form);
      RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
      ASSERT_EQ(fused.nodes().size(), 1u);
      EXPECT_EQ(fused.nodes()[0].op, OpType("Gelu"));
      ExpectMatchesUnfused(g, {2, 7, 19}, 25);
      RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
      EXPECT_EQ(engine.stats().dispatches, 1u);
    }
  }
}

TEST(PatternsTest, GeluLookAlikesAreLeftAlone) {
  // erf(x / 2): not the GELU constant.
  Graph g = DecomposedGelu(false, false, 2.0f);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(after, OpType("Gelu")), 0);
  EXPECT_EQ(Count(after, OpType("Erf")), 1);
  ExpectMatchesUnfused(g, {2, 7, 19}, 26);
}

// torch.roll as exported: Concat(x[s:], x[:s]) along the rolled axis, on
// axes 1 (shift 2, positive bounds) and 2 (shift -2 written with negative
// starts and an INT64_MAX end), or a look-alike (`variant`): 1 a slice of
// another tensor, 2 a step of 2 on the first slice, 3 the first slice on
// another axis (all of it), 4 the first slice also a graph output.
Graph Roll(int variant) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 6, 5, 3});
  auto slice = [&](TensorRef from, int64_t axis, int64_t start, int64_t end, int64_t step = 1) {
    internal::SliceAttrs a;
    a.starts = {start};
    a.ends = {end};
    a.axes = {axis};
    a.steps = {step};
    return b.AddNode(OpType("Slice"), {from}, a);
  };
  TensorRef first = variant == 1   ? slice(b.Input("x2", {1, 6, 5, 3}), 1, 4, 6)
                    : variant == 2 ? slice(x, 1, 4, 6, 2)
                    : variant == 3 ? slice(x, 2, 0, 5)
                                   : slice(x, 1, 4, 6);
  TensorRef r1 = b.AddNode(OpType::kConcat, {first, slice(x, 1, 0, 4)}, ConcatAttrs{1});
  TensorRef r2 = b.AddNode(OpType::kConcat, {slice(r1, -2, -2, INT64_MAX), slice(r1, 2, 0, -2)},
                           ConcatAttrs{2});
  b.Output(r2, "y");
  if (variant == 4) b.Output(first, "first");
  return *std::move(b).Build();
}

TEST(PatternsTest, RollBecomesOneGatherPerAxis) {
  Graph g = Roll(0);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(fused, OpType::kConcat), 0);
  EXPECT_EQ(Count(fused, OpType("Slice")), 0);
  EXPECT_EQ(Count(fused, OpType("Gather")), 2);
  for (auto target : {EngineOptions::KernelTarget::kCpu, EngineOptions::KernelTarget::kGpu}) {
    EngineOptions options;
    options.kernel_target = target;
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, options));
    EXPECT_EQ(engine.stats().dispatches, 2u);
  }
  // The values: y[c, w] = x[(c + 4) % 6, (w + 3) % 5] against the unfused
  // graph's reference.
  ExpectMatchesUnfused(g, {1, 6, 5, 3}, 31);
}

TEST(PatternsTest, RollLookAlikesAreLeftAlone) {
  for (int variant = 1; variant <= 4; ++variant) {
    SCOPED_TRACE(::testing::Message() << "variant " << variant);
    Graph g = Roll(variant);
    RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(g));
    // The first axis keeps its Concat; the second still becomes a Gather.
    EXPECT_EQ(Count(after, OpType::kConcat), 1);
    EXPECT_EQ(Count(after, OpType("Gather")), 1);
  }
}

// x[:, 1:5] then [:, :, 1:7:2] (`same_axis`: then [:, 1:3] again, which
// stays two Slices; `shared`: the first slice is also a graph output).
Graph TwoSlices(bool same_axis, bool shared) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 6, 8, 5});
  auto slice = [&](TensorRef from, int64_t axis, int64_t start, int64_t end, int64_t step) {
    internal::SliceAttrs a;
    a.starts = {start};
    a.ends = {end};
    a.axes = {axis};
    a.steps = {step};
    return b.AddNode(OpType("Slice"), {from}, a);
  };
  TensorRef first = slice(x, 1, 1, 5, 1);
  TensorRef second = same_axis ? slice(first, 1, 1, 3, 1) : slice(first, -2, 1, 7, 2);
  b.Output(second, "y");
  if (shared) b.Output(first, "first");
  return *std::move(b).Build();
}

TEST(PatternsTest, SlicesOnDifferentAxesMerge) {
  Graph g = TwoSlices(false, false);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(fused, OpType("Slice")), 1);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  EXPECT_EQ(engine.stats().dispatches, 1u);
  ExpectMatchesUnfused(g, {1, 6, 8, 5}, 32);
  for (bool same_axis : {false, true}) {
    Graph look_alike = TwoSlices(same_axis, !same_axis);
    RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(look_alike));
    EXPECT_EQ(Count(after, OpType("Slice")), 2) << (same_axis ? "same axis" : "shared");
  }
  ExpectMatchesUnfused(TwoSlices(true, false), {1, 6, 8, 5}, 33);
}

}  // namespace
}  // namespace recq
