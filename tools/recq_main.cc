// The recq command-line tool.
//
//   recq demo [--model=v1|v2] [--resolution=224] [--runs=5] [--backend=auto] [--device=...]
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "tools/commands.h"

ABSL_FLAG(std::string, device, "",
          "OpenCL device: a substring of the device or platform name (default: $RECQ_DEVICE, "
          "else the first GPU, else the first CPU)");
ABSL_FLAG(std::string, backend, "auto",
          "recording backend: auto, replay, khr_command_buffer, qcom");
ABSL_FLAG(std::string, model, "v1", "demo: MobileNet v1 or v2");
ABSL_FLAG(int64_t, resolution, 224, "demo: input height and width (a multiple of 32)");
ABSL_FLAG(int, runs, 5, "demo: replays, each with its own input buffer");
ABSL_FLAG(int, timing_runs, 5, "demo: runs per path for the recorded vs unrecorded medians");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "recq: record an ML graph's OpenCL dispatches once, replay them many times.\n"
      "  recq demo   MobileNet built with the C++ API: record once, replay with new inputs");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::fprintf(stderr, "%s\n", std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  }
  std::string command = args[1];
  recq::tools::CommonOptions common{absl::GetFlag(FLAGS_device), absl::GetFlag(FLAGS_backend)};
  absl::Status status;
  if (command == "demo") {
    recq::tools::DemoOptions demo{absl::GetFlag(FLAGS_model), absl::GetFlag(FLAGS_resolution),
                                  absl::GetFlag(FLAGS_runs), absl::GetFlag(FLAGS_timing_runs)};
    status = recq::tools::RunDemo(common, demo);
  } else {
    status = absl::InvalidArgumentError(absl::StrCat("unknown command '", command, "'"));
  }
  if (!status.ok()) {
    std::fprintf(stderr, "recq %s: %s\n", command.c_str(), status.ToString().c_str());
    return 1;
  }
  return 0;
}
