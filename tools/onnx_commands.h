// The ONNX subcommands of the recq tool:
//
//   recq run MODEL.onnx|MODEL.recq [--input NAME=FILE]... [--output NAME=FILE]...
//                       [--shapes NAME:DxD...] [--runs N] [--backend auto] [--device ...]
//   recq info MODEL.onnx|MODEL.recq [--shapes NAME:DxD...]
//   recq build MODEL.onnx -o MODEL.recq
//   recq tune MODEL.onnx [--exhaustive]
#ifndef RECQ_TOOLS_ONNX_COMMANDS_H_
#define RECQ_TOOLS_ONNX_COMMANDS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "recq/engine.h"
#include "recq/graph.h"
#include "recq/preprocess.h"

namespace recq::tools {

struct RunModelOptions {
  std::string model_path;
  // "NAME=FILE" pairs. Input files hold raw little-endian elements of the
  // input's element type (from the model) and exactly its size; inputs not
  // given are filled with seeded random values (floats in [-1, 1), integers
  // in [0, 10)). Outputs named here are written raw, in their element type,
  // after the last run.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  int runs = 10;
  std::string backend = "auto";  // see ParseBackend
  std::string device;            // see ContextOptions::device
  bool profile = false;          // also print per-kernel device times of one run
  // Input shapes chosen at load, "input:4x3x224x224,mask:4x128" (ParseShapes).
  std::string shapes;
  // Camera-frame inputs, "[NAME=]FORMAT[;...]" (ParseInputFormat), and
  // output conversions, "NAME=f16[:nhwc]" (ONNX models only).
  std::string input_format;
  std::vector<std::string> output_format;
  // EngineOptions::precision by name (ParsePrecision: fp32, fp16,
  // fp16-compute); "" is fp32 for ONNX models and the stored one for an
  // engine file (which must match when given).
  std::string precision;
  // Called with the context once every result is printed, in place of
  // Context::FlushBinaryCache (the CLI hands PoCL's programs to a background
  // process: StoreBinariesAfterExit). Unset: FlushBinaryCache.
  std::function<void(const Context&)> finish_binary_cache;
};

// RunModelCommand loads the model (ONNX, or an engine file: LoadEngine), compiles and records it
// once, runs the recording once untimed and then `runs` times, writes the requested outputs, and
// prints the device, the backend and why it was chosen, the dispatch count after the graph passes,
// and min/median/p90 latency.
[[nodiscard]] absl::Status RunModelCommand(const RunModelOptions& options);

// ParsePrePost reads --input-format ("[NAME=]FORMAT;...", NAME defaulting
// to the graph's only input; ParseInputFormat) and --output-format
// ("NAME=TYPE[:LAYOUT]") for `graph`, for run and bench alike.
[[nodiscard]] absl::StatusOr<PrePostProcessing> ParsePrePost(
    const Graph& graph, const std::string& inputs, const std::vector<std::string>& outputs);

// InfoModelCommand prints the model's inputs and outputs with shapes, its op
// counts, and the ops recq does not support (if any); when the model loads it
// also prints the inferred input and output shapes and element types.
// `shapes` sets symbolic input dimensions as RunModelOptions::shapes does.
// An engine file instead shows its bindings, the device and driver it was
// built for, its options, format version and dispatches with their kernel
// variants.
// `input_format` (ONNX models) applies --input-format first, so that the
// inputs show what they bind after pre-processing (an NV12 plane, an
// image2d...).
[[nodiscard]] absl::Status InfoModelCommand(const std::string& path, const std::string& shapes = "",
                                            const std::string& input_format = "");

// BuildEngineCommand imports and compiles the ONNX model on the device
// `device_spec` names (ContextOptions::device) and writes the engine file
// (Engine::SerializeToFile), like trtexec --saveEngine. `shapes` sets
// symbolic input dimensions as RunModelOptions::shapes does (fixed sizes: an
// engine file holds one shape). Like trtexec it tunes every kernel by
// default: `tuning` is "exhaustive", "fast" or "off" (EngineOptions::
// tuning); empty takes $RECQ_TUNING where it is set, else exhaustive. How
// it tunes is said on stderr before the compile starts.
[[nodiscard]] absl::Status BuildEngineCommand(const std::string& model_path,
                                              const std::string& engine_path,
                                              const std::string& device_spec,
                                              const std::string& precision = "",
                                              const std::string& shapes = "",
                                              const std::string& tuning = "");

// TuneModelCommand compiles the ONNX model with the auto-tuner
// (EngineOptions::tuning kFast without its time budget, or kExhaustive),
// filling the tuning cache, and prints each key's choice, its measured
// time, the heuristic's, and where it came from.
[[nodiscard]] absl::Status TuneModelCommand(const std::string& model_path, bool exhaustive,
                                            const std::string& device_spec,
                                            const std::string& shapes);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_ONNX_COMMANDS_H_
