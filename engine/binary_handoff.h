// The hand-off file: the programs a context built from source and has not
// stored in its binary cache yet (their sources and build options), written
// so that another process can store their binaries. On PoCL serializing a
// program compiles a generic work-group function for every kernel (seconds
// when cold): a one-shot command hands that work to a process of its own
// instead of waiting for it before it exits (Context::HandOffBinaryCache).
#ifndef RECQ_ENGINE_BINARY_HANDOFF_H_
#define RECQ_ENGINE_BINARY_HANDOFF_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace recq::internal {

// One program to store: its full source and its build options, sorted.
struct HandedOffProgram {
  std::string source;
  std::vector<std::string> options;
};

// What a hand-off file holds: the device the programs were built for (its
// name and driver version, checked by the reader) and the programs.
struct BinaryHandOff {
  std::string device_name;
  std::string driver_version;
  std::vector<HandedOffProgram> programs;
};

// WriteBinaryHandOff writes `handoff` to `path` atomically (a temporary file
// in the same directory, then a rename), so that a reader sees all or none;
// it creates the directory when missing.
[[nodiscard]] absl::Status WriteBinaryHandOff(const std::string& path,
                                              const BinaryHandOff& handoff);

// ReadBinaryHandOff reads a file WriteBinaryHandOff wrote. A missing file is
// NotFound; a damaged or foreign one is InvalidArgument naming what is wrong.
[[nodiscard]] absl::StatusOr<BinaryHandOff> ReadBinaryHandOff(const std::string& path);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_BINARY_HANDOFF_H_
