// Imports of the signal and quantization ops through small hand-written
// ONNX models: window tables folded from a constant size or checked against
// a run-time size the model declares through its output shape, the mel
// weight matrix, Q/DQ of constants folded at import, and
// DynamicQuantizeLinear's three outputs, each against a CPU computation in
// the test.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "recq/onnx.h"
#include "testing/onnx_model_builder.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using ::testing::HasSubstr;

constexpr double kPi = 3.14159265358979323846;

using Model = testing::OnnxModelBuilder;

// The windows from their definitions, in double.
std::vector<double> Window(const std::string& op, int64_t size, bool periodic) {
  const double n1 = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(size);
  for (int64_t i = 0; i < size; ++i) {
    const double a = 2 * kPi * static_cast<double>(i) / n1;
    if (op == "HannWindow") w[i] = 0.5 - 0.5 * std::cos(a);
    if (op == "HammingWindow") w[i] = 0.54347826086956519 - 0.45652173913043481 * std::cos(a);
    if (op == "BlackmanWindow") w[i] = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
  }
  return w;
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
  }
}

// Compiles and records `graph`, runs it with `feeds` bound and returns the
// output "y" as floats.
std::vector<float> RunGraph(const Graph& graph, Bindings& feeds) {
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), graph);
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return {};
  absl::StatusOr<Recording> rec = engine->Record();
  EXPECT_TRUE(rec.ok()) << rec.status();
  if (!rec.ok()) return {};
  const Value& out = graph.value(graph.outputs()[0]);
  Tensor y = testing::NewTensor(out.desc);
  feeds.Set(out.name, y);
  absl::Status s = rec->Run(feeds);
  EXPECT_TRUE(s.ok()) << s;
  return testing::Download(y);
}

class WindowImportTest : public ::testing::TestWithParam<std::tuple<const char*, bool>> {};

TEST_P(WindowImportTest, ConstantSizeFolds) {
  const auto [op, periodic] = GetParam();
  std::mt19937 rng(std::random_device{}());
  const int64_t size = std::uniform_int_distribution<int64_t>(2, 40)(rng);
  Model m(17);
  m.Tensor("size", {}, onnx::TensorProto::INT64, {double(size)});
  Model::Int(m.Node(op, {"size"}, {"y"}), "periodic", periodic ? 1 : 0);
  m.Output("y", onnx::TensorProto::FLOAT);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  Bindings feeds;
  ExpectNear(RunGraph(*graph, feeds), Window(op, size, periodic), 1e-6);
}

