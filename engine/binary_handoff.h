// The hand-off file: the programs a context built from source and has not
// stored in its binary cache yet (their sources and build options), written
// so that another process can store their binaries. On PoCL serializing a
// program compiles a generic work-group function for every kernel (seconds
// when cold): a one-shot command hands that work to a process of its own
// instead of waiting for it before it exits (Context::HandOffBinaryCache).
#ifndef RECQ_ENGINE_BINARY_HANDOFF_H_
#define RECQ_ENGINE_BINARY_HANDOFF_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace recq::internal {

// One launch of a kernel that a build helper runs to have the driver
// compile what it compiles lazily at the first enqueue (PoCL's work-group
// function for each local size): the kernel, its sizes, and every argument
// as a zero-filled buffer of `bytes`, scalar `value` bytes, `bytes` of
// local memory, or a null buffer.
struct WarmLaunch {
  struct Arg {
    enum class Kind : uint8_t { kBuffer, kScalar, kLocal, kNull };
    Kind kind = Kind::kNull;
    uint64_t bytes = 0;  // kBuffer, kLocal
    std::string value;   // kScalar
  };
  std::string kernel;
  uint32_t work_dim = 1;
  std::array<uint64_t, 3> global = {1, 1, 1};
  std::array<uint64_t, 3> local = {0, 0, 0};  // all 0: the driver chooses
  std::vector<Arg> args;
};

// One program to store (or, for a build helper, to build and warm): its
// full source, its build options, sorted, the launches to warm it with
// (empty in a binary hand-off), and, in a build plan, whether the compiling
// process builds it (the helper creates it, from the driver's cache, only
// for its launches) rather than the helper.
struct HandedOffProgram {
  std::string source;
  std::vector<std::string> options;
  std::vector<WarmLaunch> launches;
  bool built_by_compiler = false;
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
