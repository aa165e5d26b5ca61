// The engine file's verifier: every check of a parsed EngineFile that needs
// no device. A verified message has bindings with unique names, inputs
// first and at least one output; defined element types; shapes, buffers and
// constants that fit the size limits; constants that hold their data unless
// the file holds its graph; kernels that name a program built with their
// options; and dispatches whose kernel, work sizes and every argument index
// are in range. The loader (loader.cc) and the summary (summary.cc) read
// only verified messages, and index them without further checks.
//
// Part of recq_engine_file_format (see archive.h): it reads the protobuf
// messages alone, never recq's graph types.
#ifndef RECQ_ENGINE_ENGINE_FILE_VERIFIER_H_
#define RECQ_ENGINE_ENGINE_FILE_VERIFIER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/engine_file.pb.h"

namespace recq::internal {

// VerifyEngineFile checks `file`'s consistency (every index in range, sizes
// that match, shapes that fit in memory), and that of every bucket of its
// shape profile (none of which holds a profile of its own). InvalidArgument
// that names the first inconsistency; never aborts.
[[nodiscard]] absl::Status VerifyEngineFile(const engine_file::EngineFile& file);

// ParseEngineFile reads an engine file's bytes (ReadEngineFileArchive:
// envelope, checksum, parse) and verifies the message (VerifyEngineFile).
// Errors as described in recq/engine_file.h; never aborts.
[[nodiscard]] absl::StatusOr<engine_file::EngineFile> ParseEngineFile(absl::string_view bytes);

// CheckElementType is OK for a defined element type (FLOAT32 to UINT64) and
// InvalidArgument naming `what` otherwise.
[[nodiscard]] absl::Status CheckElementType(int element_type, absl::string_view what);

// ElementTypeSize and ElementTypeName are DataTypeSize and DataTypeName
// (recq/data_type.h) of a defined element type: 0 and "?" for another.
uint64_t ElementTypeSize(int element_type);
const char* ElementTypeName(int element_type);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_FILE_VERIFIER_H_
