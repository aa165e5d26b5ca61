// Imports that the typed ops and folding make possible, end to end through
// small hand-written ONNX models: the attention-mask chain of an exported
// BERT (int64 mask -> Unsqueeze -> Expand -> Cast -> (1 - m) * -1e4 -> Add
// -> Softmax) against a CPU computation, BatchNormalization with
// training_mode=1 folded on constants, and a clear Unimplemented for ops
// whose output shape depends on values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "testing/onnx_model_builder.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using ::testing::HasSubstr;

using Model = testing::OnnxModelBuilder;

using testing::FreshRng;

TEST(AttentionMaskImportTest, Int64MaskChainMatchesCpu) {
  constexpr int64_t kBatch = 2, kHeads = 2, kSeq = 7;
  std::mt19937 rng = FreshRng();
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> scores(kBatch * kHeads * kSeq * kSeq);
  for (float& s : scores) s = u(rng);
  // Rows with different padding: 7 and 4 real tokens.
  const std::vector<int64_t> mask = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};

  Model m;
  m.Input("attention_mask", {kBatch, kSeq}, onnx::TensorProto::INT64);
  m.Input("scores", {kBatch, kHeads, kSeq, kSeq}, onnx::TensorProto::FLOAT);
  m.Int64s("axes", {2}, {1, 2});
  m.Int64s("shape", {4}, {kBatch, 1, kSeq, kSeq});
  m.Floats("one", {}, {1.0f});
  m.Floats("big", {}, {-10000.0f});
  m.Node("Unsqueeze", {"attention_mask", "axes"}, {"m4"});
  m.Node("Expand", {"m4", "shape"}, {"expanded"});
  Model::Int(m.Node("Cast", {"expanded"}, {"as_float"}), "to", onnx::TensorProto::FLOAT);
  m.Node("Sub", {"one", "as_float"}, {"inverted"});
  m.Node("Mul", {"inverted", "big"}, {"additive"});
  m.Node("Add", {"scores", "additive"}, {"masked"});
  Model::Int(m.Node("Softmax", {"masked"}, {"probs"}), "axis", -1);
  m.Output("probs");

  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  absl::StatusOr<Tensor> mask_t =
      Tensor::Allocate(testing::SharedContext(), {{kBatch, kSeq}, DataType::kInt64});
  ASSERT_TRUE(mask_t.ok()) << mask_t.status();
  ASSERT_TRUE(mask_t->Upload(absl::MakeConstSpan(mask)).ok());
  Tensor scores_t = testing::NewTensor({{kBatch, kHeads, kSeq, kSeq}}, scores);
  Tensor probs_t = testing::NewTensor({{kBatch, kHeads, kSeq, kSeq}});
  Bindings b;
  b.Set("attention_mask", *mask_t);
  b.Set("scores", scores_t);
  b.Set("probs", probs_t);
  ASSERT_TRUE(rec->Run(b).ok());
  const std::vector<float> got = testing::Download(probs_t);

  // CPU: softmax over the last axis of scores + (1 - mask) * -1e4, in double.
  for (int64_t bh = 0; bh < kBatch * kHeads; ++bh) {
    const int64_t batch = bh / kHeads;
    for (int64_t q = 0; q < kSeq; ++q) {
      const float* row = &scores[(bh * kSeq + q) * kSeq];
      std::vector<double> e(kSeq);
      double mx = -1e30, sum = 0;
      for (int64_t k = 0; k < kSeq; ++k) {
        e[k] = row[k] + (1.0 - double(mask[batch * kSeq + k])) * -10000.0;
        mx = std::max(mx, e[k]);
      }
      for (double& v : e) sum += (v = std::exp(v - mx));
      for (int64_t k = 0; k < kSeq; ++k) {
        const float want = static_cast<float>(e[k] / sum);
        const float have = got[(bh * kSeq + q) * kSeq + k];
        if (mask[batch * kSeq + k] == 0) {
          EXPECT_EQ(have, 0.0f) << "masked element " << bh << "," << q << "," << k;
        } else {
          EXPECT_NEAR(have, want, 1e-6f + 1e-5f * want) << bh << "," << q << "," << k;
        }
      }
    }
  }
}

