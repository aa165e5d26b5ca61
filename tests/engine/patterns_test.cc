// Pattern passes (engine/patterns/): each rewrites the subgraph it knows and
// keeps the outputs, leaves look-alikes alone, and the engine runs the
// result.
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/layout_attrs.h"
#include "engine/ops/plane_concat.h"
#include "engine/passes.h"
#include "engine/patterns/pattern_table.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "recq/engine_file.h"
#include "recq/math_op_attrs.h"
#include "recq/onnx.h"
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

// Compiles `g` for each kernel family, expects `cpu` and `gpu` dispatches,
// and compares the output with the unfused graph run by the reference
// executor, on inputs in [-2, 2].
void ExpectDispatchesPerFamily(const Graph& g, const std::vector<int64_t>& shape, uint64_t seed,
                               size_t cpu, size_t gpu) {
  for (auto target : {EngineOptions::KernelTarget::kCpu, EngineOptions::KernelTarget::kGpu}) {
    const bool on_gpu = target == EngineOptions::KernelTarget::kGpu;
    SCOPED_TRACE(on_gpu ? "gpu kernels" : "cpu kernels");
    EngineOptions options;
    options.kernel_target = target;
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, options));
    EXPECT_EQ(engine.stats().dispatches, on_gpu ? gpu : cpu);
    auto host = reference::RandomTensor(shape, seed, -2.0f, 2.0f);
    auto cmp = reference::Compare(testing::RunRecorded(engine, "x", host, "y"),
                                  testing::ReferenceOutput(g, "x", host, "y"), 1e-5f, 1e-4f);
    EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  }
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

    // The convolution's own dispatches only: on CPUs its panels' copy and
    // the product, whose epilogue applies the SiLU; one kernel on GPUs.
    ExpectDispatchesPerFamily(g, {1, 4, 7, 7}, 12, /*cpu=*/2, /*gpu=*/1);
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

// GELU's tanh approximation as GPT-2 exports it (`cubic` the Pow's
// coefficient: 0.044715, or a look-alike).
Graph DecomposedGeluTanh(bool half_first, float cubic = 0.044715f) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 7, 19});
  TensorRef p = b.AddNode(OpType("Pow"), {x, Scalar(b, "three", 3.0f)});
  TensorRef w = b.AddNode(OpType::kMul, {Scalar(b, "cubic", cubic), p});
  TensorRef v = b.AddNode(OpType::kAdd, {x, w});
  TensorRef u = b.AddNode(OpType::kMul, {v, Scalar(b, "c", std::sqrt(2.0f / float(M_PI)))});
  TensorRef a = b.AddNode(OpType::kAdd, {b.AddNode(OpType("Tanh"), {u}), Scalar(b, "one", 1.0f)});
  TensorRef y;
  if (half_first) {
    y = b.AddNode(OpType::kMul, {b.AddNode(OpType::kMul, {x, Scalar(b, "half", 0.5f)}), a});
  } else {
    y = b.AddNode(OpType::kMul, {b.AddNode(OpType::kMul, {x, a}), Scalar(b, "half", 0.5f)});
  }
  b.Output(y, "y");
  return *std::move(b).Build();
}

TEST(PatternsTest, TanhGeluBecomesOneNode) {
  for (bool half_first : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "half_first " << half_first);
    Graph g = DecomposedGeluTanh(half_first);
    RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
    ASSERT_EQ(fused.nodes().size(), 1u);
    EXPECT_EQ(fused.nodes()[0].op, OpType("Gelu"));
    ExpectMatchesUnfused(g, {2, 7, 19}, 27);
  }
  // Another cubic coefficient is not GELU.
  Graph g = DecomposedGeluTanh(true, 0.05f);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(after, OpType("Gelu")), 0);
  ExpectMatchesUnfused(g, {2, 7, 19}, 28);
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

// ShuffleNet's channel shuffle and split: x [1, 8, 5, 6] as [1, 2, 4, 5, 6],
// transposed by `perm`, viewed as [1, 8, 5, 6] and split in two halves of
// channels, y = the halves' sum. `shared`: the shuffled tensor is also a
// graph output.
Graph ShuffleSplit(std::vector<int64_t> perm, bool shared) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 5, 6});
  TensorRef t = b.AddNode(OpType::kTranspose, {b.Reshape(x, {1, 2, 4, 5, 6})},
                          TransposeAttrs{std::move(perm)});
  TensorRef r = b.Reshape(t, {1, 8, 5, 6});
  auto half = [&](int64_t start) {
    internal::SliceAttrs a;
    a.starts = {start};
    a.ends = {start + 4};
    a.axes = {1};
    return b.AddNode(OpType("Slice"), {r}, a);
  };
  b.Output(b.AddNode(OpType::kAdd, {half(0), half(4)}), "y");
  if (shared) b.Output(r, "shuffled");
  return *std::move(b).Build();
}

TEST(PatternsTest, SlicesOfAChannelShuffleBecomeGathers) {
  Graph g = ShuffleSplit({0, 2, 1, 3, 4}, false);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(fused, OpType::kTranspose), 0);
  EXPECT_EQ(Count(fused, OpType("Slice")), 0);
  EXPECT_EQ(Count(fused, OpType("Gather")), 2);
  for (const Node& node : fused.nodes()) {
    if (node.op != OpType("Gather")) continue;
    // Shuffled channel j is channel (j % 2) * 4 + j / 2.
    const auto* a = node.attrs.get_if<internal::GatherAttrs>();
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->axis, 1);
    EXPECT_TRUE(a->indices == std::vector<int64_t>({0, 4, 1, 5}) ||
                a->indices == std::vector<int64_t>({2, 6, 3, 7}))
        << absl::StrJoin(a->indices, ",");
  }
  for (auto target : {EngineOptions::KernelTarget::kCpu, EngineOptions::KernelTarget::kGpu}) {
    EngineOptions options;
    options.kernel_target = target;
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, options));
    EXPECT_EQ(engine.stats().dispatches, 3u);  // two gathers and the Add
  }
  ExpectMatchesUnfused(g, {1, 8, 5, 6}, 34);
}

