// EngineOptions::precision: fp16 storage on whole models (a GraphBuilder
// net and MobileNet V2) against fp32, with both kernel families; the graph
// rewrite at the edges (Casts only where needed, Preprocess writing half,
// f16 outputs without a Cast); engine files recording the precision; the
// tuning-cache key; and the bad combinations (fp16 compute without
// cl_khr_fp16, float16 tensors into float ops at fp32); tf32 products on
// the matrix-unit variants (emulated on PoCL) against a reference of the
// operands rounded to tf32.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/ops/attention.h"
#include "engine/precision.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/engine_file.h"
#include "recq/preprocess.h"
#include "recq/recq.h"
#include "reference/reference_ops.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

using ::testing::HasSubstr;
using testing::SharedContext;
using Precision = EngineOptions::Precision;
using Target = EngineOptions::KernelTarget;

EngineOptions Options(Precision precision, Target target) {
  EngineOptions o;
  o.precision = precision;
  o.kernel_target = target;
  o.tuning = EngineOptions::Tuning::kOff;
  return o;
}

double RelL2(const std::vector<float>& want, const std::vector<float>& got) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    den += double(want[i]) * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

size_t ArgMax(const std::vector<float>& v, size_t begin, size_t end) {
  return std::max_element(v.begin() + begin, v.begin() + end) - v.begin() - begin;
}

// A small CNN through the GraphBuilder: conv 3x3 + relu, depthwise 3x3,
// pointwise conv with a residual add, max pool, global average pool, gemm,
// softmax. Input "input" [2, 3, 20, 20], output "prob" [2, 10].
Graph SmallNet() {
  GraphBuilder b;
  auto w = [&](const std::string& name, std::vector<int64_t> shape, uint64_t seed, float range) {
    reference::HostTensor t = reference::RandomTensor(shape, seed, -range, range);
    return b.Constant(name, t.shape, t.data);
  };
  TensorRef x = b.Input("input", {2, 3, 20, 20});
  Conv2DAttrs same;
  same.pads = {1, 1, 1, 1};
  TensorRef c1 = b.Relu(b.Conv2D(x, w("w1", {16, 3, 3, 3}, 1, 0.4f), w("b1", {16}, 2, 0.1f), same));
  Conv2DAttrs dw = same;
  dw.groups = 16;
  TensorRef c2 = b.Relu(b.Conv2D(c1, w("w2", {16, 1, 3, 3}, 3, 0.5f), w("b2", {16}, 4, 0.1f), dw));
  TensorRef c3 = b.Conv2D(c2, w("w3", {16, 16, 1, 1}, 5, 0.3f), w("b3", {16}, 6, 0.1f), {});
  TensorRef r = b.Relu(b.Add(c3, c1));
  PoolAttrs pool;
  pool.kernel = {2, 2};
  pool.strides = {2, 2};
  TensorRef p = b.GlobalAveragePool(b.AddNode(OpType::kMaxPool, {r}, pool));
  TensorRef f = b.Flatten(p, 1);
  TensorRef g =
      b.Gemm(f, w("wf", {10, 16}, 7, 1.0f), w("bf", {10}, 8, 0.1f), GemmAttrs{1, 1, false, true});
  b.Output(b.Softmax(g, 1), "prob");
  return std::move(b).Build().value();
}

// fp16 against fp32 on one model, both families: top-1 of every batch row
// agrees and the rel-L2 distance is within `tol`.
void ExpectFp16Agrees(const Graph& graph, const std::string& input, const std::string& output,
                      int64_t classes, double tol, uint64_t seed) {
  const Context& ctx = SharedContext();
  const TensorDesc in_desc = graph.value(graph.inputs()[0]).desc;
  reference::HostTensor x = reference::RandomTensor(in_desc.shape, seed, -1.0f, 1.0f);
  for (Target target : {Target::kCpu, Target::kGpu}) {
    SCOPED_TRACE(target == Target::kCpu ? "cpu kernels" : "gpu kernels");
    absl::StatusOr<Engine> e32 = Engine::Compile(ctx, graph, Options(Precision::kFp32, target));
    ASSERT_TRUE(e32.ok()) << e32.status();
    absl::StatusOr<Engine> e16 =
        Engine::Compile(ctx, graph, Options(Precision::kFp16Storage, target));
    ASSERT_TRUE(e16.ok()) << e16.status();
    // Bindings keep the model's types; float weights take half the bytes,
    // integer tables (the CPU convolutions' panel offsets) the same.
    ASSERT_EQ(e16->inputs()[0].desc, e32->inputs()[0].desc);
    ASSERT_EQ(e16->outputs()[0].desc, e32->outputs()[0].desc);
    const EngineStats& s16 = e16->stats();
    const EngineStats& s32 = e32->stats();
    EXPECT_EQ(s16.integer_constant_bytes, s32.integer_constant_bytes);
    EXPECT_LE(s16.weight_bytes - s16.integer_constant_bytes,
              (s32.weight_bytes - s32.integer_constant_bytes) / 2 + 64);
    EXPECT_LT(e16->stats().intermediate_bytes, e32->stats().intermediate_bytes);
    const std::vector<float> y32 = testing::RunRecorded(*e32, input, x, output);
    const std::vector<float> y16 = testing::RunRecorded(*e16, input, x, output);
    ASSERT_EQ(y32.size(), y16.size());
    ASSERT_FALSE(y16.empty());
    for (float v : y16) ASSERT_TRUE(std::isfinite(v));
    EXPECT_LT(RelL2(y32, y16), tol);
    for (size_t row = 0; row < y32.size() / classes; ++row) {
      EXPECT_EQ(ArgMax(y32, row * classes, (row + 1) * classes),
                ArgMax(y16, row * classes, (row + 1) * classes))
          << "batch row " << row;
    }
  }
}

