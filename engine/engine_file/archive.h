// The engine file's archive: the checksummed envelope around its payload.
//
// A file is one serialized EngineFileEnvelope (engine/engine_file.proto):
// the magic "recq-engine", the format version, the payload (a serialized
// EngineFile) and the payload's SHA-256. Writing seals a payload in an
// envelope (SealEngineFilePayload); reading checks the envelope and the
// digest and parses the payload (ReadEngineFileArchive), but does not look
// at the payload's contents: that is the verifier's job (verifier.h), and
// ParseEngineFile there does both.
//
// Part of recq_engine_file_format (protobuf, OpenSSL and absl only: no
// device, no graph), which the engine-file fuzzer links on its own.
#ifndef RECQ_ENGINE_ENGINE_FILE_ARCHIVE_H_
#define RECQ_ENGINE_ENGINE_FILE_ARCHIVE_H_

#include <cstdint>
#include <string>

#include <google/protobuf/message_lite.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/engine_file.pb.h"
#include "recq/engine_file_format.h"

namespace recq::internal {

// The envelope's magic string.
inline constexpr char kEngineFileMagic[] = "recq-engine";

// SerializeDeterministically serializes `message` with protobuf's
// deterministic serialization (map entries sorted by key), so that the same
// message always gives the same bytes: engine files rebuild byte-identical.
// Empty when the message does not serialize (over 2 GiB).
std::string SerializeDeterministically(const google::protobuf::MessageLite& message);

// SealEngineFilePayload puts `payload` (a serialized EngineFile) in an
// envelope with its SHA-256 and returns the envelope's bytes: a whole
// engine file. Internal when OpenSSL's digest fails.
[[nodiscard]] absl::StatusOr<std::string> SealEngineFilePayload(
    std::string payload, uint32_t format_version = kEngineFileFormatVersion);

// WrapEngineFilePayload is SealEngineFilePayload for tests and the fuzzer
// (to reach the payload checks behind the checksum): where the digest
// fails, the envelope holds none.
std::string WrapEngineFilePayload(absl::string_view payload,
                                  uint32_t format_version = kEngineFileFormatVersion);

// ReadEngineFileArchive checks the envelope (magic, format version, SHA-256
// of the payload) and parses the payload. InvalidArgument for bytes that are
// not an envelope of this format version, DataLoss for a payload that fails
// its checksum or passes it but does not parse. The message it returns is
// unverified: its indices and sizes may be anything. Never aborts.
[[nodiscard]] absl::StatusOr<engine_file::EngineFile> ReadEngineFileArchive(
    absl::string_view bytes);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_FILE_ARCHIVE_H_
