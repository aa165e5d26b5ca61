// `recq run` and `recq info` on MobileNet V2 written as ONNX.
#include "tools/onnx_commands.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "testing/test_env.h"
#include "tools/models/mobilenet_onnx.h"

namespace recq {
namespace {

class OnnxCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    models::MobileNetOptions options;
    options.resolution = 32;
    options.num_classes = 10;
    options.width = 0.5f;
    RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, models::MobileNetV2OnnxBytes(options));
    std::ofstream(model_, std::ios::binary) << bytes;
  }
  void TearDown() override {
    std::remove(model_.c_str());
    std::remove(input_.c_str());
    std::remove(output_.c_str());
  }
  // Per test and process: ctest runs these tests as parallel processes.
  const std::string dir_ = ::testing::TempDir() + "recq_commands_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(getpid()) + "_";
  const std::string model_ = dir_ + "mobilenet.onnx";
  const std::string input_ = dir_ + "input.f32";
  const std::string output_ = dir_ + "prob.f32";
};

TEST_F(OnnxCommandsTest, InfoPrintsModel) { RECQ_ASSERT_OK(tools::InfoModelCommand(model_)); }

TEST_F(OnnxCommandsTest, RunReadsInputsAndWritesOutputs) {
  std::vector<float> input = reference::RandomTensor({1, 3, 32, 32}, 5).data;
  std::ofstream(input_, std::ios::binary)
      .write(reinterpret_cast<const char*>(input.data()), input.size() * sizeof(float));
  tools::RunModelOptions options;
  options.model_path = model_;
  options.inputs = {"input=" + input_};
  options.outputs = {"prob=" + output_};
  options.runs = 3;
  options.device = "";
  RECQ_ASSERT_OK(tools::RunModelCommand(options));
  std::ifstream out(output_, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 10 * sizeof(float));
  float sum = 0;
  for (size_t i = 0; i < 10; ++i) sum += reinterpret_cast<const float*>(bytes.data())[i];
  EXPECT_NEAR(sum, 1.0f, 1e-4f);  // softmax probabilities
}

TEST_F(OnnxCommandsTest, RunRejectsWrongInputSize) {
  std::ofstream(input_, std::ios::binary) << "abc";
  tools::RunModelOptions options;
  options.model_path = model_;
  options.inputs = {"input=" + input_};
  options.runs = 1;
  absl::Status s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("has 3 bytes"));
}

}  // namespace
}  // namespace recq
