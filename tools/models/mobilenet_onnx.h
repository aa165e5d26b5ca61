// MobileNet V2 as an ONNX model: the same network and seeded weights as
// BuildMobileNetV2, written as onnx.ModelProto (opset 13) with
// Conv + BatchNormalization + Clip (ReLU6, min/max as inputs), Add residuals,
// GlobalAveragePool, Flatten, Gemm and Softmax. Tests and the CLI use it to
// exercise LoadOnnx on a whole model.
#ifndef RECQ_TOOLS_MODELS_MOBILENET_ONNX_H_
#define RECQ_TOOLS_MODELS_MOBILENET_ONNX_H_

#include <string>

#include "absl/status/statusor.h"
#include "tools/models/mobilenet.h"

namespace recq::models {

// MobileNetV2OnnxBytes returns the serialized model. Input "input"
// [batch, 3, resolution, resolution], output "prob" [batch, num_classes];
// LoadOnnx of it is equivalent to BuildMobileNetV2(options) (same tensor
// names, shapes and weights).
[[nodiscard]] absl::StatusOr<std::string> MobileNetV2OnnxBytes(const MobileNetOptions& options);
// MobileNetV1OnnxBytes is the same for BuildMobileNetV1's graph.
[[nodiscard]] absl::StatusOr<std::string> MobileNetV1OnnxBytes(const MobileNetOptions& options);

// GraphToOnnxBytes writes an unfused recq graph as an opset-13 ONNX model
// named `name` (recq::SaveOnnxToBytes).
[[nodiscard]] absl::StatusOr<std::string> GraphToOnnxBytes(const Graph& graph,
                                                           const std::string& name);

}  // namespace recq::models

#endif  // RECQ_TOOLS_MODELS_MOBILENET_ONNX_H_
