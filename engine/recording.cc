#include "recq/recording.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/opencl/cl_error.h"
#include "engine/backend_registry.h"
#include "engine/image_binding.h"
#include "engine/recording_impl.h"
#include "recq/log.h"
#include "recq/status_macros.h"

namespace recq {

const char* BackendName(Backend backend) {
  if (backend == Backend::kAuto) return "auto";
  const internal::BackendEntry* entry = internal::FindBackend(backend);
  return entry != nullptr ? entry->name.c_str() : "?";
}

absl::StatusOr<Backend> ParseBackend(absl::string_view name) {
  if (name == "auto") return Backend::kAuto;
  if (const internal::BackendEntry* entry = internal::FindBackendByName(name)) return entry->id;
  std::vector<std::string> names = {"auto"};
  for (const internal::BackendEntry& entry : internal::BackendEntries()) {
    names.push_back(entry.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", name, "'; expected ", absl::StrJoin(names, ", ")));
}

std::vector<Backend> RegisteredBackends() {
  std::vector<Backend> backends;
  for (const internal::BackendEntry& entry : internal::BackendEntries()) {
    backends.push_back(entry.id);
  }
  return backends;
}

absl::Status BackendAvailable(const Context& context, Backend backend) {
  if (backend == Backend::kAuto) return absl::OkStatus();
  const internal::BackendEntry* entry = internal::FindBackend(backend);
  if (entry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no backend is registered for value ", static_cast<int>(backend)));
  }
  return entry->probe(context).status();
}

namespace internal {

RecordingImpl::RecordingImpl(std::shared_ptr<const EngineState> engine, Backend backend,
                             std::string reason, std::unique_ptr<RecordingBackend> impl)
    : engine_(std::move(engine)),
      backend_(backend),
      reason_(std::move(reason)),
      impl_(std::move(impl)),
      slot_mems_(engine_->list.slots.size()) {}

namespace {

// CheckSvmBinding checks an SVM binding of slot `slot` (Bindings::SetSvm)
// and returns the pointer the kernels get.
absl::StatusOr<void*> CheckSvmBinding(const EngineState& engine, const Slot& slot,
                                      const Bindings::Entry& entry) {
  const DeviceInfo& device = engine.context->info;
  const std::string what = absl::StrCat("binding '", slot.name, "' is an SVM pointer");
  const std::string ptr = absl::StrCat("0x", absl::Hex(reinterpret_cast<uintptr_t>(entry.svm)));
  if ((device.svm_capabilities & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ", but device '", device.name,
                     "' has no shared virtual memory (CL_DEVICE_SVM_CAPABILITIES is 0); bind a "
                     "cl_mem instead"));
  }
  if (slot.image) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, "; the engine binds an image2d here (", slot.desc.ToString(), ")"));
  }
  if (entry.svm == nullptr) return absl::InvalidArgumentError(absl::StrCat(what, " that is null"));
  const size_t need = slot.desc.ByteSize();
  if (entry.svm_bytes < need) {
    return absl::InvalidArgumentError(absl::StrCat(what, " of ", entry.svm_bytes,
                                                   " bytes, the tensor ", slot.desc.ToString(),
                                                   " needs ", need));
  }
  const size_t align = std::max<size_t>(device.mem_base_addr_align_bytes, 1);
  if (entry.svm_offset % align != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " at offset ", entry.svm_offset,
                                                   ", not a multiple of the device's ", align,
                                                   "-byte CL_DEVICE_MEM_BASE_ADDR_ALIGN"));
  }
  if (reinterpret_cast<uintptr_t>(entry.svm) % align != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", ptr, " that is not ", align,
                     "-byte aligned; pass the pointer clSVMAlloc returned and the position in it "
                     "as the offset"));
  }
  // OpenCL has no query for an SVM pointer, but a buffer made with
  // CL_MEM_USE_HOST_PTR on one of the context's SVM allocations, no larger
  // than it, uses that allocation and says so (CL_MEM_USES_SVM_POINTER).
  size_t end = 0;
  if (__builtin_add_overflow(entry.svm_offset, entry.svm_bytes, &end)) end = SIZE_MAX;
  cl_int err = CL_SUCCESS;
  cl::UniqueMem probe(
      clCreateBuffer(engine.context->context.get(), CL_MEM_USE_HOST_PTR, end, entry.svm, &err));
  cl_bool uses_svm = CL_FALSE;
  if (err == CL_SUCCESS) {
    err = clGetMemObjectInfo(probe.get(), CL_MEM_USES_SVM_POINTER, sizeof(uses_svm), &uses_svm,
                             nullptr);
  }
  if (err != CL_SUCCESS || uses_svm != CL_TRUE) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " ", ptr, " that is not an SVM allocation of the engine's context holding ", end,
        " bytes (offset ", entry.svm_offset, " + ", entry.svm_bytes,
        "; pass the pointer clSVMAlloc returned for this context)",
        err != CL_SUCCESS ? absl::StrCat(": clCreateBuffer(CL_MEM_USE_HOST_PTR): ",
                                         cl::ErrorName(err) ? cl::ErrorName(err) : "?")
                          : ""));
  }
  return static_cast<char*>(entry.svm) + entry.svm_offset;
}

}  // namespace