TEST(PrecisionTest, GraphBuilderNetFp16AgreesWithFp32) {
  // Measured rel-L2 about 1e-3; half rounding of every stored tensor.
  ExpectFp16Agrees(SmallNet(), "input", "prob", 10, 1e-2, 11);
}

TEST(PrecisionTest, MobileNetV2Fp16AgreesWithFp32) {
  // Random weights without training keep no margin between 1000 classes:
  // 10 classes, so that top-1 means something. Half rounding compounds over
  // the 52 convolutions: the rel-L2 distance of the activations grows from
  // 3e-4 after the stem to 4.6e-2 before the classifier, the same with both
  // kernel families (measured node by node); the softmax output's distance
  // was 0.09 with 1000 classes.
  models::MobileNetOptions options;
  options.resolution = 96;  // CI time: the same blocks at a smaller size
  options.num_classes = 10;
  absl::StatusOr<Graph> g = models::BuildMobileNetV2(options);
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectFp16Agrees(*g, "input", "prob", 10, 0.15, 12);
}

TEST(PrecisionTest, Fp16StorageAddsCastsAtFloat32EdgesOnly) {
  const Graph graph = SmallNet();
  absl::StatusOr<Graph> half = internal::ToHalfStorage(graph);
  ASSERT_TRUE(half.ok()) << half.status();
  int casts = 0;
  for (const Node& n : half->nodes()) casts += n.op == OpType("Cast");
  EXPECT_EQ(casts, 2);  // input to f16, output to f32
  for (const Value& v : half->values()) {
    if (v.kind == Value::Kind::kIntermediate && v.name != "prob") {
      EXPECT_EQ(v.desc.dtype, DataType::kFloat16) << v.name;
    }
  }
  EXPECT_EQ(half->value(half->inputs()[0]).desc.dtype, DataType::kFloat32);
  EXPECT_EQ(half->value(half->outputs()[0]).desc.dtype, DataType::kFloat32);
}

