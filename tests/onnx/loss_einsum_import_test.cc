// The imports of Einsum, SoftmaxCrossEntropyLoss and
// NegativeLogLikelihoodLoss end to end through small hand-written ONNX
// models with fresh random inputs, against CPU computations in double:
// float32 Einsum products lowered to MatMul (the graph is checked to hold a
// MatMul and no Einsum), a transpose, and an equation left to the Einsum
// kernel; SoftmaxCrossEntropyLoss with a weight, ignore_index and its
// log_prob output; and the errors that name the node.
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "testing/onnx_model_builder.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using ::testing::HasSubstr;

using Model = testing::OnnxModelBuilder;

using testing::FreshRng;

std::vector<float> Random(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// CpuEinsum evaluates an explicit equation of letters ("ab,bc->ac") in
// double: every assignment of the letters adds the operands' product to
// the output element it names.
std::vector<double> CpuEinsum(const std::string& equation,
                              const std::vector<std::vector<int64_t>>& shapes,
                              const std::vector<std::vector<float>>& data) {
  const std::vector<std::string> sides = absl::StrSplit(equation, "->");
  const std::vector<std::string> terms = absl::StrSplit(sides[0], ',');
  std::map<char, int64_t> size;
  for (size_t k = 0; k < terms.size(); ++k) {
    for (size_t d = 0; d < terms[k].size(); ++d) size[terms[k][d]] = shapes[k][d];
  }
  std::vector<char> letters;
  for (const auto& [c, s] : size) letters.push_back(c);
  int64_t out_count = 1;
  for (char c : sides[1]) out_count *= size[c];
  std::vector<double> out(out_count, 0.0);
  std::map<char, int64_t> v;
  for (char c : letters) v[c] = 0;
  while (true) {
    int64_t o = 0;
    for (char c : sides[1]) o = o * size[c] + v[c];
    double p = 1;
    for (size_t k = 0; k < terms.size(); ++k) {
      int64_t idx = 0;
      for (char c : terms[k]) idx = idx * size[c] + v[c];
      p *= data[k][idx];
    }
    out[o] += p;
    size_t i = letters.size();
    while (i > 0 && ++v[letters[i - 1]] == size[letters[i - 1]]) v[letters[--i]] = 0;
    if (i == 0) break;
  }
  return out;
}

struct EinsumCase {
  std::string equation;
  std::vector<std::vector<int64_t>> shapes;
  const char* lowered_to;  // an op the imported graph must hold
};

class EinsumImportTest : public ::testing::TestWithParam<EinsumCase> {};

TEST_P(EinsumImportTest, MatchesCpu) {
  const EinsumCase& c = GetParam();
  std::mt19937 rng = FreshRng();
  Model m;
  std::vector<std::string> names;
  std::vector<std::vector<float>> data;
  for (size_t k = 0; k < c.shapes.size(); ++k) {
    names.push_back("x" + std::to_string(k));
    m.Input(names.back(), c.shapes[k], onnx::TensorProto::FLOAT);
    data.push_back(Random(rng, Count(c.shapes[k]), -1.0f, 1.0f));
  }
  Model::String(m.Node("Einsum", names, {"y"}), "equation", c.equation);
  m.Output("y");
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  bool lowered = false;
  for (const recq::Node& node : graph->nodes()) {
    EXPECT_NE(OpTypeName(node.op), "Einsum") << c.equation << " should not need the Einsum kernel";
    lowered |= OpTypeName(node.op) == c.lowered_to;
  }
  EXPECT_TRUE(lowered) << c.equation << " imported without a " << c.lowered_to;
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  std::vector<Tensor> inputs;
  Bindings b;
  for (size_t k = 0; k < c.shapes.size(); ++k) {
    inputs.push_back(testing::NewTensor({c.shapes[k]}, data[k]));
    b.Set(names[k], inputs.back());
  }
  const TensorDesc& out = graph->value(graph->outputs()[0]).desc;
  Tensor y = testing::NewTensor(out);  // NaN-poisoned
  b.Set("y", y);
  ASSERT_TRUE(rec->Run(b).ok());
  const std::vector<float> got = testing::Download(y);
  const std::vector<double> want = CpuEinsum(c.equation, c.shapes, data);
  ASSERT_EQ(got.size(), want.size());
  // Sums of at most 24 float32 products of magnitude <= 1.
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::fabs(want[i])) << c.equation << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Equations, EinsumImportTest,
    ::testing::Values(EinsumCase{"bij,bjk->bik", {{3, 4, 6}, {3, 6, 5}}, "MatMul"},
                      EinsumCase{"ik,jk->ij", {{4, 7}, {3, 7}}, "MatMul"},
                      EinsumCase{"i,i->", {{19}, {19}}, "MatMul"},
                      EinsumCase{"i,j->ji", {{4}, {5}}, "MatMul"},
                      EinsumCase{"abc,cbd->da", {{3, 4, 5}, {5, 4, 2}}, "MatMul"},
                      EinsumCase{"bhqd,bhkd->bhqk", {{2, 3, 4, 8}, {2, 3, 5, 8}}, "MatMul"},
                      EinsumCase{"ijk->kij", {{3, 4, 5}}, "Transpose"}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(EinsumImportTest, DiagonalRunsTheEinsumKernel) {
  Model m;
  m.Input("x", {4, 4}, onnx::TensorProto::FLOAT);
  Model::String(m.Node("Einsum", {"x"}, {"y"}), "equation", "ii->i");
  m.Output("y");
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(graph->nodes().size(), 1u);
  EXPECT_EQ(OpTypeName(graph->nodes()[0].op), "Einsum");
}

TEST(EinsumImportTest, ErrorsNameTheNode) {
  {
    Model m;
    for (const char* x : {"a", "b", "c"}) m.Input(x, {3}, onnx::TensorProto::FLOAT);
    Model::String(m.Node("Einsum", {"a", "b", "c"}, {"y"}), "equation", "i,i,i->i");
    m.Output("y");
    absl::Status s = LoadOnnxFromBytes(m.Bytes()).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("(Einsum): Einsum of 3 operands"));
  }
  {
    Model m;
    m.Input("a", {3, 4}, onnx::TensorProto::FLOAT);
    Model::String(m.Node("Einsum", {"a"}, {"y"}), "equation", "ijk->i");
    m.Output("y");
    absl::Status s = LoadOnnxFromBytes(m.Bytes()).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("(Einsum): equation 'ijk->i'"));
  }
}