TEST(PatternsTest, ChannelShuffleLookAlikesKeepTheirTranspose) {
  // The planes transposed too: no gather along the channels reads that.
  Graph planes = ShuffleSplit({0, 1, 2, 4, 3}, false);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(planes));
  EXPECT_EQ(Count(after, OpType::kTranspose), 1);
  EXPECT_EQ(Count(after, OpType("Gather")), 0);
  ExpectMatchesUnfused(planes, {1, 8, 5, 6}, 35);
  // The shuffled tensor is an output: the Slices still become Gathers (the
  // values of the first test's), the Transpose stays for the output.
  Graph shared = ShuffleSplit({0, 2, 1, 3, 4}, true);
  RECQ_ASSERT_OK_AND_ASSIGN(after, internal::RunPatternPasses(shared));
  EXPECT_EQ(Count(after, OpType::kTranspose), 1);
  EXPECT_EQ(Count(after, OpType("Gather")), 2);
}

// A ShuffleNet V2 block: x [1, 8, 5, 6] shuffled and split as above, the
// first half bypassing the branch, y = Concat(first half, branch(second
// half)) along the channels. The branch: a Relu, or (`conv`) a 1x1
// convolution of 4 channels as ShuffleNet's branches start.
Graph ShuffleBlock(bool conv) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 5, 6});
  TensorRef t = b.AddNode(OpType::kTranspose, {b.Reshape(x, {1, 2, 4, 5, 6})},
                          TransposeAttrs{{0, 2, 1, 3, 4}});
  TensorRef r = b.Reshape(t, {1, 8, 5, 6});
  auto half = [&](int64_t start) {
    internal::SliceAttrs a;
    a.starts = {start};
    a.ends = {start + 4};
    a.axes = {1};
    return b.AddNode(OpType("Slice"), {r}, a);
  };
  TensorRef branch;
  if (conv) {
    auto w = reference::RandomTensor({4, 4, 1, 1}, 37);
    branch = b.Conv2D(half(4), b.Constant("w", w.shape, w.data), {}, {});
  } else {
    branch = b.Relu(half(4));
  }
  b.Output(b.AddNode(OpType::kConcat, {half(0), branch}, ConcatAttrs{1}), "y");
  return *std::move(b).Build();
}

TEST(PatternsTest, AConcatOfAGatherReadsItsPlanes) {
  Graph g = ShuffleBlock(false);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(fused, OpType::kConcat), 0);
  EXPECT_EQ(Count(fused, OpType("PlaneConcat")), 1);
  EXPECT_EQ(Count(fused, OpType("Gather")), 1);  // the branch's half
  for (const Node& node : fused.nodes()) {
    if (node.op != OpType("PlaneConcat")) continue;
    const auto* a = node.attrs.get_if<internal::PlaneConcatAttrs>();
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->axis, 1);
    // The bypassing half: shuffled channels 0..3 of x; then the branch's 4.
    EXPECT_EQ(a->source, std::vector<int32_t>({0, 0, 0, 0, 1, 1, 1, 1}));
    EXPECT_EQ(a->plane, std::vector<int32_t>({0, 4, 1, 5, 0, 1, 2, 3}));
  }
  for (auto target : {EngineOptions::KernelTarget::kCpu, EngineOptions::KernelTarget::kGpu}) {
    EngineOptions options;
    options.kernel_target = target;
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, options));
    EXPECT_EQ(engine.stats().dispatches, 3u);  // the branch's gather, the Relu, the concat
  }
  ExpectMatchesUnfused(g, {1, 8, 5, 6}, 36);
}

TEST(PatternsTest, AConvolutionOfAGatherReadsTheSourceWithScatteredWeights) {
  Graph g = ShuffleBlock(true);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(fused, OpType("Gather")), 0);
  EXPECT_EQ(Count(fused, OpType("PlaneConcat")), 1);
  for (const Node& node : fused.nodes()) {
    if (node.op != OpType::kConv2D) continue;
    EXPECT_EQ(fused.value(node.inputs[0]).name, "x");
    EXPECT_EQ(fused.value(node.inputs[1]).desc.shape, std::vector<int64_t>({4, 8, 1, 1}));
  }
  for (auto target : {EngineOptions::KernelTarget::kCpu, EngineOptions::KernelTarget::kGpu}) {
    EngineOptions options;
    options.kernel_target = target;
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, options));
    EXPECT_EQ(engine.stats().dispatches, 2u);  // the convolution and the concat
  }
  ExpectMatchesUnfused(g, {1, 8, 5, 6}, 38);
}

// A DenseNet layer's input: Concat(x, conv(x)) along the channels, then
// BatchNorm and ReLU. `shared`: the Concat's output is also a graph output.
Graph DenseInput(bool shared) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 4, 6, 6});
  auto w = reference::RandomTensor({4, 4, 1, 1}, 39);
  TensorRef cat = b.AddNode(
      OpType::kConcat, {x, b.Conv2D(x, b.Constant("w", w.shape, w.data), {}, {})}, ConcatAttrs{1});
  auto param = [&](const char* name, uint64_t seed, float lo) {
    auto t = reference::RandomTensor({8}, seed, lo, lo + 1.0f);
    return b.Constant(name, t.shape, t.data);
  };
  b.Output(b.Relu(b.BatchNorm(cat, param("scale", 40, 0.5f), param("bias", 41, -0.5f),
                              param("mean", 42, -0.5f), param("var", 43, 0.5f))),
           "y");
  if (shared) b.Output(cat, "cat");
  return *std::move(b).Build();
}