// An integer Max of three inputs imports as a chain of two-input IntMax
// nodes; the float result of a Cast is compared with the CPU's.
TEST(IntegerVariadicTest, MaxOfThreeInt64Inputs) {
  constexpr int64_t kN = 12;
  std::mt19937 rng = FreshRng();
  std::uniform_int_distribution<int64_t> u(-1000, 1000);
  std::vector<std::vector<int64_t>> in(3, std::vector<int64_t>(kN));
  for (auto& v : in) {
    for (int64_t& x : v) x = u(rng);
  }
  Model m;
  for (const char* name : {"a", "b", "c"}) m.Input(name, {kN}, onnx::TensorProto::INT64);
  m.Node("Max", {"a", "b", "c"}, {"mx"});
  Model::Int(m.Node("Cast", {"mx"}, {"y"}), "to", onnx::TensorProto::FLOAT);
  m.Output("y");
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  Bindings b;
  std::vector<Tensor> keep;
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Tensor> t = Tensor::Allocate(testing::SharedContext(), {{kN}, DataType::kInt64});
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_TRUE(t->Upload(absl::MakeConstSpan(in[i])).ok());
    b.Set(names[i], *t);
    keep.push_back(*t);
  }
  Tensor y = testing::NewTensor({{kN}});
  b.Set("y", y);
  ASSERT_TRUE(rec->Run(b).ok());
  const std::vector<float> got = testing::Download(y);
  for (int64_t i = 0; i < kN; ++i) {
    const int64_t want = std::max({in[0][i], in[1][i], in[2][i]});
    EXPECT_EQ(got[i], static_cast<float>(want)) << "element " << i;
  }
}

// A BatchNormalization with training_mode=1 of a constant w, added to the
// input z. With `computed_running_stats` its running mean and variance
// (inputs 3 and 4, which feed only the unused outputs 1 and 2) are computed
// from z, as a TorchScript export of weight standardization computes them.
void CheckTrainingModeFolds(bool computed_running_stats) {
  constexpr int64_t kN = 2, kC = 3, kL = 5;
  std::mt19937 rng = FreshRng();
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> w(kN * kC * kL), z(kN * kC * kL), scale(kC), bias(kC);
  for (float& v : w) v = u(rng);
  for (float& v : z) v = u(rng);
  for (float& v : scale) v = u(rng);
  for (float& v : bias) v = u(rng);
  Model m;
  m.Input("z", {kN, kC, kL}, onnx::TensorProto::FLOAT);
  m.Floats("w", {kN, kC, kL}, w);
  m.Floats("scale", {kC}, scale);
  m.Floats("bias", {kC}, bias);
  if (computed_running_stats) {
    onnx::NodeProto* mean = m.Node("ReduceMean", {"z"}, {"mean"});
    Model::Int(mean, "keepdims", 0);
    onnx::AttributeProto* axes = mean->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    axes->add_ints(0);
    axes->add_ints(2);
    m.Node("Mul", {"mean", "mean"}, {"var"});
  } else {
    m.Floats("mean", {kC}, std::vector<float>(kC, 0.0f));
    m.Floats("var", {kC}, std::vector<float>(kC, 1.0f));
  }
  onnx::NodeProto* bn =
      m.Node("BatchNormalization", {"w", "scale", "bias", "mean", "var"}, {"normed"});
  Model::Int(bn, "training_mode", 1);
  m.Node("Add", {"normed", "z"}, {"y"});
  m.Output("y");
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<float> got =
      testing::RunRecorded(*engine, "z", reference::HostTensor{{kN, kC, kL}, z}, "y");
  ASSERT_EQ(got.size(), w.size());
  for (int64_t c = 0; c < kC; ++c) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < kN; ++n) {
      for (int64_t l = 0; l < kL; ++l) sum += w[(n * kC + c) * kL + l];
    }
    const double mean = sum / (kN * kL);
    for (int64_t n = 0; n < kN; ++n) {
      for (int64_t l = 0; l < kL; ++l) {
        const double d = w[(n * kC + c) * kL + l] - mean;
        sq += d * d;
      }
    }
    const double inv = 1.0 / std::sqrt(sq / (kN * kL) + 1e-5);
    for (int64_t n = 0; n < kN; ++n) {
      for (int64_t l = 0; l < kL; ++l) {
        const int64_t i = (n * kC + c) * kL + l;
        const double want = (w[i] - mean) * inv * scale[c] + bias[c] + z[i];
        EXPECT_NEAR(got[i], want, 1e-5 + 1e-5 * std::abs(want)) << "element " << i;
      }
    }
  }
}