// A size fed at run time, with the output's shape declared: the table for
// the declared size, and NaN when the size given differs.
TEST_P(WindowImportTest, RunTimeSizeIsCheckedAgainstTheDeclaredShape) {
  const auto [op, periodic] = GetParam();
  constexpr int64_t kSize = 13;
  Model m(17);
  m.Input("size", {}, onnx::TensorProto::INT32);
  Model::Int(m.Node(op, {"size"}, {"y"}), "periodic", periodic ? 1 : 0);
  m.Output("y", onnx::TensorProto::FLOAT, {kSize});
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (int32_t given : {int32_t{kSize}, int32_t{kSize + 1}}) {
    absl::StatusOr<recq::Tensor> size =
        recq::Tensor::Allocate(testing::SharedContext(), {{}, DataType::kInt32});
    ASSERT_TRUE(size.ok()) << size.status();
    ASSERT_TRUE(size->Upload(absl::MakeConstSpan(&given, 1)).ok());
    Bindings feeds;
    feeds.Set("size", *size);
    const std::vector<float> got = RunGraph(*graph, feeds);
    if (given == kSize) {
      ExpectNear(got, Window(op, kSize, periodic), 1e-6);
    } else {
      ASSERT_EQ(got.size(), size_t{kSize});
      for (float v : got) EXPECT_TRUE(std::isnan(v)) << v;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, WindowImportTest,
                         ::testing::Combine(::testing::Values("HannWindow", "HammingWindow",
                                                              "BlackmanWindow"),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_periodic" : "_symmetric");
                         });

TEST(WindowImportTest, RunTimeSizeWithoutADeclaredShapeIsUnimplemented) {
  Model m(17);
  m.Input("size", {}, onnx::TensorProto::INT32);
  m.Node("HannWindow", {"size"}, {"y"});
  m.Output("y", onnx::TensorProto::FLOAT);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kUnimplemented) << graph.status();
  EXPECT_THAT(graph.status().message(), HasSubstr("declares no static 1-D shape"));
}

// DFT of opset 20: the axis and dft_length as inputs (the length
// truncating the signal), one-sided, against the sum in double.
TEST(DftImportTest, Opset20AxisAndLengthInputs) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  constexpr int64_t kBatch = 2, kLen = 8, kDft = 6, kBins = kDft / 2 + 1;
  std::vector<float> x(kBatch * kLen);
  for (float& v : x) v = u(rng);
  Model m(20);
  m.Input("x", {kBatch, kLen, 1}, onnx::TensorProto::FLOAT);
  m.Tensor("length", {}, onnx::TensorProto::INT64, {kDft});
  m.Tensor("axis", {}, onnx::TensorProto::INT64, {-2});
  Model::Int(m.Node("DFT", {"x", "length", "axis"}, {"y"}), "onesided", 1);
  m.Output("y", onnx::TensorProto::FLOAT);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  recq::Tensor xt = testing::NewTensor({{kBatch, kLen, 1}}, x);
  Bindings feeds;
  feeds.Set("x", xt);
  const std::vector<float> got = RunGraph(*graph, feeds);
  std::vector<double> want(kBatch * kBins * 2);
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t k = 0; k < kBins; ++k) {
      double re = 0, im = 0;
      for (int64_t n = 0; n < kDft; ++n) {
        const double t = 2 * kPi * double(k * n) / kDft;
        re += x[b * kLen + n] * std::cos(t);
        im -= x[b * kLen + n] * std::sin(t);
      }
      want[(b * kBins + k) * 2] = re;
      want[(b * kBins + k) * 2 + 1] = im;
    }
  }
  ExpectNear(got, want, 1e-5);
}

TEST(DftImportTest, ComputedLengthIsUnimplemented) {
  Model m(17);
  m.Input("x", {1, 8, 1}, onnx::TensorProto::FLOAT);
  m.Input("length", {}, onnx::TensorProto::INT64);
  m.Node("DFT", {"x", "length"}, {"y"});
  m.Output("y", onnx::TensorProto::FLOAT);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kUnimplemented) << graph.status();
  EXPECT_THAT(graph.status().message(), HasSubstr("must be a constant"));
}

// Triangular mel filters: the band edges as bins of the spectrogram, each
// filter rising from its left edge to its center and falling to its right.
TEST(MelWeightMatrixImportTest, MatchesTheTriangularFilters) {
  constexpr int64_t kBins = 6, kDft = 64, kRate = 16000;
  constexpr double kLow = 100, kHigh = 7000;
  Model m(17);
  m.Tensor("bins", {}, onnx::TensorProto::INT32, {kBins});
  m.Tensor("dft", {}, onnx::TensorProto::INT32, {kDft});
  m.Tensor("rate", {}, onnx::TensorProto::INT32, {kRate});
  m.Tensor("low", {}, onnx::TensorProto::FLOAT, {kLow});
  m.Tensor("high", {}, onnx::TensorProto::FLOAT, {kHigh});
  m.Node("MelWeightMatrix", {"bins", "dft", "rate", "low", "high"}, {"y"});
  m.Output("y", onnx::TensorProto::FLOAT);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  Bindings feeds;
  const std::vector<float> got = RunGraph(*graph, feeds);
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  auto hz = [](double mel) { return 700 * (std::pow(10, mel / 2595) - 1); };
  std::vector<int64_t> edge(kBins + 2);
  for (int64_t i = 0; i < kBins + 2; ++i) {
    const double f = hz(mel(kLow) + i * (mel(kHigh) - mel(kLow)) / (kBins + 2));
    edge[i] = static_cast<int64_t>(std::floor((kDft + 1) * f / kRate));
  }
  std::vector<double> want((kDft / 2 + 1) * kBins, 0.0);
  for (int64_t b = 0; b < kBins; ++b) {
    for (int64_t j = 0; j <= kDft / 2; ++j) {
      double v = 0;
      if (j >= edge[b] && j <= edge[b + 1]) {
        v = edge[b + 1] == edge[b] ? 1.0 : double(j - edge[b]) / double(edge[b + 1] - edge[b]);
      }
      if (j >= edge[b + 1] && j < edge[b + 2]) {
        v = double(edge[b + 2] - j) / double(edge[b + 2] - edge[b + 1]);
      }
      want[j * kBins + b] = v;
    }
  }
  ExpectNear(got, want, 1e-6);
}

