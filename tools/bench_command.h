// `recq bench MODEL.onnx`: throughput and latency over devices x streams,
// in the manner of trtexec and OpenVINO's benchmark_app.
//
//   recq bench model.onnx [--devices=0,1|all] [--streams=N] [--stream_mode=threads|events]
//                         [--warmup=S] [--duration=S | --iterations=N] [--backend=auto]
//                         [--json=FILE] [--profile] [--input-format=...] [--output-format=...]
#ifndef RECQ_TOOLS_BENCH_COMMAND_H_
#define RECQ_TOOLS_BENCH_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace recq::tools {

class StatusLine;

struct BenchOptions {
  std::string model_path;
  // Input shapes chosen at load ("input:4x3x224x224"), as `recq run --shapes`.
  std::string shapes;
  // EngineOptions::precision by name (ParsePrecision; empty: fp32), as
  // `recq run --precision`.
  std::string precision;
  // Camera-frame inputs and output conversions compiled into the model, as
  // `recq run --input-format / --output-format` (ParsePrePost). The frames
  // are buffers the pool allocates (image2d kinds are not benchmarked).
  std::string input_format;
  std::vector<std::string> output_format;
  // A device list as recq::ResolveDevices takes it ("all", "0,1", "gpu:1");
  // empty: the one device `device` names.
  std::string devices;
  std::string device;  // see ContextOptions::device
  std::string backend = "auto";
  int streams = 1;  // recordings per device, each on its own in-order queue
  // "threads": one host thread per stream, each enqueueing and waiting for
  // its own runs; "events": one host thread keeps every stream busy, waiting
  // on each stream's completion event in turn.
  std::string stream_mode = "threads";
  double warmup_s = 1.0;
  double duration_s = 3.0;  // used when iterations == 0
  int64_t iterations = 0;   // > 0: run exactly this many inferences in total
  std::string json_path;    // write the full report there
  bool profile = false;     // per-dispatch device times (op by op) in the report
  // Progress (loading, compiling, warm-up, measuring) goes to this line; not
  // owned, may be null (no progress).
  StatusLine* status_line = nullptr;
};

// BenchCommand parses the model once, compiles it for every device, records
// `streams` recordings per device (recq::StreamPool), fills the inputs with
// seeded random values, runs for `warmup_s` seconds untimed, then measures
// for `duration_s` seconds (or `iterations` inferences) and prints latency
// (enqueue to completion, inputs resident on the device: no transfers) min,
// mean, p50, p90, p95, p99, max, and throughput per device and in total.
[[nodiscard]] absl::Status BenchCommand(const BenchOptions& options);

// DevicesCommand prints every OpenCL platform and device with the indices
// ContextOptions::device accepts, type, memory, and recording extensions.
[[nodiscard]] absl::Status DevicesCommand();

}  // namespace recq::tools

#endif  // RECQ_TOOLS_BENCH_COMMAND_H_
