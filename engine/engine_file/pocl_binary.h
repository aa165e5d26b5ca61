// Reproducible PoCL program binaries for the engine-file writer.
#ifndef RECQ_ENGINE_ENGINE_FILE_POCL_BINARY_H_
#define RECQ_ENGINE_ENGINE_FILE_POCL_BINARY_H_

#include <string>

namespace recq::internal {

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