// u8 NHWC frames preprocessed straight into half, and an f16 output the
// application asked for: no Cast dispatch at either edge.
TEST(PrecisionTest, PreprocessWritesHalfAndF16OutputNeedsNoCast) {
  GraphBuilder b;
  TensorRef x = b.Input("input", {1, 3, 8, 8});
  reference::HostTensor wt = reference::RandomTensor({4, 3, 1, 1}, 5, -0.5f, 0.5f);
  b.Output(b.Relu(b.Conv2D(x, b.Constant("w", wt.shape, wt.data), {}, {})), "y");
  Graph graph = std::move(b).Build().value();
  PrePostProcessing ppp;
  InputPreprocess& in = ppp.inputs["input"];
  in.element_type = DataType::kUInt8;
  in.layout = TensorLayout::kNHWC;
  in.color = ColorFormat::kRGB;
  in.mean = {120.0f};
  in.scale = {60.0f};
  ppp.outputs["y"].element_type = DataType::kFloat16;
  ASSERT_TRUE(ApplyPrePostProcessing(graph, ppp).ok());

  const Context& ctx = SharedContext();
  for (Target target : {Target::kCpu, Target::kGpu}) {
    absl::StatusOr<Engine> e32 = Engine::Compile(ctx, graph, Options(Precision::kFp32, target));
    ASSERT_TRUE(e32.ok()) << e32.status();
    absl::StatusOr<Engine> e16 =
        Engine::Compile(ctx, graph, Options(Precision::kFp16Storage, target));
    ASSERT_TRUE(e16.ok()) << e16.status();
    for (const std::string& label : e16->DispatchLabels()) {
      EXPECT_THAT(label, ::testing::Not(HasSubstr("cast"))) << label;
    }
    EXPECT_LT(e16->DispatchLabels().size(), e32->DispatchLabels().size());
    // The same frame through both; outputs are f16 bindings.
    const TensorDesc frame_desc = e16->inputs()[0].desc;
    ASSERT_EQ(frame_desc.dtype, DataType::kUInt8);
    std::vector<uint8_t> frame(static_cast<size_t>(frame_desc.NumElements()));
    for (size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
    std::vector<std::vector<float>> outs;
    for (const Engine* e : {&*e32, &*e16}) {
      absl::StatusOr<Tensor> f = Tensor::Allocate(ctx, frame_desc);
      ASSERT_TRUE(f.ok());
      ASSERT_TRUE(f->Upload(absl::Span<const uint8_t>(frame)).ok());
      absl::StatusOr<Tensor> y = Tensor::Allocate(ctx, e->outputs()[0].desc);
      ASSERT_TRUE(y.ok());
      const uint16_t nan_bits = 0x7e00;
      ASSERT_TRUE(y->FillBytes(&nan_bits, 2).ok());
      Bindings bindings;
      bindings.Set(e->inputs()[0].name, *f);
      bindings.Set("y", *y);
      absl::StatusOr<Recording> rec = e->Record();
      ASSERT_TRUE(rec.ok()) << rec.status();
      ASSERT_TRUE(rec->Run(bindings).ok());
      absl::StatusOr<std::vector<uint16_t>> bits = y->DownloadAs<uint16_t>();
      ASSERT_TRUE(bits.ok());
      std::vector<float> v;
      for (uint16_t h : *bits) v.push_back(HalfToFloat(h));
      outs.push_back(std::move(v));
    }
    ASSERT_EQ(outs[0].size(), outs[1].size());
    for (size_t i = 0; i < outs[0].size(); ++i) {
      ASSERT_TRUE(std::isfinite(outs[1][i])) << i;
      EXPECT_NEAR(outs[1][i], outs[0][i], 1e-2 * std::max(1.0f, std::fabs(outs[0][i]))) << i;
    }
  }
}

TEST(PrecisionTest, EngineFileRecordsPrecisionAndReloads) {
  const Context& ctx = SharedContext();
  const Graph graph = SmallNet();
  absl::StatusOr<Engine> e16 =
      Engine::Compile(ctx, graph, Options(Precision::kFp16Storage, Target::kAuto));
  ASSERT_TRUE(e16.ok()) << e16.status();
  absl::StatusOr<std::string> bytes = e16->Serialize();
  if (absl::IsUnimplemented(bytes.status())) GTEST_SKIP() << bytes.status();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<EngineFileSummary> summary = SummarizeEngineFile(*bytes);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->precision, Precision::kFp16Storage);
  absl::StatusOr<Engine> loaded = LoadEngineFromBytes(ctx, *bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  reference::HostTensor x = reference::RandomTensor({2, 3, 20, 20}, 21, -1.0f, 1.0f);
  const std::vector<float> a = testing::RunRecorded(*e16, "input", x, "prob");
  const std::vector<float> b = testing::RunRecorded(*loaded, "input", x, "prob");
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  // And an fp32 file says fp32.
  absl::StatusOr<Engine> e32 =
      Engine::Compile(ctx, graph, Options(Precision::kFp32, Target::kAuto));
  ASSERT_TRUE(e32.ok());
  absl::StatusOr<std::string> bytes32 = e32->Serialize();
  ASSERT_TRUE(bytes32.ok());
  EXPECT_EQ(SummarizeEngineFile(*bytes32)->precision, Precision::kFp32);
}

TEST(PrecisionTest, Fp16ComputeNeedsClKhrFp16) {
  const Context& ctx = SharedContext();
  absl::StatusOr<Engine> e =
      Engine::Compile(ctx, SmallNet(), Options(Precision::kFp16Compute, Target::kAuto));
  ASSERT_FALSE(e.ok());
  if (ctx.device_info().HasExtension("cl_khr_fp16")) {
    EXPECT_EQ(e.status().code(), absl::StatusCode::kUnimplemented) << e.status();
  } else {
    EXPECT_EQ(e.status().code(), absl::StatusCode::kFailedPrecondition) << e.status();
    EXPECT_THAT(e.status().message(), HasSubstr("cl_khr_fp16"));
    EXPECT_THAT(e.status().message(), HasSubstr(ctx.device_info().name));
  }
}

TEST(PrecisionTest, Float16IntoFloatOpNeedsFp16Storage) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {4, 8}, DataType::kFloat16);
  b.Output(b.Relu(x), "y");
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  const Context& ctx = SharedContext();
  absl::StatusOr<Engine> e32 = Engine::Compile(ctx, *g, Options(Precision::kFp32, Target::kAuto));
  ASSERT_FALSE(e32.ok());
  EXPECT_EQ(e32.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(e32.status().message(), HasSubstr("kFp16Storage"));
  // Under fp16 storage the same graph runs, with no Cast at either edge.
  absl::StatusOr<Engine> e16 =
      Engine::Compile(ctx, *g, Options(Precision::kFp16Storage, Target::kAuto));
  ASSERT_TRUE(e16.ok()) << e16.status();
  EXPECT_EQ(e16->DispatchLabels().size(), 1u);
}

