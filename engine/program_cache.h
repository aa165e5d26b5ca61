// ProgramCache: builds each (kernel source, build options) pair once per
// context and device, and hands out shared references to the program.
#ifndef RECQ_ENGINE_PROGRAM_CACHE_H_
#define RECQ_ENGINE_PROGRAM_CACHE_H_

#include <CL/cl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backends/opencl/cl_handle.h"

namespace recq::internal {

// A built program shared by every engine and recording that uses it.
using SharedProgram = std::shared_ptr<const cl::UniqueProgram>;

class ProgramCache {
 public:
  // `context` and `device` are not owned; the owner of the cache keeps them alive.
  ProgramCache(cl_context context, cl_device_id device) : context_(context), device_(device) {}

  // GetOrBuild returns the program built from `source` with `options`
  // (order-insensitive), building it on a miss. `*built` (if non-null) tells
  // whether this call built it. A build failure is InvalidArgument with the
  // compiler's log; it is not cached. Thread-safe.
  [[nodiscard]] absl::StatusOr<SharedProgram> GetOrBuild(absl::string_view source,
                                                         absl::Span<const std::string> options,
                                                         bool* built = nullptr);

  size_t size() const;

 private:
  cl_context context_;
  cl_device_id device_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, SharedProgram> programs_;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_PROGRAM_CACHE_H_