TEST(BatchNormTrainingTest, ConstantInputsFoldWithBatchStatistics) {
  CheckTrainingModeFolds(false);
}

TEST(BatchNormTrainingTest, ComputedRunningStatisticsAreIgnored) { CheckTrainingModeFolds(true); }

TEST(BatchNormTrainingTest, ComputedInputIsUnimplemented) {
  Model m;
  m.Input("x", {2, 3, 4}, onnx::TensorProto::FLOAT);
  m.Floats("s", {3}, {1, 1, 1});
  m.Floats("b", {3}, {0, 0, 0});
  Model::Int(m.Node("BatchNormalization", {"x", "s", "b", "b", "s"}, {"y"}), "training_mode", 1);
  m.Output("y");
  absl::Status s = LoadOnnxFromBytes(m.Bytes()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("training_mode=1"));
  EXPECT_THAT(s.message(), HasSubstr("input 0 is not"));
}

// A reduction of a constant folds at import (as the norm of an exported
// weight-normalized conv's weights must, for the conv to see constant
// weights): the folded model matches the CPU reference of the same model
// with the constant fed as an input.
class ReduceFoldTest : public ::testing::TestWithParam<const char*> {};

std::string ReduceModel(const char* op, const std::vector<float>* w_const) {
  constexpr int64_t kShape[] = {2, 3, 4};
  Model m;
  if (w_const != nullptr) {
    m.Floats("w", {kShape[0], kShape[1], kShape[2]}, *w_const);
  } else {
    m.Input("w", {kShape[0], kShape[1], kShape[2]}, onnx::TensorProto::FLOAT);
  }
  m.Input("z", {1, kShape[1], 1}, onnx::TensorProto::FLOAT);
  onnx::NodeProto* r = nullptr;
  if (std::string(op) == "ReduceSum") {  // axes are an input from opset 13
    m.Int64s("axes", {2}, {0, 2});
    r = m.Node(op, {"w", "axes"}, {"r"});
  } else {
    r = m.Node(op, {"w"}, {"r"});
    onnx::AttributeProto* axes = r->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    axes->add_ints(0);
    axes->add_ints(-1);
  }
  Model::Int(r, "keepdims", 1);
  m.Node("Add", {"r", "z"}, {"y"});
  m.Output("y");
  return m.Bytes();
}

TEST_P(ReduceFoldTest, ConstantInputFoldsAndMatchesReference) {
  std::mt19937 rng = FreshRng();
  // Positive values, so that ReduceLogSum's sum is positive.
  std::uniform_real_distribution<float> u(0.25f, 2.0f);
  std::vector<float> w(24), z(3);
  for (float& v : w) v = u(rng);
  for (float& v : z) v = u(rng);
  absl::StatusOr<Graph> folded = LoadOnnxFromBytes(ReduceModel(GetParam(), &w));
  ASSERT_TRUE(folded.ok()) << folded.status();
  ASSERT_EQ(folded->nodes().size(), 1u);
  EXPECT_EQ(folded->nodes()[0].op, OpType::kAdd);
  absl::StatusOr<Graph> fed = LoadOnnxFromBytes(ReduceModel(GetParam(), nullptr));
  ASSERT_TRUE(fed.ok()) << fed.status();
  absl::flat_hash_map<std::string, reference::HostTensor> feeds;
  feeds["w"] = reference::HostTensor{{2, 3, 4}, w};
  feeds["z"] = reference::HostTensor{{1, 3, 1}, z};
  auto want = reference::RunReference(*fed, feeds);
  ASSERT_TRUE(want.ok()) << want.status();

  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *folded);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<float> got =
      testing::RunRecorded(*engine, "z", reference::HostTensor{{1, 3, 1}, z}, "y");
  const std::vector<float>& expected = want->at("y").data;
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], 1e-5 + 1e-5 * std::abs(expected[i])) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceFoldTest,
                         ::testing::Values("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                           "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
                                           "ReduceLogSum", "ReduceLogSumExp"));

