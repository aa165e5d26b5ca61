#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/status_macros.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "tools/commands.h"
#include "tools/models/mobilenet.h"

namespace recq::tools {

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// The demo's tolerance against the CPU reference, for softmax probabilities
// after ~30 layers of float32 sums in a different order.
constexpr float kAtol = 1e-5f;
constexpr float kRtol = 1e-3f;

absl::StatusOr<std::vector<double>> TimeRuns(Recording& recording, const Bindings& bindings,
                                             int runs) {
  RECQ_RETURN_IF_ERROR(recording.Run(bindings));  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    RECQ_RETURN_IF_ERROR(recording.Run(bindings));
    ms.push_back(Ms(Clock::now() - start));
  }
  return ms;
}

}  // namespace

absl::Status RunDemo(const CommonOptions& common, const DemoOptions& options) {
  RECQ_ASSIGN_OR_RETURN(Backend backend, ParseBackend(common.backend));
  ContextOptions context_options;
  context_options.device = common.device;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(context_options));
  const DeviceInfo& device = context.device_info();
  std::printf("device: %s (%s, %s)\n", device.name.c_str(), device.platform_name.c_str(),
              device.driver_version.c_str());

  models::MobileNetOptions model_options;
  model_options.resolution = options.resolution;
  absl::StatusOr<Graph> graph = options.model == "v2" ? models::BuildMobileNetV2(model_options)
                                : options.model == "v1"
                                    ? models::BuildMobileNetV1(model_options)
                                    : absl::InvalidArgumentError("--model must be v1 or v2");
  RECQ_RETURN_IF_ERROR(graph.status());
  std::printf("model: MobileNet %s, %lldx%lld, %zu graph nodes, seeded random weights\n",
              options.model.c_str(), static_cast<long long>(options.resolution),
              static_cast<long long>(options.resolution), graph->nodes().size());

  RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, *graph));
  const EngineStats& stats = engine.stats();
  std::printf(
      "compile: %.1f ms, %zu dispatches after passes, %zu programs built, "
      "%.2f MiB intermediates (%.2f MiB unplanned), %.2f MiB weights\n",
      stats.compile_ms, stats.dispatches, stats.kernels_built, stats.intermediate_bytes / 1048576.0,
      stats.unplanned_bytes / 1048576.0, stats.weight_bytes / 1048576.0);

  auto record_start = Clock::now();
  RECQ_ASSIGN_OR_RETURN(Recording recording, engine.Record({backend}));
  std::printf("record: backend %s (%s), %.1f ms\n", BackendName(recording.backend()),
              recording.backend_reason().c_str(), Ms(Clock::now() - record_start));

  const TensorDesc& in_desc = engine.inputs()[0].desc;
  const TensorDesc& out_desc = engine.outputs()[0].desc;
  std::vector<Tensor> inputs;
  std::vector<reference::HostTensor> host_inputs;
  for (int i = 0; i < options.runs; ++i) {
    reference::HostTensor host = reference::RandomTensor(in_desc.shape, 1000 + i);
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, in_desc));
    RECQ_RETURN_IF_ERROR(t.Upload(host.data));
    inputs.push_back(std::move(t));
    host_inputs.push_back(std::move(host));
  }
  RECQ_ASSIGN_OR_RETURN(Tensor output, Tensor::Allocate(context, out_desc));

  int matched = 0;
  for (int i = 0; i < options.runs; ++i) {
    RECQ_RETURN_IF_ERROR(output.Fill(NAN));
    Bindings bindings;
    bindings.Set("input", inputs[i]);
    bindings.Set("prob", output);
    auto start = Clock::now();
    RECQ_RETURN_IF_ERROR(recording.Run(bindings));
    double ms = Ms(Clock::now() - start);
    RECQ_ASSIGN_OR_RETURN(std::vector<float> prob, output.Download());

    absl::flat_hash_map<std::string, reference::HostTensor> feeds;
    feeds["input"] = host_inputs[i];
    RECQ_ASSIGN_OR_RETURN(auto expected, reference::RunReference(*graph, feeds));
    reference::CompareResult cmp = reference::Compare(prob, expected.at("prob").data, kAtol, kRtol);
    matched += cmp.ok();

    std::vector<int> order(prob.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](int a, int b) { return prob[a] > prob[b]; });
    std::string top;
    for (int k = 0; k < 5; ++k) top += absl::StrFormat(" %d:%.4f", order[k], prob[order[k]]);
    std::printf("run %d: input buffer #%d  %7.2f ms  top-5%s  reference: %s (max abs err %.2e)\n",
                i + 1, i + 1, ms, top.c_str(), cmp.ok() ? "match" : "MISMATCH", cmp.max_abs_err);
  }

  Bindings bindings;
  bindings.Set("input", inputs[0]);
  bindings.Set("prob", output);
  RECQ_ASSIGN_OR_RETURN(std::vector<double> recorded,
                        TimeRuns(recording, bindings, options.timing_runs));
  RECQ_ASSIGN_OR_RETURN(Recording unrecorded, engine.Record({Backend::kUnrecorded}));
  RECQ_ASSIGN_OR_RETURN(std::vector<double> direct,
                        TimeRuns(unrecorded, bindings, options.timing_runs));
  std::printf(
      "summary: backend %s, device %s, compile %.1f ms, %d/%d runs match the CPU reference "
      "(atol %.0e, rtol %.0e)\n",
      BackendName(recording.backend()), device.name.c_str(), stats.compile_ms, matched,
      options.runs, kAtol, kRtol);
  std::printf("latency (median of %d): recorded %.2f ms, unrecorded %.2f ms (%.2fx)\n",
              options.timing_runs, Median(recorded), Median(direct),
              Median(direct) / std::max(Median(recorded), 1e-9));
  if (matched != options.runs) {
    return absl::InternalError(absl::StrFormat("%d of %d runs did not match the CPU reference",
                                               options.runs - matched, options.runs));
  }
  return absl::OkStatus();
}

}  // namespace recq::tools
