// Writing a whole file from the CLI's commands: outputs, reports, logits.
#ifndef RECQ_TOOLS_WRITE_FILE_H_
#define RECQ_TOOLS_WRITE_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace recq::tools {

// WriteFile replaces `path` with `bytes`; UnavailableError naming the path
// when it cannot be written.
[[nodiscard]] absl::Status WriteFile(const std::string& path, absl::string_view bytes);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_WRITE_FILE_H_
