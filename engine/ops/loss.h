// The loss ops (engine/ops/loss.cc), for the import functions and tests
// that emit them.
#ifndef RECQ_ENGINE_OPS_LOSS_H_
#define RECQ_ENGINE_OPS_LOSS_H_

#include <cstdint>

#include "recq/graph.h"

namespace recq::internal {

// NegativeLogLikelihoodLoss: x [N, C, d1, ..., dk] (float32, float16 or
// float64) holds log-probabilities, target [N, d1, ..., dk] (int64 or
// int32) a class per element, the optional weight [C] (x's type) a weight
// per class. Each element's loss is -x[n, t, d...] * weight[t] (weight 1
// without one), 0 where t is ignore_index (its weight 0 too). kNone gives
// the losses (target's shape), kSum their sum and kMean their sum divided
// by the sum of their weights (scalars; NaN when every label is ignored,
// as in ONNX's reference). Labels outside [0, C) other than ignore_index
// are clamped on the device (ONNX leaves them undefined).
// ONNX SoftmaxCrossEntropyLoss imports as LogSoftmax over axis 1 and this
// op.
inline constexpr OpType kNegativeLogLikelihoodLoss("NegativeLogLikelihoodLoss");
enum class LossReduction { kNone = 0, kSum = 1, kMean = 2 };
struct NllLossAttrs {
  LossReduction reduction = LossReduction::kMean;
  bool has_ignore_index = false;
  int64_t ignore_index = 0;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_LOSS_H_
