// The ONNX subcommands of the recq tool:
//
//   recq run MODEL.onnx [--input NAME=FILE.f32]... [--output NAME=FILE.f32]...
//                       [--runs N] [--backend auto] [--device ...]
//   recq info MODEL.onnx|MODEL.recq
//   recq build MODEL.onnx -o MODEL.recq
#ifndef RECQ_TOOLS_ONNX_COMMANDS_H_
#define RECQ_TOOLS_ONNX_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace recq::tools {

struct RunModelOptions {
  std::string model_path;
  // "NAME=FILE" pairs. Input files hold raw little-endian float32 of exactly
  // the input's size; inputs not given are filled with seeded random values
  // in [-1, 1). Outputs named here are written as raw float32 after the last
  // run.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  int runs = 10;
  std::string backend = "auto";  // see ParseBackend
  std::string device;            // see ContextOptions::device
  bool profile = false;          // also print per-kernel device times of one run
};

// RunModelCommand loads the model (ONNX, or an engine file: LoadEngine), compiles and records it
// once, runs the recording once untimed and then `runs` times, writes the requested outputs, and
// prints the device, the backend and why it was chosen, the dispatch count after the graph passes,
// and min/median/p90 latency.
[[nodiscard]] absl::Status RunModelCommand(const RunModelOptions& options);

// InfoModelCommand prints the model's inputs and outputs with shapes, its op
// counts, and the ops recq does not support (if any); when the model loads it
// also prints the inferred output shapes.
// An engine file instead shows its bindings, the device and driver it was
// built for, its options, format version and dispatches with their kernel
// variants.
[[nodiscard]] absl::Status InfoModelCommand(const std::string& path);

// BuildEngineCommand imports and compiles the ONNX model on the device
// `device_spec` names (ContextOptions::device) and writes the engine file
// (Engine::SerializeToFile), like trtexec --saveEngine.
[[nodiscard]] absl::Status BuildEngineCommand(const std::string& model_path,
                                              const std::string& engine_path,
                                              const std::string& device_spec);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_ONNX_COMMANDS_H_
