#include "tests/fuzz/engine_file_fuzz_target.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "engine/engine_file/archive.h"
#include "engine/engine_file/verifier.h"
#include "recq/engine_file_format.h"

namespace recq::fuzz {
namespace {

// ExpectCode aborts unless `status` has one of the codes the reader may
// return for a bad file.
void ExpectCode(const absl::Status& status, std::initializer_list<absl::StatusCode> codes) {
  if (std::find(codes.begin(), codes.end(), status.code()) == codes.end()) {
    std::fprintf(stderr, "unexpected status: %s\n", status.ToString().c_str());
    std::abort();
  }
}

}  // namespace

int EngineFileFuzzOne(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size > 0 && (data[0] & 1) != 0) {
    bytes = internal::WrapEngineFilePayload(bytes.substr(1));
  }
  (void)LooksLikeEngineFile(bytes);
  absl::StatusOr<engine_file::EngineFile> file = internal::ReadEngineFileArchive(bytes);
  if (!file.ok()) {
    ExpectCode(file.status(), {absl::StatusCode::kInvalidArgument, absl::StatusCode::kDataLoss});
    return 0;
  }
  const absl::Status verified = internal::VerifyEngineFile(*file);
  if (!verified.ok()) {
    ExpectCode(verified, {absl::StatusCode::kInvalidArgument});
    return 0;
  }
  // An accepted file's message, written in a new envelope, reads back as
  // the same message.
  // Deterministic serialization: map entries (ShapeProfile's pad values)
  // come out in key order, not in the hash order of each parsed map.
  const std::string payload = internal::SerializeDeterministically(*file);
  absl::StatusOr<engine_file::EngineFile> again =
      internal::ParseEngineFile(internal::WrapEngineFilePayload(payload));
  if (!again.ok() || internal::SerializeDeterministically(*again) != payload) {
    std::fprintf(stderr, "an accepted file does not read back: %s\n",
                 again.status().ToString().c_str());
    std::abort();
  }
  return 1;
}

}  // namespace recq::fuzz