absl::Status ResolveBindings(const EngineState& engine, const Bindings& bindings,
                             std::vector<SlotMemory>& slot_mems) {
  const std::vector<Slot>& slots = engine.list.slots;
  slot_mems.assign(slots.size(), {});
  std::vector<const Bindings::Entry*> entries(slots.size(), nullptr);
  for (const Bindings::Entry& entry : bindings.entries()) {
    size_t s = 0;
    while (s < slots.size() && slots[s].name != entry.name) ++s;
    if (s == slots.size()) {
      std::vector<std::string> names;
      for (const Slot& slot : slots) names.push_back(absl::StrCat("'", slot.name, "'"));
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown binding '", entry.name, "'; the engine binds ", absl::StrJoin(names, ", ")));
    }
    entries[s] = &entry;
  }
  const cl_context context = engine.context->context.get();
  for (size_t s = 0; s < slots.size(); ++s) {
    const Slot& slot = slots[s];
    if (entries[s] == nullptr || (!entries[s]->is_svm && entries[s]->mem == nullptr)) {
      return absl::InvalidArgumentError(
          absl::StrCat("missing binding '", slot.name, "' (", slot.is_input ? "input" : "output",
                       ", ", slot.desc.ToString(), ", ", slot.desc.ByteSize(), " bytes)"));
    }
    if (entries[s]->is_svm) {
      RECQ_ASSIGN_OR_RETURN(slot_mems[s].svm, CheckSvmBinding(engine, slot, *entries[s]));
      continue;
    }
    cl_mem mem = entries[s]->mem;
    slot_mems[s].mem = mem;
    size_t size = 0;
    cl_context mem_context = nullptr;
    cl_mem_object_type type = 0;
    cl_int err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
    if (err == CL_SUCCESS) {
      err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(mem_context), &mem_context, nullptr);
    }
    if (err == CL_SUCCESS) err = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof(type), &type, nullptr);
    if (err != CL_SUCCESS) {
      return absl::InvalidArgumentError(
          absl::StrCat("binding '", slot.name, "' is not a valid cl_mem (clGetMemObjectInfo: ",
                       cl::ErrorName(err) ? cl::ErrorName(err) : "?", ")"));
    }
    if (mem_context != context) {
      return absl::InvalidArgumentError(absl::StrCat(
          "binding '", slot.name, "' belongs to another OpenCL context than the engine's"));
    }
    if (slot.image) {
      RECQ_RETURN_IF_ERROR(CheckImageBinding(slot, mem, type));
      continue;
    }
    if (type != CL_MEM_OBJECT_BUFFER) {
      return absl::InvalidArgumentError(
          absl::StrCat("binding '", slot.name, "' is ", MemObjectTypeName(type),
                       "; the engine binds a buffer here (", slot.desc.ToString(), ")"));
    }
    if (size < slot.desc.ByteSize()) {
      return absl::InvalidArgumentError(absl::StrCat("binding '", slot.name, "' has ", size,
                                                     " bytes, the tensor ", slot.desc.ToString(),
                                                     " needs ", slot.desc.ByteSize()));
    }
  }
  // An output has memory of its own: no other binding is the same cl_mem or
  // shares a byte of SVM with it.
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].is_input) continue;
    const SlotMemory& mine = slot_mems[s];
    const uintptr_t begin = reinterpret_cast<uintptr_t>(mine.svm);
    const uintptr_t end = begin + slots[s].desc.ByteSize();
    for (size_t other = 0; other < slots.size(); ++other) {
      if (other == s) continue;
      const SlotMemory& theirs = slot_mems[other];
      bool shared = false;
      if (mine.is_svm() && theirs.is_svm()) {
        const uintptr_t b = reinterpret_cast<uintptr_t>(theirs.svm);
        shared = b < end && begin < b + slots[other].desc.ByteSize();
      } else if (!mine.is_svm()) {
        shared = theirs.mem == mine.mem;
      }
      if (shared) {
        return absl::InvalidArgumentError(
            absl::StrCat("binding '", slots[s].name,
                         mine.is_svm() ? "' shares SVM bytes with binding '"
                                       : "' is the same cl_mem as binding '",
                         slots[other].name, "'; an output must have memory of its own"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status RecordingImpl::CheckQueue(cl_command_queue queue) {
  if (queue == nullptr) return absl::InvalidArgumentError("Enqueue: the queue is null");
  if (queue == checked_queue_.get()) return absl::OkStatus();
  cl_context queue_context = nullptr;
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(queue_context),
                                        &queue_context, nullptr),
                  "Enqueue: clGetCommandQueueInfo(CL_QUEUE_CONTEXT)"));
  if (queue_context != engine_->context->context.get()) {
    return absl::InvalidArgumentError(
        "Enqueue: the queue belongs to another OpenCL context than the engine's");
  }
  cl_command_queue_properties props = 0;
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(props), &props, nullptr),
                  "Enqueue: clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)"));
  if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    return absl::InvalidArgumentError(
        "Enqueue: the queue is out-of-order; recq needs an in-order queue");
  }
  RECQ_ASSIGN_OR_RETURN(checked_queue_, cl::UniqueQueue::RetainFrom(queue));
  return absl::OkStatus();
}

