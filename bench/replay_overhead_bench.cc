// Host overhead of a run: a chain of N small dispatches (N = 8..512),
// unrecorded vs each recording backend, side by side in one run.
//
//   BM_Host/<backend>/<N>: host CPU time of the enqueueing thread per run
//     (Enqueue only; the queue is drained every 16 runs outside the timing).
//   BM_Wall/<backend>/<N>: wall time per run, enqueue to completion.
//   .../<backend>_svm/<N>: the same with the input and output bound as SVM
//     (Bindings::SetSvm; Enqueue's SVM checks included).
//
// Run: build/bench/replay_overhead_bench --benchmark_format=json
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "bench/bench_util.h"
#include "engine/engine_state.h"
#include "engine/recording_backend.h"

namespace recq::bench {
namespace {

constexpr int64_t kElements = 256;  // per dispatch: tiny, so the host cost shows

// Chain of `n` element-wise dispatches (Add with a constant / Clip, not fused).
absl::StatusOr<Engine> ChainEngine(int n) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {kElements});
  std::vector<float> c(kElements, 0.001f);
  for (int i = 0; i < n; ++i) {
    x = i % 2 == 0 ? b.Add(x, b.Constant("c" + std::to_string(i), {kElements}, c))
                   : b.Clip(x, -1.0f, 1.0f);
  }
  b.Output(x, "y");
  absl::StatusOr<Graph> g = std::move(b).Build();
  if (!g.ok()) return g.status();
  EngineOptions options;
  options.optimize = false;  // keep exactly n dispatches
  return Engine::Compile(BenchContext(), *g, options);
}

// TimeRuns times `enqueue_run` per iteration: to completion (`wall`), or
// host-side only with the queue drained every 16 runs outside the timing.
template <typename EnqueueRun>
void TimeRuns(benchmark::State& state, bool wall, EnqueueRun enqueue_run) {
  cl_command_queue queue = BenchContext().queue();
  int64_t pending = 0;
  for (auto _ : state) {
    absl::Status s = enqueue_run();
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    if (wall) {
      clFinish(queue);
    } else if (++pending == 16) {
      state.PauseTiming();
      clFinish(queue);
      pending = 0;
      state.ResumeTiming();
    }
  }
  clFinish(queue);
}

// SvmBindings rebinds every binding of `p` to a new SVM allocation of the
// bench context (freed with the returned guard).
std::shared_ptr<void> SvmBindings(const Engine& engine, Prepared& p, absl::Status* status) {
  cl_context context = BenchContext().context();
  auto allocations = std::make_shared<std::vector<void*>>();
  std::shared_ptr<void> guard(nullptr, [context, allocations](void*) {
    for (void* ptr : *allocations) clSVMFree(context, ptr);
  });
  for (const auto* list : {&engine.inputs(), &engine.outputs()}) {
    for (const BindingInfo& info : *list) {
      const size_t bytes = info.desc.ByteSize();
      void* ptr = clSVMAlloc(context, CL_MEM_READ_WRITE, bytes, 0);
      if (ptr == nullptr) {
        *status = absl::UnavailableError("clSVMAlloc failed (no SVM?)");
        return guard;
      }
      allocations->push_back(ptr);
      p.bindings.SetSvm(info.name, ptr, bytes);
    }
  }
  return guard;
}

