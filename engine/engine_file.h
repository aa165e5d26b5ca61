// The engine file's reader and writer (recq/engine_file.h is the public
// side): protobuf messages of engine/engine_file.proto inside a checksummed
// envelope.
#ifndef RECQ_ENGINE_ENGINE_FILE_H_
#define RECQ_ENGINE_ENGINE_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/engine_file.pb.h"
#include "engine/engine_state.h"
#include "recq/engine_file.h"

namespace recq::internal {

// The envelope's magic string.
inline constexpr char kEngineFileMagic[] = "recq-engine";

// SerializeEngineState writes `state` as an engine file's bytes.
[[nodiscard]] absl::StatusOr<std::string> SerializeEngineState(const EngineState& state);

// ParseEngineFile checks the envelope (magic, format version, SHA-256 of
// the payload), parses the payload and checks its consistency (every index
// in range, sizes that match, shapes that fit in memory). Errors as
// described in recq/engine_file.h; never aborts.
[[nodiscard]] absl::StatusOr<engine_file::EngineFile> ParseEngineFile(absl::string_view bytes);

// CanonicalizePoclBinary makes a PoCL program binary ("poclbin") the same in
// every process: its program.bc names the temporary source file PoCL
// compiled, whose mkstemp suffix is random; both copies of that name (raw,
// and as LLVM's 7-bit SOURCE_FILENAME characters) get a fixed suffix of the
// same length. Other binaries are left as they are. The name's directory
// (POCL_CACHE_DIR) stays: binaries built under different PoCL cache
// directories still differ.
void CanonicalizePoclBinary(std::string* binary);

// WrapEngineFilePayload puts `payload` in an envelope with its checksum
// (tests and the fuzzer use it to reach the payload checks).
std::string WrapEngineFilePayload(absl::string_view payload,
                                  uint32_t format_version = kEngineFileFormatVersion);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_FILE_H_
