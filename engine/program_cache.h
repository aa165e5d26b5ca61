// ProgramCache: builds each (kernel source, build options) pair once per
// context and device, and hands out shared references to the program. On a
// miss it first tries the BinaryCache on disk (when there is one), and stores
// the binary of every program it builds from source there.
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
#include "engine/binary_cache.h"
#include "recq/context.h"

namespace recq::internal {

// A built program shared by every engine and recording that uses it.
using SharedProgram = std::shared_ptr<const cl::UniqueProgram>;

// Where GetOrBuild found a program.
enum class ProgramOrigin {
  kMemory,  // built earlier in this context
  kDisk,    // created from a binary in the BinaryCache
  kSource,  // compiled from source by this call
};

class ProgramCache {
 public:
  // `context`, `device`, `device_info` and `disk` are not owned; the owner of
  // the cache keeps them alive. `disk` may be null: no persistent cache.
  ProgramCache(cl_context context, cl_device_id device, const DeviceInfo* device_info,
               BinaryCache* disk)
      : context_(context), device_(device), device_info_(device_info), disk_(disk) {}

  // GetOrBuild returns the program built from `source` with `options`
  // (order-insensitive). On a miss it loads the binary from disk, or, when
  // there is none or the driver rejects it, builds from source and stores
  // the binary (disk errors are ignored, counted by the BinaryCache).
  // `*origin` (if non-null) tells where the program came from. A build
  // failure is InvalidArgument with the compiler's log; it is not cached.
  // Thread-safe.
  [[nodiscard]] absl::StatusOr<SharedProgram> GetOrBuild(absl::string_view source,
                                                         absl::Span<const std::string> options,
                                                         ProgramOrigin* origin = nullptr);

  size_t size() const;

 private:
  cl_context context_;
  cl_device_id device_;
  const DeviceInfo* device_info_;
  BinaryCache* disk_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, SharedProgram> programs_;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_PROGRAM_CACHE_H_
