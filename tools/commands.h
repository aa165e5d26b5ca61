// The subcommands of the recq tool.
#ifndef RECQ_TOOLS_COMMANDS_H_
#define RECQ_TOOLS_COMMANDS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace recq::tools {

struct CommonOptions {
  std::string device;
  std::string backend;
};

struct DemoOptions {
  std::string model;
  int64_t resolution = 224;
  int runs = 5;
  int timing_runs = 20;
};

// RunDemo builds MobileNet with seeded random weights, compiles and records
// it once, replays it `runs` times with a different input buffer each time,
// checks every replay against an unrecorded op-by-op run of the same input
// (bit for bit), and compares the recorded and unrecorded latencies.
[[nodiscard]] absl::Status RunDemo(const CommonOptions& common, const DemoOptions& options);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_COMMANDS_H_
