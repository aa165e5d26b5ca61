#include "tests/fuzz/engine_file_fuzz_target.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/engine_file.h"
#include "recq/engine_file.h"

namespace recq::fuzz {

int EngineFileFuzzOne(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size > 0 && (data[0] & 1) != 0) {
    bytes = internal::WrapEngineFilePayload(bytes.substr(1));
  }
  (void)LooksLikeEngineFile(bytes);
  absl::StatusOr<engine_file::EngineFile> file = internal::ParseEngineFile(bytes);
  if (!file.ok()) {
    const absl::StatusCode code = file.status().code();
    if (code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kDataLoss) {
      std::fprintf(stderr, "unexpected status: %s\n", file.status().ToString().c_str());
      std::abort();
    }
    return 0;
  }
  absl::StatusOr<EngineFileSummary> summary = SummarizeEngineFile(bytes);
  if (!summary.ok() || summary->dispatches.size() != static_cast<size_t>(file->dispatches_size())) {
    std::fprintf(stderr, "an accepted file does not summarize: %s\n",
                 summary.status().ToString().c_str());
    std::abort();
  }
  return 1;
}

}  // namespace recq::fuzz