// DequantizeLinear of constant int8 weights folds at import (a QDQ model's
// weights become float constants): no DequantizeLinear node is left and
// the MatMul sees (w - zp) * scale per column.
TEST(QuantizeImportTest, DequantizeOfConstantWeightsFolds) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> q(-128, 127);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  constexpr int64_t kK = 5, kN = 4;
  std::vector<double> w(kK * kN), zp(kN), scale(kN);
  for (double& v : w) v = q(rng);
  for (double& v : zp) v = q(rng) / 4;
  for (double& v : scale) v = 0.01 + 0.01 * std::abs(u(rng));
  Model m(13);
  m.Input("x", {2, kK}, onnx::TensorProto::FLOAT);
  m.Tensor("w", {kK, kN}, onnx::TensorProto::INT8, w);
  m.Tensor("scale", {kN}, onnx::TensorProto::FLOAT, scale);
  m.Tensor("zp", {kN}, onnx::TensorProto::INT8, zp);
  Model::Int(m.Node("DequantizeLinear", {"w", "scale", "zp"}, {"wf"}), "axis", 1);
  m.Node("MatMul", {"x", "wf"}, {"y"});
  m.Output("y", onnx::TensorProto::FLOAT);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (const Node& n : graph->nodes()) EXPECT_NE(std::string(n.op.name()), "DequantizeLinear");
  std::vector<float> x(2 * kK);
  for (float& v : x) v = u(rng);
  recq::Tensor xt = testing::NewTensor({{2, kK}}, x);  // bindings do not own tensors
  Bindings feeds;
  feeds.Set("x", xt);
  const std::vector<float> got = RunGraph(*graph, feeds);
  std::vector<double> want(2 * kN, 0.0);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t c = 0; c < kN; ++c) {
      for (int64_t k = 0; k < kK; ++k) {
        const float wf = static_cast<float>((w[k * kN + c] - zp[c]) * float(scale[c]));
        want[r * kN + c] += double(x[r * kK + k]) * wf;
      }
    }
  }
  ExpectNear(got, want, 1e-5);
}

// A 1-D ConvInteger (N, C, L) runs as the 2-D kernel on (N, C, 1, L)
// views; against the int64 sum here.
TEST(QuantizeImportTest, OneDimensionalConvInteger) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
  constexpr int64_t kC = 4, kL = 11, kOC = 6, kK = 3, kGroups = 2, kStride = 2, kPad = 1;
  constexpr int64_t kOut = (kL + kPad - kK) / kStride + 1;
  std::vector<uint8_t> x(kC * kL);
  for (uint8_t& v : x) v = static_cast<uint8_t>(u8(rng));
  std::vector<double> w(kOC * (kC / kGroups) * kK);
  for (double& v : w) v = s8(rng);
  const int xzp = u8(rng);
  Model m(10);
  m.Input("x", {1, kC, kL}, onnx::TensorProto::UINT8);
  m.Tensor("w", {kOC, kC / kGroups, kK}, onnx::TensorProto::INT8, w);
  m.Tensor("xzp", {}, onnx::TensorProto::UINT8, {double(xzp)});
  onnx::NodeProto* node = m.Node("ConvInteger", {"x", "w", "xzp"}, {"y"});
  Model::Int(node, "group", kGroups);
  onnx::AttributeProto* pads = node->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  pads->add_ints(kPad);
  pads->add_ints(0);
  onnx::AttributeProto* strides = node->add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::INTS);
  strides->add_ints(kStride);
  m.Output("y", onnx::TensorProto::INT32);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<recq::Tensor> xt =
      recq::Tensor::Allocate(testing::SharedContext(), {{1, kC, kL}, DataType::kUInt8});
  ASSERT_TRUE(xt.ok()) << xt.status();
  ASSERT_TRUE(xt->Upload(absl::MakeConstSpan(x)).ok());
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  absl::StatusOr<recq::Tensor> yt =
      recq::Tensor::Allocate(testing::SharedContext(), {{1, kOC, kOut}, DataType::kInt32});
  ASSERT_TRUE(yt.ok()) << yt.status();
  const uint8_t poison = 0xA5;
  ASSERT_TRUE(yt->FillBytes(&poison, 1).ok());
  Bindings b;
  b.Set("x", *xt);
  b.Set("y", *yt);
  ASSERT_TRUE(rec->Run(b).ok());
  absl::StatusOr<std::vector<uint8_t>> bytes = yt->DownloadBytes();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::vector<int32_t> got(kOC * kOut);
  std::memcpy(got.data(), bytes->data(), got.size() * sizeof(int32_t));
  for (int64_t oc = 0; oc < kOC; ++oc) {
    const int64_t g = oc / (kOC / kGroups);
    for (int64_t o = 0; o < kOut; ++o) {
      int64_t want = 0;
      for (int64_t c = 0; c < kC / kGroups; ++c) {
        for (int64_t k = 0; k < kK; ++k) {
          const int64_t at = o * kStride - kPad + k;
          if (at < 0 || at >= kL) continue;
          want += (int64_t{x[(g * (kC / kGroups) + c) * kL + at]} - xzp) *
                  static_cast<int64_t>(w[(oc * (kC / kGroups) + c) * kK + k]);
        }
      }
      EXPECT_EQ(got[oc * kOut + o], want) << "channel " << oc << " position " << o;
    }
  }
}

