// Engine::Compile of MobileNet V2 with an empty program-binary cache (cold)
// vs a populated one (warm: a fresh Context, so a fresh in-memory cache,
// over the same directory), side by side in one run. Only Compile is timed;
// creating the Context and the cache directory is not.
//
// Run (PoCL keeps its own kernel cache under ~/.cache/pocl, which would make
// "cold" source builds warm; turn it off for an honest cold number):
//   POCL_KERNEL_CACHE=0 build/bench/compile_bench --benchmark_format=json
// Environment: RECQ_BENCH_RESOLUTION (default 224). The cache directories are
// created under $TMPDIR (default /tmp) and removed at exit.
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "bench/bench_util.h"
#include "tools/models/mobilenet.h"

namespace recq::bench {
namespace {

namespace fs = std::filesystem;

int64_t Resolution() {
  const char* env = std::getenv("RECQ_BENCH_RESOLUTION");
  return env != nullptr ? std::atoll(env) : 224;
}

const Graph* Model() {
  static const Graph* graph = [] {
    models::MobileNetOptions options;
    options.resolution = Resolution();
    absl::StatusOr<Graph> g = models::BuildMobileNetV2(options);
    return g.ok() ? new Graph(*std::move(g)) : nullptr;
  }();
  return graph;
}

// TempDirs hands out fresh empty directories and removes them at exit.
class TempDirs {
 public:
  ~TempDirs() {
    for (const std::string& dir : dirs_) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  }
  std::string New() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/recq_compile_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return "";
    dirs_.push_back(pattern);
    return pattern;
  }

 private:
  std::vector<std::string> dirs_;
};

TempDirs& Dirs() {
  static TempDirs dirs;
  return dirs;
}

double cold_ms = 0;  // mean of BM_CompileCold, for the warm/cold ratio

// CompileOnce creates a Context over `cache_dir` and times Engine::Compile.
absl::StatusOr<EngineStats> CompileOnce(const std::string& cache_dir, double* seconds) {
  ContextOptions options;
  options.cache_dir = cache_dir;
  absl::StatusOr<Context> context = Context::Create(options);
  if (!context.ok()) return context.status();
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Engine> engine = Engine::Compile(*context, *Model());
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!engine.ok()) return engine.status();
  return engine->stats();
}

void Compile(benchmark::State& state, bool warm) {
  if (Model() == nullptr) {
    state.SkipWithError("could not build the model");
    return;
  }
  std::string warm_dir;
  if (warm) {
    warm_dir = Dirs().New();
    double unused = 0;
    absl::StatusOr<EngineStats> filled = CompileOnce(warm_dir, &unused);
    if (!filled.ok()) {
      state.SkipWithError(filled.status().ToString().c_str());
      return;
    }
  }
  EngineStats stats;
  double total = 0;
  for (auto _ : state) {
    double seconds = 0;
    absl::StatusOr<EngineStats> s = CompileOnce(warm ? warm_dir : Dirs().New(), &seconds);
    if (!s.ok()) {
      state.SkipWithError(s.status().ToString().c_str());
      return;
    }
    stats = *s;
    total += seconds;
    state.SetIterationTime(seconds);
  }
  double mean_ms = 1e3 * total / static_cast<double>(state.iterations());
  state.counters["kernels_built"] = static_cast<double>(stats.kernels_built);
  state.counters["programs_from_disk"] = static_cast<double>(stats.programs_from_disk);
  state.counters["resolution"] = static_cast<double>(Resolution());
  if (!warm) cold_ms = mean_ms;
  if (warm && cold_ms > 0) state.counters["warm_over_cold"] = mean_ms / cold_ms;
}

void BM_CompileCold(benchmark::State& state) { Compile(state, /*warm=*/false); }
void BM_CompileWarm(benchmark::State& state) { Compile(state, /*warm=*/true); }

// Registered in this order so that the warm run can report the ratio.
BENCHMARK(BM_CompileCold)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK(BM_CompileWarm)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(10);

}  // namespace
}  // namespace recq::bench

BENCHMARK_MAIN();
