// The op registry: what it holds, what it refuses, and the variant chooser.
#include "recq/op_registry.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "reference/reference_registry.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using testing::NewTensor;
using testing::SharedContext;

TEST(OpRegistryTest, EveryBuiltinOpHasInferenceVariantsAndACpuReference) {
  const std::vector<const OpDef*> ops = RegisteredOps();
  ASSERT_GE(ops.size(), 24u);
  for (const OpDef* def : ops) {
    SCOPED_TRACE(def->type.name());
    EXPECT_TRUE(def->infer);
    EXPECT_FALSE(def->variants.empty());
    for (const KernelVariant& v : def->variants) {
      EXPECT_FALSE(v.name.empty());
      EXPECT_TRUE(v.lower);
    }
    // Custom ops registered by other tests of this binary have none. The
    // decode loop's state ops (engine/ops/decode.h) write persistent
    // buffers in place, which a functional reference cannot express;
    // tests/decode/generator_test.cc checks them end to end against
    // transformers' ids and onnxruntime's logits.
    if (absl::StartsWith(def->type.name(), "test.")) continue;
    static const absl::flat_hash_set<std::string> kStateOps = {
        "recq.DecodeAdvance", "recq.DecodeArgMax",         "recq.DecodeBegin",
        "recq.DecodeInputs",  "recq.DecodePrefillAdvance", "recq.KvCacheWrite"};
    if (kStateOps.contains(def->type.name())) continue;
    EXPECT_NE(reference::FindReferenceOp(def->type), nullptr) << "no CPU reference";
  }
}

TEST(OpRegistryTest, ConvDeclaresBothFamiliesInOrderOfPreference) {
  const OpDef* conv = FindOp(OpType::kConv2D);
  ASSERT_NE(conv, nullptr);
  std::vector<std::string> names;
  for (const KernelVariant& v : conv->variants) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv2d_winograd",
                                             "conv2d_gemm_oc",
                                             "conv2d_gemm",
                                             "conv2d_pointwise",
                                             "conv2d_pointwise_strided",
                                             "conv2d_depthwise3x3",
                                             "conv2d_depthwise_staged",
                                             "conv2d_depthwise_kxk",
                                             "conv2d_tiled_padded",
                                             "conv2d_tiled",
                                             "conv2d_dense3x3",
                                             "conv2d",
                                             "conv2d_pointwise_gpu",
                                             "conv2d_depthwise_gpu",
                                             "conv2d_igemm_mma",
                                             "conv2d_igemm_gpu_128x64",
                                             "conv2d_igemm_gpu_64x64",
                                             "conv2d_igemm_gpu_32x64",
                                             "conv2d_igemm_gpu_32x32",
                                             "conv2d_igemm_mma_tuned",
                                             "conv2d_direct_gpu"}));
  EXPECT_TRUE(conv->absorbs_activation);
  EXPECT_TRUE(conv->fold_channel_affine);
  EXPECT_TRUE(FindOp(OpType::kAdd)->is_residual_add);
  EXPECT_TRUE(FindOp(OpType::kReshape)->is_view);
  EXPECT_TRUE(FindOp(OpType::kBatchNorm)->as_channel_affine);
  EXPECT_FALSE(FindOp(OpType::kMatMul)->absorbs_activation);
}

TEST(OpRegistryTest, OnnxMappingsHonourOpsetRanges) {
  EXPECT_NE(FindOnnxMapping("", "Conv", 13), nullptr);
  EXPECT_NE(FindOnnxMapping("ai.onnx", "Conv", 13), nullptr);
  EXPECT_NE(FindOnnxMapping("", "Erf", 13), nullptr);
  EXPECT_EQ(FindOnnxMapping("", "Erf", 7), nullptr);  // Erf is opset 9 on
  EXPECT_EQ(OnnxOpsetsOf("", "Erf"), "9-21");
  EXPECT_EQ(FindOnnxMapping("", "NoSuchOp", 13), nullptr);
  EXPECT_EQ(OnnxOpsetsOf("", "NoSuchOp"), "");
  EXPECT_NE(FindOnnxMapping("", "Dropout", 12), nullptr);
  EXPECT_NE(FindOnnxMapping("", "Constant", 12), nullptr);
}