TEST(PatternsTest, AConcatNormalizedAfterwardsWritesTheNormalizedChannels) {
  Graph g = DenseInput(false);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph optimized, internal::Optimize(g, SharedContext()));
  EXPECT_EQ(Count(optimized, OpType::kBatchNorm), 0);
  EXPECT_EQ(Count(optimized, OpType::kConcat), 0);
  ASSERT_EQ(Count(optimized, OpType("AffineConcat")), 1);
  for (const Node& node : optimized.nodes()) {
    if (node.op == OpType("AffineConcat")) {
      EXPECT_EQ(node.fused.kind, ActivationKind::kRelu);
    }
  }
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  EXPECT_EQ(engine.stats().dispatches, 2u);  // the convolution and the concat
  ExpectMatchesUnfused(g, {1, 4, 6, 6}, 44);
  // The raw concatenation read elsewhere: left as it is.
  RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(DenseInput(true)));
  EXPECT_EQ(Count(after, OpType("AffineConcat")), 0);
  EXPECT_EQ(Count(after, OpType::kBatchNorm), 1);
}

// x [b, 6, 8] -> Transpose(1, 0, 2) -> Relu -> y: with b = 1 the
// Transpose moves only a dimension of size 1 (MultiheadAttention's batch).
Graph BatchFirstTranspose(int64_t batch) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {batch, 6, 8});
  TensorRef t = b.AddNode(OpType::kTranspose, {x}, TransposeAttrs{{1, 0, 2}});
  b.Output(b.AddNode(OpType::kRelu, {t}), "y");
  return *std::move(b).Build();
}

TEST(PatternsTest, TransposesOfUnitDimensionsBecomeViews) {
  Graph g = BatchFirstTranspose(1);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(fused, OpType::kTranspose), 0);
  EXPECT_EQ(Count(fused, OpType::kReshape), 1);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  EXPECT_EQ(engine.stats().dispatches, 1u);  // the Relu alone
  ExpectMatchesUnfused(g, {1, 6, 8}, 36);
  // Batch 2: the Transpose moves data and stays.
  Graph moved = BatchFirstTranspose(2);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(moved));
  EXPECT_EQ(Count(after, OpType::kTranspose), 1);
  ExpectMatchesUnfused(moved, {2, 6, 8}, 37);
}

// A GPU engine file of a graph whose Transpose the GPU kernels read in
// place (batch 2: the Relu reads the Transpose's source through its
// permutation) loads: the load re-optimizes the stored graph as the
// compile did.
TEST(PatternsTest, GpuEngineFileOfATransposeReadInPlaceLoads) {
  Graph g = BatchFirstTranspose(2);
  EngineOptions options;
  options.kernel_target = EngineOptions::KernelTarget::kGpu;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, options));
  EXPECT_EQ(engine.stats().dispatches, 1u);
  absl::StatusOr<std::string> bytes = engine.Serialize();
  if (absl::IsUnimplemented(bytes.status())) GTEST_SKIP() << bytes.status();
  RECQ_ASSERT_OK(bytes.status());
  absl::StatusOr<Engine> loaded = LoadEngineFromBytes(SharedContext(), *bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto host = reference::RandomTensor({2, 6, 8}, 38, -2.0f, 2.0f);
  EXPECT_EQ(testing::RunRecorded(*loaded, "x", host, "y"),
            testing::RunRecorded(engine, "x", host, "y"));
}

// --- attention ---

// The exported attention forms, small: L tokens of E = H * D channels.
enum class AttentionForm {
  kTorchScriptMha,  // ViT's nn.MultiheadAttention through the TorchScript exporter
  kDynamoSdpa,      // F.scaled_dot_product_attention through the dynamo exporter
  kBert,            // hand-written, Div by sqrt(d), additive [B, 1, 1, L] mask
  kSwinShifted,     // hand-written, q * scale, bias, window mask in 5-D
  kGpt2Sdpa,        // GPT-2's packed QKV split by Slices, SDPA's NaN guard after the softmax
};

struct AttentionDims {
  int64_t b, l, h, d;
  int64_t e() const { return h * d; }
};

TensorRef Weights(GraphBuilder& b, const std::string& name, std::vector<int64_t> shape,
                  uint64_t seed) {
  auto w = reference::RandomTensor(shape, seed, -0.3f, 0.3f);
  return b.Constant(name, w.shape, w.data);
}

TensorRef Perm(GraphBuilder& b, TensorRef x, std::vector<int64_t> perm) {
  return b.AddNode(OpType::kTranspose, {x}, TransposeAttrs{std::move(perm)});
}

TensorRef Pick(GraphBuilder& b, TensorRef x, int64_t index) {
  internal::GatherAttrs a;
  a.axis = 0;
  a.indices = {index};
  return b.AddNode(OpType("Gather"), {x}, a);
}

TensorRef Linear(GraphBuilder& b, TensorRef x, int64_t in, int64_t out, uint64_t seed) {
  TensorRef y =
      b.AddNode(OpType("MatMul"), {x, Weights(b, absl::StrCat("w", seed), {in, out}, seed)});
  return b.Add(y, Weights(b, absl::StrCat("bias", seed), {out}, seed + 1));
}

// softmax(QK^T * scale + masks) V for Q [.., L, D] and K^T [.., D, L].
TensorRef Scores(GraphBuilder& b, TensorRef q, TensorRef kt) {
  return b.AddNode(OpType("MatMul"), {q, kt});
}

