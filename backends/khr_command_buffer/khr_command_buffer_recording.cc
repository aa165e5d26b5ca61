#include "backends/khr_command_buffer/khr_command_buffer_recording.h"

#include <algorithm>
#include <list>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/khr_command_buffer/khr_entry_points.h"
#include "backends/opencl/cl_error.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

// UniqueCommandBuffer owns one reference of a cl_command_buffer_khr. The
// release function comes from the entry-point table.
class UniqueCommandBuffer {
 public:
  UniqueCommandBuffer() = default;
  UniqueCommandBuffer(cl_command_buffer_khr handle, clReleaseCommandBufferKHR_fn release)
      : handle_(handle), release_(release) {}
  UniqueCommandBuffer(const UniqueCommandBuffer&) = delete;
  UniqueCommandBuffer& operator=(const UniqueCommandBuffer&) = delete;
  UniqueCommandBuffer(UniqueCommandBuffer&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), release_(other.release_) {}
  UniqueCommandBuffer& operator=(UniqueCommandBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
      release_ = other.release_;
    }
    return *this;
  }
  ~UniqueCommandBuffer() { reset(); }

  cl_command_buffer_khr get() const { return handle_; }
  void reset() {
    if (handle_ != nullptr && release_ != nullptr) release_(handle_);
    handle_ = nullptr;
  }

 private:
  cl_command_buffer_khr handle_ = nullptr;
  clReleaseCommandBufferKHR_fn release_ = nullptr;
};

// A finalized command buffer and what it was recorded with.
struct CommandBufferEntry {
  cl::UniqueQueue queue;
  std::vector<SlotMemory> slots;  // the memory its slot arguments hold now
  // Declared before `buffer` so the command buffer is released first.
  std::vector<cl::UniqueKernel> kernels;
  UniqueCommandBuffer buffer;
  std::vector<cl_mutable_command_khr> commands;  // per dispatch; mutable path only
  cl::UniqueEvent last;                          // the last submission
};

// Mutable-dispatch structures as declared by the 0.9.0/0.9.1 headers.
bool MutableLayoutMatches(cl_version version) {
  return CL_VERSION_MAJOR(version) == 0 && CL_VERSION_MINOR(version) == 9 &&
         CL_VERSION_PATCH(version) <= 1;
}

std::string VersionText(cl_version version) {
  return absl::StrCat(CL_VERSION_MAJOR(version), ".", CL_VERSION_MINOR(version), ".",
                      CL_VERSION_PATCH(version));
}

absl::StatusOr<bool> EventPending(cl_event event) {
  if (event == nullptr) return false;
  cl_int status = CL_COMPLETE;
  RECQ_RETURN_IF_ERROR(cl::CheckCl(
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
      "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)"));
  return status > CL_COMPLETE;
}

class KhrCommandBufferRecording final : public RecordingBackend {
 public:
  KhrCommandBufferRecording(RecordingResources res, KhrEntryPoints entry,
                            KhrCommandBufferSupport support)
      : res_(std::move(res)), entry_(entry), support_(std::move(support)) {}

  absl::Status Enqueue(cl_command_queue queue, absl::Span<const SlotMemory> slot_mems,
                       absl::Span<const cl_event> wait_list, cl_event* done) override {
    const bool mutable_args = support_.mutable_arguments;
    auto it = std::find_if(cache_.begin(), cache_.end(), [&](const CommandBufferEntry& e) {
      return e.queue.get() == queue &&
             (mutable_args || std::equal(e.slots.begin(), e.slots.end(), slot_mems.begin()));
    });
    if (it != cache_.end()) {
      cache_.splice(cache_.begin(), cache_, it);
    } else {
      RECQ_ASSIGN_OR_RETURN(CommandBufferEntry entry, Record(queue, slot_mems));
      cache_.push_front(std::move(entry));
      EvictIdle();
    }
    CommandBufferEntry& entry = cache_.front();

    if (!support_.simultaneous_use() || (mutable_args && entry.slots != ToVector(slot_mems))) {
      RECQ_ASSIGN_OR_RETURN(bool pending, EventPending(entry.last.get()));
      if (pending) {
        cl_event last = entry.last.get();
        RECQ_RETURN_IF_ERROR(cl::CheckCl(clWaitForEvents(1, &last),
                                         "clWaitForEvents(previous command-buffer submission)"));
      }
    }
    if (mutable_args) RECQ_RETURN_IF_ERROR(UpdateArguments(entry, slot_mems));

    cl_command_queue queues[] = {queue};
    cl::UniqueEvent event;
    RECQ_RETURN_IF_ERROR(cl::CheckCl(
        entry_.enqueue_command_buffer(1, queues, entry.buffer.get(),
                                      static_cast<cl_uint>(wait_list.size()),
                                      wait_list.empty() ? nullptr : wait_list.data(), event.out()),
        "clEnqueueCommandBufferKHR"));
    if (done == nullptr) {
      entry.last = std::move(event);
      return absl::OkStatus();
    }
    // The caller gets the event; the entry keeps a reference of its own to
    // wait on before a re-submission. If that retain fails, this run waits
    // for its submission now instead, so nothing is left to wait on.
    cl_event submitted = event.get();
    absl::StatusOr<cl::UniqueEvent> kept = cl::UniqueEvent::RetainFrom(submitted);
    if (kept.ok()) {
      entry.last = *std::move(kept);
    } else {
      entry.last.reset();
      RECQ_RETURN_IF_ERROR(cl::CheckCl(clWaitForEvents(1, &submitted),
                                       "clWaitForEvents (after clRetainEvent failed)"));
    }
    *done = event.release();
    return absl::OkStatus();
  }

