// The interface a recording backend implements, and all it may use of the
// engine: the one engine header that backends/<name>/ includes (beside
// backends/opencl/ and the public headers).
//
// Lifecycle:
//   1. Each backend folder registers one BackendEntry (name, availability
//      probe, factory, `auto` priority) with a RECQ_REGISTER_BACKEND block;
//      the build collects those blocks into one generated table
//      (cmake/RegistryTable.cmake), so no list of backends is kept by hand.
//   2. Engine::Record looks the requested backend up (engine/backend_registry.h),
//      probes the device, and calls the entry's factory with the engine.
//   3. The factory makes RecordingResources (the recording's intermediate
//      buffers) and records the engine's dispatch list its own way.
//   4. RecordingImpl validates each run's bindings and calls Enqueue with
//      the memory of every slot.
//
// The engine's state stays opaque here (EngineState is only declared):
// backends read the dispatch list, the slot index, the device and the
// kernels through RecordingResources.
#ifndef RECQ_ENGINE_RECORDING_BACKEND_H_
#define RECQ_ENGINE_RECORDING_BACKEND_H_

#include <CL/cl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backends/opencl/cl_handle.h"
#include "engine/dispatch_list.h"
#include "recq/context.h"
#include "recq/recording.h"

namespace recq::internal {

struct EngineState;  // engine/engine_state.h; opaque to backends

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
// them. Holds the engine (and so its context) alive.
class RecordingResources {
 public:
  // Create allocates the recording's intermediate buffers.
  [[nodiscard]] static absl::StatusOr<RecordingResources> Create(
      std::shared_ptr<const EngineState> engine);

  // The engine's context (its cl_context, device, platform, default queue).
  const Context& context() const;
  const DispatchList& list() const;
  // Where slot `slot` is used: each (dispatch, argument) it is bound to.
  absl::Span<const ArgUse> slot_uses(size_t slot) const;
  // The built program of list().kernels[kernel], and the kernel's name in
  // it (KernelRef::name, with a suffix where programs were merged).
  cl_program program(size_t kernel) const;
  const std::string& entry_point(size_t kernel) const;

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

// EnqueueDispatch enqueues one dispatch's kernel with its sizes; the error
// names the dispatch.
[[nodiscard]] absl::Status EnqueueDispatch(cl_command_queue queue, const Dispatch& dispatch,
                                           cl_kernel kernel, absl::Span<const cl_event> wait_list,
                                           cl_event* event);

// EnqueueKernels enqueues `kernels[i]` with dispatch i's sizes, the wait list
// on the first and `done` from the last (a marker when there are none).
// Shared by the backends that replay kernel objects.
[[nodiscard]] absl::Status EnqueueKernels(cl_command_queue queue, const DispatchList& list,
                                          absl::Span<const cl::UniqueKernel> kernels,
                                          absl::Span<const cl_event> wait_list, cl_event* done);

// --- registration ---

// What a backend's probe found on a device that can run it.
struct BackendProbe {
  // What the device offers, for Recording::backend_reason() (empty: nothing
  // worth saying), e.g. "cl_khr_command_buffer 0.9.0, mutable dispatch".
  std::string detail{};
  // Whether Backend::kAuto may choose the backend on this device; when not,
  // `auto_declined` says why (the reason of an `auto` recording quotes it).
  bool auto_eligible = true;
  std::string auto_declined{};
};

// One recording backend as the registry knows it.
struct BackendEntry {
  Backend id = Backend::kAuto;  // its value of the public enum (never kAuto)
  std::string name;             // as BackendName, ParseBackend and --backend spell it
  // Probe tells whether the backend can record on `context`'s device:
  // Unavailable naming what is missing (for example "device 'X' does not
  // list cl_qcom_recordable_queues"), or what it found.
  std::function<absl::StatusOr<BackendProbe>(const Context& context)> probe;
  // Create records `engine`'s dispatch list. Called only after `probe`
  // succeeded on the engine's context.
  std::function<absl::StatusOr<std::unique_ptr<RecordingBackend>>(
      std::shared_ptr<const EngineState> engine)>
      create;
  // Backend::kAuto takes, among the entries whose probe succeeds and allows
  // it, the one of the highest priority; 0 means never.
  int auto_priority = 0;
};

// BackendTable is the registry as registration blocks see it.
class BackendTable {
 public:
  virtual ~BackendTable() = default;
  // Add fails (InvalidArgument) on an entry without a name, probe or
  // factory, with kAuto as its id, or with an id or name already added.
  [[nodiscard]] virtual absl::Status Add(BackendEntry entry) = 0;
};

// RegisterBuiltinBackends calls every RECQ_REGISTER_BACKEND block
// (generated by the build from backends/*/*.cc).
[[nodiscard]] absl::Status RegisterBuiltinBackends(BackendTable& table);

}  // namespace recq::internal

// RECQ_REGISTER_BACKEND(Name) { return table.Add({...}); } registers a
// backend: one block per backend folder, inside namespace recq::internal,
// the macro at the start of its line (the build scans backends/*/*.cc for
// such lines).
#define RECQ_REGISTER_BACKEND(name) \
  absl::Status RecqRegisterBackend_##name(::recq::internal::BackendTable& table)

#endif  // RECQ_ENGINE_RECORDING_BACKEND_H_