Graph AttentionGraph(AttentionForm form, const AttentionDims& s) {
  GraphBuilder b;
  const int64_t B = s.b, L = s.l, H = s.h, D = s.d, E = s.e();
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  TensorRef y;
  switch (form) {
    case AttentionForm::kTorchScriptMha: {
      // x [L, B, E] (batch_first transposed away); packed in-projection.
      TensorRef x = b.Input("x", {L, B, E});
      TensorRef proj = Linear(b, x, E, 3 * E, 41);
      TensorRef p = b.Reshape(proj, {L, B, 3, E});
      p = b.Reshape(p, {1, L, B, 3, E});
      p = Perm(b, p, {3, 1, 2, 0, 4});
      p = b.Reshape(p, {3, L, B, E});
      auto heads = [&](int64_t i) {
        TensorRef t = b.Reshape(Pick(b, p, i), {L, B * H, D});
        return b.Reshape(Perm(b, t, {1, 0, 2}), {B, H, L, D});
      };
      TensorRef sq = Scalar(b, "sqrt_scale", std::sqrt(scale));
      TensorRef q = b.AddNode(OpType::kMul, {heads(0), sq});
      TensorRef kt = b.AddNode(OpType::kMul, {Perm(b, heads(1), {0, 1, 3, 2}), sq});
      TensorRef a = b.Softmax(Scores(b, q, kt), -1);
      TensorRef o = b.AddNode(OpType("MatMul"), {a, heads(2)});
      o = b.Reshape(Perm(b, o, {2, 0, 1, 3}), {B * L, E});
      y = b.Reshape(b.AddNode(OpType("MatMul"), {o, Weights(b, "wo", {E, E}, 43)}), {L, B, E});
      break;
    }
    case AttentionForm::kDynamoSdpa: {
      TensorRef x = b.Input("x", {B, L, E});
      auto heads = [&](uint64_t seed) {
        return Perm(b, b.Reshape(Linear(b, x, E, E, seed), {B, L, H, D}), {0, 2, 1, 3});
      };
      TensorRef q = heads(51), k = heads(53), v = heads(55);
      TensorRef kt = b.Reshape(Perm(b, b.Reshape(k, {-1, L, D}), {0, 2, 1}), {B, H, D, L});
      TensorRef sq = Scalar(b, "sqrt_scale", std::sqrt(scale));
      TensorRef sk = Scalar(b, "sqrt_scale_k", std::sqrt(scale));
      TensorRef a = b.Softmax(
          Scores(b, b.AddNode(OpType::kMul, {q, sq}), b.AddNode(OpType::kMul, {kt, sk})), -1);
      TensorRef o = b.AddNode(OpType("MatMul"), {a, v});
      y = b.Reshape(Perm(b, o, {0, 2, 1, 3}), {B, L, E});
      break;
    }
    case AttentionForm::kBert: {
      TensorRef x = b.Input("x", {B, L, E});
      // m [B, L]: 1 keep, 0 pad; (1 - m) * -10000 as [B, 1, 1, L].
      TensorRef m = b.Input("m", {B, L});
      TensorRef mask =
          b.Reshape(b.AddNode(OpType::kMul, {b.AddNode(OpType::kSub, {Scalar(b, "one", 1.0f), m}),
                                             Scalar(b, "neg", -10000.0f)}),
                    {B, 1, 1, L});
      auto split = [&](uint64_t seed) { return b.Reshape(Linear(b, x, E, E, seed), {B, L, H, D}); };
      TensorRef q = Perm(b, split(61), {0, 2, 1, 3});
      TensorRef kt = Perm(b, split(63), {0, 2, 3, 1});
      TensorRef v = Perm(b, split(65), {0, 2, 1, 3});
      TensorRef sc =
          b.AddNode(OpType::kDiv, {Scores(b, q, kt), Scalar(b, "sqrt_d", std::sqrt(float(D)))});
      TensorRef a = b.Softmax(b.Add(sc, mask), 3);
      TensorRef o = b.AddNode(OpType("MatMul"), {a, v});
      y = b.Reshape(Perm(b, o, {0, 2, 1, 3}), {B, L, E});
      break;
    }
    case AttentionForm::kSwinShifted: {
      // B windows of the image batch 1... as B_ = B windows, nW = B.
      const int64_t nw = B;
      TensorRef x = b.Input("x", {B, L, E});
      TensorRef qkv =
          Perm(b, b.Reshape(Linear(b, x, E, 3 * E, 71), {B, L, 3, H, D}), {2, 0, 3, 1, 4});
      TensorRef q = b.AddNode(OpType::kMul, {Pick(b, qkv, 0), Scalar(b, "scale", scale)});
      TensorRef kt = Perm(b, Pick(b, qkv, 1), {0, 1, 3, 2});
      TensorRef sc = b.Add(Scores(b, q, kt), Weights(b, "rel_bias", {1, H, L, L}, 73));
      sc = b.Reshape(sc, {B / nw, nw, H, L, L});
      auto wm = reference::RandomTensor({1, nw, 1, L, L}, 75, 0.0f, 2.0f);
      for (float& v : wm.data) v = v >= 1.0f ? -100.0f : 0.0f;
      sc = b.Add(sc, b.Constant("window_mask", wm.shape, wm.data));
      sc = b.Reshape(sc, {-1, H, L, L});
      TensorRef a = b.Softmax(sc, -1);
      TensorRef o = b.AddNode(OpType("MatMul"), {a, Pick(b, qkv, 2)});
      y = b.Reshape(Perm(b, o, {0, 2, 1, 3}), {B, L, E});
      break;
    }
    case AttentionForm::kGpt2Sdpa: {
      TensorRef x = b.Input("x", {B, L, E});
      TensorRef qkv = Linear(b, x, E, 3 * E, 81);
      auto heads = [&](int64_t i) {
        TensorRef t = b.AddNode(OpType("Slice"), {qkv},
                                internal::SliceAttrs{{i * E}, {(i + 1) * E}, {2}, {}});
        return Perm(b, b.Reshape(t, {B, L, H, D}), {0, 2, 1, 3});
      };
      TensorRef sq = Scalar(b, "sqrt_scale", std::sqrt(scale));
      TensorRef kt = b.AddNode(OpType::kMul, {Perm(b, heads(1), {0, 1, 3, 2}), sq});
      TensorRef a = b.Softmax(Scores(b, b.AddNode(OpType::kMul, {heads(0), sq}), kt), -1);
      TensorRef nan = b.AddNode(OpType("IsNaN"), {a});
      a = b.AddNode(OpType("Where"), {nan, Scalar(b, "zero", 0.0f), a});
      TensorRef o = b.AddNode(OpType("MatMul"), {a, heads(2)});
      y = b.Reshape(Perm(b, o, {0, 2, 1, 3}), {B, L, E});
      break;
    }
  }
  b.Output(y, "y");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

// Runs `g` on the device (passes on) with random inputs (inputs named "m"
// hold 0 or 1) and compares with the reference executor's run of `g`
// itself, unfused: |d - r| <= 1e-5 + 1e-4 |r| per element.
void ExpectAttentionMatchesUnfused(const Graph& g, const EngineOptions& options, uint64_t seed) {
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, options));
  absl::flat_hash_map<std::string, reference::HostTensor> inputs;
  Bindings bindings;
  std::vector<Tensor> keep;
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    reference::HostTensor t = reference::RandomTensor(v.desc.shape, seed++, -1.0f, 1.0f);
    if (v.name == "m") {
      for (float& f : t.data) f = f > -0.3f ? 1.0f : 0.0f;
    }
    if (v.desc.dtype == DataType::kInt64) {
      RECQ_ASSERT_OK_AND_ASSIGN(Tensor ints, Tensor::Allocate(SharedContext(), v.desc));
      RECQ_ASSERT_OK(ints.Upload(std::vector<int64_t>(t.data.begin(), t.data.end())));
      keep.push_back(std::move(ints));
      t.dtype = DataType::kInt64;
    } else {
      keep.push_back(NewTensor(v.desc, t.data));
    }
    bindings.Set(v.name, keep.back());
    inputs[v.name] = std::move(t);
  }
  const BindingInfo& out = engine.outputs()[0];
  Tensor y = NewTensor(out.desc);
  bindings.Set(out.name, y);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record());
  RECQ_ASSERT_OK(rec.Run(bindings));
  auto expected = reference::RunReference(g, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto cmp = reference::Compare(Download(y), expected->at(out.name).data, 1e-5f, 1e-4f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST(PatternsTest, ExportedAttentionBecomesOneNode) {
  const AttentionDims dims[] = {{1, 17, 4, 8}, {2, 9, 2, 16}};
  for (AttentionForm form :
       {AttentionForm::kTorchScriptMha, AttentionForm::kDynamoSdpa, AttentionForm::kBert,
        AttentionForm::kSwinShifted, AttentionForm::kGpt2Sdpa}) {
    for (const AttentionDims& s : dims) {
      SCOPED_TRACE(::testing::Message() << "form " << static_cast<int>(form) << ", B=" << s.b
                                        << " L=" << s.l << " H=" << s.h << " D=" << s.d);
      Graph g = AttentionGraph(form, s);
      ASSERT_FALSE(g.nodes().empty());
      RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
      EXPECT_EQ(Count(fused, OpType("Attention")), 1);
      EXPECT_EQ(Count(fused, OpType::kSoftmax), 0);
      // Only the projections' products stay; every Transpose and Gather
      // folds into the fused node's views.
      EXPECT_EQ(Count(fused, OpType::kTranspose), 0);
      EXPECT_EQ(Count(fused, OpType("Gather")), 0);
      for (auto target : {EngineOptions::KernelTarget::kCpu, EngineOptions::KernelTarget::kGpu}) {
        SCOPED_TRACE(target == EngineOptions::KernelTarget::kCpu ? "cpu" : "gpu");
        EngineOptions options;
        options.kernel_target = target;
        EngineOptions unfused = options;
        unfused.optimize = false;
        RECQ_ASSERT_OK_AND_ASSIGN(Engine a, Engine::Compile(SharedContext(), g, options));
        RECQ_ASSERT_OK_AND_ASSIGN(Engine b, Engine::Compile(SharedContext(), g, unfused));
        EXPECT_LT(a.stats().dispatches + 4, b.stats().dispatches);
        ExpectAttentionMatchesUnfused(g, options, 81);
      }
    }
  }
}

TEST(PatternsTest, AttentionLookAlikesAreLeftAlone) {
  // The probabilities also a graph output (need_weights), and a softmax
  // over another axis.
  for (int variant = 0; variant < 2; ++variant) {
    GraphBuilder b;
    TensorRef q = b.Input("q", {2, 5, 8});
    TensorRef k = b.Input("k", {2, 8, 5});
    TensorRef v = b.Input("v", {2, 5, 8});
    TensorRef a = b.Softmax(b.AddNode(OpType("MatMul"), {q, k}), variant == 0 ? -1 : 1);
    b.Output(b.AddNode(OpType("MatMul"), {a, v}), "y");
    if (variant == 0) b.Output(a, "p");
    RECQ_ASSERT_OK_AND_ASSIGN(Graph g, std::move(b).Build());
    RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(g));
    EXPECT_EQ(Count(after, OpType("Attention")), 0) << "variant " << variant;
    EXPECT_EQ(Count(after, OpType::kSoftmax), 1);
  }
}

// The same forms as ONNX nodes, imported: the shape arithmetic exporters
// write (Shape, Slice, Concat, Cast, Sqrt of the scale), Unsqueeze and
// Squeeze, Gathers of scalar indices, Softmax over axis -1 and over axis 3
// at opset 11.
class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset) {
    model_.set_ir_version(8);
    auto* id = model_.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
  }
  void Input(const std::string& name, std::vector<int64_t> shape,
             int type = onnx::TensorProto::FLOAT) {
    auto* t = g()->add_input();
    t->set_name(name);
    auto* tt = t->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void Output(const std::string& name) {
    auto* v = g()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  std::string Ints(std::vector<int64_t> dims, std::vector<int64_t> values) {
    auto* t = g()->add_initializer();
    t->set_name(absl::StrCat("i", next_++));
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return t->name();
  }
  std::string Floats(std::vector<int64_t> dims, uint64_t seed, float lo = -0.3f, float hi = 0.3f) {
    auto r = reference::RandomTensor(dims, seed, lo, hi);
    return FloatData(dims, r.data);
  }
  std::string FloatData(std::vector<int64_t> dims, const std::vector<float>& data) {
    auto* t = g()->add_initializer();
    t->set_name(absl::StrCat("f", next_++));
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : data) t->add_float_data(v);
    return t->name();
  }
  // Node adds a node with one output and returns the output's name.
  std::string Node(const std::string& op, std::vector<std::string> in,
                   std::vector<std::pair<std::string, std::vector<int64_t>>> ints = {}) {
    auto* n = g()->add_node();
    n->set_op_type(op);
    const std::string out = absl::StrCat(op, "_", next_++);
    n->set_name(out);
    for (auto& s : in) n->add_input(s);
    n->add_output(out);
    for (auto& [name, values] : ints) {
      auto* a = n->add_attribute();
      a->set_name(name);
      // "perm" and "axes" are lists; the rest single ints.
      if (name == "perm" || name == "axes") {
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : values) a->add_ints(v);
      } else {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(values[0]);
      }
    }
    return out;
  }
  void Rename(const std::string& from, const std::string& to) {
    for (auto& n : *g()->mutable_node()) {
      for (auto& o : *n.mutable_output()) {
        if (o == from) o = to;
      }
    }
  }
  std::string Bytes() const {
    std::string b;
    model_.SerializeToString(&b);
    return b;
  }

 private:
  onnx::GraphProto* g() { return model_.mutable_graph(); }
  onnx::ModelProto model_;
  int next_ = 0;
};