 private:
  // EvictIdle drops least recently used entries beyond the capacity once
  // their last submission has completed: a driver need not keep a pending
  // command buffer's kernels alive (PoCL 3.1 does not). A pending one is
  // waited for; one that cannot be waited for stays until a later miss.
  void EvictIdle() {
    while (cache_.size() > kKhrCacheCapacity) {
      CommandBufferEntry& victim = cache_.back();
      absl::StatusOr<bool> pending = EventPending(victim.last.get());
      if (!pending.ok()) return;
      if (*pending) {
        cl_event last = victim.last.get();
        if (clWaitForEvents(1, &last) != CL_SUCCESS) return;
      }
      cache_.pop_back();
    }
  }

  static std::vector<SlotMemory> ToVector(absl::Span<const SlotMemory> mems) {
    return std::vector<SlotMemory>(mems.begin(), mems.end());
  }

  absl::StatusOr<CommandBufferEntry> Record(cl_command_queue queue,
                                            absl::Span<const SlotMemory> slot_mems) {
    const DispatchList& list = res_.list();
    cl_command_queue_properties queue_props = 0;
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(queue_props),
                                          &queue_props, nullptr),
                    "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)"));
    const cl_command_queue_properties required = support_.required_queue_properties;
    if ((queue_props & required) != required) {
      return absl::InvalidArgumentError(
          absl::StrCat("khr_command_buffer: the queue has properties 0x", absl::Hex(queue_props),
                       ", the device requires 0x", absl::Hex(required), " for command buffers"));
    }

    CommandBufferEntry entry;
    RECQ_ASSIGN_OR_RETURN(entry.queue, cl::UniqueQueue::RetainFrom(queue));
    entry.slots = ToVector(slot_mems);
    for (size_t d = 0; d < list.dispatches.size(); ++d) {
      RECQ_ASSIGN_OR_RETURN(cl::UniqueKernel kernel, res_.CreateKernel(d, slot_mems));
      entry.kernels.push_back(std::move(kernel));
    }

    cl_command_buffer_flags_khr flags = 0;
    if (support_.simultaneous_use()) flags |= CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR;
    if (support_.mutable_arguments) flags |= CL_COMMAND_BUFFER_MUTABLE_KHR;
    const cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue queues[] = {queue};
    entry.buffer = UniqueCommandBuffer(
        entry_.create_command_buffer(1, queues, flags != 0 ? props : nullptr, &err),
        entry_.release_command_buffer);
    RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateCommandBufferKHR"));

    const cl_ndrange_kernel_command_properties_khr mutable_props[] = {
        CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR, 0};
    cl_sync_point_khr previous = 0;
    for (size_t d = 0; d < list.dispatches.size(); ++d) {
      const Dispatch& dispatch = list.dispatches[d];
      cl_sync_point_khr point = 0;
      cl_mutable_command_khr command = nullptr;
      err = entry_.command_nd_range_kernel(
          entry.buffer.get(), nullptr, support_.mutable_arguments ? mutable_props : nullptr,
          entry.kernels[d].get(), dispatch.work_dim, nullptr, dispatch.global.data(),
          dispatch.has_local() ? dispatch.local.data() : nullptr, d == 0 ? 0 : 1,
          d == 0 ? nullptr : &previous, &point, support_.mutable_arguments ? &command : nullptr);
      if (err != CL_SUCCESS) {
        absl::Status status = cl::CheckCl(err, "clCommandNDRangeKernelKHR");
        return absl::Status(status.code(), absl::StrCat(dispatch.label, ": ", status.message()));
      }
      previous = point;
      entry.commands.push_back(command);
    }
    RECQ_RETURN_IF_ERROR(cl::CheckCl(entry_.finalize_command_buffer(entry.buffer.get()),
                                     "clFinalizeCommandBufferKHR"));
    return entry;
  }

  // UpdateArguments points the slot arguments of `entry` at `slot_mems` with
  // one clUpdateMutableCommandsKHR for the slots that changed. The entry
  // must not be pending.
  absl::Status UpdateArguments(CommandBufferEntry& entry, absl::Span<const SlotMemory> slot_mems) {
    const DispatchList& list = res_.list();
    // Per dispatch, the argument changes; reserved up front so the pointers
    // in the configs stay valid.
    // SVM pointers go in the SVM list, their value itself as arg_value (as
    // clSetKernelArgSVMPointer takes it).
    std::vector<std::vector<cl_mutable_dispatch_arg_khr>> args(list.dispatches.size());
    std::vector<std::vector<cl_mutable_dispatch_arg_khr>> svm_args(list.dispatches.size());
    for (size_t s = 0; s < slot_mems.size(); ++s) {
      if (entry.slots[s] == slot_mems[s]) continue;
      for (const ArgUse& use : res_.slot_uses(s)) {
        if (slot_mems[s].is_svm()) {
          svm_args[use.dispatch].push_back({use.arg, 0, slot_mems[s].svm});
        } else {
          args[use.dispatch].push_back({use.arg, sizeof(cl_mem), &slot_mems[s].mem});
        }
      }
    }
    std::vector<cl_mutable_dispatch_config_khr> configs;
    for (size_t d = 0; d < args.size(); ++d) {
      if (args[d].empty() && svm_args[d].empty()) continue;
      cl_mutable_dispatch_config_khr config = {};
      config.type = CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR;
      config.command = entry.commands[d];
      config.num_args = static_cast<cl_uint>(args[d].size());
      config.arg_list = args[d].empty() ? nullptr : args[d].data();
      config.num_svm_args = static_cast<cl_uint>(svm_args[d].size());
      config.arg_svm_list = svm_args[d].empty() ? nullptr : svm_args[d].data();
      configs.push_back(config);
    }
    if (configs.empty()) return absl::OkStatus();
    cl_mutable_base_config_khr base = {};
    base.type = CL_STRUCTURE_TYPE_MUTABLE_BASE_CONFIG_KHR;
    base.num_mutable_dispatch = static_cast<cl_uint>(configs.size());
    base.mutable_dispatch_list = configs.data();
    // The buffer's arguments are unknown after a failed update: forget them
    // so the next run updates every slot.
    std::fill(entry.slots.begin(), entry.slots.end(), SlotMemory{});
    RECQ_RETURN_IF_ERROR(cl::CheckCl(entry_.update_mutable_commands(entry.buffer.get(), &base),
                                     "clUpdateMutableCommandsKHR"));
    entry.slots = ToVector(slot_mems);
    return absl::OkStatus();
  }

  RecordingResources res_;
  KhrEntryPoints entry_;
  KhrCommandBufferSupport support_;
  std::list<CommandBufferEntry> cache_;  // most recently used first
};

}  // namespace

