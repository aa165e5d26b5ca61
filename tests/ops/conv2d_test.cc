// Conv2D against the CPU reference: kernel sizes, strides, symmetric and
// asymmetric pads, dilation, groups (incl. depthwise), bias, batch, fused
// activations, and the Conv -> BatchNorm / Conv -> Relu graphs the passes
// rewrite. Every case runs with both kernel families (the test parameter `cpu`
// / `gpu`, EngineOptions::kernel_target), so the GPU variants are held to the
// reference on PoCL too. Every kernel variant the lowering selects is reached:
// CPU generic, pointwise (stride 1 and strided), depthwise 3x3, dense 3x3 with
// their vector widths and tails (both with a fused residual Add); GPU pointwise
// (1, 2 or 4 output channels per item, C split in 1-8 slices, fused residual
// Add), depthwise and direct.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/bindings.h"
#include "recq/engine.h"
#include "recq/graph.h"
#include "recq/tensor.h"

namespace recq::optest {
namespace {

struct ConvCase {
  std::string name;
  std::vector<int64_t> x;  // [N,C,H,W]
  int64_t out_channels;
  std::array<int64_t, 2> kernel;
  Conv2DAttrs attrs;
  bool bias;
  Activation fused;
};

// PrintTo names the case in gtest messages.
void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

ConvCase Conv(std::string name, std::vector<int64_t> x, int64_t out_channels,
              std::array<int64_t, 2> kernel, Conv2DAttrs attrs, bool bias = true,
              Activation fused = {}) {
  return {std::move(name), std::move(x), out_channels, kernel, attrs, bias, fused};
}

Conv2DAttrs Attrs(std::array<int64_t, 2> strides, std::array<int64_t, 4> pads, int64_t groups = 1,
                  std::array<int64_t, 2> dilations = {1, 1}) {
  Conv2DAttrs a;
  a.strides = strides;
  a.pads = pads;
  a.groups = groups;
  a.dilations = dilations;
  return a;
}

constexpr Activation kRelu{ActivationKind::kRelu, 0.0f, 0.0f};
constexpr Activation kRelu6{ActivationKind::kClip, 0.0f, 6.0f};
constexpr Activation kNoActivation{};
constexpr Activation kLeaky{ActivationKind::kLeakyRelu, 0.1f, 0.0f};
constexpr Activation kHardSwish{ActivationKind::kHardSwish, 0.0f, 0.0f};
constexpr Activation kSigmoid{ActivationKind::kSigmoid, 0.0f, 0.0f};
constexpr Activation kSilu{ActivationKind::kSilu, 0.0f, 0.0f};
constexpr Activation kHardSigmoid{ActivationKind::kHardSigmoid, 0.2f, 0.5f};

using KernelTarget = EngineOptions::KernelTarget;

// Options that compile with one kernel family only.
CheckOptions For(KernelTarget target) {
  CheckOptions options;
  options.kernel_targets = {target};
  return options;
}

const auto kTargets = ::testing::Values(KernelTarget::kCpu, KernelTarget::kGpu);

// DispatchLabels compiles `op` for `target` (optimized or not) and returns
// the label ("<node>/<kernel>") of every dispatch, from one profiled run on
// uninitialized tensors.
absl::StatusOr<std::vector<std::string>> DispatchLabels(
    const absl::StatusOr<OpGraph>& op, KernelTarget target, bool optimize,
    VariantChooser choose_variant = {},
    EngineOptions::Precision precision = EngineOptions::Precision::kFp32) {
  if (!op.ok()) return op.status();
  const absl::StatusOr<Context>& context = SharedContext();
  if (!context.ok()) return context.status();
  EngineOptions options;
  options.kernel_target = target;
  options.optimize = optimize;
  options.choose_variant = std::move(choose_variant);
  options.precision = precision;
  absl::StatusOr<Engine> engine = Engine::Compile(*context, op->graph, options);
  if (!engine.ok()) return engine.status();
  Bindings bindings;
  std::vector<Tensor> keep_alive;
  for (const auto* list : {&engine->inputs(), &engine->outputs()}) {
    for (const BindingInfo& info : *list) {
      absl::StatusOr<Tensor> t = Tensor::Allocate(*context, info.desc);
      if (!t.ok()) return t.status();
      bindings.Set(info.name, *t);
      keep_alive.push_back(*std::move(t));
    }
  }
  absl::StatusOr<std::vector<DispatchProfile>> profile = engine->Profile(bindings);
  if (!profile.ok()) return profile.status();
  std::vector<std::string> labels;
  for (const DispatchProfile& p : *profile) labels.push_back(p.label);
  return labels;
}

// The kernel a pointwise convolution takes by default in each family, as
// dispatch labels end: on CPUs the panel GEMM, which reads the input in
// place for 64 output channels or fewer.
std::string PointwiseKernel(KernelTarget target) {
  return target == KernelTarget::kGpu ? "/conv2d_pointwise_gpu" : "/conv2d_gemm";
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class Conv2DTest : public ::testing::TestWithParam<std::tuple<ConvCase, KernelTarget>> {};

TEST_P(Conv2DTest, MatchesReference) {
  const ConvCase& c = std::get<0>(GetParam());
  OpGraphBuilder b;
  TensorRef x = b.Input("x", c.x);
  TensorRef w =
      b.Constant("w", {c.out_channels, c.x[1] / c.attrs.groups, c.kernel[0], c.kernel[1]});
  TensorRef bias = c.bias ? b.Constant("b", {c.out_channels}) : TensorRef{};
  TensorRef y = b.graph().Conv2D(x, w, bias, c.attrs);
  if (c.fused.kind != ActivationKind::kNone) b.graph().SetFusedActivation(y, c.fused);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), For(std::get<1>(GetParam())));
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<ConvCase, KernelTarget>>& info) {
  return std::get<0>(info.param).name + "_" + KernelTargetName(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2DTest,
    ::testing::Combine(
        ::testing::Values(
            Conv("k1x1", {1, 8, 7, 7}, 16, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("k1x1_nobias_batch2", {2, 8, 5, 6}, 4, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), false),
            Conv("k1x1_wide", {1, 32, 14, 14}, 64, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("k1x1_odd_channels", {1, 13, 9, 11}, 7, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("k1x1_s2", {1, 8, 9, 9}, 8, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0})),
            Conv("k3x3_valid", {1, 3, 9, 9}, 8, {3, 3}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("k3x3_pad1", {1, 3, 9, 9}, 8, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1})),
            Conv("k3x3_s2_pad1", {1, 4, 10, 10}, 8, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1})),
            Conv("k3x3_s2_asym_pads", {1, 4, 9, 9}, 4, {3, 3}, Attrs({2, 2}, {0, 0, 1, 1})),
            Conv("k3x3_s2_asym_pads_tl", {1, 3, 10, 10}, 6, {3, 3}, Attrs({2, 2}, {1, 0, 0, 2})),
            Conv("k3x3_stem_s2", {1, 3, 32, 32}, 32, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}), true,
                 kRelu6),
            Conv("k5x5_pad2", {1, 3, 11, 11}, 5, {5, 5}, Attrs({1, 1}, {2, 2, 2, 2})),
            Conv("k5x5_s2_nobias", {1, 4, 13, 12}, 6, {5, 5}, Attrs({2, 2}, {2, 2, 2, 2}), false),
            Conv("k7x2_asym", {1, 2, 12, 9}, 3, {7, 2}, Attrs({1, 2}, {3, 0, 3, 1})),
            Conv("k3x3_dilation2", {1, 4, 11, 11}, 4, {3, 3},
                 Attrs({1, 1}, {2, 2, 2, 2}, 1, {2, 2})),
            Conv("k3x3_dilation2x1_s2", {1, 3, 12, 10}, 4, {3, 3},
                 Attrs({2, 1}, {1, 0, 2, 1}, 1, {2, 1})),
            Conv("groups2", {1, 8, 6, 6}, 6, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 2)),
            Conv("groups2_k1x1_batch2", {2, 4, 5, 5}, 8, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}, 2)),
            Conv("depthwise3x3_relu", {1, 16, 8, 8}, 16, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 16),
                 true, kRelu),
            Conv("depthwise3x3_s2_relu6_batch2", {2, 8, 9, 9}, 8, {3, 3},
                 Attrs({2, 2}, {1, 1, 1, 1}, 8), true, kRelu6),
            Conv("depthwise3x3_s2_asym", {1, 8, 10, 10}, 8, {3, 3}, Attrs({2, 2}, {0, 0, 1, 1}, 8)),
            Conv("depthwise_multiplier2", {1, 4, 7, 7}, 8, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 4)),
            Conv("batch2_relu", {2, 3, 8, 8}, 4, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu),
            Conv("batch2_relu6_nobias", {2, 5, 7, 6}, 6, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), false,
                 kRelu6),
            Conv("k1x1_relu6", {1, 16, 6, 6}, 24, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true,
                 kRelu6),
            Conv("k3x3_deep_sum", {1, 64, 6, 6}, 8, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
                 kNoActivation),
            // conv2d_pointwise: 16-pixel tiles (HW >= 16), 8-pixel tiles (8 <= HW
            // < 16), a partial last tile moved back to end at HW, the lane-by-lane
            // path (HW < 8), output-channel tails, batches, every activation.
            Conv("pw_vw16_exact", {1, 24, 16, 16}, 32, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true,
                 kRelu6),
            Conv("pw_vw16_shifted_tail", {1, 20, 15, 15}, 24, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}),
                 true, kRelu),
            Conv("pw_vw16_hw49_oc_tail", {1, 64, 7, 7}, 100, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("pw_vw8_exact_sigmoid", {1, 6, 2, 4}, 8, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true,
                 kSigmoid),
            Conv("pw_vw8_shifted_tail_batch3", {3, 17, 3, 3}, 11, {1, 1},
                 Attrs({1, 1}, {0, 0, 0, 0}), true, kLeaky),
            Conv("pw_lanes_hw1_oc1000", {1, 40, 1, 1}, 1000, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("pw_lanes_hw2_oc3_nobias", {2, 5, 1, 2}, 3, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}),
                 false, kHardSwish),
            Conv("pw_vw16_batch2_sigmoid", {2, 9, 8, 6}, 13, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}),
                 true, kSigmoid),
            Conv("pw_vw16_silu", {1, 24, 6, 6}, 72, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true,
                 kSilu),
            Conv("pw_vw16_large_hw_tail", {1, 12, 37, 29}, 9, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}),
                 true, kHardSigmoid),
            // conv2d_depthwise3x3: stride 1 and 2, 16-lane strips (OW >= 16) and
            // 8-lane strips, exact rows, shifted last strips, rows narrower than a
            // strip, top pad 0, right pad 0, batches, no bias.
            Conv("dw_s1_vw16_exact", {1, 8, 5, 16}, 8, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 8), true,
                 kRelu6),
            Conv("dw_s1_vw16_shifted", {1, 5, 6, 20}, 5, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 5)),
            Conv("dw_s1_vw16_w56_relu6", {1, 16, 10, 56}, 16, {3, 3},
                 Attrs({1, 1}, {1, 1, 1, 1}, 16), true, kRelu6),
            Conv("dw_s1_vw8_exact_hard_sigmoid", {1, 3, 5, 8}, 3, {3, 3},
                 Attrs({1, 1}, {1, 1, 1, 1}, 3), true, kHardSigmoid),
            Conv("dw_s1_lanes_w3", {2, 3, 4, 3}, 3, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 3), false,
                 kRelu),
            Conv("dw_s1_vw8_pad_top0_right0", {1, 4, 7, 11}, 4, {3, 3},
                 Attrs({1, 1}, {0, 1, 2, 0}, 4)),
            Conv("dw_s2_vw8_exact", {1, 6, 16, 16}, 6, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}, 6), true,
                 kRelu6),
            Conv("dw_s2_vw8_shifted_batch2", {2, 7, 17, 17}, 7, {3, 3},
                 Attrs({2, 2}, {1, 1, 1, 1}, 7)),
            Conv("dw_s2_vw16_exact", {1, 4, 6, 32}, 4, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}, 4)),
            Conv("dw_s2_vw16_shifted", {1, 3, 9, 40}, 3, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}, 3),
                 false, kLeaky),
            Conv("dw_s2_vw16_w56", {1, 8, 12, 56}, 8, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}, 8), true,
                 kRelu6),
            Conv("dw_s2_lanes_pad_top0_right0", {1, 33, 5, 5}, 33, {3, 3},
                 Attrs({2, 2}, {0, 1, 1, 0}, 33)),
            Conv("dw_s1_lanes_many_channels", {1, 300, 7, 7}, 300, {3, 3},
                 Attrs({1, 1}, {1, 1, 1, 1}, 300), true, kRelu6),
            // conv2d_dense3x3 (k3x3_pad1 and k3x3_stem_s2 above too): the stem,
            // output-channel tails, stride 1, shifted strips, narrow rows, batches.
            Conv("dense3x3_stem_s2_shifted", {1, 3, 34, 34}, 32, {3, 3},
                 Attrs({2, 2}, {1, 1, 1, 1}), true, kRelu6),
            Conv("dense3x3_s2_oc_tail_batch2", {2, 5, 13, 21}, 11, {3, 3},
                 Attrs({2, 2}, {1, 1, 1, 1})),
            Conv("dense3x3_s1_shifted", {1, 7, 6, 12}, 9, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}),
                 false, kHardSwish),
            Conv("dense3x3_s1_lanes_pad_top0", {1, 2, 5, 4}, 3, {3, 3},
                 Attrs({1, 1}, {0, 1, 2, 1})),
            // conv2d_pointwise_gpu: 4 output channels per item (OC >= 16 or a
            // multiple of 4), else 2 (even OC), else 1; C split into 2-32 slices
            // of at most about 24 channels while the items stay below 2048 per
            // compute unit. On PoCL with 2-8 cores these reach, in order: 4
            // channels with one slice (item-limited), 2 and 1 channels with one
            // slice (C <= 24), then 2, 4, 8, 16 and 32 slices, C not always a
            // multiple of the slices (a short last slice).
            Conv("pwgpu_ocb4_many_pixels", {1, 64, 64, 64}, 16, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}),
                 true, kRelu6),
            Conv("pwgpu_ocb2", {1, 8, 9, 9}, 6, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), false, kLeaky),
            Conv("pwgpu_ocb1", {1, 20, 5, 7}, 7, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("pwgpu_ks2", {1, 40, 3, 3}, 24, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true, kRelu6),
            Conv("pwgpu_ks4_short_slice", {1, 70, 7, 7}, 24, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("pwgpu_ks8_ocb1_batch2", {2, 130, 3, 5}, 9, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}),
                 true, kHardSwish),
            Conv("pwgpu_ks16_ocb2", {1, 256, 4, 4}, 10, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true,
                 kSigmoid),
            Conv("pwgpu_ks32_short_slice", {1, 777, 1, 2}, 4, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            Conv("pwgpu_c960_hw49", {1, 960, 7, 7}, 160, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0})),
            // conv2d_direct_gpu: 4, 2 or 1 output channels per item (by OC per
            // group), groups, dilation (k3x3_dilation2, groups2... above too).
            Conv("directgpu_ocb2_groups3", {1, 6, 7, 8}, 6, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 3),
                 true, kRelu),
            Conv("directgpu_ocb4_groups2_s2", {1, 4, 9, 9}, 8, {3, 3},
                 Attrs({2, 2}, {1, 1, 1, 1}, 2)),
            // conv2d_depthwise_gpu with kernels other than 3x3 and dilation.
            Conv("dwgpu_k5_s2_dilated", {1, 6, 13, 11}, 6, {5, 5},
                 Attrs({2, 2}, {2, 1, 3, 2}, 6, {2, 1}), true, kRelu),
            Conv("dwgpu_k1x3", {2, 4, 5, 9}, 4, {1, 3}, Attrs({1, 1}, {0, 1, 0, 1}, 4)),
            // Four outputs of a row per item (kernels 5 wide or wider,
            // stride and dilation 1 along rows of 8 or more): ConvNeXt's 7x7
            // with a partial last block, and 5x5 with a stride and dilation
            // of 2 down the rows and asymmetric pads.
            Conv("dwgpu_k7_rows", {1, 8, 9, 13}, 8, {7, 7}, Attrs({1, 1}, {3, 3, 3, 3}, 8), true,
                 kRelu),
            Conv("dwgpu_k5_rows_s2h_d2h", {2, 6, 11, 10}, 6, {5, 5},
                 Attrs({2, 1}, {2, 0, 1, 2}, 6, {2, 1}))),
        kTargets),
    CaseName);