std::string OnnxAttention(AttentionForm form, const AttentionDims& s) {
  const int64_t B = s.b, L = s.l, H = s.h, D = s.d, E = s.e();
  OnnxModel m(form == AttentionForm::kBert ? 11 : (form == AttentionForm::kDynamoSdpa ? 18 : 17));
  auto linear = [&](const std::string& x, int64_t in, int64_t out, uint64_t seed) {
    return m.Node("Add",
                  {m.Node("MatMul", {x, m.Floats({in, out}, seed)}), m.Floats({out}, seed + 1)});
  };
  auto transpose = [&](const std::string& x, std::vector<int64_t> perm) {
    return m.Node("Transpose", {x}, {{"perm", std::move(perm)}});
  };
  auto reshape = [&](const std::string& x, std::vector<int64_t> shape) {
    return m.Node("Reshape", {x, m.Ints({static_cast<int64_t>(shape.size())}, shape)});
  };
  // SDPA's scale: 1 / sqrt(last dim of q), from its shape, then its sqrt.
  auto sqrt_scale = [&](const std::string& q, bool shape_start) {
    std::string d =
        shape_start
            ? m.Node("Shape", {q}, {{"start", {-1}}})
            : m.Node("Slice", {m.Node("Shape", {q}), m.Ints({1}, {-1}), m.Ints({1}, {INT64_MAX})});
    d = m.Node("Cast", {d}, {{"to", {onnx::TensorProto::FLOAT}}});
    const std::string scale = m.Node("Div", {m.FloatData({}, {1.0f}), m.Node("Sqrt", {d})});
    return m.Node("Sqrt", {scale});
  };
  std::string y;
  switch (form) {
    case AttentionForm::kTorchScriptMha: {
      m.Input("x", {B, L, E});
      const std::string xt = transpose("x", {1, 0, 2});
      const std::string proj = linear(xt, E, 3 * E, 41);
      // unflatten(-1, (3, E)) with the leading dims from the shape.
      const std::string lead =
          m.Node("Slice", {m.Node("Shape", {proj}), m.Ints({1}, {0}), m.Ints({1}, {2})});
      std::string p =
          m.Node("Reshape", {proj, m.Node("Concat", {lead, m.Ints({2}, {3, E})}, {{"axis", {0}}})});
      p = m.Node("Unsqueeze", {p, m.Ints({1}, {0})});
      p = transpose(p, {3, 1, 2, 0, 4});
      p = m.Node("Squeeze", {p, m.Ints({1}, {3})});
      auto heads = [&](int64_t i) {
        std::string t = m.Node("Gather", {p, m.Ints({}, {i})}, {{"axis", {0}}});
        t = transpose(reshape(t, {L, B * H, D}), {1, 0, 2});
        return reshape(t, {B, H, L, D});
      };
      const std::string q = heads(0), k = heads(1), v = heads(2);
      const std::string ss = sqrt_scale(q, false);
      const std::string a = m.Node(
          "Softmax",
          {m.Node("MatMul",
                  {m.Node("Mul", {q, ss}), m.Node("Mul", {transpose(k, {0, 1, 3, 2}), ss})})},
          {{"axis", {-1}}});
      std::string o = transpose(m.Node("MatMul", {a, v}), {2, 0, 1, 3});
      o = linear(reshape(o, {L * B, E}), E, E, 43);
      y = transpose(reshape(o, {L, B, E}), {1, 0, 2});
      break;
    }
    case AttentionForm::kDynamoSdpa: {
      m.Input("x", {B, L, E});
      auto heads = [&](uint64_t seed) {
        return transpose(reshape(linear("x", E, E, seed), {B, L, H, D}), {0, 2, 1, 3});
      };
      const std::string q = heads(51), k = heads(53), v = heads(55);
      const std::string last = m.Node("Shape", {k}, {{"start", {-1}}});
      const std::string second = m.Node("Shape", {k}, {{"start", {-2}}, {"end", {-1}}});
      const std::string first = m.Node("Shape", {k}, {{"end", {-2}}});
      std::string kt = m.Node(
          "Reshape", {k, m.Node("Concat", {m.Ints({1}, {-1}), second, last}, {{"axis", {0}}})});
      kt = transpose(kt, {0, 2, 1});
      kt = m.Node("Reshape", {kt, m.Node("Concat", {first, last, second}, {{"axis", {0}}})});
      const std::string ss = sqrt_scale(q, true);
      const std::string a =
          m.Node("Softmax", {m.Node("MatMul", {m.Node("Mul", {q, ss}), m.Node("Mul", {kt, ss})})},
                 {{"axis", {-1}}});
      y = reshape(transpose(m.Node("MatMul", {a, v}), {0, 2, 1, 3}), {B, L, E});
      break;
    }
    case AttentionForm::kBert: {
      m.Input("x", {B, L, E});
      m.Input("m", {B, L}, onnx::TensorProto::INT64);
      std::string mask = m.Node("Unsqueeze", {"m"}, {{"axes", {1}}});
      mask = m.Node("Unsqueeze", {mask}, {{"axes", {2}}});
      mask = m.Node("Cast", {mask}, {{"to", {onnx::TensorProto::FLOAT}}});
      mask = m.Node("Sub", {m.FloatData({}, {1.0f}), mask});
      mask = m.Node("Mul", {mask, m.FloatData({}, {-10000.0f})});
      auto split = [&](uint64_t seed) { return reshape(linear("x", E, E, seed), {B, L, H, D}); };
      const std::string q = transpose(split(61), {0, 2, 1, 3});
      const std::string kt = transpose(split(63), {0, 2, 3, 1});
      const std::string v = transpose(split(65), {0, 2, 1, 3});
      std::string sc = m.Node(
          "Div", {m.Node("MatMul", {q, kt}), m.FloatData({}, {std::sqrt(static_cast<float>(D))})});
      const std::string a = m.Node("Softmax", {m.Node("Add", {sc, mask})}, {{"axis", {3}}});
      y = reshape(transpose(m.Node("MatMul", {a, v}), {0, 2, 1, 3}), {B, L, E});
      break;
    }
    case AttentionForm::kSwinShifted: {
      const int64_t nw = B;
      m.Input("x", {B, L, E});
      const std::string qkv =
          transpose(reshape(linear("x", E, 3 * E, 71), {B, L, 3, H, D}), {2, 0, 3, 1, 4});
      auto pick = [&](int64_t i) {
        return m.Node("Gather", {qkv, m.Ints({}, {i})}, {{"axis", {0}}});
      };
      const std::string q =
          m.Node("Mul", {pick(0), m.FloatData({}, {1.0f / std::sqrt(static_cast<float>(D))})});
      std::string sc = m.Node("MatMul", {q, transpose(pick(1), {0, 1, 3, 2})});
      sc = m.Node("Add", {sc, m.Floats({1, H, L, L}, 73)});
      sc = reshape(sc, {B / nw, nw, H, L, L});
      auto wm = reference::RandomTensor({1, nw, 1, L, L}, 75, 0.0f, 2.0f);
      for (float& v : wm.data) v = v >= 1.0f ? -100.0f : 0.0f;
      sc = m.Node("Add", {sc, m.FloatData(wm.shape, wm.data)});
      sc = reshape(sc, {-1, H, L, L});
      const std::string a = m.Node("Softmax", {sc}, {{"axis", {-1}}});
      y = reshape(transpose(m.Node("MatMul", {a, pick(2)}), {0, 2, 1, 3}), {B, L, E});
      break;
    }
    case AttentionForm::kGpt2Sdpa: {
      m.Input("x", {B, L, E});
      const std::string qkv = linear("x", E, 3 * E, 81);
      auto heads = [&](int64_t i) {
        const std::string t = m.Node(
            "Slice", {qkv, m.Ints({1}, {i * E}), m.Ints({1}, {(i + 1) * E}), m.Ints({1}, {2})});
        return transpose(reshape(t, {B, L, H, D}), {0, 2, 1, 3});
      };
      const std::string sq = m.FloatData({}, {std::sqrt(1.0f / std::sqrt(static_cast<float>(D)))});
      const std::string kt = m.Node("Mul", {transpose(heads(1), {0, 1, 3, 2}), sq});
      std::string a = m.Node("Softmax", {m.Node("MatMul", {m.Node("Mul", {heads(0), sq}), kt})},
                             {{"axis", {-1}}});
      a = m.Node("Where", {m.Node("IsNaN", {a}), m.FloatData({}, {0.0f}), a});
      y = reshape(transpose(m.Node("MatMul", {a, heads(2)}), {0, 2, 1, 3}), {B, L, E});
      break;
    }
  }
  m.Rename(y, "y");
  m.Output("y");
  return m.Bytes();
}

