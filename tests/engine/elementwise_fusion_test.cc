// FuseElementwise (engine/fusion/elementwise_fusion.h): what fuses, what must
// not (intermediates with other consumers, graph outputs, broadcast
// intermediates, Adds a producer's epilogue takes, more than eight leaves),
// and that fused engines compute the reference, share programs, and save
// and reload as engine files.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engine/fusion/elementwise_fusion.h"
#include "engine/ops/fused_elementwise.h"
#include "engine/passes.h"
#include "gtest/gtest.h"
#include "recq/engine_file.h"
#include "recq/math_op_attrs.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using internal::FusedElementwiseAttrs;
using internal::FuseElementwise;
using internal::kFusedElementwise;

uint64_t Seed() {
  const uint64_t seed = std::random_device{}();
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return seed;
}

TensorRef Const(GraphBuilder& b, const std::string& name, std::vector<int64_t> shape,
                uint64_t seed) {
  auto t = reference::RandomTensor(shape, seed);
  return b.Constant(name, t.shape, t.data);
}

TensorRef Op(GraphBuilder& b, const char* op, std::vector<TensorRef> in, OpAttrs attrs = {}) {
  return b.AddNode(OpType(op), std::move(in), std::move(attrs));
}

std::vector<const Node*> Fused(const Graph& g) {
  std::vector<const Node*> nodes;
  for (const Node& n : g.nodes()) {
    if (n.op == kFusedElementwise) nodes.push_back(&n);
  }
  return nodes;
}

const FusedElementwiseAttrs& AttrsOf(const Node& n) {
  return *n.attrs.get_if<FusedElementwiseAttrs>();
}

std::vector<std::string> InputNames(const Graph& g, const Node& n) {
  std::vector<std::string> names;
  for (ValueId id : n.inputs) names.push_back(g.value(id).name);
  return names;
}

// The fused graph's engine against the reference of the unfused one.
// With `dispatches` > 0, the engine (CPU kernels unless `target` says)
// has that many.
void ExpectEngineMatches(const Graph& unfused, const std::vector<int64_t>& x_shape, uint64_t seed,
                         size_t dispatches = 0,
                         EngineOptions::KernelTarget target = EngineOptions::KernelTarget::kCpu) {
  auto in = reference::RandomTensor(x_shape, seed);
  const std::vector<float> expected = testing::ReferenceOutput(unfused, "x", in, "y");
  EngineOptions options;
  options.tuning = EngineOptions::Tuning::kOff;
  options.kernel_target = target;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine,
                            Engine::Compile(testing::SharedContext(), unfused, options));
  const std::vector<std::string> labels = engine.DispatchLabels();
  if (dispatches > 0) {
    EXPECT_EQ(labels.size(), dispatches);
  } else {
    EXPECT_TRUE(std::any_of(labels.begin(), labels.end(), [](const std::string& l) {
      return l.find("fused_elementwise") != std::string::npos;
    }));
  }
  auto cmp = reference::Compare(testing::RunRecorded(engine, "x", in, "y"), expected, 1e-5f, 1e-5f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

// y = tanh(sigmoid(x * s + c) * x): a tree over x (read twice), a scalar
// and a [4] bias.
Graph TreeGraph(uint64_t seed) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 4});
  TensorRef a = Op(b, "Mul", {x, Const(b, "s", {}, seed)});
  TensorRef c = Op(b, "Add", {a, Const(b, "c", {4}, seed + 1)});
  TensorRef d = Op(b, "Sigmoid", {c}, ActivationAttrs{});
  TensorRef e = Op(b, "Mul", {d, x});
  b.Output(Op(b, "Tanh", {e}), "y");
  return *std::move(b).Build();
}

TEST(ElementwiseFusionTest, FusesATreeIntoOneNode) {
  const uint64_t seed = Seed();
  const Graph g = TreeGraph(seed);
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g));
  ASSERT_EQ(fused.nodes().size(), 1u);
  const Node& n = fused.nodes()[0];
  EXPECT_EQ(n.op, kFusedElementwise);
  EXPECT_EQ(InputNames(fused, n), (std::vector<std::string>{"x", "s", "c"}));
  EXPECT_EQ(AttrsOf(n).ops, "Mul,Add,Sigmoid,Mul,Tanh");
  EXPECT_EQ(AttrsOf(n).out_shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(fused.value(n.outputs[0]).name, "y");
  EXPECT_EQ(n.name, g.nodes().back().name);
  ExpectEngineMatches(g, {2, 3, 4}, seed + 2);
  // The reference replays the fused steps: the fused graph computes what
  // the original does.
  auto in = reference::RandomTensor({2, 3, 4}, seed + 3);
  auto cmp = reference::Compare(testing::ReferenceOutput(fused, "x", in, "y"),
                                testing::ReferenceOutput(g, "x", in, "y"), 0.0f, 0.0f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST(ElementwiseFusionTest, AnIntermediateWithTwoConsumersStays) {
  // a = exp(x) feeds two nodes: it stays, and is a leaf of the rest.
  GraphBuilder b;
  TensorRef x = b.Input("x", {5, 8});
  TensorRef a = Op(b, "Exp", {x});
  b.Output(Op(b, "Add", {Op(b, "Neg", {a}), Op(b, "Abs", {a})}), "y");
  const Graph g = *std::move(b).Build();
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g));
  ASSERT_EQ(fused.nodes().size(), 2u);
  EXPECT_EQ(fused.nodes()[0].op, OpType("Exp"));
  ASSERT_EQ(Fused(fused).size(), 1u);
  EXPECT_EQ(AttrsOf(*Fused(fused)[0]).ops, "Neg,Abs,Add");
  EXPECT_EQ(Fused(fused)[0]->inputs, (std::vector<ValueId>{g.nodes()[0].outputs[0]}));
  ExpectEngineMatches(g, {5, 8}, Seed());
}

