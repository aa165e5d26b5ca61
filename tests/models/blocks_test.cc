// Exported patterns guarded in CI: small blocks of torchvision models (a
// ShuffleNetV2 channel split and shuffle, the LR-ASPP and DeepLabV3
// segmentation heads with their bilinear Resize) and a sequence model's
// LSTM and GRU layers, exported by PyTorch with random weights and kept in
// tests/models/blocks/ with onnxruntime's output for a fixed input
// (make_blocks.py there regenerates them). Each is loaded, compiled with
// both kernel families, run recorded, and compared with onnxruntime:
// relative L2 error below 1e-4, as for the whole model set.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "recq/onnx.h"
#include "recq/recq.h"
#include "testing/test_env.h"

namespace recq {
namespace {

std::vector<float> ReadFloats(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return {};
  const std::streamsize bytes = file.tellg();
  std::vector<float> v(static_cast<size_t>(bytes) / sizeof(float));
  file.seekg(0);
  file.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  return v;
}

class BlocksTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BlocksTest, MatchesOnnxRuntime) {
  const std::string stem = std::string(RECQ_BLOCKS_DIR) + "/" + GetParam();
  absl::StatusOr<Graph> graph = LoadOnnx(stem + ".onnx");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const std::vector<float> input = ReadFloats(stem + ".input.f32");
  const std::vector<float> expected = ReadFloats(stem + ".ort.f32");
  const Value& in = graph->value(graph->inputs()[0]);
  const Value& out = graph->value(graph->outputs()[0]);
  ASSERT_EQ(static_cast<int64_t>(input.size()), in.desc.NumElements()) << stem;
  ASSERT_EQ(static_cast<int64_t>(expected.size()), out.desc.NumElements()) << stem;
  for (auto target : {EngineOptions::KernelTarget::kCpu, EngineOptions::KernelTarget::kGpu}) {
    SCOPED_TRACE(target == EngineOptions::KernelTarget::kCpu ? "cpu kernels" : "gpu kernels");
    EngineOptions options;
    options.kernel_target = target;
    absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), *graph, options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    const std::vector<float> actual =
        testing::RunRecorded(*engine, in.name, {in.desc.shape, input}, out.name);
    ASSERT_EQ(actual.size(), expected.size());
    double diff = 0, norm = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
      diff += (double(actual[i]) - expected[i]) * (double(actual[i]) - expected[i]);
      norm += double(expected[i]) * expected[i];
    }
    const double rel_l2 = std::sqrt(diff / norm);
    EXPECT_LT(rel_l2, 1e-4) << GetParam();  // NaN (an unwritten output) fails too
  }
}

INSTANTIATE_TEST_SUITE_P(Torchvision, BlocksTest,
                         ::testing::Values("shufflenet_v2_units", "lraspp_head", "deeplabv3_head",
                                           "recurrent_layers"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace recq