TEST(PatternsTest, ImportedOnnxAttentionBecomesOneNode) {
  const AttentionDims dims[] = {{1, 17, 4, 8}, {2, 9, 2, 16}};
  for (AttentionForm form :
       {AttentionForm::kTorchScriptMha, AttentionForm::kDynamoSdpa, AttentionForm::kBert,
        AttentionForm::kSwinShifted, AttentionForm::kGpt2Sdpa}) {
    for (const AttentionDims& s : dims) {
      SCOPED_TRACE(::testing::Message() << "form " << static_cast<int>(form) << ", B=" << s.b
                                        << " L=" << s.l << " H=" << s.h << " D=" << s.d);
      RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(OnnxAttention(form, s)));
      RECQ_ASSERT_OK_AND_ASSIGN(Graph optimized, internal::Optimize(g, SharedContext()));
      EXPECT_EQ(Count(optimized, OpType("Attention")), 1);
      EXPECT_EQ(Count(optimized, OpType::kSoftmax), 0);
      // ViT's batch-first Transposes of x and y stay (the input and output
      // of the block) where the batch is above 1, nothing else: at batch 1
      // they become views.
      EXPECT_EQ(Count(optimized, OpType::kTranspose),
                form == AttentionForm::kTorchScriptMha && s.b > 1 ? 2 : 0);
      EXPECT_EQ(Count(optimized, OpType("Gather")), 0);
      for (auto target : {EngineOptions::KernelTarget::kCpu, EngineOptions::KernelTarget::kGpu}) {
        SCOPED_TRACE(target == EngineOptions::KernelTarget::kCpu ? "cpu" : "gpu");
        EngineOptions options;
        options.kernel_target = target;
        ExpectAttentionMatchesUnfused(g, options, 91);
      }
    }
  }
}

