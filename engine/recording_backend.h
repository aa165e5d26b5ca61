// The interface every recording backend implements, and the resources they
// share: a recording's own intermediate buffers and argument helpers.
#ifndef RECQ_ENGINE_RECORDING_BACKEND_H_
#define RECQ_ENGINE_RECORDING_BACKEND_H_

#include <CL/cl.h>

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backends/opencl/cl_handle.h"
#include "engine/engine_state.h"

namespace recq::internal {

// The memory bound to one slot for one run: a cl_mem (set with
// clSetKernelArg) or, when `svm` is non-null, an SVM pointer (set with
// clSetKernelArgSVMPointer; Bindings::SetSvm's allocation + offset).
struct SlotMemory {
  cl_mem mem = nullptr;
  void* svm = nullptr;

  bool is_svm() const { return svm != nullptr; }
  friend bool operator==(const SlotMemory& a, const SlotMemory& b) {
    return a.mem == b.mem && a.svm == b.svm;
  }
  friend bool operator!=(const SlotMemory& a, const SlotMemory& b) { return !(a == b); }
};

// An argument that held an SVM pointer is never set to a cl_mem again: the
// backends make that dispatch's kernel afresh instead. NVIDIA's driver (580)
// fails every later enqueue of such a kernel with CL_INVALID_KERNEL_ARGS,
// though each clSetKernelArg succeeds; cl_mem to SVM and SVM to SVM are fine.
//
// SetSlotArg sets argument `index` of `kernel` to `memory`: clSetKernelArg
// with the cl_mem, or clSetKernelArgSVMPointer.
[[nodiscard]] cl_int SetSlotArg(cl_kernel kernel, cl_uint index, const SlotMemory& memory);

// RecordingBackend runs one engine's dispatch list. Implementations are not
// thread-safe: RecordingImpl serializes calls and orders runs.
class RecordingBackend {
 public:
  virtual ~RecordingBackend() = default;

  // Enqueue runs the dispatch list on `queue` (an in-order queue of the
  // engine's context) with `slot_mems[i]` bound to slot i, after `wait_list`.
  // A slot may be bound to an SVM pointer (SlotMemory::svm).
  // `slot_mems` is validated by the caller. If `done` is non-null it receives
  // an event of the run's completion.
  [[nodiscard]] virtual absl::Status Enqueue(cl_command_queue queue,
                                             absl::Span<const SlotMemory> slot_mems,
                                             absl::Span<const cl_event> wait_list,
                                             cl_event* done) = 0;
};

// CreateSlotMemory allocates memory that slot `slot` accepts, zero-filled:
// a buffer of its size, or an image2d of its format (`placeholder`: 1x1).
// For warm-up runs and for recording image arguments before the first run
// (OpenCL has no NULL image argument).
[[nodiscard]] absl::StatusOr<cl::UniqueMem> CreateSlotMemory(cl_context context, const Slot& slot,
                                                             bool placeholder);

// The memory a recording owns plus the engine's, and how arguments map onto
// them.
class RecordingResources {
 public:
  // Create allocates the recording's intermediate buffers.
  [[nodiscard]] static absl::StatusOr<RecordingResources> Create(
      std::shared_ptr<const EngineState> engine);

  const EngineState& engine() const { return *engine_; }
  const std::shared_ptr<const EngineState>& engine_ptr() const { return engine_; }

  // CreateKernel returns a new kernel object for dispatch `d` with every
  // argument set; slot arguments get `slot_mems[slot]`, or NULL when
  // `slot_mems` is empty.
  [[nodiscard]] absl::StatusOr<cl::UniqueKernel> CreateKernel(
      size_t d, absl::Span<const SlotMemory> slot_mems) const;

  // SetArg sets argument `index` of `kernel` from the dispatch list's `arg`.
  [[nodiscard]] absl::Status SetArg(cl_kernel kernel, cl_uint index, const DispatchArg& arg,
                                    absl::Span<const SlotMemory> slot_mems) const;

  // MemFor returns the memory an argument refers to (a null cl_mem for
  // non-buffers and for buffer slots when `slot_mems` is empty; a 1x1
  // placeholder image for image slots then).
  SlotMemory MemFor(const DispatchArg& arg, absl::Span<const SlotMemory> slot_mems) const;

 private:
  std::shared_ptr<const EngineState> engine_;
  std::vector<cl::UniqueMem> internal_;
  std::vector<cl::UniqueMem> placeholders_;  // per slot; image slots only
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_RECORDING_BACKEND_H_