// Every Conv2D kernel variant forced through EngineOptions::choose_variant
// (the auto-tuner's hook) over shapes it fits, against the reference. The
// conv2d_tiled cases reach, through its tile choice (conv2d_cpu.cc): 16- and
// 8-column tiles, exact and shifted last tiles, rows narrower than a tile;
// 1-8 output channels per item with tails past each group's channels;
// 1-4 output rows per item with a shifted last row tile and fewer rows than
// a tile; kernel widths 1-11 with strides 1-4 (2 takes the direct even-lane
// loads, 3 and 4 the window) and column dilation; row strides and
// dilations unlike the column ones; tiles inside the row and at either
// edge; groups (ResNeXt's 4 channels per group, depthwise with other
// kernels); bias or none; batches; fused activations.
struct ForcedCase {
  std::string variant;
  KernelTarget target;
  ConvCase conv;
  float atol = 0.0f;  // CheckOptions::atol when above 0 (else the default)
};

// WinogradAtol is the absolute tolerance of conv2d_winograd over c input
// channels. Winograd's rounding errors scale with the sum's terms, not with
// its result: each output sums 9c products of values in [-1, 1], of RMS
// sqrt(9c)/3, and the transforms scale terms by up to 5 (B), 1/4 (G) and
// 8 (A) per axis before they cancel. F(4x4, 3x3) in float measured up to
// 1.4e-4 absolute (1.7e-5 of that RMS) at c = 64, where the default 1e-4
// fails near zero; 1e-4 of the RMS (4.4e-4 at c = 19, 8e-4 at c = 64)
// keeps a 5x margin. The relative 1e-4 stays.
float WinogradAtol(int64_t c) {
  return 1e-4f * std::max(1.0f, std::sqrt(9.0f * static_cast<float>(c)) / 3.0f);
}

void PrintTo(const ForcedCase& c, std::ostream* os) { *os << c.variant << "_" << c.conv.name; }

class Conv2DForcedVariantTest : public ::testing::TestWithParam<ForcedCase> {};