// EventStatus returns the execution status of `event` (CL_COMPLETE, a
// negative error, or a pending state).
absl::StatusOr<cl_int> EventStatus(cl_event event) {
  cl_int status = CL_COMPLETE;
  RECQ_RETURN_IF_ERROR(cl::CheckCl(
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
      "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)"));
  return status;
}

// WaitWithDeadline waits until `event` has completed (or failed) or
// `timeout` has passed; returns whether it completed. It polls, backing off
// from 20 us to 1 ms: clWaitForEvents has no timeout.
absl::StatusOr<bool> WaitWithDeadline(cl_event event, absl::Duration timeout) {
  if (timeout == absl::InfiniteDuration()) {
    RECQ_RETURN_IF_ERROR(cl::CheckCl(clWaitForEvents(1, &event), "clWaitForEvents"));
    return true;
  }
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration pause = absl::Microseconds(20);
  while (true) {
    RECQ_ASSIGN_OR_RETURN(cl_int status, EventStatus(event));
    if (status <= CL_COMPLETE) return true;
    const absl::Time now = absl::Now();
    if (now >= deadline) return false;
    absl::SleepFor(std::min({pause, deadline - now}));
    pause = std::min(pause * 2, absl::Milliseconds(1));
  }
}

RecordingImpl::~RecordingImpl() {
  // Runs may still be executing (Enqueue does not wait, and a failed one can
  // leave the dispatches before the failure running): wait for them before
  // the backend frees what they use. Drivers need not keep a pending command
  // buffer's objects alive (PoCL 3.1 does not). The run of a failed Enqueue is
  // on the last validated queue; every earlier run completes before the last
  // successful one, on the last queue.
  bool pending = false;
  if (overdue_) {
    absl::StatusOr<cl_int> status = EventStatus(overdue_.get());
    pending = !status.ok() || *status > CL_COMPLETE;
  }
  for (const cl::UniqueQueue* queue : {&checked_queue_, &last_queue_}) {
    if (!pending && *queue) pending = !cl::DrainQueue(queue->get()).ok();
  }
  if (!pending) return;
  // A run that exceeded its deadline may never complete, and a queue that
  // cannot be drained may still run: keep everything they may use (the
  // backend, the engine, the context) rather than wait forever or free
  // memory under the device.
  Log(LogLevel::kWarning,
      "a recording destroyed while a run of it may still be executing keeps its memory and "
      "OpenCL objects allocated");
  static std::mutex* kept_mu = new std::mutex;
  static auto* kept = new std::vector<
      std::pair<std::unique_ptr<RecordingBackend>, std::shared_ptr<const EngineState>>>;
  {
    std::lock_guard<std::mutex> lock(*kept_mu);
    kept->emplace_back(std::move(impl_), engine_);
  }
  checked_queue_.release();
  last_queue_.release();
  overdue_.release();
}

absl::Status RecordingImpl::CheckNotOverdue() {
  if (!overdue_) return absl::OkStatus();
  RECQ_ASSIGN_OR_RETURN(cl_int status, EventStatus(overdue_.get()));
  if (status > CL_COMPLETE) {
    return absl::FailedPreconditionError(
        "the recording is unusable: a run that exceeded its deadline is still executing on the "
        "device; retry once it has completed");
  }
  overdue_.reset();
  return absl::OkStatus();
}

absl::Status RecordingImpl::Enqueue(cl_command_queue queue, const Bindings& bindings,
                                    absl::Span<const cl_event> wait_list, cl_event* done) {
  std::lock_guard<std::mutex> lock(mu_);
  return EnqueueLocked(queue, bindings, wait_list, done, /*drain_on_failure=*/false);
}