// A squeeze-and-excitation block as torchvision exports MobileNet V3's:
// GlobalAveragePool, Conv, Relu, Conv, HardSigmoid, Mul(s, x), where x
// comes from a convolution. `pooled_out` also makes the pool's output a
// graph output; `grouped` makes the first product a grouped convolution;
// `wide` makes it a 3x3 convolution padded to the 1x1 pixels.
Graph SqueezeExciteBlock(bool pooled_out, bool grouped, bool wide = false) {
  GraphBuilder b;
  TensorRef in = b.Input("x", {1, 4, 9, 9});
  auto w0 = reference::RandomTensor({8, 4, 3, 3}, 21);
  Conv2DAttrs same;
  same.pads = {1, 1, 1, 1};
  TensorRef x = b.Conv2D(in, b.Constant("w0", w0.shape, w0.data), {}, same);
  TensorRef p = b.GlobalAveragePool(x);
  const int64_t g = grouped ? 2 : 1;
  const int64_t k = wide ? 3 : 1;
  auto w1 = reference::RandomTensor({4, 8 / g, k, k}, 22);
  auto b1 = reference::RandomTensor({4}, 23);
  auto w2 = reference::RandomTensor({8, 4, 1, 1}, 24);
  auto b2 = reference::RandomTensor({8}, 25);
  Conv2DAttrs fc;
  fc.groups = g;
  if (wide) fc.pads = {1, 1, 1, 1};
  TensorRef z1 =
      b.Conv2D(p, b.Constant("w1", w1.shape, w1.data), b.Constant("b1", {4}, b1.data), fc);
  TensorRef z2 =
      b.Conv2D(b.Relu(z1), b.Constant("w2", w2.shape, w2.data), b.Constant("b2", {8}, b2.data), {});
  TensorRef s = b.AddNode(OpType::kHardSigmoid, {z2}, ActivationAttrs{1.0f / 6.0f, 0.5f});
  b.Output(b.AddNode(OpType::kMul, {s, x}), "y");
  if (pooled_out) b.Output(p, "p");
  return *std::move(b).Build();
}