// --- tf32 products ---

// Tf32 rounds x to tf32 as cvt.rna.tf32.f32 does (common.cl's recq_tf32).
float Tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &u, 4);
  return x;
}

reference::HostTensor Tf32(reference::HostTensor t) {
  for (float& v : t.data) v = Tf32(v);
  return t;
}

// The variants on matrix units ("*_mma", emulated here) for every node
// one fits; counts those nodes in `*forced`.
VariantChooser ForceMatrixUnits(std::shared_ptr<int> forced) {
  return [forced](const Node& node, const LoweringContext&, absl::Span<const size_t> fitting) {
    const OpDef* def = FindOp(node.op);
    for (size_t i : fitting) {
      if (absl::StrContains(def->variants[i].name, "_mma")) {
        ++*forced;
        return i;
      }
    }
    return fitting[0];
  };
}

// One node under test, built twice: with its constants as drawn and with
// them rounded to tf32 (the reference of the tf32 products).
using NodeGraph = std::function<Graph(bool round_constants)>;

// Compiles graph(false) for the GPU family with emulated matrix units at
// `precision`, runs it on x, and returns the output "y".
std::vector<float> RunOnMatrixUnits(const Graph& graph, const reference::HostTensor& x,
                                    Precision precision) {
  EngineOptions o = Options(precision, Target::kGpu);
  o.emulate_matrix_units = true;
  auto forced = std::make_shared<int>(0);
  o.choose_variant = ForceMatrixUnits(forced);
  absl::StatusOr<Engine> e = Engine::Compile(SharedContext(), graph, o);
  EXPECT_TRUE(e.ok()) << e.status();
  if (!e.ok()) return {};
  EXPECT_GT(*forced, 0) << "no matrix-unit variant fits";
  return testing::RunRecorded(*e, "x", x, "y");
}

// At kTf32 the products multiply operands rounded to tf32 once: the output
// matches the reference of rounded operands (`exact_tf32`, where nothing
// else is rounded) to float32 accumulation error and differs from the
// float32 reference by tf32's; at kFp32 it matches the float32 reference.
// Measured on PoCL: rel L2 about 2e-7 at fp32 and for tf32 against the
// rounded operands' reference, 2.3e-4 to 2.6e-4 for tf32 against float32.
void ExpectTf32Products(const NodeGraph& graph, const std::vector<int64_t>& x_shape,
                        bool exact_tf32, uint64_t seed) {
  const reference::HostTensor x = reference::RandomTensor(x_shape, seed, -1.0f, 1.0f);
  const Graph g = graph(false);
  const std::vector<float> want = testing::ReferenceOutput(g, "x", x, "y");
  const std::vector<float> y32 = RunOnMatrixUnits(g, x, Precision::kFp32);
  const std::vector<float> y_tf32 = RunOnMatrixUnits(g, x, Precision::kTf32);
  ASSERT_EQ(y32.size(), want.size());
  ASSERT_EQ(y_tf32.size(), want.size());
  for (float v : y_tf32) ASSERT_TRUE(std::isfinite(v));
  EXPECT_LT(RelL2(want, y32), 1e-6);
  const double tf32_error = RelL2(want, y_tf32);
  EXPECT_GT(tf32_error, 5e-5) << "tf32 products look like float32 ones";
  EXPECT_LT(tf32_error, 3e-3);
  if (exact_tf32) {
    const std::vector<float> want_tf32 = testing::ReferenceOutput(graph(true), "x", Tf32(x), "y");
    EXPECT_LT(RelL2(want_tf32, y_tf32), 1e-6);
  }
}