TEST_P(Conv2DForcedVariantTest, MatchesReference) {
  const ForcedCase& f = GetParam();
  const ConvCase& c = f.conv;
  OpGraphBuilder b;
  TensorRef x = b.Input("x", c.x);
  TensorRef w =
      b.Constant("w", {c.out_channels, c.x[1] / c.attrs.groups, c.kernel[0], c.kernel[1]});
  TensorRef bias = c.bias ? b.Constant("b", {c.out_channels}) : TensorRef{};
  TensorRef y = b.graph().Conv2D(x, w, bias, c.attrs);
  if (c.fused.kind != ActivationKind::kNone) b.graph().SetFusedActivation(y, c.fused);
  CheckOptions options = For(f.target);
  if (f.atol > 0.0f) options.atol = f.atol;
  options.emulate_matrix_units = f.variant.find("_mma") != std::string::npos;
  // Winograd fits only where the precision relaxes float32.
  if (f.variant == "conv2d_winograd") {
    options.precisions = {EngineOptions::Precision::kTf32, EngineOptions::Precision::kFp16Storage};
  }
  auto forced = std::make_shared<int>(0);
  options.choose_variant = ForceVariant(OpType::kConv2D, f.variant, forced);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(y), options);
  EXPECT_GT(*forced, 0) << f.variant << " does not fit " << c.name;
}

