// Sample (engine/ops/sampling.h) on one row of GPT-2's 50257 logits, batch
// 1: greedy, top_k 50 and top_p 0.9, each with the CPU and the GPU kernel
// family, beside ArgMax over the same row (the graph op, one work-item per
// row) as the yardstick. One recording per case replayed with Run (enqueue
// and wait) at one step: another step changes the id drawn, not the work.
//
//   build/bench/sampling_bench [--benchmark_filter=...]
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "engine/ops/sampling.h"
#include "engine/ops/typed.h"
#include "recq/recq.h"

namespace recq::bench {
namespace {

constexpr int64_t kVocab = 50257;

// Op 0: ArgMax; 1-3: Sample greedy, top_k 50, top_p 0.9.
absl::StatusOr<Graph> BuildGraph(int op) {
  GraphBuilder b;
  TensorRef logits = b.Input("logits", {1, kVocab});
  TensorRef ids;
  if (op == 0) {
    ids = b.AddNode(internal::kArgMax, {logits}, internal::ArgReduceAttrs{1, true, false});
  } else {
    internal::SampleAttrs a;
    a.mode = op == 1 ? internal::SampleMode::kGreedy
                     : (op == 2 ? internal::SampleMode::kTopK : internal::SampleMode::kTopP);
    a.k = 50;
    a.p = 0.9f;
    a.temperature = 0.8f;
    ids = internal::Sample(b, logits, b.Input("step", {1}, DataType::kInt64), a);
  }
  b.Output(ids, "ids");
  return std::move(b).Build();
}

void BM_Sample(benchmark::State& state) {
  const int op = static_cast<int>(state.range(0));
  EngineOptions options;
  options.kernel_target =
      state.range(1) == 0 ? EngineOptions::KernelTarget::kCpu : EngineOptions::KernelTarget::kGpu;
  absl::StatusOr<Graph> graph = BuildGraph(op);
  absl::StatusOr<Engine> engine =
      graph.ok() ? Engine::Compile(BenchContext(), *graph, options) : graph.status();
  if (!engine.ok()) {
    state.SkipWithError(engine.status().ToString().c_str());
    return;
  }
  absl::StatusOr<Recording> rec = engine->Record({Backend::kReplay});
  absl::StatusOr<Tensor> logits = Tensor::Allocate(BenchContext(), {{1, kVocab}});
  absl::StatusOr<Tensor> step = Tensor::Allocate(BenchContext(), {{1}, DataType::kInt64});
  absl::StatusOr<Tensor> ids = Tensor::Allocate(BenchContext(), {{1, 1}, DataType::kInt64});
  if (!rec.ok() || !logits.ok() || !step.ok() || !ids.ok()) {
    state.SkipWithError("recording or tensors failed");
    return;
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> values(kVocab);
  for (float& v : values) v = dist(rng);
  const std::vector<int64_t> steps = {11};
  if (!logits->Upload(values).ok() || !step->Upload(steps).ok()) {
    state.SkipWithError("upload failed");
    return;
  }
  Bindings bindings;
  bindings.Set("logits", *logits);
  if (op != 0) bindings.Set("step", *step);
  bindings.Set("ids", *ids);
  for (auto _ : state) {
    if (absl::Status s = rec->Run(bindings); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
  }
  static const char* kNames[] = {"argmax_op", "greedy", "top_k50", "top_p0.9"};
  state.SetLabel(std::string(kNames[op]) + (state.range(1) == 0 ? "/cpu" : "/gpu"));
}

BENCHMARK(BM_Sample)
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace recq::bench

BENCHMARK_MAIN();