TEST(PrecisionTest, Tf32MatMulOnMatrixUnits) {
  ExpectTf32Products(
      [](bool round) {
        GraphBuilder b;
        reference::HostTensor w = reference::RandomTensor({72, 40}, 31, -1.0f, 1.0f);
        if (round) w = Tf32(w);
        TensorRef x = b.Input("x", {2, 48, 72});
        b.Output(b.AddNode(OpType::kMatMul, {x, b.Constant("w", w.shape, w.data)}), "y");
        return std::move(b).Build().value();
      },
      {2, 48, 72}, true, 32);
}

TEST(PrecisionTest, Tf32ImplicitGemmConvolutionOnMatrixUnits) {
  ExpectTf32Products(
      [](bool round) {
        GraphBuilder b;
        reference::HostTensor w = reference::RandomTensor({24, 16, 3, 3}, 33, -0.5f, 0.5f);
        if (round) w = Tf32(w);
        TensorRef x = b.Input("x", {1, 16, 12, 12});
        Conv2DAttrs same;
        same.pads = {1, 1, 1, 1};
        b.Output(b.Conv2D(x, b.Constant("w", w.shape, w.data), {}, same), "y");
        return std::move(b).Build().value();
      },
      {1, 16, 12, 12}, true, 34);
}

// Attention rounds its probabilities too: no exact reference, the bounds.
TEST(PrecisionTest, Tf32AttentionOnMatrixUnits) {
  ExpectTf32Products(
      [](bool) {
        GraphBuilder b;
        TensorRef x = b.Input("x", {1, 2, 40, 32});
        internal::AttentionAttrs a = internal::DenseAttention(1, 2, 40, 40, 32, 32);
        b.Output(b.AddNode(OpType("Attention"), {x, x, x}, a), "y");
        return std::move(b).Build().value();
      },
      {1, 2, 40, 32}, false, 35);
}

// Without matrix units the tf32 option changes nothing: the same programs,
// the same bits.
TEST(PrecisionTest, Tf32WithoutMatrixUnitsIsFp32) {
  const Context& ctx = SharedContext();
  const Graph graph = SmallNet();
  const reference::HostTensor x = reference::RandomTensor({2, 3, 20, 20}, 36, -1.0f, 1.0f);
  for (Target target : {Target::kCpu, Target::kGpu}) {
    absl::StatusOr<Engine> e32 = Engine::Compile(ctx, graph, Options(Precision::kFp32, target));
    ASSERT_TRUE(e32.ok()) << e32.status();
    absl::StatusOr<Engine> etf = Engine::Compile(ctx, graph, Options(Precision::kTf32, target));
    ASSERT_TRUE(etf.ok()) << etf.status();
    const std::vector<float> a = testing::RunRecorded(*e32, "input", x, "prob");
    const std::vector<float> b = testing::RunRecorded(*etf, "input", x, "prob");
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  }
}

TEST(PrecisionTest, EngineFileRecordsTf32) {
  const Context& ctx = SharedContext();
  EngineOptions o = Options(Precision::kTf32, Target::kGpu);
  o.emulate_matrix_units = true;
  absl::StatusOr<Engine> e = Engine::Compile(ctx, SmallNet(), o);
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<std::string> bytes = e->Serialize();
  if (absl::IsUnimplemented(bytes.status())) GTEST_SKIP() << bytes.status();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(SummarizeEngineFile(*bytes)->precision, Precision::kTf32);
  absl::StatusOr<Engine> loaded = LoadEngineFromBytes(ctx, *bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->options().precision, Precision::kTf32);
  const reference::HostTensor x = reference::RandomTensor({2, 3, 20, 20}, 37, -1.0f, 1.0f);
  const std::vector<float> a = testing::RunRecorded(*e, "input", x, "prob");
  const std::vector<float> b = testing::RunRecorded(*loaded, "input", x, "prob");
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

TEST(PrecisionTest, ParsePrecisionNames) {
  EXPECT_EQ(*ParsePrecision("fp32"), Precision::kFp32);
  EXPECT_EQ(*ParsePrecision("fp16"), Precision::kFp16Storage);
  EXPECT_EQ(*ParsePrecision("fp16-compute"), Precision::kFp16Compute);
  EXPECT_EQ(*ParsePrecision("tf32"), Precision::kTf32);
  EXPECT_STREQ(PrecisionName(Precision::kTf32), "tf32");
  absl::StatusOr<Precision> bad = ParsePrecision("half");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("fp16"));
}

}  // namespace
}  // namespace recq