std::vector<ForcedCase> ForcedCases() {
  const KernelTarget cpu = KernelTarget::kCpu;
  const KernelTarget gpu = KernelTarget::kGpu;
  const std::string tiled = "conv2d_tiled";
  const std::string padded = "conv2d_tiled_padded";
  return {
      // conv2d_tiled.
      {tiled, cpu,
       Conv("k3_vw16_ocb8_rb1", {1, 16, 9, 32}, 16, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu)},
      {tiled, cpu, Conv("k3_vw16_shifted", {1, 5, 7, 30}, 12, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}))},
      {tiled, cpu,
       Conv("k3_vw8_rb2_oc_tail", {2, 6, 9, 21}, 13, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), false,
            kRelu6)},
      {tiled, cpu, Conv("k3_w7_lanes", {1, 32, 7, 7}, 24, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}))},
      {tiled, cpu,
       Conv("k3_oh1_w3_lanes", {1, 4, 1, 3}, 8, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kSigmoid)},
      {tiled, cpu,
       Conv("k3_s2_vw16", {1, 8, 20, 66}, 8, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}), true,
            kHardSwish)},
      {tiled, cpu, Conv("k3_s2_vw8_w15", {1, 3, 15, 15}, 9, {3, 3}, Attrs({2, 2}, {0, 0, 1, 1}))},
      {tiled, cpu,
       Conv("k7_s2_stem", {1, 3, 40, 70}, 16, {7, 7}, Attrs({2, 2}, {3, 3, 3, 3}), true, kRelu)},
      {tiled, cpu,
       Conv("k11_s4_alexnet_stem", {1, 3, 43, 67}, 8, {11, 11}, Attrs({4, 4}, {2, 2, 2, 2}))},
      {tiled, cpu, Conv("k5_s1_pad2", {1, 6, 12, 19}, 10, {5, 5}, Attrs({1, 1}, {2, 2, 2, 2}))},
      {tiled, cpu,
       Conv("k5_s3_nobias", {1, 4, 17, 52}, 5, {5, 5}, Attrs({3, 3}, {1, 2, 0, 1}), false, kLeaky)},
      {tiled, cpu, Conv("k1x7_inception", {1, 8, 9, 17}, 8, {1, 7}, Attrs({1, 1}, {0, 3, 0, 3}))},
      {tiled, cpu, Conv("k7x1_inception", {1, 8, 17, 9}, 12, {7, 1}, Attrs({1, 1}, {3, 0, 3, 0}))},
      {tiled, cpu,
       Conv("k1_s2_downsample", {1, 16, 14, 14}, 32, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0}), false)},
      {tiled, cpu, Conv("k1_s2_vw16_w56", {2, 8, 5, 56}, 8, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0}))},
      {tiled, cpu,
       Conv("k1_s1_pointwise_shape", {1, 12, 6, 20}, 20, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true,
            kRelu6)},
      {tiled, cpu,
       Conv("k3_dil2", {1, 4, 13, 24}, 8, {3, 3}, Attrs({1, 1}, {2, 2, 2, 2}, 1, {2, 2}))},
      {tiled, cpu,
       Conv("k3_dil2x1_s2x1", {1, 3, 14, 20}, 4, {3, 3}, Attrs({2, 1}, {1, 0, 2, 1}, 1, {2, 1}))},
      {tiled, cpu,
       Conv("k3_s1x2_dil1x3", {1, 3, 11, 40}, 6, {3, 3}, Attrs({1, 2}, {1, 3, 0, 2}, 1, {1, 3}))},
      {tiled, cpu, Conv("k2x2_valid", {1, 5, 8, 9}, 7, {2, 2}, Attrs({1, 1}, {0, 0, 0, 0}))},
      {tiled, cpu,
       Conv("groups32_ocpg4_resnext", {1, 128, 10, 18}, 128, {3, 3},
            Attrs({1, 1}, {1, 1, 1, 1}, 32), true, kRelu)},
      {tiled, cpu,
       Conv("groups32_ocpg4_s2", {2, 64, 9, 9}, 64, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}, 32))},
      {tiled, cpu,
       Conv("groups3_ocpg5_ocb5", {1, 6, 8, 17}, 15, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 3))},
      {tiled, cpu,
       Conv("groups2_ocpg12_tail", {1, 8, 6, 10}, 24, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 2),
            false)},
      {tiled, cpu,
       Conv("depthwise_k5_s2_rb4", {1, 12, 15, 33}, 12, {5, 5}, Attrs({2, 2}, {2, 2, 2, 2}, 12),
            true, kHardSigmoid)},
      {tiled, cpu,
       Conv("depthwise_k3_s1", {1, 10, 10, 10}, 10, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 10), true,
            kRelu6)},
      {tiled, cpu,
       Conv("depthwise_multiplier2", {1, 4, 7, 9}, 8, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 4))},
      {tiled, cpu, Conv("deep_sum_c200", {1, 200, 6, 8}, 16, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}))},
      // conv2d_tiled_padded (the input's rows copied into zero-padded rows
      // first, then conv2d_tiled's direct loads): Inception-v3's 1x7 and 3x3
      // on 17- and 8-wide maps, rows narrower than a tile, a stride-2 last
      // tile past the row without padding, 16-wide stride-2 tiles, the stem,
      // asymmetric pads, column dilation, groups, no bias, batches (each
      // 1 MFLOP or more, where it fits).
      {padded, cpu,
       Conv("k1x7_w17", {1, 40, 9, 17}, 13, {1, 7}, Attrs({1, 1}, {0, 3, 0, 3}), true, kRelu)},
      {padded, cpu, Conv("k3_w8", {2, 32, 8, 8}, 16, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}))},
      {padded, cpu, Conv("k1x3_w8", {1, 48, 8, 8}, 64, {1, 3}, Attrs({1, 1}, {0, 1, 0, 1}))},
      {padded, cpu,
       Conv("k3_w7_lanes", {1, 64, 7, 7}, 24, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), false, kRelu6)},
      {padded, cpu,
       Conv("k3_s2_nopad_w35", {1, 32, 11, 35}, 24, {3, 3}, Attrs({2, 2}, {0, 0, 0, 0}))},
      {padded, cpu,
       Conv("k7_s2_stem_vw16", {1, 3, 20, 64}, 16, {7, 7}, Attrs({2, 2}, {3, 3, 3, 3}), true,
            kRelu)},
      {padded, cpu,
       Conv("k3_asym_pads_dil2", {1, 24, 9, 21}, 24, {3, 3},
            Attrs({1, 1}, {1, 2, 2, 1}, 1, {1, 2}))},
      {padded, cpu,
       Conv("groups32_ocpg4_w14", {1, 128, 16, 14}, 128, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 32))},
      {padded, cpu, Conv("k5_w28_vw16", {2, 5, 6, 28}, 12, {5, 5}, Attrs({1, 1}, {2, 2, 2, 2}))},
      // conv2d_gemm: panels of 16 pixels (exact, partial, rows crossing
      // inside a panel) and of 8 (fewer than 16 pixels), one partial panel
      // (fewer than 8); taps in a run (one vector load), two apart (a
      // stride-2 run: two loads, even lanes; lane by lane where the second
      // load would pass the plane) and lane by lane (padding, strides,
      // dilation); output channels past a block of 4;
      // stems with 3 channels; 1x1 in place (16 pixels or more: a shifted
      // last tile; more than 64 output channels with 16-lane vectors),
      // through panels (fewer pixels; more than 64 channels below 16
      // lanes) and strided; batches, no bias, activations.
      {"conv2d_gemm", cpu,
       Conv("gemm_k3_w30_oc13", {1, 6, 9, 30}, 13, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu)},
      {"conv2d_gemm", cpu,
       Conv("gemm_k3_s2_batch2_nobias", {2, 5, 11, 17}, 8, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}),
            false)},
      {"conv2d_gemm", cpu,
       Conv("gemm_k7_s2_stem", {1, 3, 20, 40}, 16, {7, 7}, Attrs({2, 2}, {3, 3, 3, 3}), true,
            kRelu)},
      {"conv2d_gemm", cpu,
       Conv("gemm_k3_dil2x1_asym", {1, 4, 13, 24}, 8, {3, 3},
            Attrs({1, 1}, {1, 2, 2, 1}, 1, {2, 1}), true, kHardSwish)},
      {"conv2d_gemm", cpu,
       Conv("gemm_k1x7_w17", {1, 8, 9, 17}, 12, {1, 7}, Attrs({1, 1}, {0, 3, 0, 3}))},
      {"conv2d_gemm", cpu,
       Conv("gemm_k3_hw12_vw8", {1, 7, 3, 4}, 6, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kSigmoid)},
      {"conv2d_gemm", cpu,
       Conv("gemm_k3_hw6_lanes", {1, 5, 2, 3}, 9, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}))},
      {"conv2d_gemm", cpu,
       Conv("gemm_k3_c200_deep", {1, 200, 6, 8}, 16, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}))},
      {"conv2d_gemm", cpu,
       Conv("gemm_pw_inplace_hw120", {1, 12, 6, 20}, 20, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true,
            kRelu6)},
      {"conv2d_gemm", cpu,
       Conv("gemm_pw_inplace_batch2_nobias", {2, 9, 5, 7}, 11, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}),
            false)},
      {"conv2d_gemm", cpu,
       Conv("gemm_pw_oc72", {1, 16, 5, 7}, 72, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true, kRelu)},
      {"conv2d_gemm", cpu,
       Conv("gemm_pw_panels_hw12", {1, 8, 3, 4}, 10, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}))},
      {"conv2d_gemm", cpu,
       Conv("gemm_k1_s2_w56", {2, 8, 5, 56}, 12, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0}))},
      {"conv2d_gemm", cpu,
       Conv("gemm_k3_s2_stem_w64", {1, 3, 33, 64}, 16, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}), true,
            kHardSwish)},
      {"conv2d_gemm", cpu,
       Conv("gemm_k3_s2_vw8_w18", {1, 3, 2, 18}, 8, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}))},
      // conv2d_gemm_oc (small maps, 512 taps and 320 output channels or
      // more, vectors of output channels): panels of 8 pixels (7x7: a last
      // item of one pixel), 35 pixels in place (1x1), stride 2, output
      // channels past the 16-channel blocks, batches.
      {"conv2d_gemm_oc", cpu,
       Conv("gemm_oc_k3_7x7_oc330", {1, 64, 7, 7}, 330, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu)},
      {"conv2d_gemm_oc", cpu,
       Conv("gemm_oc_pw_5x7_oc324_batch2", {2, 512, 5, 7}, 324, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}),
            false, kRelu6)},
      {"conv2d_gemm_oc", cpu,
       Conv("gemm_oc_k3_s2_7x7", {1, 64, 14, 14}, 320, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}), true)},
      // conv2d_winograd, F(4x4, 3x3): output sizes that are not multiples of
      // the 4x4 tile (partial tiles at the bottom and right), padding 0, 1
      // and asymmetric, channel counts that are not multiples of the
      // GEMM's 8 or 16 lanes, batches, with and without bias, activations.
      // Tolerance: WinogradAtol.
      {"conv2d_winograd", cpu,
       Conv("winograd_c19_k21_pad1", {1, 19, 25, 18}, 21, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu),
       WinogradAtol(19)},
      {"conv2d_winograd", cpu,
       Conv("winograd_valid_batch2_nobias", {2, 16, 19, 18}, 17, {3, 3},
            Attrs({1, 1}, {0, 0, 0, 0}), false),
       WinogradAtol(16)},
      {"conv2d_winograd", cpu,
       Conv("winograd_asym_pads", {1, 24, 25, 23}, 40, {3, 3}, Attrs({1, 1}, {1, 0, 0, 1}), true,
            kLeaky),
       WinogradAtol(24)},
      {"conv2d_winograd", cpu,
       Conv("winograd_c64_w21", {1, 64, 23, 21}, 33, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu6),
       WinogradAtol(64)},
      // Rows of more than 8 tiles (two transform items per tile row, the
      // second's pixels partly past the row) and rows of whole vectors.
      {"conv2d_winograd", cpu,
       Conv("winograd_w45_two_groups", {1, 16, 13, 45}, 20, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}),
            true, kRelu),
       WinogradAtol(16)},
      {"conv2d_winograd", cpu,
       Conv("winograd_w64_full_rows_batch2", {2, 17, 9, 64}, 16, {3, 3},
            Attrs({1, 1}, {1, 1, 1, 1}), false),
       WinogradAtol(17)},
      // The other CPU variants, each forced where an earlier one would win.
      {"conv2d", cpu,
       Conv("generic_groups2_dil", {1, 4, 9, 9}, 6, {3, 3}, Attrs({1, 2}, {2, 1, 2, 1}, 2, {2, 1}),
            true, kRelu)},
      {"conv2d", cpu, Conv("generic_k1_s2", {2, 6, 7, 8}, 5, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0}))},
      {"conv2d_dense3x3", cpu,
       Conv("dense3x3_s1", {1, 6, 9, 20}, 10, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu)},
      {"conv2d_dense3x3", cpu,
       Conv("dense3x3_s2", {2, 3, 11, 17}, 8, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}), false)},
      {"conv2d_pointwise", cpu,
       Conv("pointwise", {1, 9, 5, 7}, 11, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true, kRelu6)},
      // conv2d_pointwise_strided: odd sizes (a last row and column taken),
      // 16- and 8-pixel tiles and the lane-by-lane path (OH*OW < 8), unequal
      // strides, stride 3, batches, no bias.
      {"conv2d_pointwise_strided", cpu,
       Conv("pointwise_s2_hw49", {1, 16, 13, 13}, 20, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0}), true,
            kRelu)},
      {"conv2d_pointwise_strided", cpu,
       Conv("pointwise_s2_w56_batch2", {2, 8, 6, 56}, 12, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0}),
            false)},
      {"conv2d_pointwise_strided", cpu,
       Conv("pointwise_s2x1_hw12", {1, 9, 5, 4}, 7, {1, 1}, Attrs({2, 1}, {0, 0, 0, 0}), true,
            kRelu6)},
      {"conv2d_pointwise_strided", cpu,
       Conv("pointwise_s3_lanes", {1, 6, 7, 5}, 5, {1, 1}, Attrs({3, 3}, {0, 0, 0, 0}))},
      {"conv2d_depthwise3x3", cpu,
       Conv("depthwise3x3", {1, 5, 9, 18}, 5, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}, 5))},
      // conv2d_depthwise_kxk: 5x5 (EfficientNet, MobileNet V3), 3x3 without a
      // left pad of 1, 7x7; stride 1 and 2; 16-lane strips (OW >= 16), 8-lane
      // strips, shifted last strips, rows narrower than a strip; asymmetric
      // pads, batches, no bias.
      {"conv2d_depthwise_kxk", cpu,
       Conv("dw_k5_s1_vw16_shifted", {1, 6, 9, 21}, 6, {5, 5}, Attrs({1, 1}, {2, 2, 2, 2}, 6), true,
            kSigmoid)},
      {"conv2d_depthwise_kxk", cpu,
       Conv("dw_k5_s2_vw16_w56_batch2", {2, 4, 11, 56}, 4, {5, 5}, Attrs({2, 2}, {2, 2, 2, 2}, 4),
            true, kRelu)},
      {"conv2d_depthwise_kxk", cpu,
       Conv("dw_k5_s2_vw8_asym", {1, 5, 13, 19}, 5, {5, 5}, Attrs({2, 2}, {1, 2, 2, 1}, 5), false,
            kHardSwish)},
      {"conv2d_depthwise_kxk", cpu,
       Conv("dw_k3_valid_vw8", {1, 7, 8, 12}, 7, {3, 3}, Attrs({1, 1}, {0, 0, 0, 0}, 7))},
      {"conv2d_depthwise_kxk", cpu,
       Conv("dw_k7_s1_lanes_w5", {1, 3, 6, 5}, 3, {7, 7}, Attrs({1, 1}, {3, 3, 3, 3}, 3), true,
            kRelu6)},
      // conv2d_depthwise_staged: a 14-column row as one strip of 16 lanes
      // (stored whole into the next row of the item, lane by lane at the
      // item's last row), 7-column rows in 8 lanes over many channels,
      // stride 2 in 16 and 8 lanes with a shifted last strip, input rows
      // copied in chunks of 8 (a shifted last chunk) and narrower than 8 (the
      // tensor's last row lane by lane), 3x3 without pads, 7x7; asymmetric
      // pads, batches, no bias, activations inline and not.
      {"conv2d_depthwise_staged", cpu,
       Conv("dws_k5_s1_w14_one_strip", {1, 6, 14, 14}, 6, {5, 5}, Attrs({1, 1}, {2, 2, 2, 2}, 6),
            true, kHardSwish)},
      {"conv2d_depthwise_staged", cpu,
       Conv("dws_k5_s1_w7_many_channels", {1, 40, 7, 7}, 40, {5, 5},
            Attrs({1, 1}, {2, 2, 2, 2}, 40), true, kSigmoid)},
      {"conv2d_depthwise_staged", cpu,
       Conv("dws_k5_s2_vw16_w56_batch2", {2, 4, 11, 56}, 4, {5, 5}, Attrs({2, 2}, {2, 2, 2, 2}, 4),
            true, kRelu)},
      {"conv2d_depthwise_staged", cpu,
       Conv("dws_k5_s2_vw8_asym", {1, 5, 13, 19}, 5, {5, 5}, Attrs({2, 2}, {1, 2, 2, 1}, 5), false,
            kHardSwish)},
      {"conv2d_depthwise_staged", cpu,
       Conv("dws_k3_valid_w7_silu", {1, 7, 7, 7}, 7, {3, 3}, Attrs({1, 1}, {0, 0, 0, 0}, 7), true,
            kSilu)},
      {"conv2d_depthwise_staged", cpu,
       Conv("dws_k3_s1_w30_pad_top0_right0", {2, 3, 9, 30}, 3, {3, 3},
            Attrs({1, 1}, {0, 1, 2, 0}, 3), true, kRelu6)},
      {"conv2d_depthwise_staged", cpu,
       Conv("dws_k7_s1_w5", {1, 3, 6, 5}, 3, {7, 7}, Attrs({1, 1}, {3, 3, 3, 3}, 3), true, kRelu6)},
      // The GPU variants (run on PoCL in CI).
      {"conv2d_pointwise_gpu", gpu,
       Conv("pointwise_gpu", {1, 9, 5, 7}, 11, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true, kRelu)},
      {"conv2d_depthwise_gpu", gpu,
       Conv("depthwise_gpu", {1, 6, 9, 9}, 6, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 6))},
      // The implicit GEMMs (conv2d_igemm.cc): every tile shape, K split in
      // slices (a second, reducing dispatch) or not, groups, strides,
      // dilations, asymmetric kernels and pads, column tails, batches.
      {"conv2d_igemm_gpu_128x64", gpu,
       Conv("igemm128_k3_oc_tail", {1, 16, 32, 32}, 136, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu)},
      {"conv2d_igemm_gpu_64x64", gpu,
       Conv("igemm64_k3", {1, 8, 16, 16}, 64, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu)},
      {"conv2d_igemm_gpu_64x64", gpu,
       Conv("igemm64_stem_k7s2_oc_tail", {2, 3, 23, 25}, 70, {7, 7}, Attrs({2, 2}, {3, 3, 3, 3}),
            false)},
      {"conv2d_igemm_gpu_32x64", gpu,
       Conv("igemm32x64_splitk", {1, 16, 8, 8}, 24, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu6)},
      {"conv2d_igemm_gpu_32x64", gpu,
       Conv("igemm32x64_k1_s2", {2, 24, 14, 15}, 40, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0}))},
      {"conv2d_igemm_gpu_32x32", gpu,
       Conv("igemm32_groups2_splitk", {1, 32, 5, 7}, 20, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}, 2),
            true, kRelu)},
      {"conv2d_igemm_gpu_32x32", gpu,
       Conv("igemm32_k1x7_dil", {1, 6, 9, 17}, 8, {1, 7}, Attrs({1, 2}, {0, 3, 0, 2}, 1, {1, 2}),
            true, kSigmoid)},
      {"conv2d_igemm_gpu_32x32", gpu,
       Conv("igemm32_resnext_groups", {1, 64, 6, 6}, 64, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 8))},
      // Channels innermost in K (16 or more channels per group, in whole
      // steps of 16): a dilated, asymmetrically padded 3x3, and a strided
      // 5x3 with K split.
      {"conv2d_igemm_gpu_64x64", gpu,
       Conv("igemm64_kc_dil2", {1, 32, 12, 13}, 64, {3, 3}, Attrs({1, 1}, {2, 1, 2, 3}, 1, {2, 2}),
            true, kRelu)},
      {"conv2d_igemm_gpu_32x64", gpu,
       Conv("igemm32x64_kc_k5x3_s2_splitk", {2, 48, 13, 9}, 24, {5, 3},
            Attrs({2, 2}, {2, 1, 2, 1}))},
      // The implicit GEMM on matrix units (emulated on PoCL), at its
      // heuristic's tile: channel and column tails past the 16x8 mma
      // tiles, K split, groups, a strided 1x1, a 7x7 stem with batches.
      {"conv2d_igemm_mma_tuned", gpu,
       Conv("mma_k3_oc_tail", {1, 16, 17, 19}, 40, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu)},
      {"conv2d_igemm_mma_tuned", gpu,
       Conv("mma_splitk_one_tile", {1, 64, 4, 4}, 16, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true,
            kRelu)},
      {"conv2d_igemm_mma_tuned", gpu,
       Conv("mma_splitk_groups2", {1, 64, 6, 7}, 36, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 2))},
      {"conv2d_igemm_mma_tuned", gpu,
       Conv("mma_k1_s2_nobias", {2, 24, 14, 15}, 40, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0}), false)},
      {"conv2d_igemm_mma", gpu,
       Conv("mma_k1_c256_batch2", {2, 256, 6, 5}, 260, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), true,
            kRelu)},
      {"conv2d_igemm_mma_tuned", gpu,
       Conv("mma_stem_k7s2", {2, 3, 23, 25}, 20, {7, 7}, Attrs({2, 2}, {3, 3, 3, 3}), true, kRelu)},
      {"conv2d_igemm_mma", gpu,
       Conv("mma_k3_s2_c32_oc72", {1, 32, 9, 11}, 72, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}), true,
            kRelu)},
      {"conv2d_igemm_mma_tuned", gpu,
       Conv("mma_kc_dil2_pads", {1, 32, 9, 11}, 24, {3, 3}, Attrs({1, 1}, {2, 1, 2, 3}, 1, {2, 2}),
            true, kRelu)},
      {"conv2d_direct_gpu", gpu,
       Conv("direct_gpu_k1", {1, 8, 6, 6}, 8, {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}))},
      {"conv2d_direct_gpu", gpu,
       Conv("direct_gpu_depthwise", {1, 6, 9, 9}, 6, {3, 3}, Attrs({2, 2}, {1, 1, 1, 1}, 6),
            false)},
  };
}

