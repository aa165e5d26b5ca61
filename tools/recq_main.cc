// The recq command-line tool.
//
//   recq demo [--model=v1|v2] [--resolution=224] [--runs=5] [--backend=auto] [--device=...]
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/marshalling.h"

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "tools/commands.h"
#include "tools/models/mobilenet_onnx.h"
#include "tools/onnx_commands.h"

ABSL_FLAG(std::string, device, "",
          "OpenCL device: a substring of the device or platform name (default: $RECQ_DEVICE, "
          "else the first GPU, else the first CPU)");
ABSL_FLAG(std::string, backend, "auto",
          "recording backend: auto, replay, khr_command_buffer, qcom");
ABSL_FLAG(std::string, model, "v1", "demo: MobileNet v1 or v2");
ABSL_FLAG(int64_t, resolution, 224, "demo: input height and width (a multiple of 32)");
ABSL_FLAG(
    int, runs, 0,
    "demo: replays, each with its own input buffer (default 5); run: timed runs (default 10)");
ABSL_FLAG(
    std::vector<std::string>, input, {},
    "run: NAME=FILE.f32 inputs (raw little-endian float32), comma-separated; random if absent");
ABSL_FLAG(bool, profile, false, "run: print per-kernel device times of one op-by-op run");
ABSL_FLAG(std::vector<std::string>, output, {},
          "run: NAME=FILE.f32 outputs to write after the last run, comma-separated");
ABSL_FLAG(int, timing_runs, 20, "demo: runs per path for the recorded vs unrecorded medians");

namespace {

absl::Status ExportMobileNet(const std::string& model, int64_t resolution,
                             const std::string& path) {
  recq::models::MobileNetOptions options;
  options.resolution = resolution;
  absl::StatusOr<std::string> bytes = model == "v1" ? recq::models::MobileNetV1OnnxBytes(options)
                                      : model == "v2"
                                          ? recq::models::MobileNetV2OnnxBytes(options)
                                          : absl::InvalidArgumentError("--model must be v1 or v2");
  if (!bytes.ok()) return bytes.status();
  std::ofstream out(path, std::ios::binary);
  out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write '", path, "'"));
  std::printf("wrote MobileNet %s (%lldx%lld) to %s, %zu bytes\n", model.c_str(),
              static_cast<long long>(resolution), static_cast<long long>(resolution), path.c_str(),
              bytes->size());
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "recq: record an ML graph's OpenCL dispatches once, replay them many times.\n"
      "  recq demo             MobileNet built with the C++ API: record once, replay with new "
      "inputs\n"
      "  recq run MODEL.onnx   load, record once, run N times, print latency statistics\n"
      "  recq info MODEL.onnx  inputs, outputs, shapes, op counts, unsupported ops\n"
      "  recq export-mobilenet OUT.onnx  write the demo's MobileNet (--model, --resolution) as "
      "ONNX");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::fprintf(stderr, "%s\n", std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  }
  std::string command = args[1];
  recq::tools::CommonOptions common{absl::GetFlag(FLAGS_device), absl::GetFlag(FLAGS_backend)};
  absl::Status status;
  if (command == "demo") {
    int runs = absl::GetFlag(FLAGS_runs);
    recq::tools::DemoOptions demo{absl::GetFlag(FLAGS_model), absl::GetFlag(FLAGS_resolution),
                                  runs > 0 ? runs : 5, absl::GetFlag(FLAGS_timing_runs)};
    status = recq::tools::RunDemo(common, demo);
  } else if ((command == "run" || command == "info" || command == "export-mobilenet") &&
             args.size() != 3) {
    status = absl::InvalidArgumentError(absl::StrCat("usage: recq ", command, " MODEL.onnx"));
  } else if (command == "run") {
    recq::tools::RunModelOptions run;
    run.model_path = args[2];
    run.inputs = absl::GetFlag(FLAGS_input);
    run.outputs = absl::GetFlag(FLAGS_output);
    int runs = absl::GetFlag(FLAGS_runs);
    run.runs = runs > 0 ? runs : 10;
    run.backend = common.backend;
    run.device = common.device;
    run.profile = absl::GetFlag(FLAGS_profile);
    status = recq::tools::RunModelCommand(run);
  } else if (command == "export-mobilenet") {
    status = ExportMobileNet(absl::GetFlag(FLAGS_model), absl::GetFlag(FLAGS_resolution), args[2]);
  } else if (command == "info") {
    status = recq::tools::InfoModelCommand(args[2]);
  } else {
    status = absl::InvalidArgumentError(absl::StrCat("unknown command '", command, "'"));
  }
  if (!status.ok()) {
    std::fprintf(stderr, "recq %s: %s\n", command.c_str(), status.ToString().c_str());
    return 1;
  }
  return 0;
}
