#include "testing/test_env.h"

#include <cmath>
#include <cstdlib>

namespace recq::testing {

std::mt19937 FreshRng() {
  const uint32_t seed = std::random_device{}();
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  return std::mt19937(seed);
}

namespace {
// The auto-tuner times kernels at every compile unless told otherwise: tests
// run with it off (RECQ_TUNING, EngineOptions::DefaultTuning) unless the
// environment sets it; the tuner's own tests set EngineOptions::tuning.
const bool kTuningOffInTests = setenv("RECQ_TUNING", "off", /*overwrite=*/0) == 0;
}  // namespace

const Context& SharedContext() {
  static const absl::StatusOr<Context>* context = new absl::StatusOr<Context>(Context::Create());
  if (!context->ok()) {
    ADD_FAILURE() << "no OpenCL context: " << context->status();
    std::abort();
  }
  return **context;
}

Tensor NewTensor(const TensorDesc& desc, const std::vector<float>& values) {
  absl::StatusOr<Tensor> t = Tensor::Allocate(SharedContext(), desc);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  absl::Status s = values.empty() ? t->Fill(NAN) : t->Upload(values);
  EXPECT_TRUE(s.ok()) << s;
  return *std::move(t);
}

std::vector<float> Download(const Tensor& tensor) {
  absl::StatusOr<std::vector<float>> v = tensor.Download();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *std::move(v) : std::vector<float>{};
}

std::vector<float> ReferenceOutput(const Graph& graph, const std::string& input_name,
                                   const reference::HostTensor& input,
                                   const std::string& output_name) {
  absl::flat_hash_map<std::string, reference::HostTensor> feeds;
  feeds[input_name] = input;
  auto out = reference::RunReference(graph, feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return out->at(output_name).data;
}

std::vector<float> RunRecorded(const Engine& engine, const std::string& input_name,
                               const reference::HostTensor& input, const std::string& output_name) {
  Tensor in = NewTensor({input.shape}, input.data);
  const BindingInfo* out_info = nullptr;
  for (const BindingInfo& o : engine.outputs()) {
    if (o.name == output_name) out_info = &o;
  }
  if (out_info == nullptr) {
    ADD_FAILURE() << "the engine has no output '" << output_name << "'";
    return {};
  }
  Tensor out = NewTensor(out_info->desc);
  Bindings bindings;
  bindings.Set(input_name, in);
  bindings.Set(output_name, out);
  absl::StatusOr<Recording> rec = engine.Record();
  if (!rec.ok()) {
    ADD_FAILURE() << rec.status();
    return {};
  }
  if (absl::Status s = rec->Run(bindings); !s.ok()) {
    ADD_FAILURE() << s;
    return {};
  }
  return Download(out);
}

Graph ChainGraph(int length, int64_t n) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {n});
  for (int i = 0; i < length; ++i) {
    if (i % 2 == 0) {
      std::vector<float> c(n);
      for (int64_t k = 0; k < n; ++k) c[k] = 0.01f * static_cast<float>((k + i) % 7) - 0.02f;
      x = b.Add(x, b.Constant("c" + std::to_string(i), {n}, c));
    } else {
      x = b.Clip(x, -0.9f + 0.001f * i, 5.0f);
    }
  }
  b.Output(x, "y");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

}  // namespace recq::testing