INSTANTIATE_TEST_SUITE_P(Variants, Conv2DForcedVariantTest, ::testing::ValuesIn(ForcedCases()),
                         [](const ::testing::TestParamInfo<ForcedCase>& info) {
                           return info.param.variant + "_" + info.param.conv.name;
                         });

// conv2d_tiled absorbs the residual Add after it (and the Add's Relu), as
// ResNet's blocks need: one dispatch, matching the reference.
class TiledResidualTest : public ::testing::TestWithParam<ConvCase> {};

// ResidualGraph builds Conv -> Add(residual input "r") -> (Relu when the
// case's activation is Relu): a ResNet block's tail. `residual_first` puts
// the residual on the Add's left.
absl::StatusOr<OpGraph> ResidualGraph(const ConvCase& c, bool residual_first) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", c.x);
  TensorRef w =
      b.Constant("w", {c.out_channels, c.x[1] / c.attrs.groups, c.kernel[0], c.kernel[1]});
  TensorRef y =
      b.graph().Conv2D(x, w, c.bias ? b.Constant("b", {c.out_channels}) : TensorRef{}, c.attrs);
  const auto& ys = b.graph().desc(y).shape;
  TensorRef r = b.Input("r", {ys.begin(), ys.end()});
  TensorRef z = residual_first ? b.graph().Add(r, y) : b.graph().Add(y, r);
  if (c.fused.kind == ActivationKind::kRelu) z = b.graph().Relu(z);
  return std::move(b).Build(z);
}

TEST_P(TiledResidualTest, FusedAndMatchesReference) {
  const ConvCase& c = GetParam();
  auto build = [&] { return ResidualGraph(c, /*residual_first=*/true); };
  auto forced = std::make_shared<int>(0);
  const VariantChooser tiled = ForceVariant(OpType::kConv2D, "conv2d_tiled", forced);
  absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabels(build(), KernelTarget::kCpu, /*optimize=*/true, tiled);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_GT(*forced, 0) << "conv2d_tiled does not fit " << c.name;
  ASSERT_EQ(labels->size(), 1u);
  EXPECT_TRUE(EndsWith(labels->front(), "/conv2d_tiled")) << labels->front();
  CheckOptions options = For(KernelTarget::kCpu);
  options.choose_variant = tiled;
  RECQ_EXPECT_MATCHES_REFERENCE(build(), options);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TiledResidualTest,
    ::testing::Values(
        Conv("k3_vw8_relu", {1, 8, 6, 13}, 8, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu),
        Conv("k3_vw16_batch2", {2, 4, 5, 32}, 12, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), false),
        Conv("k3_lanes_w5_relu", {1, 6, 4, 5}, 6, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu),
        Conv("groups4_k3", {1, 16, 7, 9}, 16, {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}, 4), true, kRelu)),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return info.param.name; });

// A strided 1x1 (ResNet's downsampling shortcut) runs as the strided pixels'
// copy and conv2d_pointwise, which absorbs the residual Add after it (and
// the Add's Relu): two dispatches, matching the reference.
class PointwiseStridedResidualTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(PointwiseStridedResidualTest, FusedAndMatchesReference) {
  const ConvCase& c = GetParam();
  auto build = [&] { return ResidualGraph(c, /*residual_first=*/true); };
  auto forced = std::make_shared<int>(0);
  const VariantChooser strided = ForceVariant(OpType::kConv2D, "conv2d_pointwise_strided", forced);
  absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabels(build(), KernelTarget::kCpu, /*optimize=*/true, strided);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_GT(*forced, 0) << "conv2d_pointwise_strided does not fit " << c.name;
  ASSERT_EQ(labels->size(), 2u);
  EXPECT_TRUE(EndsWith(labels->front(), "/conv2d_subsample")) << labels->front();
  EXPECT_TRUE(EndsWith(labels->back(), "/conv2d_pointwise")) << labels->back();
  CheckOptions options = For(KernelTarget::kCpu);
  options.choose_variant = strided;
  RECQ_EXPECT_MATCHES_REFERENCE(build(), options);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PointwiseStridedResidualTest,
    ::testing::Values(Conv("k1_s2", {1, 8, 10, 34}, 16, {1, 1}, Attrs({2, 2}, {0, 0, 0, 0})),
                      Conv("k1_s2_relu_batch2", {2, 12, 15, 15}, 24, {1, 1},
                           Attrs({2, 2}, {0, 0, 0, 0}), true, kRelu)),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return info.param.name; });

