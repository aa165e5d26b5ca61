// FusedElementwise: chains of every element-wise op that declares an
// expression (OpDef::elementwise), fused by the optimizer
// (engine/fusion/elementwise_fusion.h) and held to the CPU reference of the
// unfused graph, with broadcast operands of each read mode of the fused
// kernel, both kernel families, optimize on and off, fp32 and fp16 storage.
#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/graph.h"
#include "recq/math_op_attrs.h"

namespace recq::optest {
namespace {

// One step of a chain: v -> op(v, o), where `o` is the chain's broadcast
// operand. Inputs of ops with a restricted domain are made to fit it
// (|v| + 0.5 for Log, Div...) with more element-wise ops, which fuse too.
struct ChainOp {
  std::string name;
  std::function<TensorRef(OpGraphBuilder& b, TensorRef v, TensorRef o)> apply;
};

TensorRef Node(OpGraphBuilder& b, const char* op, std::vector<TensorRef> in, OpAttrs attrs = {}) {
  return b.graph().AddNode(OpType(op), std::move(in), std::move(attrs));
}

// |v| + 0.5: a value in [0.5, ...), the half from a scalar constant.
TensorRef Positive(OpGraphBuilder& b, TensorRef v) {
  static int count = 0;  // constant names are unique in a graph
  TensorRef half = b.Constant(absl::StrCat("half", count++), {}, 0.5f, 0.5f);
  return Node(b, "Add", {Node(b, "Abs", {v}), half});
}

std::vector<ChainOp> AllOps() {
  using B = OpGraphBuilder;
  auto unary = [](const char* op, OpAttrs attrs = {}) {
    return [op, attrs](B& b, TensorRef v, TensorRef) { return Node(b, op, {v}, attrs); };
  };
  auto binary = [](const char* op) {
    return [op](B& b, TensorRef v, TensorRef o) { return Node(b, op, {v, o}); };
  };
  return {
      {"Add", binary("Add")},
      {"Sub", binary("Sub")},
      {"Mul", binary("Mul")},
      {"Div",
       [](B& b, TensorRef v, TensorRef o) {
         return Node(b, "Div", {v, Positive(b, o)});
       }},
      {"Min", binary("Min")},
      {"Max", binary("Max")},
      {"Sum", binary("Sum")},
      {"Mean", binary("Mean")},
      {"PRelu", binary("PRelu")},
      {"Pow",
       [](B& b, TensorRef v, TensorRef) {
         return Node(b, "Pow", {Positive(b, v), b.Constant("e", {}, 0.5f, 1.5f)});
       }},
      {"Sqrt", [](B& b, TensorRef v, TensorRef) { return Node(b, "Sqrt", {Node(b, "Abs", {v})}); }},
      {"Exp", [](B& b, TensorRef v, TensorRef) { return Node(b, "Exp", {Node(b, "Tanh", {v})}); }},
      {"Log", [](B& b, TensorRef v, TensorRef) { return Node(b, "Log", {Positive(b, v)}); }},
      {"Neg", unary("Neg")},
      {"Reciprocal",
       [](B& b, TensorRef v, TensorRef) { return Node(b, "Reciprocal", {Positive(b, v)}); }},
      {"Softplus", unary("Softplus")},
      {"Mish", unary("Mish")},
      {"Gelu", unary("Gelu", GeluAttrs{false})},
      {"GeluTanh", unary("Gelu", GeluAttrs{true})},
      {"Erf", unary("Erf")},
      {"Relu", unary("Relu", ActivationAttrs{})},
      {"Clip", [](B& b, TensorRef v, TensorRef) { return b.graph().Clip(v, -0.6f, 0.7f); }},
      {"LeakyRelu", unary("LeakyRelu", ActivationAttrs{0.1f, 0.0f})},
      {"Sigmoid", unary("Sigmoid", ActivationAttrs{})},
      {"HardSigmoid", unary("HardSigmoid", ActivationAttrs{0.2f, 0.5f})},
      {"HardSwish", unary("HardSwish", ActivationAttrs{})},
      {"Silu", unary("Silu", ActivationAttrs{})},
  };
}

// A chain's shape and its broadcast operand, one per read mode of the
// fused kernel: another input of the same shape, a [mid] broadcast over
// [outer, mid, inner] (inner a multiple of 4 or not), a scalar, and a
// general broadcast.
struct ChainShape {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<int64_t> operand;  // empty: a second input of `shape`
  bool constant = true;
};

const ChainShape kShapes[] = {
    {"same", {2, 3, 4, 8}, {}, false},
    {"channel", {1, 6, 5, 4}, {6, 1, 1}},
    {"bias", {2, 7, 9}, {9}},
    {"scalar", {3, 5, 7}, {}, true},
    {"general", {2, 5, 6}, {2, 1, 6}, false},
};

// Chains splits AllOps() into one chain per shape, in an order shuffled by
// a fixed seed (every op in exactly one chain).
std::vector<std::vector<ChainOp>> Chains() {
  std::vector<ChainOp> ops = AllOps();
  std::mt19937 rng(2026);
  std::shuffle(ops.begin(), ops.end(), rng);
  const size_t n = std::size(kShapes);
  std::vector<std::vector<ChainOp>> chains(n);
  for (size_t i = 0; i < ops.size(); ++i) chains[i % n].push_back(ops[i]);
  return chains;
}

absl::StatusOr<OpGraph> ChainGraph(const ChainShape& s, const std::vector<ChainOp>& ops) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", s.shape, -1.5f, 1.5f);
  TensorRef o;
  if (!s.constant) {
    o = b.Input("o", s.operand.empty() ? s.shape : s.operand, -1.0f, 1.0f);
  } else {
    o = b.Constant("o", s.operand, -1.0f, 1.0f);
  }
  TensorRef v = x;
  for (const ChainOp& op : ops) v = op.apply(b, v, o);
  // x read again at the end: a leaf used twice.
  v = Node(b, "Mul", {v, Node(b, "Tanh", {x})});
  return std::move(b).Build(v);
}

// Fused compiles `graph` optimized for the CPU kernels and returns its
// dispatch labels.
std::vector<std::string> Labels(const Graph& graph, bool fuse) {
  const absl::StatusOr<Context>& context = SharedContext();
  EXPECT_TRUE(context.ok()) << context.status();
  if (!context.ok()) return {};
  EngineOptions options;
  options.kernel_target = EngineOptions::KernelTarget::kCpu;
  options.tuning = EngineOptions::Tuning::kOff;
  options.warm_up = false;
  options.fuse_elementwise = fuse;
  absl::StatusOr<Engine> engine = Engine::Compile(*context, graph, options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? engine->DispatchLabels() : std::vector<std::string>{};
}

int Fused(const std::vector<std::string>& labels) {
  return static_cast<int>(std::count_if(labels.begin(), labels.end(), [](const std::string& l) {
    return l.find("/fused_elementwise") != std::string::npos;
  }));
}

class FusedChainTest : public ::testing::TestWithParam<size_t> {};

TEST_P(FusedChainTest, FusesAndMatchesReference) {
  const ChainShape& s = kShapes[GetParam()];
  const std::vector<ChainOp> ops = Chains()[GetParam()];
  std::vector<std::string> names;
  for (const ChainOp& op : ops) names.push_back(op.name);
  SCOPED_TRACE(absl::StrCat(s.name, ": ", absl::StrJoin(names, ", ")));
  absl::StatusOr<OpGraph> graph = ChainGraph(s, ops);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const std::vector<std::string> fused = Labels(graph->graph, true);
  const std::vector<std::string> plain = Labels(graph->graph, false);
  EXPECT_GE(Fused(fused), 1);
  EXPECT_EQ(Fused(plain), 0);
  EXPECT_LT(fused.size(), plain.size());
  // Builtin math differs from the reference's by a few ulp, amplified a
  // little through the chain.
  CheckOptions options;
  options.atol = 2e-5f;
  options.rtol = 2e-5f;
  options.recorded_runs = 1;
  RECQ_EXPECT_MATCHES_REFERENCE(*graph, options);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedChainTest, ::testing::Range<size_t>(0, std::size(kShapes)),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return kShapes[info.param].name;
                         });

// Floor and Ceil jump at integers, so they are held to the reference at
// fp32 only, on arguments the fused and the reference compute exactly
// (x * 4, x an input), inside a chain that goes on with smooth ops.
TEST(FusedElementwiseTest, FloorAndCeilAtFp32) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {4, 33}, -2.0f, 2.0f);
  TensorRef four = b.Constant("four", {}, 4.0f, 4.0f);
  TensorRef f = Node(b, "Floor", {Node(b, "Mul", {x, four})});
  TensorRef c = Node(b, "Ceil", {Node(b, "Mul", {x, four})});
  TensorRef y = Node(b, "Sigmoid", {Node(b, "Sub", {f, c})}, ActivationAttrs{});
  absl::StatusOr<OpGraph> graph = std::move(b).Build(y);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(Fused(Labels(graph->graph, true)), 1);
  CheckOptions options;
  options.precisions = {EngineOptions::Precision::kFp32};
  options.recorded_runs = 1;
  RECQ_EXPECT_MATCHES_REFERENCE(*graph, options);
}

}  // namespace
}  // namespace recq::optest
