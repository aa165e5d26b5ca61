// `recq generate`: greedy or sampled decoding of a decoder with past
// key/values through recq::Generator, with prefill and decode tokens/s and
// per-token latency percentiles.
#ifndef RECQ_TOOLS_GENERATE_COMMAND_H_
#define RECQ_TOOLS_GENERATE_COMMAND_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace recq::tools {

// How many generations are timed. GenerateCommand (`recq generate`) runs
// one untimed warm-up, then --repeat timed generations; `recq bench
// --generate` runs untimed generations for `warmup_s` seconds (at least
// one), then timed ones for `duration_s` seconds (at least one) or exactly
// `iterations` when that is > 0.
struct GenerateTiming {
  bool bench = false;  // false: --repeat generations after one warm-up
  double warmup_s = 1.0;
  double duration_s = 3.0;
  int64_t iterations = 0;
};

// GenerateCommand reads its own flags (--prompt-ids, --prompt-len,
// --max-new-tokens, --max-length, --sampling, --eos-id, --chunk, --repeat,
// --logits); `json_path` ("-": stdout) receives the report as JSON when not
// empty.
[[nodiscard]] absl::Status GenerateCommand(const std::string& model_path, const std::string& device,
                                           const std::string& backend, const std::string& json_path,
                                           const GenerateTiming& timing = {});

}  // namespace recq::tools

#endif  // RECQ_TOOLS_GENERATE_COMMAND_H_
