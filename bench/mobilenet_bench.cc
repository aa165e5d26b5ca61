// MobileNet end to end: wall time per run (enqueue to completion), unrecorded
// vs each recording backend, side by side in one run.
//
// Run: build/bench/mobilenet_bench --benchmark_format=json
// Environment: RECQ_BENCH_RESOLUTION (default 224).
#include <cstdlib>
#include <string>

#include "bench/bench_util.h"
#include "tools/models/mobilenet.h"

namespace recq::bench {
namespace {

int64_t Resolution() {
  const char* env = std::getenv("RECQ_BENCH_RESOLUTION");
  return env != nullptr ? std::atoll(env) : 224;
}

const Engine* ModelEngine(int version) {
  static const Engine* engines[3] = {nullptr, nullptr, nullptr};
  if (engines[version] == nullptr) {
    models::MobileNetOptions options;
    options.resolution = Resolution();
    absl::StatusOr<Graph> g =
        version == 1 ? models::BuildMobileNetV1(options) : models::BuildMobileNetV2(options);
    if (!g.ok()) return nullptr;
    absl::StatusOr<Engine> e = Engine::Compile(BenchContext(), *g);
    if (!e.ok()) return nullptr;
    engines[version] = new Engine(*std::move(e));
  }
  return engines[version];
}

void Run(benchmark::State& state, int version, Backend backend) {
  const Engine* engine = ModelEngine(version);
  if (engine == nullptr) {
    state.SkipWithError("could not build or compile the model");
    return;
  }
  absl::StatusOr<Prepared> p = Prepare(*engine, backend);
  if (!p.ok()) {
    state.SkipWithError(p.status().ToString().c_str());
    return;
  }
  for (int i = 0; i < 2; ++i) (void)p->recording->Run(p->bindings);  // warm-up
  for (auto _ : state) {
    absl::Status s = p->recording->Run(p->bindings);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  state.counters["dispatches"] = static_cast<double>(engine->stats().dispatches);
  state.counters["resolution"] = static_cast<double>(Resolution());
  state.SetLabel(BackendName(p->recording->backend()));
}

void Register() {
  for (int version : {1, 2}) {
    for (Backend backend :
         {Backend::kUnrecorded, Backend::kReplay, Backend::kKhrCommandBuffer, Backend::kQcom}) {
      std::string name = "BM_MobileNetV" + std::to_string(version) + "/" + BackendName(backend);
      benchmark::RegisterBenchmark(
          name.c_str(), [version, backend](benchmark::State& s) { Run(s, version, backend); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(1.0);
    }
  }
}

}  // namespace
}  // namespace recq::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  recq::bench::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