// conv2d_gemm, the CPUs' default for groups-1 convolutions, absorbs the
// residual Add after it (and the Add's Relu) in its product: two dispatches,
// the panels' copy and the product, matching the reference. A 3x3, a
// strided 1x1 (ResNet's shortcut) and a 7x7 stem; partial panels of 16 and
// 8 pixels, output channels past a block of 4, batches, no bias.
class PanelGemmResidualTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(PanelGemmResidualTest, FusedAndMatchesReference) {
  const ConvCase& c = GetParam();
  for (bool residual_first : {true, false}) {
    SCOPED_TRACE(residual_first ? "residual first" : "conv output first");
    auto build = [&] { return ResidualGraph(c, residual_first); };
    absl::StatusOr<std::vector<std::string>> labels =
        DispatchLabels(build(), KernelTarget::kCpu, /*optimize=*/true);
    ASSERT_TRUE(labels.ok()) << labels.status();
    ASSERT_EQ(labels->size(), 2u);
    EXPECT_TRUE(EndsWith(labels->front(), "/conv2d_panels")) << labels->front();
    EXPECT_TRUE(EndsWith(labels->back(), "/conv2d_gemm")) << labels->back();
    RECQ_EXPECT_MATCHES_REFERENCE(build(), For(KernelTarget::kCpu));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PanelGemmResidualTest,
                         ::testing::Values(Conv("k3_hw300_oc13_relu", {1, 8, 15, 20}, 13, {3, 3},
                                                Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu),
                                           Conv("k1_s2_hw12_batch2", {2, 12, 6, 8}, 24, {1, 1},
                                                Attrs({2, 2}, {0, 0, 0, 0}), false),
                                           Conv("k7_s2_stem_relu", {1, 3, 22, 30}, 16, {7, 7},
                                                Attrs({2, 2}, {3, 3, 3, 3}), true, kRelu)),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return info.param.name;
                         });

// conv2d_winograd absorbs the residual Add (and the Add's Relu) in its
// output transform: four dispatches (the padded copy, input transform, GEMM,
// output transform), matching the reference. 16 or more channels each way,
// 16 or more 4x4 tiles, a 3x3 stride-1 kernel and a precision that relaxes
// float32 (tf32 here), where Winograd fits and is the heuristic's choice;
// at float32 it does not fit.
class WinogradResidualTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(WinogradResidualTest, FusedAndMatchesReference) {
  const ConvCase& c = GetParam();
  auto build = [&] { return ResidualGraph(c, /*residual_first=*/false); };
  auto forced = std::make_shared<int>(0);
  const VariantChooser winograd = ForceVariant(OpType::kConv2D, "conv2d_winograd", forced);
  absl::StatusOr<std::vector<std::string>> fp32 =
      DispatchLabels(build(), KernelTarget::kCpu, /*optimize=*/true, winograd);
  ASSERT_TRUE(fp32.ok()) << fp32.status();
  EXPECT_EQ(*forced, 0) << "conv2d_winograd fits a float32 compile of " << c.name;
  for (const std::string& label : *fp32) EXPECT_EQ(label.find("winograd"), std::string::npos);
  absl::StatusOr<std::vector<std::string>> labels = DispatchLabels(
      build(), KernelTarget::kCpu, /*optimize=*/true, {}, EngineOptions::Precision::kTf32);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_EQ(labels->size(), 4u);
  EXPECT_TRUE(EndsWith((*labels)[0], "/conv2d_pad_columns")) << (*labels)[0];
  EXPECT_TRUE(EndsWith((*labels)[1], "/conv2d_winograd_input")) << (*labels)[1];
  EXPECT_TRUE(EndsWith((*labels)[2], "/conv2d_winograd_gemm")) << (*labels)[2];
  EXPECT_TRUE(EndsWith((*labels)[3], "/conv2d_winograd_output")) << (*labels)[3];
  CheckOptions options = For(KernelTarget::kCpu);
  options.atol = WinogradAtol(c.x[1]);
  options.choose_variant = winograd;
  options.precisions = {EngineOptions::Precision::kTf32, EngineOptions::Precision::kFp16Storage};
  RECQ_EXPECT_MATCHES_REFERENCE(build(), options);
  EXPECT_GT(*forced, 0) << "conv2d_winograd does not fit " << c.name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, WinogradResidualTest,
                         ::testing::Values(Conv("c16_k24_relu", {1, 16, 22, 26}, 24, {3, 3},
                                                Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu),
                                           Conv("c20_k16_batch2_nobias", {2, 20, 14, 13}, 16,
                                                {3, 3}, Attrs({1, 1}, {1, 1, 1, 1}), false),
                                           Conv("c16_k16_w70_batch2", {2, 16, 10, 70}, 16, {3, 3},
                                                Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu)),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return info.param.name;
                         });

// conv2d_gemm_oc absorbs the residual Add (and the Add's Relu) in its
// epilogue: from panels (3x3) and in place (1x1), one product dispatch.
class GemmOcResidualTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(GemmOcResidualTest, FusedAndMatchesReference) {
  const ConvCase& c = GetParam();
  auto build = [&] { return ResidualGraph(c, /*residual_first=*/false); };
  auto forced = std::make_shared<int>(0);
  const VariantChooser oc = ForceVariant(OpType::kConv2D, "conv2d_gemm_oc", forced);
  absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabels(build(), KernelTarget::kCpu, /*optimize=*/true, oc);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_GT(*forced, 0) << "conv2d_gemm_oc does not fit " << c.name;
  EXPECT_TRUE(EndsWith(labels->back(), "/conv2d_gemm_oc")) << labels->back();
  EXPECT_LE(labels->size(), 2u);
  CheckOptions options = For(KernelTarget::kCpu);
  options.choose_variant = oc;
  RECQ_EXPECT_MATCHES_REFERENCE(build(), options);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmOcResidualTest,
                         ::testing::Values(Conv("k3_7x7_c64_k336_relu", {1, 64, 7, 7}, 336, {3, 3},
                                                Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu),
                                           Conv("pw_6x6_c512_k320_batch2", {2, 512, 6, 6}, 320,
                                                {1, 1}, Attrs({1, 1}, {0, 0, 0, 0}), false)),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return info.param.name;
                         });

// The implicit GEMMs absorb the residual Add (and its Relu) too: in their
// own kernel, or in the reduction when K is split.
struct IgemmResidualCase {
  ConvCase conv;
  std::string variant;
  size_t dispatches;
};

class IgemmResidualTest : public ::testing::TestWithParam<IgemmResidualCase> {};

TEST_P(IgemmResidualTest, FusedAndMatchesReference) {
  const ConvCase& c = GetParam().conv;
  auto build = [&] { return ResidualGraph(c, /*residual_first=*/false); };
  absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabels(build(), KernelTarget::kGpu, /*optimize=*/true);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_EQ(labels->size(), GetParam().dispatches);
  EXPECT_TRUE(EndsWith(labels->front(), "/" + GetParam().variant)) << labels->front();
  RECQ_EXPECT_MATCHES_REFERENCE(build(), For(KernelTarget::kGpu));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, IgemmResidualTest,
    ::testing::Values(IgemmResidualCase{Conv("k3_64x64_relu", {1, 8, 16, 16}, 64, {3, 3},
                                             Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu),
                                        "conv2d_igemm_gpu_64x64", 1},
                      IgemmResidualCase{Conv("k3_splitk_relu", {1, 16, 8, 8}, 24, {3, 3},
                                             Attrs({1, 1}, {1, 1, 1, 1}), true, kRelu),
                                        "conv2d_igemm_gpu_32x64", 2},
                      IgemmResidualCase{Conv("k1_s2_nobias", {1, 8, 10, 34}, 16, {1, 1},
                                             Attrs({2, 2}, {0, 0, 0, 0}), false),
                                        "conv2d_igemm_gpu_32x64", 1}),
    [](const ::testing::TestParamInfo<IgemmResidualCase>& info) { return info.param.conv.name; });

class Conv2DPassesTest : public ::testing::TestWithParam<KernelTarget> {};

// Conv -> BatchNorm: folded into the conv by the optimizer, run as two
// kernels without it.
TEST_P(Conv2DPassesTest, ConvThenBatchNorm) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 6, 8, 8});
  TensorRef w = b.Constant("w", {8, 6, 3, 3});
  TensorRef bias = b.Constant("b", {8});
  TensorRef y = b.graph().Conv2D(x, w, bias, Attrs({1, 1}, {1, 1, 1, 1}));
  TensorRef z =
      b.graph().BatchNorm(y, b.Constant("scale", {8}), b.Constant("shift", {8}),
                          b.Constant("mean", {8}), b.Constant("var", {8}, 0.1f, 1.0f), 1e-3f);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(z), For(GetParam()));
}

// Depthwise conv (no bias) -> BatchNorm -> Clip(0, 6): the MobileNet block.
TEST_P(Conv2DPassesTest, DepthwiseBatchNormRelu6) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 9, 9});
  TensorRef w = b.Constant("w", {8, 1, 3, 3});
  TensorRef y = b.graph().Conv2D(x, w, TensorRef{}, Attrs({2, 2}, {1, 1, 1, 1}, 8));
  TensorRef z = b.graph().BatchNorm(y, b.Constant("scale", {8}), b.Constant("shift", {8}),
                                    b.Constant("mean", {8}), b.Constant("var", {8}, 0.1f, 1.0f));
  TensorRef r = b.graph().Clip(z, 0.0f, 6.0f);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(r), For(GetParam()));
}