std::string KhrCommandBufferSupport::VersionString() const { return VersionText(version); }

absl::StatusOr<KhrCommandBufferSupport> QueryKhrCommandBuffer(const Context& context) {
  if (!context.device_info().HasExtension(CL_KHR_COMMAND_BUFFER_EXTENSION_NAME)) {
    return absl::UnavailableError(absl::StrCat("device '", context.device_info().name,
                                               "' does not list cl_khr_command_buffer"));
  }
  const cl_device_id device = context.device();
  size_t bytes = 0;
  cl_int err = clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &bytes);
  std::vector<cl_name_version> extensions(bytes / sizeof(cl_name_version));
  if (err == CL_SUCCESS) {
    err = clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, bytes, extensions.data(),
                          nullptr);
  }
  if (err != CL_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("cl_khr_command_buffer: cannot tell its revision (clGetDeviceInfo("
                     "CL_DEVICE_EXTENSIONS_WITH_VERSION): ",
                     cl::ErrorName(err), ")"));
  }
  KhrCommandBufferSupport support;
  bool found = false;
  cl_version mutable_version = 0;
  bool mutable_listed = false;
  for (const cl_name_version& ext : extensions) {
    const std::string name(ext.name);
    if (name == CL_KHR_COMMAND_BUFFER_EXTENSION_NAME) {
      support.version = ext.version;
      found = true;
    } else if (name == CL_KHR_COMMAND_BUFFER_MUTABLE_DISPATCH_EXTENSION_NAME) {
      mutable_version = ext.version;
      mutable_listed = true;
    }
  }
  if (!found) {
    return absl::UnavailableError(
        "cl_khr_command_buffer: not in CL_DEVICE_EXTENSIONS_WITH_VERSION, cannot tell its "
        "revision");
  }
  if (CL_VERSION_MAJOR(support.version) != 0 || CL_VERSION_MINOR(support.version) != 9) {
    return absl::UnavailableError(absl::StrCat(
        "cl_khr_command_buffer ", VersionText(support.version),
        ": recq is built against the 0.9.x entry points and does not call other revisions"));
  }
  RECQ_ASSIGN_OR_RETURN(KhrEntryPoints entry, KhrEntryPoints::Load(context.platform()));
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetDeviceInfo(device, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
                                  sizeof(support.capabilities), &support.capabilities, nullptr),
                  "clGetDeviceInfo(CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR)"));
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetDeviceInfo(device, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
                                  sizeof(support.required_queue_properties),
                                  &support.required_queue_properties, nullptr),
                  "clGetDeviceInfo(CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR)"));

  if (!mutable_listed) {
    support.mutable_reason = "cl_khr_command_buffer_mutable_dispatch is not listed";
  } else if (!MutableLayoutMatches(mutable_version)) {
    support.mutable_reason =
        absl::StrCat("cl_khr_command_buffer_mutable_dispatch ", VersionText(mutable_version),
                     " has other structures than recq's 0.9.0/0.9.1 headers");
  } else if (entry.update_mutable_commands == nullptr) {
    support.mutable_reason = "clUpdateMutableCommandsKHR does not resolve";
  } else {
    cl_mutable_dispatch_fields_khr fields = 0;
    err = clGetDeviceInfo(device, CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR, sizeof(fields),
                          &fields, nullptr);
    if (err != CL_SUCCESS) {
      support.mutable_reason = absl::StrCat(
          "clGetDeviceInfo(CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR): ", cl::ErrorName(err));
    } else if ((fields & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR) == 0) {
      support.mutable_reason = "mutable dispatch cannot update kernel arguments";
    } else {
      support.mutable_arguments = true;
    }
  }
  return support;
}

absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateKhrCommandBufferRecording(
    std::shared_ptr<const EngineState> engine) {
  RECQ_ASSIGN_OR_RETURN(RecordingResources res, RecordingResources::Create(std::move(engine)));
  RECQ_ASSIGN_OR_RETURN(KhrCommandBufferSupport support, QueryKhrCommandBuffer(res.context()));
  RECQ_ASSIGN_OR_RETURN(KhrEntryPoints entry, KhrEntryPoints::Load(res.context().platform()));
  return std::make_unique<KhrCommandBufferRecording>(std::move(res), entry, std::move(support));
}

RECQ_REGISTER_BACKEND(KhrCommandBuffer) {
  BackendEntry entry;
  entry.id = Backend::kKhrCommandBuffer;
  entry.name = "khr_command_buffer";
  entry.probe = [](const Context& context) -> absl::StatusOr<BackendProbe> {
    RECQ_ASSIGN_OR_RETURN(KhrCommandBufferSupport support, QueryKhrCommandBuffer(context));
    BackendProbe probe;
    if (support.mutable_arguments) {
      probe.detail =
          absl::StrCat("cl_khr_command_buffer ", support.VersionString(), " with mutable dispatch");
    } else {
      probe.detail = absl::StrCat("cl_khr_command_buffer ", support.VersionString(),
                                  ", binding-set cache: ", support.mutable_reason);
      // Without mutable dispatch each binding set is a command buffer of its
      // own; on PoCL 3.1 (0.9.0) that measured no faster than the replay list
      // (bench/replay_overhead_bench.cc, docs/backends.md).
      probe.auto_eligible = false;
      probe.auto_declined =
          absl::StrCat("cl_khr_command_buffer ", support.VersionString(),
                       " lacks mutable dispatch (", support.mutable_reason,
                       ") and its binding-set cache measured no faster than the replay list");
    }
    return probe;
  };
  entry.create = CreateKhrCommandBufferRecording;
  entry.auto_priority = 2;  // below qcom, above the replay list
  return table.Add(std::move(entry));
}

}  // namespace recq::internal
