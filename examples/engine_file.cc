// TensorRT's engine-file flow with recq: load the engine file if it exists,
// else build the engine (from an ONNX model, or a small built-in one) and
// save it for the next start. Then run once and check the output.
//
//   build/examples/engine_file model.recq [model.onnx]
//
// The first start compiles (kernel compiler, warm-up) and writes
// model.recq; later starts load it: no ONNX import, no kernel compiler on
// the same device and driver. A stale or damaged engine file (another recq
// format version, a failed checksum) is reported and rebuilt. Exits non-zero
// if the built-in model's output is wrong.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "recq/onnx.h"
#include "recq/recq.h"

namespace {

constexpr int64_t kC = 3, kH = 8, kW = 8, kOC = 2;
// y[oc] = relu(sum_c w[oc][c] * x[c] + b[oc]) per pixel: a 1x1 convolution.
const std::vector<float> kWeights = {0.5f, -1.0f, 0.25f, 1.0f, 0.5f, -0.5f};
const std::vector<float> kBias = {0.1f, -0.2f};

absl::StatusOr<recq::Graph> BuiltInModel() {
  recq::GraphBuilder b;
  recq::TensorRef x = b.Input("x", {1, kC, kH, kW});
  recq::TensorRef y =
      b.Conv2D(x, b.Constant("w", {kOC, kC, 1, 1}, kWeights), b.Constant("b", {kOC}, kBias), {});
  b.Output(b.Relu(y), "y");
  return std::move(b).Build();
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

// GetEngine is the flow: the engine file if it exists and loads, else a
// build from the model, saved as the engine file. `*how` says which.
absl::StatusOr<recq::Engine> GetEngine(const recq::Context& ctx, const std::string& engine_path,
                                       const std::string& onnx_path, std::string* how) {
  if (Exists(engine_path)) {
    absl::StatusOr<recq::Engine> engine = recq::LoadEngine(ctx, engine_path);
    if (engine.ok()) {
      *how = std::string("loaded from ") + engine_path + " (" +
             recq::EngineOriginName(engine->stats().origin) + ")";
      return engine;
    }
    std::fprintf(stderr, "engine_file: %s; building it again\n",
                 engine.status().ToString().c_str());
  }
  absl::StatusOr<recq::Graph> graph =
      onnx_path.empty() ? BuiltInModel() : recq::LoadOnnx(onnx_path);
  if (!graph.ok()) return graph.status();
  absl::StatusOr<recq::Engine> engine = recq::Engine::Compile(ctx, *graph);
  if (!engine.ok()) return engine.status();
  if (absl::Status saved = engine->SerializeToFile(engine_path); !saved.ok()) return saved;
  *how = std::string("built and saved to ") + engine_path;
  return engine;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s ENGINE.recq [MODEL.onnx]\n", argv[0]);
    return 2;
  }
  const std::string engine_path = argv[1];
  const std::string onnx_path = argc == 3 ? argv[2] : "";
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<recq::Context> ctx = recq::Context::Create();
  if (!ctx.ok()) {
    std::fprintf(stderr, "engine_file: %s\n", ctx.status().ToString().c_str());
    return 1;
  }
  std::string how;
  absl::StatusOr<recq::Engine> engine = GetEngine(*ctx, engine_path, onnx_path, &how);
  if (!engine.ok()) {
    std::fprintf(stderr, "engine_file: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<recq::Recording> rec = engine->Record();
  if (!rec.ok()) {
    std::fprintf(stderr, "engine_file: %s\n", rec.status().ToString().c_str());
    return 1;
  }
  // One run on inputs of 0.25 * ((i % 9) - 4), outputs poisoned with NaN.
  // Bindings hold the tensors' cl_mems: the tensors must outlive the run.
  recq::Bindings bindings;
  std::vector<recq::Tensor> input_tensors;
  std::vector<recq::Tensor> outputs;
  std::vector<std::vector<float>> inputs;
  for (const recq::BindingInfo& in : engine->inputs()) {
    std::vector<float> data(in.desc.NumElements());
    for (size_t i = 0; i < data.size(); ++i) data[i] = 0.25f * static_cast<float>(i % 9) - 1.0f;
    absl::StatusOr<recq::Tensor> t = recq::Tensor::Allocate(*ctx, in.desc);
    if (!t.ok() || !t->Upload(data).ok()) return 1;
    bindings.Set(in.name, *t);
    input_tensors.push_back(*t);
    inputs.push_back(std::move(data));
  }
  for (const recq::BindingInfo& out : engine->outputs()) {
    absl::StatusOr<recq::Tensor> t = recq::Tensor::Allocate(*ctx, out.desc);
    if (!t.ok() || !t->Fill(NAN).ok()) return 1;
    bindings.Set(out.name, *t);
    outputs.push_back(*t);
  }
  if (absl::Status s = rec->Run(bindings); !s.ok()) {
    std::fprintf(stderr, "engine_file: %s\n", s.ToString().c_str());
    return 1;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  absl::StatusOr<std::vector<float>> y = outputs[0].Download();
  if (!y.ok()) return 1;
  bool ok = true;
  if (onnx_path.empty()) {
    for (int64_t oc = 0; oc < kOC; ++oc) {
      for (int64_t p = 0; p < kH * kW; ++p) {
        float sum = kBias[oc];
        for (int64_t c = 0; c < kC; ++c) sum += kWeights[oc * kC + c] * inputs[0][c * kH * kW + p];
        const float expected = std::max(sum, 0.0f);
        ok &= std::fabs((*y)[oc * kH * kW + p] - expected) <= 1e-5f;
      }
    }
  } else {
    for (float v : *y) ok &= std::isfinite(v);
  }
  std::printf("engine_file: %s; first result after %.1f ms; output %s\n", how.c_str(), ms,
              ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