// DynamicQuantizeLinear's scale, zero point and quantized values, against
// ONNX's definition computed here.
TEST(QuantizeImportTest, DynamicQuantizeLinearOutputs) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  constexpr int64_t kN = 300;
  std::vector<float> x(kN);
  for (float& v : x) v = u(rng);
  Model m(13);
  m.Input("x", {kN}, onnx::TensorProto::FLOAT);
  m.Node("DynamicQuantizeLinear", {"x"}, {"y", "scale", "zp"});
  m.Output("y", onnx::TensorProto::UINT8);
  m.Output("scale", onnx::TensorProto::FLOAT);
  m.Output("zp", onnx::TensorProto::UINT8);
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Recording> rec = engine->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  const uint8_t poison = 0xA5;
  absl::StatusOr<recq::Tensor> y =
      recq::Tensor::Allocate(testing::SharedContext(), {{kN}, DataType::kUInt8});
  absl::StatusOr<recq::Tensor> zp =
      recq::Tensor::Allocate(testing::SharedContext(), {{}, DataType::kUInt8});
  ASSERT_TRUE(y.ok() && zp.ok());
  ASSERT_TRUE(y->FillBytes(&poison, 1).ok());
  ASSERT_TRUE(zp->FillBytes(&poison, 1).ok());
  recq::Tensor scale = testing::NewTensor({{}});
  recq::Tensor xt = testing::NewTensor({{kN}}, x);
  Bindings b;
  b.Set("x", xt);
  b.Set("y", *y);
  b.Set("scale", scale);
  b.Set("zp", *zp);
  ASSERT_TRUE(rec->Run(b).ok());
  const float lo = std::min(0.0f, *std::min_element(x.begin(), x.end()));
  const float hi = std::max(0.0f, *std::max_element(x.begin(), x.end()));
  const float want_scale = (hi - lo) / 255.0f;
  const float want_zp = std::nearbyint(std::clamp(0.0f - lo / want_scale, 0.0f, 255.0f));
  EXPECT_EQ(testing::Download(scale)[0], want_scale);
  absl::StatusOr<std::vector<uint8_t>> zp_bytes = zp->DownloadBytes();
  absl::StatusOr<std::vector<uint8_t>> y_bytes = y->DownloadBytes();
  ASSERT_TRUE(zp_bytes.ok() && y_bytes.ok());
  EXPECT_EQ((*zp_bytes)[0], static_cast<uint8_t>(want_zp));
  for (int64_t i = 0; i < kN; ++i) {
    const float q = std::clamp(std::nearbyint(x[i] / want_scale) + want_zp, 0.0f, 255.0f);
    EXPECT_EQ((*y_bytes)[i], static_cast<uint8_t>(q)) << "element " << i << " x " << x[i];
  }
}

}  // namespace
}  // namespace recq