// Clip of integers, and Clip with a bound computed from the model's inputs,
// import as Max and Min.
TEST(ClipImportTest, Int64ClampsToConstantBounds) {
  std::mt19937 rng = FreshRng();
  std::uniform_int_distribution<int64_t> u(-100, 100);
  std::vector<int64_t> x(12);
  for (int64_t& v : x) v = u(rng);
  const int64_t lo = -20, hi = 30;
  Model m;
  m.Input("x", {3, 4}, onnx::TensorProto::INT64);
  m.Int64s("lo", {}, {lo});
  m.Int64s("hi", {}, {hi});
  m.Node("Clip", {"x", "lo", "hi"}, {"y"});
  m.Output("y");
  m.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Tensor> xt =
      Tensor::Allocate(testing::SharedContext(), {{3, 4}, DataType::kInt64});
  absl::StatusOr<Tensor> yt =
      Tensor::Allocate(testing::SharedContext(), {{3, 4}, DataType::kInt64});
  ASSERT_TRUE(xt.ok() && yt.ok());
  ASSERT_TRUE(xt->Upload(absl::MakeConstSpan(x)).ok());
  ASSERT_TRUE(yt->Upload(absl::MakeConstSpan(std::vector<int64_t>(12, -777))).ok());  // poison
  Bindings b;
  b.Set("x", *xt);
  b.Set("y", *yt);
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_TRUE(rec->Run(b).ok());
  absl::StatusOr<std::vector<uint8_t>> bytes = yt->DownloadBytes();
  ASSERT_TRUE(bytes.ok() && bytes->size() == 12 * sizeof(int64_t));
  std::vector<int64_t> got(12);
  std::memcpy(got.data(), bytes->data(), bytes->size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(got[i], std::clamp(x[i], lo, hi)) << "element " << i;
  }
}

TEST(ClipImportTest, FloatClampsToAComputedBound) {
  std::mt19937 rng = FreshRng();
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> x(12);
  for (float& v : x) v = u(rng);
  const float hi = u(rng);
  Model m;
  m.Input("x", {3, 4}, onnx::TensorProto::FLOAT);
  m.Input("hi", {1}, onnx::TensorProto::FLOAT);
  m.Node("Clip", {"x", "", "hi"}, {"y"});
  m.Output("y");
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  Tensor xt = testing::NewTensor({{3, 4}}, x);
  Tensor ht = testing::NewTensor({{1}}, {hi});
  Tensor yt = testing::NewTensor({{3, 4}});
  Bindings b;
  b.Set("x", xt);
  b.Set("hi", ht);
  b.Set("y", yt);
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_TRUE(rec->Run(b).ok());
  const std::vector<float> got = testing::Download(yt);
  ASSERT_EQ(got.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i], std::min(x[i], hi)) << "element " << i;
}

// MaxPool of uint8 and int8 runs as the float32 pool of the converted
// values: exact against a direct loop.
class MaxPool8BitTest : public ::testing::TestWithParam<bool> {};

