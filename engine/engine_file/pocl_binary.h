// PoCL program binaries ("poclbin"): a check of their layout before PoCL
// parses one, and reproducible binaries for the engine-file writer.
#ifndef RECQ_ENGINE_ENGINE_FILE_POCL_BINARY_H_
#define RECQ_ENGINE_ENGINE_FILE_POCL_BINARY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace recq::internal {

// CheckPoclBinary checks the layout of a PoCL program binary of format
// version 9 (PoCL 3.x) before it is given to clCreateProgramWithBinary or
// stored: PoCL parses a binary with assert()s and aborts the process on a
// malformed one instead of returning CL_INVALID_BINARY. The header, every
// file record (a name and contents) of the program's root entries and of
// each kernel's directory, each kernel's metadata and the record sizes must
// agree and end exactly at the binary's end; a root entry, a kernel count
// and a name may not be empty. An empty root entry is what PoCL serializes
// when its cache directory lost the program's program.bc (removed while
// the program was alive). The error names the record and what was wrong.
// Binaries without PoCL's magic, and PoCL binaries of another format
// version, pass unchecked.
[[nodiscard]] absl::Status CheckPoclBinary(absl::Span<const uint8_t> binary);

// CanonicalizePoclBinary makes a PoCL program binary ("poclbin") the same in
// every process: its program.bc names the temporary source file PoCL
// compiled, whose mkstemp suffix is random; both copies of that name (raw,
// and as LLVM's 7-bit SOURCE_FILENAME characters) get a fixed suffix of the
// same length. Other binaries are left as they are. The name's directory
// (POCL_CACHE_DIR) stays: binaries built under different PoCL cache
// directories still differ.
void CanonicalizePoclBinary(std::string* binary);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_FILE_POCL_BINARY_H_