// Conv -> Relu as separate nodes: fused by the optimizer.
TEST_P(Conv2DPassesTest, ConvThenRelu) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 4, 7, 7});
  TensorRef w = b.Constant("w", {6, 4, 3, 3});
  TensorRef y = b.graph().Conv2D(x, w, b.Constant("b", {6}), Attrs({1, 1}, {1, 1, 1, 1}));
  TensorRef z = b.graph().Relu(y);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(z), For(GetParam()));
}

// Two convs in a row: the intermediate lives in planned memory.
TEST_P(Conv2DPassesTest, ConvChain) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 3, 10, 10});
  TensorRef y = b.graph().Conv2D(x, b.Constant("w1", {8, 3, 3, 3}), b.Constant("b1", {8}),
                                 Attrs({2, 2}, {1, 1, 1, 1}));
  b.graph().SetFusedActivation(y, kRelu6);
  TensorRef z = b.graph().Conv2D(y, b.Constant("w2", {4, 8, 1, 1}), b.Constant("b2", {4}),
                                 Attrs({1, 1}, {0, 0, 0, 0}));
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(z), For(GetParam()));
}

// 1x1 conv -> Add (MobileNet V2's projection + residual): with either
// kernel family the Add is fused into the pointwise conv, whichever operand
// the conv output is, with or without an activation after the sum (a Relu
// node, the Add's fused activation after the passes). On GPUs that is one
// dispatch (two without the passes when there is a Relu). On CPUs both
// pointwise kernels are held to it: conv2d_gemm, the default (one dispatch
// reading the input in place for 16 pixels or more and, below 16-lane
// vectors, 64 output channels or fewer; else the panels' copy first), and
// conv2d_pointwise, forced. The shapes reach their tails: 16-pixel tiles
// exact and with a shifted last tile, 8-pixel tiles, the lane-by-lane paths
// (HW < 8), output channels not a multiple of 4 or 8, more than 64,
// batches, no bias.
struct ResidualCase {
  std::string name;
  std::vector<int64_t> x;  // [N,C,H,W]
  int64_t out_channels;
  bool bias;
  bool relu;
};

void PrintTo(const ResidualCase& c, std::ostream* os) { *os << c.name; }

class PointwiseResidualTest
    : public ::testing::TestWithParam<std::tuple<ResidualCase, KernelTarget>> {};