TEST_P(MaxPool8BitTest, MatchesDirectLoop) {
  const bool is_signed = GetParam();
  constexpr int64_t kC = 3, kH = 5, kW = 6, kOh = 4, kOw = 3;  // 2x2 window, strides (1, 2)
  std::mt19937 rng = FreshRng();
  std::uniform_int_distribution<int> u(is_signed ? -128 : 0, is_signed ? 127 : 255);
  std::vector<int> x(kC * kH * kW);
  for (int& v : x) v = u(rng);
  Model m;
  const int32_t type = is_signed ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8;
  m.Input("x", {1, kC, kH, kW}, type);
  onnx::NodeProto* pool = m.Node("MaxPool", {"x"}, {"y"});
  for (const auto& [name, v] :
       {std::pair<const char*, std::vector<int64_t>>{"kernel_shape", {2, 2}},
        {"strides", {1, 2}}}) {
    onnx::AttributeProto* a = pool->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t i : v) a->add_ints(i);
  }
  m.Output("y");
  m.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const DataType dt = is_signed ? DataType::kInt8 : DataType::kUInt8;
  absl::StatusOr<Tensor> xt = Tensor::Allocate(testing::SharedContext(), {{1, kC, kH, kW}, dt});
  absl::StatusOr<Tensor> yt = Tensor::Allocate(testing::SharedContext(), {{1, kC, kOh, kOw}, dt});
  ASSERT_TRUE(xt.ok() && yt.ok());
  std::vector<uint8_t> x_bytes(x.size());
  for (size_t i = 0; i < x.size(); ++i) x_bytes[i] = static_cast<uint8_t>(x[i]);
  ASSERT_TRUE(xt->UploadBytes(absl::MakeConstSpan(x_bytes)).ok());
  ASSERT_TRUE(
      yt->UploadBytes(absl::MakeConstSpan(std::vector<uint8_t>(kC * kOh * kOw, 0x5a))).ok());
  Bindings b;
  b.Set("x", *xt);
  b.Set("y", *yt);
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  ASSERT_TRUE(rec->Run(b).ok());
  absl::StatusOr<std::vector<uint8_t>> got = yt->DownloadBytes();
  ASSERT_TRUE(got.ok() && got->size() == size_t(kC * kOh * kOw));
  for (int64_t c = 0; c < kC; ++c) {
    for (int64_t oh = 0; oh < kOh; ++oh) {
      for (int64_t ow = 0; ow < kOw; ++ow) {
        int want = -1000;
        for (int64_t i = 0; i < 2; ++i) {
          for (int64_t j = 0; j < 2; ++j) {
            want = std::max(want, x[(c * kH + oh + i) * kW + ow * 2 + j]);
          }
        }
        const uint8_t raw = (*got)[(c * kOh + oh) * kOw + ow];
        const int value = is_signed ? static_cast<int8_t>(raw) : raw;
        EXPECT_EQ(value, want) << "channel " << c << " at " << oh << ", " << ow;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, MaxPool8BitTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Int8" : "UInt8"; });

class DataDependentTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DataDependentTest, ComputedInputIsUnimplementedSayingWhy) {
  Model m;
  m.Input("x", {2, 3}, onnx::TensorProto::FLOAT);
  m.Node(GetParam(), {"x"}, {"y"})->set_name("the_node");
  m.Output("y");
  absl::Status s = LoadOnnxFromBytes(m.Bytes()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("the_node"));
  EXPECT_THAT(s.message(), HasSubstr("depends on the values of its inputs"));
}

INSTANTIATE_TEST_SUITE_P(Ops, DataDependentTest, ::testing::Values("NonZero", "Unique", "Loop"));

TEST(DataDependentTest, NonZeroOfAConstantFolds) {
  std::mt19937 rng = FreshRng();
  std::uniform_int_distribution<int> pick(-2, 2);
  std::vector<float> c(3 * 4);
  std::vector<float> rows, cols;
  for (int i = 0; i < 12; ++i) {
    c[i] = static_cast<float>(pick(rng));
    if (c[i] != 0) {
      rows.push_back(static_cast<float>(i / 4));
      cols.push_back(static_cast<float>(i % 4));
    }
  }
  if (rows.empty()) {
    c[5] = 1.0f;
    rows = {1.0f};
    cols = {1.0f};
  }
  const int64_t count = static_cast<int64_t>(rows.size());
  Model m;
  m.Input("x", {2, count}, onnx::TensorProto::FLOAT);
  m.Floats("c", {3, 4}, c);
  m.Node("NonZero", {"c"}, {"idx"});
  Model::Int(m.Node("Cast", {"idx"}, {"idx_f"}), "to", onnx::TensorProto::FLOAT);
  m.Node("Add", {"x", "idx_f"}, {"y"});
  m.Output("y");
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<float> x(2 * count);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : x) v = u(rng);
  const std::vector<float> got =
      testing::RunRecorded(*engine, "x", reference::HostTensor{{2, count}, x}, "y");
  ASSERT_EQ(got.size(), x.size());
  for (int64_t i = 0; i < count; ++i) {
    EXPECT_EQ(got[i], x[i] + rows[i]) << "row index " << i;
    EXPECT_EQ(got[count + i], x[count + i] + cols[i]) << "column index " << i;
  }
}

}  // namespace
}  // namespace recq
