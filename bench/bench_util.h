// Helpers shared by recq's Google Benchmark programs.
#ifndef RECQ_BENCH_BENCH_UTIL_H_
#define RECQ_BENCH_BENCH_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "recq/recq.h"

namespace recq::bench {

// BenchContext is the process's one Context (default device or $RECQ_DEVICE);
// exits with a message when there is none.
inline const Context& BenchContext() {
  static const Context* context = [] {
    absl::StatusOr<Context> c = Context::Create();
    if (!c.ok()) {
      std::fprintf(stderr, "no OpenCL context: %s\n", c.status().ToString().c_str());
      std::exit(1);
    }
    return new Context(*std::move(c));
  }();
  return *context;
}

// A recording with its bound input and output tensors, ready to enqueue.
struct Prepared {
  std::unique_ptr<Recording> recording;
  std::vector<Tensor> tensors;
  Bindings bindings;
};

// Prepare records `engine` with `backend` and binds fresh tensors (inputs
// filled with a small ramp). Returns an error for an unavailable backend.
inline absl::StatusOr<Prepared> Prepare(const Engine& engine, Backend backend) {
  absl::StatusOr<Recording> rec = engine.Record({backend});
  if (!rec.ok()) return rec.status();
  Prepared p;
  p.recording = std::make_unique<Recording>(*std::move(rec));
  for (const auto* list : {&engine.inputs(), &engine.outputs()}) {
    for (const BindingInfo& info : *list) {
      absl::StatusOr<Tensor> t = Tensor::Allocate(engine.context(), info.desc);
      if (!t.ok()) return t.status();
      std::vector<float> data(info.desc.NumElements());
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = 0.001f * static_cast<float>(i % 997) - 0.3f;
      if (absl::Status s = t->Upload(data); !s.ok()) return s;
      p.bindings.Set(info.name, *t);
      p.tensors.push_back(*std::move(t));
    }
  }
  return p;
}

}  // namespace recq::bench

#endif  // RECQ_BENCH_BENCH_UTIL_H_
