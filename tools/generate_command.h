// `recq generate`: greedy or sampled decoding of a decoder with past
// key/values through recq::Generator, with prefill and decode tokens/s and
// per-token latency percentiles.
#ifndef RECQ_TOOLS_GENERATE_COMMAND_H_
#define RECQ_TOOLS_GENERATE_COMMAND_H_

#include <string>

#include "absl/status/status.h"

namespace recq::tools {

// GenerateCommand reads its own flags (--prompt-ids, --prompt-len,
// --max-new-tokens, --max-length, --sampling, --eos-id, --chunk, --repeat);
// `json_path` ("-": stdout) receives the report as JSON when not empty.
[[nodiscard]] absl::Status GenerateCommand(const std::string& model_path, const std::string& device,
                                           const std::string& backend,
                                           const std::string& json_path);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_GENERATE_COMMAND_H_