TEST(PatternsTest, SqueezeExciteBecomesOneNode) {
  Graph g = SqueezeExciteBlock(false, false);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, internal::RunPatternPasses(g));
  EXPECT_EQ(Count(fused, OpType("SqueezeExcite")), 1);
  EXPECT_EQ(Count(fused, OpType::kGlobalAveragePool), 0);
  EXPECT_EQ(Count(fused, OpType::kConv2D), 1);  // the convolution making x
  EXPECT_EQ(Count(fused, OpType::kMul), 0);
  // Unfused: convolution, pool, two products (activations fused), Mul.
  // Fused: the convolution (on CPUs its panels' copy and the product), then
  // two kernels on GPUs, three on CPUs.
  ExpectDispatchesPerFamily(g, {1, 4, 9, 9}, 26, /*cpu=*/5, /*gpu=*/3);
}

TEST(PatternsTest, SqueezeExciteLookAlikesAreLeftAlone) {
  for (bool pooled_out : {false, true}) {
    SCOPED_TRACE(pooled_out ? "the pool's output read elsewhere" : "a grouped first product");
    Graph g = SqueezeExciteBlock(pooled_out, !pooled_out);
    RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(g));
    EXPECT_EQ(Count(after, OpType("SqueezeExcite")), 0);
    EXPECT_EQ(Count(after, OpType::kGlobalAveragePool), 1);
    EXPECT_EQ(Count(after, OpType::kMul), 1);
  }
  // A 3x3 first product padded to the 1x1 pixels: left alone, and the
  // graph compiles and runs as exported.
  Graph wide = SqueezeExciteBlock(false, false, true);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph after, internal::RunPatternPasses(wide));
  EXPECT_EQ(Count(after, OpType("SqueezeExcite")), 0);
  ExpectMatchesUnfused(wide, {1, 4, 9, 9}, 27);
}

}  // namespace
}  // namespace recq
