#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "recq/recq.h"
#include "recq/status_macros.h"
#include "tools/binary_store.h"
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

// RandomInput returns seeded uniform values in [-1, 1).
std::vector<float> RandomInput(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

// BitIdentical compares two runs' outputs bit for bit (NaN never matches).
bool BitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t bits_a = 0, bits_b = 0;
    std::memcpy(&bits_a, &a[i], sizeof(float));
    std::memcpy(&bits_b, &b[i], sizeof(float));
    if (std::isnan(a[i]) || bits_a != bits_b) return false;
  }
  return true;
}

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
  const Clock::time_point begin = Clock::now();
  ContextOptions context_options;
  context_options.device = common.device;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(context_options));
  UseBuildHelpers(context, context_options.device);
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
      "compile: %.1f ms (warm-up of every dispatch %.1f ms of it), %zu dispatches after passes, "
      "%zu programs built, %zu from the binary cache, "
      "%.2f MiB intermediates (%.2f MiB unplanned), %.2f MiB weights\n",
      stats.compile_ms, stats.warmup_ms, stats.dispatches, stats.kernels_built,
      stats.programs_from_disk, stats.intermediate_bytes / 1048576.0,
      stats.unplanned_bytes / 1048576.0, stats.weight_bytes / 1048576.0);

  auto record_start = Clock::now();
  RECQ_ASSIGN_OR_RETURN(Recording recording, engine.Record({backend}));
  std::printf("record: backend %s (%s), %.1f ms\n", BackendName(recording.backend()),
              recording.backend_reason().c_str(), Ms(Clock::now() - record_start));

  // The check: every replay of the recording, each with a new input buffer,
  // must equal bit for bit an unrecorded op-by-op run of the same input
  // (correctness against the CPU reference is what the test suite checks).
  RECQ_ASSIGN_OR_RETURN(Recording unrecorded, engine.Record({Backend::kUnrecorded}));
  const TensorDesc& in_desc = engine.inputs()[0].desc;
  const TensorDesc& out_desc = engine.outputs()[0].desc;
  std::vector<Tensor> inputs;
  for (int i = 0; i < options.runs; ++i) {
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, in_desc));
    RECQ_RETURN_IF_ERROR(t.Upload(RandomInput(in_desc.NumElements(), 1000 + i)));
    inputs.push_back(std::move(t));
  }
  RECQ_ASSIGN_OR_RETURN(Tensor output, Tensor::Allocate(context, out_desc));
  RECQ_ASSIGN_OR_RETURN(Tensor unrecorded_output, Tensor::Allocate(context, out_desc));

  int matched = 0;
  for (int i = 0; i < options.runs; ++i) {
    RECQ_RETURN_IF_ERROR(output.Fill(NAN));
    RECQ_RETURN_IF_ERROR(unrecorded_output.Fill(NAN));
    Bindings bindings;
    bindings.Set("input", inputs[i]);
    bindings.Set("prob", output);
    auto start = Clock::now();
    RECQ_RETURN_IF_ERROR(recording.Run(bindings));
    double ms = Ms(Clock::now() - start);
    RECQ_ASSIGN_OR_RETURN(std::vector<float> prob, output.Download());
    if (i == 0) {
      // Cold: programs compiled from source; warm: all from the binary cache.
      std::printf(
          "time to first result: %.1f ms, %s start (%zu programs compiled, %zu from the "
          "binary cache)\n",
          Ms(Clock::now() - begin), stats.kernels_built > 0 ? "cold" : "warm", stats.kernels_built,
          stats.programs_from_disk);
      // The binaries for the next start, written on the context's
      // background writer while the demo goes on.
      context.FlushBinaryCache();
    }
    bindings.Set("prob", unrecorded_output);
    RECQ_RETURN_IF_ERROR(unrecorded.Run(bindings));
    RECQ_ASSIGN_OR_RETURN(std::vector<float> expected, unrecorded_output.Download());
    const bool same = BitIdentical(prob, expected);
    const double sum = std::accumulate(prob.begin(), prob.end(), 0.0);
    const bool match = same && std::fabs(sum - 1.0) < 1e-3;  // softmax probabilities
    matched += match;

    std::vector<int> order(prob.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](int a, int b) { return prob[a] > prob[b]; });
    std::string top;
    for (int k = 0; k < 5; ++k) top += absl::StrFormat(" %d:%.4f", order[k], prob[order[k]]);
    std::printf("run %d: input buffer #%d  %7.2f ms  top-5%s  unrecorded run: %s (sum %.5f)\n",
                i + 1, i + 1, ms, top.c_str(),
                !same   ? "DIFFERENT"
                : match ? "identical"
                        : "BAD SUM",
                sum);
  }

  Bindings bindings;
  bindings.Set("input", inputs[0]);
  bindings.Set("prob", output);
  RECQ_ASSIGN_OR_RETURN(std::vector<double> recorded,
                        TimeRuns(recording, bindings, options.timing_runs));
  RECQ_ASSIGN_OR_RETURN(std::vector<double> direct,
                        TimeRuns(unrecorded, bindings, options.timing_runs));
  std::printf(
      "summary: backend %s, device %s, compile %.1f ms, %d/%d replays bit-identical to an "
      "unrecorded run\n",
      BackendName(recording.backend()), device.name.c_str(), stats.compile_ms, matched,
      options.runs);
  std::printf("latency (median of %d): recorded %.2f ms, unrecorded %.2f ms (%.2fx)\n",
              options.timing_runs, Median(recorded), Median(direct),
              Median(direct) / std::max(Median(recorded), 1e-9));
  if (matched != options.runs) {
    return absl::InternalError(
        absl::StrFormat("%d of %d replays differ from an unrecorded run of the same input",
                        options.runs - matched, options.runs));
  }
  return absl::OkStatus();
}

}  // namespace recq::tools
