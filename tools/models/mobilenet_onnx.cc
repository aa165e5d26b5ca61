#include "tools/models/mobilenet_onnx.h"

#include <string>

#include "recq/onnx.h"

namespace recq::models {

absl::StatusOr<std::string> GraphToOnnxBytes(const Graph& graph, const std::string& name) {
  return SaveOnnxToBytes(graph, name);
}

absl::StatusOr<std::string> MobileNetV1OnnxBytes(const MobileNetOptions& options) {
  absl::StatusOr<Graph> built = BuildMobileNetV1(options);
  if (!built.ok()) return built.status();
  return GraphToOnnxBytes(*built, "mobilenet_v1");
}

absl::StatusOr<std::string> MobileNetV2OnnxBytes(const MobileNetOptions& options) {
  absl::StatusOr<Graph> built = BuildMobileNetV2(options);
  if (!built.ok()) return built.status();
  return GraphToOnnxBytes(*built, "mobilenet_v2");
}

}  // namespace recq::models