TEST(OpRegistryTest, RefusesDuplicatesAndIncompleteOps) {
  OpDef dup;
  dup.type = OpType::kRelu;
  dup.infer = [](const OpAttrs&, InferInputs in) { return *in[0]; };
  dup.variants = {{"x", nullptr, [](LoweringContext&, const Node&) { return absl::OkStatus(); }}};
  EXPECT_EQ(RegisterOp(dup).code(), absl::StatusCode::kAlreadyExists);

  OpDef no_infer;
  no_infer.type = OpType("test.NoInfer");
  no_infer.variants = dup.variants;
  EXPECT_EQ(RegisterOp(no_infer).code(), absl::StatusCode::kInvalidArgument);

  OpDef no_variant;
  no_variant.type = OpType("test.NoVariant");
  no_variant.infer = dup.infer;
  EXPECT_EQ(RegisterOp(no_variant).code(), absl::StatusCode::kInvalidArgument);

  OpDef clash;
  clash.type = OpType("test.ClashingOnnx");
  clash.infer = dup.infer;
  clash.variants = dup.variants;
  clash.onnx = {{"", "Relu", 14, 14, [](OnnxNodeContext&) { return absl::OkStatus(); }}};
  absl::Status s = RegisterOp(clash);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_EQ(FindOp(OpType("test.ClashingOnnx")), nullptr);  // nothing half-registered

  EXPECT_EQ(RegisterKernelSource("conv2d", "").code(), absl::StatusCode::kInvalidArgument);
}

TEST(OpRegistryTest, UnknownOpIsAClearError) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {4});
  b.Output(b.AddNode(OpType("NoSuchOp"), {x}), "y");
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(absl::StrContains(g.status().message(), "NoSuchOp")) << g.status();
}

// A pointwise conv: the chooser forces the generic conv2d instead of
// conv2d_gemm; the output still matches the reference and the dispatch
// is labelled with the chosen variant.
TEST(VariantChooserTest, PicksAmongFittingVariants) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 6, 6});
  auto w = reference::RandomTensor({16, 8, 1, 1}, 7);
  TensorRef y = b.Conv2D(x, b.Constant("w", w.shape, w.data), {}, {});
  b.Output(y, "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, std::move(b).Build());

  std::vector<std::string> offered;
  EngineOptions options;
  options.kernel_target = EngineOptions::KernelTarget::kCpu;
  options.choose_variant = [&offered](const Node& node, const LoweringContext&,
                                      absl::Span<const size_t> fitting) {
    const OpDef* def = FindOp(node.op);
    for (size_t i : fitting) offered.push_back(def->variants[i].name);
    return fitting.back();
  };
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), graph, options));
  EXPECT_EQ(offered, (std::vector<std::string>{"conv2d_gemm", "conv2d_pointwise", "conv2d_tiled",
                                               "conv2d"}));
  EXPECT_EQ(engine.DispatchLabels(), (std::vector<std::string>{"Conv2D_0/conv2d"}));

  auto host = reference::RandomTensor({1, 8, 6, 6}, 8);
  auto cmp = reference::Compare(testing::RunRecorded(engine, "x", host, "y"),
                                testing::ReferenceOutput(graph, "x", host, "y"), 1e-5f, 1e-4f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST(VariantChooserTest, AChoiceThatDoesNotFitIsAnError) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {4});
  b.Output(b.Relu(x), "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, std::move(b).Build());
  EngineOptions options;
  options.choose_variant = [](const Node&, const LoweringContext&, absl::Span<const size_t>) {
    return size_t{99};
  };
  absl::StatusOr<Engine> engine = Engine::Compile(SharedContext(), graph, options);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInternal) << engine.status();
}

}  // namespace
}  // namespace recq
