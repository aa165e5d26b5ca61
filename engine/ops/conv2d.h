// Conv2D's kernel variants, shared by conv2d.cc (the op), conv2d_cpu.cc and
// conv2d_gpu.cc (the two kernel families).
#ifndef RECQ_ENGINE_OPS_CONV2D_H_
#define RECQ_ENGINE_OPS_CONV2D_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "recq/op_registry.h"

namespace recq::internal {

// The shape facts the variants' fit tests read.
struct ConvShape {
  bool pointwise = false;          // 1x1, stride 1, no padding, groups 1, constant weights
  bool pointwise_strided = false;  // the same with a stride above 1 (ResNet's downsampling)
  bool depthwise = false;          // groups == C == OC
  bool shifts_3x3 = false;         // 3x3, unit dilation, equal strides of 1 or 2, left pad 1
  bool constant_weights = false;
  bool groups_1 = false;
};
ConvShape ConvShapeOf(const Node& node, const LoweringContext& ctx);

// SetConvWork sets `d`'s flops (2 per multiply-add) and bytes (input,
// weights, bias, output, and the residual when `residual` is a value).
void SetConvWork(const Node& node, const LoweringContext& ctx, ValueId residual, Dispatch& d);

// PackPointwiseWeights returns [OC][C] weights repacked as
// [ceil(OC/ocb)][C][ocb], zero past OC, stored in the original's place.
DispatchArg PackPointwiseWeights(LoweringContext& ctx, ValueId w, int64_t oc, int64_t c,
                                 int64_t ocb);

// The CPU family (conv2d.cl, conv2d_pointwise.cl, conv2d_3x3.cl,
// conv2d_depthwise.cl) and the GPU family (conv2d_gpu.cl), in order of
// preference within each.
std::vector<KernelVariant> ConvCpuVariants();
std::vector<KernelVariant> ConvGpuVariants();
// MmaIgemmPreferred: the layers the implicit GEMM runs on matrix units by
// default (conv2d_igemm.cc); conv2d_pointwise_gpu leaves those of 1x1.
bool MmaIgemmPreferred(const Node& node, const LoweringContext& ctx);

// The implicit-GEMM GPU variants (conv2d_igemm.cc), part of ConvGpuVariants.
std::vector<KernelVariant> ConvIgemmGpuVariants();
// IgemmGpuFits: whether one of them fits `node` here.
bool IgemmGpuFits(const Node& node, const LoweringContext& ctx);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_CONV2D_H_
