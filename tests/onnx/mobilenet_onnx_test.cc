// MobileNet V2 written as ONNX, loaded with LoadOnnx, recorded and run on the
// device, checked against the CPU reference of the loaded graph and of the
// same network built with the GraphBuilder.
#include "tools/models/mobilenet_onnx.h"

#include "recq/onnx.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

TEST(MobileNetOnnxTest, LoadsRecordsAndMatchesReference) {
  models::MobileNetOptions options;
  options.resolution = 64;
  options.num_classes = 100;
  options.seed = 11;
  RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, models::MobileNetV2OnnxBytes(options));
  RECQ_ASSERT_OK_AND_ASSIGN(Graph loaded, LoadOnnxFromBytes(bytes));
  RECQ_ASSERT_OK_AND_ASSIGN(Graph built, models::BuildMobileNetV2(options));
  ASSERT_EQ(loaded.nodes().size(), built.nodes().size());

  const Context& context = testing::SharedContext();
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(context, loaded));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording recording, engine.Record());
  const TensorDesc in_desc{{1, 3, 64, 64}};
  const TensorDesc out_desc{{1, 100}};
  for (uint64_t seed : {3u, 4u}) {
    reference::HostTensor input = reference::RandomTensor(in_desc.shape, seed);
    Tensor in = testing::NewTensor(in_desc, input.data);
    Tensor out = testing::NewTensor(out_desc);  // NaN-poisoned
    Bindings b;
    b.Set("input", in);
    b.Set("prob", out);
    RECQ_ASSERT_OK(recording.Run(b));
    std::vector<float> actual = testing::Download(out);
    std::vector<float> from_onnx = testing::ReferenceOutput(loaded, "input", input, "prob");
    std::vector<float> from_builder = testing::ReferenceOutput(built, "input", input, "prob");
    reference::CompareResult same = reference::Compare(from_onnx, from_builder, 0.0f, 0.0f);
    EXPECT_TRUE(same.ok()) << "ONNX vs GraphBuilder reference: " << same.ToString();
    reference::CompareResult r = reference::Compare(actual, from_onnx, 1e-5f, 1e-3f);
    EXPECT_TRUE(r.ok()) << "device vs reference: " << r.ToString();
  }
}

}  // namespace
}  // namespace recq