void Run(benchmark::State& state, Backend backend, bool wall, bool svm = false) {
  const int n = static_cast<int>(state.range(0));
  absl::StatusOr<Engine> engine = ChainEngine(n);
  if (!engine.ok()) {
    state.SkipWithError(engine.status().ToString().c_str());
    return;
  }
  absl::StatusOr<Prepared> p = Prepare(*engine, backend);
  if (!p.ok()) {
    state.SkipWithError(p.status().ToString().c_str());
    return;
  }
  absl::Status svm_status;
  std::shared_ptr<void> svm_memory;
  if (svm) svm_memory = SvmBindings(*engine, *p, &svm_status);
  if (!svm_status.ok()) {
    state.SkipWithError(svm_status.ToString().c_str());
    return;
  }
  cl_command_queue queue = BenchContext().queue();
  for (int i = 0; i < 3; ++i) (void)p->recording->Run(p->bindings);  // warm-up: JIT, caches
  TimeRuns(state, wall, [&] { return p->recording->Enqueue(queue, p->bindings); });
  state.counters["dispatches"] = n;
  state.counters["backend_id"] = static_cast<double>(backend);
  state.SetLabel(absl::StrCat(BackendName(p->recording->backend()), svm ? " svm" : ""));
}

// The driver's floor: the same pre-set kernels enqueued in a bare loop, no
// binding validation, no substitution, no recq bookkeeping.
void RunFloor(benchmark::State& state, bool wall) {
  const int n = static_cast<int>(state.range(0));
  absl::StatusOr<Engine> engine = ChainEngine(n);
  absl::StatusOr<Prepared> p =
      engine.ok() ? Prepare(*engine, Backend::kReplay) : absl::StatusOr<Prepared>(engine.status());
  if (!p.ok()) {
    state.SkipWithError(p.status().ToString().c_str());
    return;
  }
  const internal::EngineState& es = *engine->state();
  absl::StatusOr<internal::RecordingResources> res =
      internal::RecordingResources::Create(engine->state());
  if (!res.ok()) {
    state.SkipWithError(res.status().ToString().c_str());
    return;
  }
  std::vector<internal::SlotMemory> slots;
  for (const internal::Slot& slot : es.list.slots) {
    slots.push_back({p->bindings.Get(slot.name), nullptr});
  }
  std::vector<cl::UniqueKernel> kernels;
  for (size_t d = 0; d < es.list.dispatches.size(); ++d) {
    absl::StatusOr<cl::UniqueKernel> k = res->CreateKernel(d, slots);
    if (!k.ok()) {
      state.SkipWithError(k.status().ToString().c_str());
      return;
    }
    kernels.push_back(*std::move(k));
  }
  cl_command_queue queue = BenchContext().queue();
  auto enqueue_all = [&] {
    for (size_t d = 0; d < kernels.size(); ++d) {
      const internal::Dispatch& dispatch = es.list.dispatches[d];
      clEnqueueNDRangeKernel(queue, kernels[d].get(), dispatch.work_dim, nullptr,
                             dispatch.global.data(), nullptr, 0, nullptr, nullptr);
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < 3; ++i) (void)enqueue_all();
  clFinish(queue);
  TimeRuns(state, wall, enqueue_all);
  state.counters["dispatches"] = n;
  state.SetLabel("floor");
}

// RegisterPair registers BM_Host/<name> and BM_Wall/<name> over N = 8..512.
template <typename Fn>
void RegisterPair(const std::string& name, Fn fn) {
  for (bool wall : {false, true}) {
    std::string full = std::string(wall ? "BM_Wall/" : "BM_Host/") + name;
    auto* b = benchmark::RegisterBenchmark(full.c_str(),
                                           [fn, wall](benchmark::State& s) { fn(s, wall); });
    b->Arg(8)->Arg(32)->Arg(128)->Arg(512)->Unit(benchmark::kMicrosecond);
    if (wall) b->UseRealTime();
  }
}

void Register() {
  RegisterPair("floor", RunFloor);
  for (Backend backend :
       {Backend::kUnrecorded, Backend::kReplay, Backend::kKhrCommandBuffer, Backend::kQcom}) {
    RegisterPair(BackendName(backend),
                 [backend](benchmark::State& s, bool wall) { Run(s, backend, wall); });
    RegisterPair(std::string(BackendName(backend)) + "_svm",
                 [backend](benchmark::State& s, bool wall) { Run(s, backend, wall, true); });
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