TEST_P(PointwiseResidualTest, FusedAndMatchesReference) {
  const ResidualCase& c = std::get<0>(GetParam());
  const KernelTarget target = std::get<1>(GetParam());
  std::vector<std::string> kernels = {PointwiseKernel(target)};
  if (target == KernelTarget::kCpu) kernels.push_back("/conv2d_pointwise");
  for (const std::string& kernel : kernels) {
    SCOPED_TRACE(kernel);
    auto forced = std::make_shared<int>(0);
    VariantChooser choose;
    // Each CPU kernel forced, so that each is the one tested whatever the
    // defaults pick for this shape.
    if (target == KernelTarget::kCpu) {
      choose = ForceVariant(OpType::kConv2D, kernel.substr(1), forced);
    }
    const bool wide_vectors = TestDeviceFacts().native_float_lanes >= 16;
    const bool panels = kernel == "/conv2d_gemm" &&
                        ((c.out_channels > 64 && !wide_vectors) || c.x[2] * c.x[3] < 16);
    const size_t conv_dispatches = panels ? 2 : 1;
    for (bool conv_first : {true, false}) {
      SCOPED_TRACE(conv_first ? "conv output first" : "conv output second");
      auto build = [&] {
        OpGraphBuilder b;
        TensorRef x = b.Input("x", c.x);
        TensorRef r = b.Input("r", {c.x[0], c.out_channels, c.x[2], c.x[3]});
        TensorRef y = b.graph().Conv2D(x, b.Constant("w", {c.out_channels, c.x[1], 1, 1}),
                                       c.bias ? b.Constant("b", {c.out_channels}) : TensorRef{},
                                       Attrs({1, 1}, {0, 0, 0, 0}));
        TensorRef z = conv_first ? b.graph().Add(y, r) : b.graph().Add(r, y);
        if (c.relu) z = b.graph().Relu(z);
        return std::move(b).Build(z);
      };
      for (bool optimize : {true, false}) {
        absl::StatusOr<std::vector<std::string>> labels =
            DispatchLabels(build(), target, optimize, choose);
        ASSERT_TRUE(labels.ok()) << labels.status();
        const size_t expected = conv_dispatches + (c.relu && !optimize ? 1 : 0);
        ASSERT_EQ(labels->size(), expected) << "optimize=" << optimize;
        if (panels) {
          EXPECT_TRUE(EndsWith(labels->front(), "/conv2d_panels")) << labels->front();
        }
        EXPECT_TRUE(EndsWith((*labels)[conv_dispatches - 1], kernel))
            << (*labels)[conv_dispatches - 1];
      }
      CheckOptions options = For(target);
      options.choose_variant = choose;
      RECQ_EXPECT_MATCHES_REFERENCE(build(), options);
    }
    if (target == KernelTarget::kCpu) {
      EXPECT_GT(*forced, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PointwiseResidualTest,
    ::testing::Combine(
        ::testing::Values(ResidualCase{"hw42_oc8", {1, 16, 6, 7}, 8, true, false},
                          ResidualCase{"hw256_oc32_relu", {1, 24, 16, 16}, 32, true, true},
                          ResidualCase{"hw49_oc100", {1, 64, 7, 7}, 100, true, false},
                          ResidualCase{"hw225_oc13_relu_nobias", {1, 20, 15, 15}, 13, false, true},
                          ResidualCase{"hw12_oc11_batch3", {3, 17, 3, 4}, 11, true, false},
                          ResidualCase{"hw8_oc5_relu", {1, 6, 2, 4}, 5, true, true},
                          ResidualCase{"hw2_oc3_batch2_relu", {2, 5, 1, 2}, 3, true, true},
                          ResidualCase{"hw1_oc24", {1, 40, 1, 1}, 24, false, false}),
        kTargets),
    [](const ::testing::TestParamInfo<std::tuple<ResidualCase, KernelTarget>>& info) {
      return std::get<0>(info.param).name + "_" + KernelTargetName(std::get<1>(info.param));
    });

// The MobileNet V2 block: expand (Relu6) -> depthwise (Relu6) -> project ->
// Add with the block's input, which the fused conv reads while writing the
// sum; then a Relu on the sum (the Add's fused activation after the passes)
// and a second block reading it.
absl::StatusOr<OpGraph> InvertedResidualGraph() {
  OpGraphBuilder b;
  TensorRef in = b.Input("x", {1, 8, 9, 9});
  TensorRef x = in;
  for (int block = 0; block < 2; ++block) {
    const std::string k = std::to_string(block);
    TensorRef e = b.graph().Conv2D(x, b.Constant("we" + k, {24, 8, 1, 1}),
                                   b.Constant("be" + k, {24}), Attrs({1, 1}, {0, 0, 0, 0}));
    b.graph().SetFusedActivation(e, kRelu6);
    TensorRef d = b.graph().Conv2D(e, b.Constant("wd" + k, {24, 1, 3, 3}),
                                   b.Constant("bd" + k, {24}), Attrs({1, 1}, {1, 1, 1, 1}, 24));
    b.graph().SetFusedActivation(d, kRelu6);
    TensorRef p = b.graph().Conv2D(d, b.Constant("wp" + k, {8, 24, 1, 1}),
                                   b.Constant("bp" + k, {8}), Attrs({1, 1}, {0, 0, 0, 0}));
    x = b.graph().Add(p, x);
    if (block == 0) x = b.graph().Relu(x);
  }
  return std::move(b).Build(x);
}

TEST_P(Conv2DPassesTest, InvertedResidualBlocks) {
  RECQ_EXPECT_MATCHES_REFERENCE(InvertedResidualGraph(), For(GetParam()));
}

// Both projections absorb their Add (and the Relu): six dispatches, expand,
// depthwise and projection per block, with either family.
TEST_P(Conv2DPassesTest, InvertedResidualBlocksFuseTheAdds) {
  absl::StatusOr<std::vector<std::string>> labels =
      DispatchLabels(InvertedResidualGraph(), GetParam(), /*optimize=*/true);
  ASSERT_TRUE(labels.ok()) << labels.status();
  ASSERT_EQ(labels->size(), 6u);
  for (size_t i : {size_t{2}, size_t{5}}) {
    EXPECT_TRUE(EndsWith((*labels)[i], PointwiseKernel(GetParam()))) << (*labels)[i];
  }
}

// A 1x1 conv whose output is also read elsewhere is not fused with its Add.
TEST_P(Conv2DPassesTest, PointwiseOutputUsedTwice) {
  OpGraphBuilder b;
  TensorRef x = b.Input("x", {1, 4, 5, 5});
  TensorRef y =
      b.graph().Conv2D(x, b.Constant("w", {4, 4, 1, 1}), TensorRef{}, Attrs({1, 1}, {0, 0, 0, 0}));
  TensorRef z = b.graph().Add(y, x);
  TensorRef product = b.graph().AddNode(OpType::kMul, {z, y});
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(product), For(GetParam()));
}

// The CPU family's defaults where several kernels fit, the variants that
// defer (KernelVariant::defers) passed over: depthwise 3x3 from private
// rows at stride 1 from 16 columns and at stride 2 up to 7,
// conv2d_depthwise3x3 elsewhere; 5x5 from private rows; conv2d_gemm for
// stems and 1x1 layers, conv2d_gemm_oc for those on 7x7 maps with 512 taps
// and 320 output channels or more. Those the defaults move match the reference there too.
TEST(Conv2DCpuSelectionTest, DefaultsPassOverDeferringVariants) {
  struct Case {
    std::vector<int64_t> x;
    int64_t oc, k, stride;
    bool depthwise;
    std::string variant;
    bool check = false;
  };
  for (const Case& c : {
           Case{{1, 3, 32, 32}, 16, 3, 2, false, "conv2d_gemm"},
           Case{{1, 16, 20, 20}, 96, 1, 1, false, "conv2d_gemm"},
           Case{{1, 576, 7, 7}, 160, 1, 1, false, "conv2d_gemm"},
           Case{{1, 160, 7, 7}, 960, 1, 1, false, "conv2d_gemm"},
           Case{{1, 960, 7, 7}, 320, 1, 1, false, "conv2d_gemm_oc", true},
           Case{{1, 24, 20, 20}, 24, 3, 1, true, "conv2d_depthwise_staged", true},
           Case{{1, 24, 7, 7}, 24, 3, 1, true, "conv2d_depthwise3x3"},
           Case{{1, 24, 14, 14}, 24, 3, 2, true, "conv2d_depthwise_staged", true},
           Case{{1, 24, 28, 28}, 24, 3, 2, true, "conv2d_depthwise3x3"},
           Case{{1, 24, 14, 14}, 24, 5, 1, true, "conv2d_depthwise_staged"},
       }) {
    auto build = [&] {
      OpGraphBuilder b;
      TensorRef x = b.Input("x", c.x);
      const int64_t groups = c.depthwise ? c.x[1] : 1;
      const int64_t p = c.k / 2;
      TensorRef y = b.graph().Conv2D(x, b.Constant("w", {c.oc, c.x[1] / groups, c.k, c.k}),
                                     b.Constant("b", {c.oc}),
                                     Attrs({c.stride, c.stride}, {p, p, p, p}, groups));
      return std::move(b).Build(b.graph().Relu(y));
    };
    SCOPED_TRACE(testing::PrintToString(c.x) + " -> " + std::to_string(c.oc) + " k" +
                 std::to_string(c.k) + " s" + std::to_string(c.stride));
    absl::StatusOr<std::vector<std::string>> labels =
        DispatchLabels(build(), KernelTarget::kCpu, /*optimize=*/true);
    ASSERT_TRUE(labels.ok()) << labels.status();
    ASSERT_FALSE(labels->empty());
    EXPECT_TRUE(EndsWith(labels->back(), "/" + c.variant)) << labels->back();
    if (c.check) RECQ_EXPECT_MATCHES_REFERENCE(build(), For(KernelTarget::kCpu));
  }
}

// Large 1x1 layers run as an implicit GEMM on GPUs (conv2d_gpu.cc's
// PointwiseGoesToIgemm): ResNet-50's 64 -> 256 expansion at 56x56 (51M
// multiply-adds) and 1024 -> 256 at 14x14; below 30M multiply-adds, and at
// 128 output channels, conv2d_pointwise_gpu stays. The first also matches
// the reference there. On a device with tf32 matrix instructions the
// matrix-unit implicit GEMM takes all four instead (conv2d_igemm.cc's
// MmaIgemmPreferredRule: 1x1 layers of 64 or more input and output channels
// over 784 or more columns).
TEST(Conv2DGpuSelectionTest, LargePointwiseLayersRunAsImplicitGemm) {
  const bool mma = TestDeviceFacts().Tf32MatrixInstructions();
  struct Case {
    std::vector<int64_t> x;
    int64_t oc;
    bool igemm;
    bool check = false;  // against the reference too
  };
  for (const Case& c : {Case{{1, 64, 56, 56}, 256, true, true}, Case{{1, 1024, 14, 14}, 256, true},
                        Case{{1, 64, 28, 28}, 256, false}, Case{{1, 256, 56, 56}, 128, false}}) {
    auto build = [&] {
      OpGraphBuilder b;
      TensorRef x = b.Input("x", c.x);
      TensorRef y = b.graph().Conv2D(x, b.Constant("w", {c.oc, c.x[1], 1, 1}),
                                     b.Constant("b", {c.oc}), Attrs({1, 1}, {0, 0, 0, 0}));
      return std::move(b).Build(b.graph().Relu(y));
    };
    SCOPED_TRACE(testing::PrintToString(c.x) + " -> " + std::to_string(c.oc));
    absl::StatusOr<std::vector<std::string>> labels =
        DispatchLabels(build(), KernelTarget::kGpu, /*optimize=*/true);
    ASSERT_TRUE(labels.ok()) << labels.status();
    ASSERT_FALSE(labels->empty());
    if (mma) {
      EXPECT_NE(labels->front().find("/conv2d_igemm_mma_"), std::string::npos) << labels->front();
      if (c.check) RECQ_EXPECT_MATCHES_REFERENCE(build(), For(KernelTarget::kGpu));
      continue;
    }
    const bool igemm = labels->front().find("/conv2d_igemm_gpu") != std::string::npos;
    EXPECT_EQ(igemm, c.igemm) << labels->front();
    if (c.check) {
      RECQ_EXPECT_MATCHES_REFERENCE(build(), For(KernelTarget::kGpu));
    } else if (!c.igemm) {
      EXPECT_TRUE(EndsWith(labels->front(), PointwiseKernel(KernelTarget::kGpu)));
    }
  }
}

// Squeeze-excitation 1x1 layers (1x1 pixels) on GPUs run
// conv2d_pointwise_gpu with one output channel per item and C in slices of
// about two channels (ChoosePointwiseGpu): 32 slices of 40 channels, 16 of
// 32, 2 of 3 (one slice empty past C); each matches the reference.
TEST(Conv2DGpuSelectionTest, SqueezeExcitationSplitsChannels) {
  for (const auto& [c, oc] :
       {std::pair<int64_t, int64_t>{40, 960}, std::pair<int64_t, int64_t>{32, 512},
        std::pair<int64_t, int64_t>{3, 8}}) {
    SCOPED_TRACE(std::to_string(c) + " -> " + std::to_string(oc));
    auto build = [c = c, oc = oc] {
      OpGraphBuilder b;
      TensorRef x = b.Input("x", {1, c, 1, 1});
      TensorRef y = b.graph().Conv2D(x, b.Constant("w", {oc, c, 1, 1}), b.Constant("b", {oc}),
                                     Attrs({1, 1}, {0, 0, 0, 0}));
      b.graph().SetFusedActivation(y, kSigmoid);
      return std::move(b).Build(y);
    };
    absl::StatusOr<std::vector<std::string>> labels =
        DispatchLabels(build(), KernelTarget::kGpu, /*optimize=*/true);
    ASSERT_TRUE(labels.ok()) << labels.status();
    ASSERT_FALSE(labels->empty());
    EXPECT_TRUE(EndsWith(labels->front(), PointwiseKernel(KernelTarget::kGpu))) << labels->front();
    RECQ_EXPECT_MATCHES_REFERENCE(build(), For(KernelTarget::kGpu));
  }
}

// The CPU family's local sizes follow the kernel parameters, not the
// tensors' shapes: PoCL compiles a work-group function per kernel and
// local size at the first enqueue, a cold-start cost per distinct size.
// Pointwise convs over 28x28, 14x14 and 7x7 (pixel tiles 49, 13 and 4)
// and depthwise 3x3 strips over 16x16, 20x20 and 32x32 (the same vw and wg)
// warm up as one launch shape each.
TEST(Conv2DLocalSizeTest, CpuLaunchShapesDoNotFollowTensorShapes) {
  const absl::StatusOr<Context>& context = SharedContext();
  ASSERT_TRUE(context.ok()) << context.status();
  GraphBuilder b;
  int k = 0;
  auto weights = [&](std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> w(static_cast<size_t>(n));
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * float(int(i % 7) - 3);
    return b.Constant(absl::StrCat("w", k++), std::move(shape), std::move(w));
  };
  for (int64_t hw : {28, 14, 7}) {
    TensorRef x = b.Input(absl::StrCat("p", hw), {1, 8, hw, hw});
    b.Output(b.Conv2D(x, weights({16, 8, 1, 1}), TensorRef{}, Attrs({1, 1}, {0, 0, 0, 0})),
             absl::StrCat("py", hw));
  }
  for (int64_t hw : {16, 20, 32}) {
    TensorRef x = b.Input(absl::StrCat("d", hw), {1, 4, hw, hw});
    b.Output(b.Conv2D(x, weights({4, 1, 3, 3}), TensorRef{}, Attrs({1, 1}, {1, 1, 1, 1}, 4)),
             absl::StrCat("dy", hw));
  }
  absl::StatusOr<Graph> graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  EngineOptions options;
  options.kernel_target = KernelTarget::kCpu;
  options.tuning = EngineOptions::Tuning::kOff;
  options.warm_up = true;
  absl::StatusOr<Engine> engine = Engine::Compile(*context, *graph, options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ(engine->stats().dispatches, 6u);
  EXPECT_EQ(engine->stats().warmup_dispatches, 2u);
}

INSTANTIATE_TEST_SUITE_P(Targets, Conv2DPassesTest, kTargets,
                         [](const ::testing::TestParamInfo<KernelTarget>& info) {
                           return std::string(KernelTargetName(info.param));
                         });

}  // namespace
}  // namespace recq::optest