TEST(ElementwiseFusionTest, AGraphOutputStaysAnOutput) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {6});
  TensorRef a = Op(b, "Exp", {x});
  b.Output(a, "a");
  b.Output(Op(b, "Neg", {Op(b, "Tanh", {a})}), "y");
  const Graph g = *std::move(b).Build();
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g));
  ASSERT_EQ(fused.nodes().size(), 2u);
  EXPECT_EQ(fused.nodes()[0].op, OpType("Exp"));
  ASSERT_EQ(Fused(fused).size(), 1u);
  EXPECT_EQ(AttrsOf(*Fused(fused)[0]).ops, "Tanh,Neg");
}

TEST(ElementwiseFusionTest, ABroadcastIntermediateStays) {
  // exp(x) of [5] broadcast to [3, 5]: computing it per output element
  // would repeat it, so it stays a node of its own.
  GraphBuilder b;
  TensorRef x = b.Input("x", {5});
  b.Output(Op(b, "Add", {Op(b, "Exp", {x}), Const(b, "c", {3, 5}, 1)}), "y");
  const Graph g = *std::move(b).Build();
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g));
  EXPECT_EQ(fused.nodes().size(), 2u);
  EXPECT_TRUE(Fused(fused).empty());
}

TEST(ElementwiseFusionTest, AnAddForTheProducersEpilogueStays) {
  // MatMul + bias Add: lowering pairs them (absorbs_bias_add); Gelu * c
  // after them fuse. Compiled, FuseActivations first moves the Gelu into
  // the Add, and the MatMul's kernel applies bias and GELU: two dispatches.
  const uint64_t seed = Seed();
  GraphBuilder b;
  TensorRef x = b.Input("x", {4, 16});
  TensorRef m = Op(b, "MatMul", {x, Const(b, "w", {16, 8}, seed)});
  TensorRef a = Op(b, "Add", {m, Const(b, "bias", {8}, seed + 1)});
  TensorRef gelu = Op(b, "Gelu", {a}, GeluAttrs{});
  b.Output(Op(b, "Mul", {gelu, Const(b, "c", {8}, seed + 2)}), "y");
  const Graph g = *std::move(b).Build();
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g));
  ASSERT_EQ(fused.nodes().size(), 3u);
  EXPECT_EQ(fused.nodes()[0].op, OpType::kMatMul);
  EXPECT_EQ(fused.nodes()[1].op, OpType::kAdd);
  ASSERT_EQ(Fused(fused).size(), 1u);
  EXPECT_EQ(AttrsOf(*Fused(fused)[0]).ops, "Gelu,Mul");
  ExpectEngineMatches(g, {4, 16}, seed + 3, 2);
}

TEST(ElementwiseFusionTest, AtMostEightLeavesPerNode) {
  // Twelve Adds of distinct constants: more leaves than one kernel takes.
  const uint64_t seed = Seed();
  GraphBuilder b;
  TensorRef v = b.Input("x", {3, 8});
  for (int i = 0; i < 12; ++i) {
    v = Op(b, "Add", {v, Const(b, "c" + std::to_string(i), {8}, seed + i)});
    if (i % 3 == 2) v = Op(b, "Tanh", {v});
  }
  b.Output(v, "y");
  const Graph g = *std::move(b).Build();
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g));
  EXPECT_EQ(fused.nodes().size(), Fused(fused).size());
  EXPECT_GE(fused.nodes().size(), 2u);
  size_t ops = 0;
  for (const Node* n : Fused(fused)) {
    EXPECT_LE(n->inputs.size(), internal::kFusedElementwiseMaxInputs);
    ops += std::count(AttrsOf(*n).ops.begin(), AttrsOf(*n).ops.end(), ',') + 1;
  }
  EXPECT_EQ(ops, g.nodes().size());
  ExpectEngineMatches(g, {3, 8}, seed + 20);
}

