// MobileNet V1 and V2 built through the GraphBuilder with seeded random
// weights: the models of the demo, the end-to-end tests and the benchmarks.
#ifndef RECQ_TOOLS_MODELS_MOBILENET_H_
#define RECQ_TOOLS_MODELS_MOBILENET_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "recq/graph.h"

namespace recq::models {

struct MobileNetOptions {
  int64_t batch = 1;
  int64_t resolution = 224;  // input height and width; a multiple of 32
  int64_t num_classes = 1000;
  float width = 1.0f;  // channel multiplier
  uint64_t seed = 1;   // weights are a pure function of the options
};

// The graph's input is "input" [batch, 3, resolution, resolution] and its
// output "prob" [batch, num_classes] (softmax probabilities). Every conv is
// followed by BatchNorm and ReLU (V1) or ReLU6 as Clip(0, 6) (V2, except the
// linear projections); V2's stride-1 blocks with equal channels add a
// residual.
[[nodiscard]] absl::StatusOr<Graph> BuildMobileNetV1(const MobileNetOptions& options = {});
[[nodiscard]] absl::StatusOr<Graph> BuildMobileNetV2(const MobileNetOptions& options = {});

}  // namespace recq::models

#endif  // RECQ_TOOLS_MODELS_MOBILENET_H_
