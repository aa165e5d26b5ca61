// Move-only RAII owners of OpenCL handles.
//
// Each Unique* owns one reference and releases it on destruction; Retain*
// helpers take an extra reference of a handle the caller does not own.
// Destructors never throw and ignore release errors (nothing to report to).
// RetainFrom reports a failed retain: ignoring it would make the destructor
// release a reference that was never taken (found by the fault sweep).
#ifndef RECQ_BACKENDS_OPENCL_CL_HANDLE_H_
#define RECQ_BACKENDS_OPENCL_CL_HANDLE_H_

#include <CL/cl.h>

#include <utility>

#include "absl/status/statusor.h"
#include "backends/opencl/cl_error.h"

namespace recq::cl {

template <typename T, cl_int (*Retain)(T), cl_int (*Release)(T), const char* kRetainName>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  // Takes ownership of one reference of `handle` (may be null).
  explicit UniqueHandle(T handle) : handle_(handle) {}
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.handle_, nullptr));
    return *this;
  }
  ~UniqueHandle() { reset(); }

  // RetainFrom takes a new reference of a handle owned elsewhere (null
  // gives an empty handle); an error names the failed retain call.
  [[nodiscard]] static absl::StatusOr<UniqueHandle> RetainFrom(T handle) {
    if (handle != nullptr) {
      const absl::Status status = CheckCl(Retain(handle), kRetainName);
      if (!status.ok()) return status;
    }
    return UniqueHandle(handle);
  }

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  // release gives up ownership without releasing the reference.
  T release() { return std::exchange(handle_, nullptr); }
  void reset(T handle = nullptr) {
    if (handle_ != nullptr) Release(handle_);
    handle_ = handle;
  }
  // out returns a place for a creating call to store a new handle.
  T* out() {
    reset();
    return &handle_;
  }

 private:
  T handle_ = nullptr;
};

inline constexpr char kRetainContext[] = "clRetainContext";
inline constexpr char kRetainCommandQueue[] = "clRetainCommandQueue";
inline constexpr char kRetainProgram[] = "clRetainProgram";
inline constexpr char kRetainKernel[] = "clRetainKernel";
inline constexpr char kRetainMemObject[] = "clRetainMemObject";
inline constexpr char kRetainEvent[] = "clRetainEvent";

using UniqueContext = UniqueHandle<cl_context, clRetainContext, clReleaseContext, kRetainContext>;
using UniqueQueue = UniqueHandle<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue,
                                 kRetainCommandQueue>;
using UniqueProgram = UniqueHandle<cl_program, clRetainProgram, clReleaseProgram, kRetainProgram>;
using UniqueKernel = UniqueHandle<cl_kernel, clRetainKernel, clReleaseKernel, kRetainKernel>;
using UniqueMem = UniqueHandle<cl_mem, clRetainMemObject, clReleaseMemObject, kRetainMemObject>;
using UniqueEvent = UniqueHandle<cl_event, clRetainEvent, clReleaseEvent, kRetainEvent>;

}  // namespace recq::cl

#endif  // RECQ_BACKENDS_OPENCL_CL_HANDLE_H_