TEST(ElementwiseFusionTest, OptimizeFusesOnlyWhenAsked) {
  const Graph g = TreeGraph(Seed());
  RECQ_ASSERT_OK_AND_ASSIGN(Graph on, internal::Optimize(g, testing::SharedContext()));
  RECQ_ASSERT_OK_AND_ASSIGN(Graph off, internal::Optimize(g, testing::SharedContext(), false));
  EXPECT_EQ(Fused(on).size(), 1u);
  EXPECT_TRUE(Fused(off).empty());
  EngineOptions options;
  options.tuning = EngineOptions::Tuning::kOff;
  options.fuse_elementwise = false;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine plain, Engine::Compile(testing::SharedContext(), g, options));
  options.fuse_elementwise = true;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine fused, Engine::Compile(testing::SharedContext(), g, options));
  EXPECT_EQ(fused.stats().dispatches, 1u);
  EXPECT_GT(plain.stats().dispatches, 1u);
}

TEST(ElementwiseFusionTest, SameChainSameProgramAndEngineFilesReload) {
  // Other constants, the same chain: the generated program is built once.
  const uint64_t seed = Seed();
  EngineOptions options;
  options.tuning = EngineOptions::Tuning::kOff;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine first,
                            Engine::Compile(testing::SharedContext(), TreeGraph(seed), options));
  const Graph g = TreeGraph(seed + 10);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine second, Engine::Compile(testing::SharedContext(), g, options));
  EXPECT_EQ(second.stats().kernels_built, 0u);
  EXPECT_EQ(second.DispatchLabels(), first.DispatchLabels());

  // Saved and loaded: the stored program and choice, the same results.
  RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, second.Serialize());
  RECQ_ASSERT_OK_AND_ASSIGN(Engine loaded, LoadEngineFromBytes(testing::SharedContext(), bytes));
  EXPECT_EQ(loaded.DispatchLabels(), second.DispatchLabels());
  EXPECT_TRUE(loaded.options().fuse_elementwise);
  auto in = reference::RandomTensor({2, 3, 4}, seed + 11);
  const std::vector<float> expected = testing::ReferenceOutput(g, "x", in, "y");
  for (const Engine* e : {&second, &loaded}) {
    auto cmp = reference::Compare(testing::RunRecorded(*e, "x", in, "y"), expected, 1e-5f, 1e-5f);
    EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  }
}

// y = Transpose(x, {0, 2, 3, 1}) * c + d (a channels-last block's layer
// scale and residual): the fused node reads x through the permutation.
TEST(ElementwiseFusionTest, ReadsATransposeInsteadOfCopying) {
  const uint64_t seed = Seed();
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 5, 6});
  TensorRef t = b.AddNode(OpType::kTranspose, {x}, TransposeAttrs{{0, 2, 3, 1}});
  TensorRef m = Op(b, "Mul", {t, Const(b, "c", {8}, seed)});
  b.Output(Op(b, "Add", {m, Const(b, "d", {5, 6, 8}, seed + 1)}), "y");
  const Graph g = *std::move(b).Build();
  RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g, true));
  ASSERT_EQ(fused.nodes().size(), 1u);
  const Node& n = fused.nodes()[0];
  EXPECT_EQ(InputNames(fused, n), (std::vector<std::string>{"x", "c", "d"}));
  EXPECT_EQ(AttrsOf(n).input_perms, (std::vector<std::vector<int64_t>>{{0, 2, 3, 1}, {}, {}}));
  // GPU kernels read the Transpose in place; CPU kernels keep the copy.
  ExpectEngineMatches(g, {1, 8, 5, 6}, seed + 2, 1, EngineOptions::KernelTarget::kGpu);
  ExpectEngineMatches(g, {1, 8, 5, 6}, seed + 3, 2, EngineOptions::KernelTarget::kCpu);
}

// One op alone fuses where it reads a Transpose (reversed dimensions here);
// a Transpose whose result is also a graph output stays.
TEST(ElementwiseFusionTest, OneOpReadsATransposeOnlyItReads) {
  const uint64_t seed = Seed();
  {
    GraphBuilder b;
    TensorRef x = b.Input("x", {2, 3, 4});
    TensorRef t = b.AddNode(OpType::kTranspose, {x}, TransposeAttrs{});
    b.Output(Op(b, "Sigmoid", {t}, ActivationAttrs{}), "y");
    const Graph g = *std::move(b).Build();
    RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g, true));
    ASSERT_EQ(fused.nodes().size(), 1u);
    EXPECT_EQ(AttrsOf(fused.nodes()[0]).input_perms,
              (std::vector<std::vector<int64_t>>{{2, 1, 0}}));
    ExpectEngineMatches(g, {2, 3, 4}, seed, 1, EngineOptions::KernelTarget::kGpu);
  }
  {
    GraphBuilder b;
    TensorRef x = b.Input("x", {2, 3, 4});
    TensorRef t = b.AddNode(OpType::kTranspose, {x}, TransposeAttrs{{1, 2, 0}});
    b.Output(Op(b, "Sigmoid", {t}, ActivationAttrs{}), "y");
    b.Output(t, "t");
    const Graph g = *std::move(b).Build();
    RECQ_ASSERT_OK_AND_ASSIGN(Graph fused, FuseElementwise(g, true));
    EXPECT_EQ(fused.nodes().size(), 2u);
    EXPECT_TRUE(Fused(fused).empty());
  }
}

}  // namespace
}  // namespace recq
