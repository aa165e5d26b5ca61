// Attribute structs of the reduction, normalisation and GELU ops
// (engine/ops/reduce.cc, normalization.cc, unary.cc). Graph builders and the
// CPU references read them; each op file validates them in its inference.
#ifndef RECQ_MATH_OP_ATTRS_H_
#define RECQ_MATH_OP_ATTRS_H_

#include <cstdint>
#include <vector>

namespace recq {

// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp.
struct ReduceAttrs {
  std::vector<int64_t> axes;  // in [-rank, rank); empty: every axis (or none, see below)
  bool keepdims = true;
  // With empty `axes`: true makes the op an identity (ONNX noop_with_empty_axes).
  bool noop_with_empty_axes = false;
};

// LayerNormalization, InstanceNormalization and GroupNormalization.
struct NormalizationAttrs {
  // LayerNormalization: normalise over dimensions [axis, rank).
  int64_t axis = -1;
  float epsilon = 1e-5f;
  // GroupNormalization: the number of groups of channels.
  int64_t num_groups = 1;
  // GroupNormalization opset 18: scale and bias have one entry per group
  // (opset 21 and later: per channel).
  bool per_group_affine = false;
  // LayerNormalization over the last axis of a channels-last view: the
  // input is [N, C, spatial...] and the rows normalised are those of its
  // transpose [N, spatial..., C], which is the output's shape (a Transpose
  // before the LayerNorm folded into its reads; GPU kernels only).
  bool channels_first_input = false;
  // LayerNormalization over the last axis whose output is written channels
  // first: the rows [N, spatial..., C] are stored as [N, C, spatial...], the
  // output's shape (a Transpose after the LayerNorm folded into its writes;
  // GPU kernels only).
  bool channels_first_output = false;
};

// Gelu (ONNX opset 20).
struct GeluAttrs {
  bool tanh_approximation = false;  // ONNX approximate = "tanh"
};

}  // namespace recq

#endif  // RECQ_MATH_OP_ATTRS_H_
