// Bit-identity of whole-model outputs across refactorings.
//
// tests/models/golden/ holds the outputs of MobileNet V1 and V2 (224x224,
// graph API, and V2 imported from ONNX) for both kernel families, written by
// this test at a known-good commit (RECQ_WRITE_GOLDEN=1). Every later build
// must reproduce them bit for bit on the backend in use (the replay list, and
// the qcom backend when the test runs under the qcom layer). The files hold
// only on the PoCL build and CPU they were written on: a float32 sum in
// another order differs in its last bits, so on another device or driver the
// test skips, saying why (RECQ_GOLDEN_DEVICE names the device they fit).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "recq/onnx.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"
#include "tools/models/mobilenet_onnx.h"

namespace recq {
namespace {

using testing::Download;
using testing::NewTensor;
using testing::SharedContext;

struct Case {
  const char* name;
  absl::StatusOr<Graph> (*build)();
  EngineOptions::KernelTarget target;
};

absl::StatusOr<Graph> V1() { return models::BuildMobileNetV1({}); }
absl::StatusOr<Graph> V2() { return models::BuildMobileNetV2({}); }
absl::StatusOr<Graph> V2Onnx() {
  absl::StatusOr<std::string> bytes = models::MobileNetV2OnnxBytes({});
  if (!bytes.ok()) return bytes.status();
  return LoadOnnxFromBytes(*bytes);
}

std::string GoldenPath(const std::string& name) {
  return std::string(RECQ_GOLDEN_DIR) + "/" + name + ".f32";
}

// The device, its driver and (PoCL compiles for the host) the host CPU.
std::string DeviceKey() {
  const DeviceInfo& info = SharedContext().device_info();
  std::string cpu;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  return info.name + " | " + info.driver_version + " | " + cpu;
}

class GoldenOutputTest : public ::testing::TestWithParam<Case> {};

TEST_P(GoldenOutputTest, OutputIsBitIdenticalToTheStoredOne) {
  const Case& c = GetParam();
  const bool write = std::getenv("RECQ_WRITE_GOLDEN") != nullptr;
  std::string stored_key;
  {
    std::ifstream key(std::string(RECQ_GOLDEN_DIR) + "/DEVICE");
    std::getline(key, stored_key);
  }
  if (!write && stored_key != DeviceKey()) {
    GTEST_SKIP() << "golden outputs were written on '" << stored_key << "', this is '"
                 << DeviceKey() << "'";
  }
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, c.build());
  EngineOptions options;
  options.kernel_target = c.target;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), graph, options));
  RecordOptions record;
  record.backend = Backend::kAuto;
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record(record));
  auto host = reference::RandomTensor({1, 3, 224, 224}, 4242);
  Tensor in = NewTensor({host.shape}, host.data);
  Tensor out = NewTensor(engine.outputs()[0].desc);
  Bindings b;
  b.Set("input", in);
  b.Set("prob", out);
  RECQ_ASSERT_OK(rec.Run(b));
  std::vector<float> got = Download(out);
  const std::string path = GoldenPath(c.name);
  if (write) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(got.data()), got.size() * sizeof(float));
    ASSERT_TRUE(f.good()) << path;
    std::ofstream key(std::string(RECQ_GOLDEN_DIR) + "/DEVICE");
    key << DeviceKey() << "\n";
    return;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f.good()) << "missing " << path;
  std::vector<float> want(got.size());
  f.read(reinterpret_cast<char*>(want.data()), want.size() * sizeof(float));
  ASSERT_EQ(f.gcount(), static_cast<std::streamsize>(want.size() * sizeof(float))) << path;
  size_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    differ += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
  }
  EXPECT_EQ(differ, 0u) << c.name << " on backend " << BackendName(rec.backend()) << ": " << differ
                        << " of " << got.size() << " values differ from " << path;
}

INSTANTIATE_TEST_SUITE_P(
    Models, GoldenOutputTest,
    ::testing::Values(Case{"v1_cpu", V1, EngineOptions::KernelTarget::kCpu},
                      Case{"v1_gpu", V1, EngineOptions::KernelTarget::kGpu},
                      Case{"v2_cpu", V2, EngineOptions::KernelTarget::kCpu},
                      Case{"v2_gpu", V2, EngineOptions::KernelTarget::kGpu},
                      Case{"v2_onnx_cpu", V2Onnx, EngineOptions::KernelTarget::kCpu},
                      Case{"v2_onnx_gpu", V2Onnx, EngineOptions::KernelTarget::kGpu}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace recq