// SoftmaxCrossEntropyLoss, reduction mean with a weight and ignore_index,
// both outputs, on scores [N, C, D] against log-softmax and the weighted
// mean in double.
TEST(SoftmaxCrossEntropyImportTest, MeanWithWeightAndIgnoreIndexMatchesCpu) {
  constexpr int64_t kN = 4, kC = 5, kD = 3, kIgnore = 1;
  std::mt19937 rng = FreshRng();
  const std::vector<float> scores = Random(rng, kN * kC * kD, -3.0f, 3.0f);
  const std::vector<float> weight = Random(rng, kC, 0.1f, 2.0f);
  std::vector<int64_t> labels(kN * kD);
  std::uniform_int_distribution<int64_t> label(0, kC - 1);
  for (int64_t& l : labels) l = label(rng);
  labels[0] = 0;  // at least one element counts

  Model m;
  m.Input("x", {kN, kC, kD}, onnx::TensorProto::FLOAT);
  m.Input("t", {kN, kD}, onnx::TensorProto::INT64);
  m.Input("w", {kC}, onnx::TensorProto::FLOAT);
  onnx::NodeProto* n = m.Node("SoftmaxCrossEntropyLoss", {"x", "t", "w"}, {"loss", "log_prob"});
  Model::String(n, "reduction", "mean");
  Model::Int(n, "ignore_index", kIgnore);
  m.Output("loss");
  m.Output("log_prob");
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  absl::StatusOr<Tensor> t =
      Tensor::Allocate(testing::SharedContext(), {{kN, kD}, DataType::kInt64});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->Upload(absl::MakeConstSpan(labels)).ok());
  Tensor x = testing::NewTensor({{kN, kC, kD}}, scores);
  Tensor w = testing::NewTensor({{kC}}, weight);
  Tensor loss = testing::NewTensor({{}});
  Tensor log_prob = testing::NewTensor({{kN, kC, kD}});
  Bindings b;
  b.Set("x", x);
  b.Set("t", *t);
  b.Set("w", w);
  b.Set("loss", loss);
  b.Set("log_prob", log_prob);
  ASSERT_TRUE(rec->Run(b).ok());
  const std::vector<float> got_lp = testing::Download(log_prob);
  const std::vector<float> got_loss = testing::Download(loss);

  std::vector<double> lp(scores.size());
  double sum = 0, weights = 0;
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t d = 0; d < kD; ++d) {
      double mx = -INFINITY, z = 0;
      for (int64_t c = 0; c < kC; ++c) mx = std::fmax(mx, scores[(i * kC + c) * kD + d]);
      for (int64_t c = 0; c < kC; ++c) z += std::exp(scores[(i * kC + c) * kD + d] - mx);
      for (int64_t c = 0; c < kC; ++c) {
        lp[(i * kC + c) * kD + d] = scores[(i * kC + c) * kD + d] - mx - std::log(z);
      }
      const int64_t l = labels[i * kD + d];
      if (l == kIgnore) continue;
      sum += -lp[(i * kC + l) * kD + d] * weight[l];
      weights += weight[l];
    }
  }
  // Log-softmax of float32 scores in [-3, 3): a few ulps of values <= 10.
  for (size_t i = 0; i < lp.size(); ++i) EXPECT_NEAR(got_lp[i], lp[i], 1e-5) << "log_prob " << i;
  ASSERT_EQ(got_loss.size(), 1u);
  EXPECT_NEAR(got_loss[0], sum / weights, 1e-5 + 1e-5 * std::fabs(sum / weights));
}

TEST(NllLossImportTest, BadReductionNamesTheNode) {
  Model m;
  m.Input("x", {3, 5}, onnx::TensorProto::FLOAT);
  m.Input("t", {3}, onnx::TensorProto::INT64);
  Model::String(m.Node("NegativeLogLikelihoodLoss", {"x", "t"}, {"loss"}), "reduction", "max");
  m.Output("loss");
  absl::Status s = LoadOnnxFromBytes(m.Bytes()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("(NegativeLogLikelihoodLoss): reduction is 'max'; expected"));
}

}  // namespace
}  // namespace recq
