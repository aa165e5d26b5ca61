// `recq run` and `recq bench` over a shape profile with ranges
// (--shapes=input_ids:1x1..512/pow2, recq/shape_profile.h): one ShapedEngine
// (recq/shaped_engine.h) serves every bucket.
//
//   recq run MODEL.onnx --shapes=PROFILE [--pad=NAME:V,...] [--input=NAME=FILE]...
//   recq bench MODEL.onnx --shapes=PROFILE [--pad=NAME:V,...] [--exact] [--json=FILE]
//   recq build MODEL.onnx --shapes=PROFILE [--pad=NAME:V,...] -o MODEL.recq
// run and bench also take such an engine file (with the --shapes it was
// built for) in place of MODEL.onnx.
#ifndef RECQ_TOOLS_SHAPED_COMMANDS_H_
#define RECQ_TOOLS_SHAPED_COMMANDS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "recq/context.h"

namespace recq::tools {

// IsRangeProfile is true when `shapes` parses as a shape profile with a
// range in some dimension (then run and bench take the commands below).
bool IsRangeProfile(absl::string_view shapes);

struct ShapedRunOptions {
  std::string model_path;
  std::string shapes;  // the profile
  std::string pad;     // ParsePadValues: "input_ids:0,attention_mask:0"
  // "NAME=FILE" inputs, raw little-endian elements of the input's type: a
  // file's size sets its input's one ranged dimension. Inputs without a
  // file run at the sizes the files give their tied dimensions (one
  // symbolic name), else at the profile's largest; integers are 1, floats
  // uniform in [-1, 1).
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;  // "NAME=FILE": the bucket's output, raw
  int runs = 10;
  std::string backend = "auto";
  std::string device;
  // Called with the context once every result is printed, in place of
  // Context::FlushBinaryCache (the CLI hands PoCL's programs to a background
  // process: StoreBinariesAfterExit). Unset: FlushBinaryCache.
  std::function<void(const Context&)> finish_binary_cache;
};

// ShapedRunCommand builds the ShapedEngine, runs the inputs' shapes once
// (the bucket's first result: import, compile, record, run) and `runs`
// times more, and prints the bucket, whether it padded, the latencies and
// the weight bytes uploaded.
[[nodiscard]] absl::Status ShapedRunCommand(const ShapedRunOptions& options);

struct ShapedBenchOptions {
  std::string model_path;
  std::string shapes;
  std::string pad;
  std::string backend = "auto";
  std::string device;
  double warmup_s = 1.0;    // per bucket
  double duration_s = 3.0;  // per bucket (and per exact engine), unless iterations
  int64_t iterations = 0;   // per bucket, > 0: exactly this many runs
  // Also compile an engine for each bucket's shape alone (from the file, as
  // `recq run --shapes` of that fixed shape does) and measure it in
  // alternating rounds with the bucket.
  bool exact = false;
  std::string json_path;
  size_t max_buckets = 64;
};

// ShapedBenchCommand runs every bucket of the profile (ShapedEngine::
// ListBuckets), each at its own shape: first result (compile and first run
// of a new bucket in the loaded engine), steady latency and throughput,
// memory per bucket (intermediates, staging), and the weight bytes uploaded
// once for all of them.
[[nodiscard]] absl::Status ShapedBenchCommand(const ShapedBenchOptions& options);

// ShapedBuildCommand compiles every bucket of the profile and writes them
// as one engine file (ShapedEngine::Serialize) that run and bench load with
// the same --shapes; `tuning` as BuildEngineCommand's (exhaustive when
// empty).
[[nodiscard]] absl::Status ShapedBuildCommand(const std::string& model_path,
                                              const std::string& engine_path,
                                              const std::string& shapes, const std::string& pad,
                                              const std::string& device,
                                              const std::string& precision,
                                              const std::string& tuning = "");

}  // namespace recq::tools

#endif  // RECQ_TOOLS_SHAPED_COMMANDS_H_