absl::Status RecordingImpl::Run(const Bindings& bindings, absl::Duration timeout) {
  cl::UniqueEvent done;
  const cl_command_queue queue = engine_->context->queue.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    RECQ_RETURN_IF_ERROR(EnqueueLocked(queue, bindings, {}, done.out(), /*drain_on_failure=*/true));
  }
  // Other threads may enqueue while this one waits.
  absl::StatusOr<bool> waited = WaitWithDeadline(done.get(), timeout);
  if (!waited.ok()) {
    // The wait failed, not necessarily the run, which may still be running
    // on the caller's memory and the recording's: drain the queue before
    // returning. Where even that fails, the recording is unusable until the
    // run completes, as after a deadline.
    if (cl::DrainQueue(queue).ok()) return waited.status();
    std::lock_guard<std::mutex> lock(mu_);
    overdue_ = std::move(done);
    return absl::Status(waited.status().code(),
                        absl::StrCat(waited.status().message(),
                                     "; the run may still be executing: the recording is unusable "
                                     "until it completes"));
  }
  const bool completed = *waited;
  if (!completed) {
    std::lock_guard<std::mutex> lock(mu_);
    overdue_ = std::move(done);
    return absl::DeadlineExceededError(
        absl::StrCat("Run: the run did not complete within ", absl::FormatDuration(timeout),
                     "; the recording is unusable until it completes on the device"));
  }
  RECQ_ASSIGN_OR_RETURN(cl_int status, EventStatus(done.get()));
  if (status < 0) return cl::CheckCl(status, "run (event status)");
  return absl::OkStatus();
}

absl::Status RecordingImpl::EnqueueLocked(cl_command_queue queue, const Bindings& bindings,
                                          absl::Span<const cl_event> wait_list, cl_event* done,
                                          bool drain_on_failure) {
  RECQ_RETURN_IF_ERROR(CheckNotOverdue());
  RECQ_RETURN_IF_ERROR(CheckQueue(queue));
  RECQ_RETURN_IF_ERROR(ResolveBindings(*engine_, bindings, slot_mems_));
  // The recording's intermediates are shared by its runs: a run on another
  // queue than the previous one waits for everything before it there.
  cl::UniqueEvent previous;
  std::vector<cl_event> waits;
  if (last_queue_ && last_queue_.get() != queue) {
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(clEnqueueMarkerWithWaitList(last_queue_.get(), 0, nullptr, previous.out()),
                    "clEnqueueMarkerWithWaitList"));
    RECQ_RETURN_IF_ERROR(cl::CheckCl(clFlush(last_queue_.get()), "clFlush"));
    waits.assign(wait_list.begin(), wait_list.end());
    waits.push_back(previous.get());
    wait_list = waits;
  }
  // Retained before the run is enqueued, so that a failed retain enqueues
  // nothing.
  cl::UniqueQueue next_queue;
  if (last_queue_.get() != queue) {
    RECQ_ASSIGN_OR_RETURN(next_queue, cl::UniqueQueue::RetainFrom(queue));
  }
  if (absl::Status status = impl_->Enqueue(queue, slot_mems_, wait_list, done); !status.ok()) {
    // Dispatches enqueued before the failure may be running on the caller's
    // memory. If that fails too, the destructor drains.
    if (drain_on_failure) cl::DrainQueue(queue).IgnoreError();
    return status;
  }
  if (next_queue) last_queue_ = std::move(next_queue);
  return absl::OkStatus();
}

}  // namespace internal

Recording::Recording(std::unique_ptr<internal::RecordingImpl> impl) : impl_(std::move(impl)) {}
Recording::Recording(Recording&&) noexcept = default;
Recording& Recording::operator=(Recording&&) noexcept = default;
Recording::~Recording() = default;

absl::Status Recording::Enqueue(cl_command_queue queue, const Bindings& bindings,
                                absl::Span<const cl_event> wait_list, cl_event* done) {
  if (!impl_) return absl::FailedPreconditionError("Enqueue on a moved-from Recording");
  return impl_->Enqueue(queue, bindings, wait_list, done);
}

absl::Status Recording::Run(const Bindings& bindings) {
  return Run(bindings, absl::InfiniteDuration());
}

absl::Status Recording::Run(const Bindings& bindings, absl::Duration timeout) {
  if (!impl_) return absl::FailedPreconditionError("Run on a moved-from Recording");
  return impl_->Run(bindings, timeout);
}

Backend Recording::backend() const { return impl_ ? impl_->backend() : Backend::kAuto; }

const std::string& Recording::backend_reason() const {
  static const std::string kNone = "moved-from recording";
  return impl_ ? impl_->reason() : kNone;
}

size_t Recording::dispatch_count() const {
  return impl_ ? impl_->engine().list.dispatches.size() : 0;
}

}  // namespace recq
