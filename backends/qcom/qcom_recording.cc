#include "backends/qcom/qcom_recording.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_error.h"
#include "backends/qcom/qcom_entry_points.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

// UniqueRecordingQcom owns one reference of a cl_recording_qcom. The release
// function comes from the entry-point table, which must outlive the owner.
class UniqueRecordingQcom {
 public:
  UniqueRecordingQcom() = default;
  UniqueRecordingQcom(cl_recording_qcom handle, clReleaseRecordingQCOM_fn release)
      : handle_(handle), release_(release) {}
  UniqueRecordingQcom(const UniqueRecordingQcom&) = delete;
  UniqueRecordingQcom& operator=(const UniqueRecordingQcom&) = delete;
  UniqueRecordingQcom(UniqueRecordingQcom&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), release_(other.release_) {}
  UniqueRecordingQcom& operator=(UniqueRecordingQcom&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
      release_ = other.release_;
    }
    return *this;
  }
  ~UniqueRecordingQcom() { reset(); }

  cl_recording_qcom get() const { return handle_; }
  void reset() {
    if (handle_ != nullptr && release_ != nullptr) release_(handle_);
    handle_ = nullptr;
  }

 private:
  cl_recording_qcom handle_ = nullptr;
  clReleaseRecordingQCOM_fn release_ = nullptr;
};

// One native recording: dispatches [begin, end) of the list.
struct QcomPart {
  size_t begin = 0;
  size_t end = 0;
  // Declared before `recording` so the recording is released first.
  std::vector<cl::UniqueKernel> kernels;
  UniqueRecordingQcom recording;
  // Every slot use inside the part; arg_value points into the backend's
  // slot storage, so only the cl_mem values change per replay.
  std::vector<cl_array_arg_qcom> args;
  std::vector<size_t> arg_slots;  // the slot of each entry of `args`
};

class QcomRecording final : public RecordingBackend {
 public:
  QcomRecording(RecordingResources res, QcomEntryPoints entry)
      : res_(std::move(res)), entry_(entry) {}

  absl::Status Init() {
    const DispatchList& list = res_.list();
    const Context& context = res_.context();
    const size_t count = list.dispatches.size();

    cl_uint max_size = 0;
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(clGetDeviceInfo(context.device(), CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE,
                                    sizeof(max_size), &max_size, nullptr),
                    "clGetDeviceInfo(CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE)"));
    // A device that reports 0 states no limit.
    const size_t part_size = max_size == 0 ? std::max<size_t>(count, 1) : max_size;

    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_RECORDABLE_QCOM, 0};
    cl_int err = CL_SUCCESS;
    record_queue_.reset(
        clCreateCommandQueueWithProperties(context.context(), context.device(), props, &err));
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(err, "clCreateCommandQueueWithProperties(CL_QUEUE_RECORDABLE_QCOM)"));

    slot_storage_.assign(list.slots.size(), nullptr);
    for (size_t begin = 0; begin < count; begin += part_size) {
      QcomPart part;
      part.begin = begin;
      part.end = std::min(count, begin + part_size);
      RECQ_RETURN_IF_ERROR(RecordPart(part));
      parts_.push_back(std::move(part));
    }
    // Index every slot use by part, once.
    for (size_t s = 0; s < list.slots.size(); ++s) {
      for (const ArgUse& use : res_.slot_uses(s)) {
        QcomPart& part = parts_[use.dispatch / part_size];
        part.args.push_back({static_cast<cl_uint>(use.dispatch - part.begin), use.arg,
                             sizeof(cl_mem), &slot_storage_[s]});
        part.arg_slots.push_back(s);
      }
    }
    return absl::OkStatus();
  }

  absl::Status Enqueue(cl_command_queue queue, absl::Span<const SlotMemory> slot_mems,
                       absl::Span<const cl_event> wait_list, cl_event* done) override {
    if (parts_.empty()) {
      return cl::CheckCl(
          clEnqueueMarkerWithWaitList(queue, static_cast<cl_uint>(wait_list.size()),
                                      wait_list.empty() ? nullptr : wait_list.data(), done),
          "clEnqueueMarkerWithWaitList");
    }
    // A run with SVM bindings replays through clEnqueueRecordingSVMQCOM,
    // their pointers in its svm_arg_array.
    const auto svm = std::find_if(slot_mems.begin(), slot_mems.end(),
                                  [](const SlotMemory& m) { return m.is_svm(); });
    if (svm != slot_mems.end() && entry_.enqueue_recording_svm == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "binding '", res_.list().slots[svm - slot_mems.begin()].name,
          "' is an SVM pointer, but the platform does not return clEnqueueRecordingSVMQCOM"));
    }
    for (size_t s = 0; s < slot_mems.size(); ++s) slot_storage_[s] = slot_mems[s].mem;
    for (size_t p = 0; p < parts_.size(); ++p) {
      const QcomPart& part = parts_[p];
      const bool first = p == 0;
      const bool last = p + 1 == parts_.size();
      const cl_uint wait_count = first ? static_cast<cl_uint>(wait_list.size()) : 0;
      const cl_event* waits = first && !wait_list.empty() ? wait_list.data() : nullptr;
      cl_int err = CL_SUCCESS;
      if (svm == slot_mems.end()) {
        err =
            entry_.enqueue_recording(queue, part.recording.get(), part.args.size(),
                                     part.args.empty() ? nullptr : part.args.data(), 0, nullptr, 0,
                                     nullptr, 0, nullptr, wait_count, waits, last ? done : nullptr);
      } else {
        mem_args_.clear();
        svm_args_.clear();
        for (size_t i = 0; i < part.args.size(); ++i) {
          const SlotMemory& m = slot_mems[part.arg_slots[i]];
          if (m.is_svm()) {
            svm_args_.push_back(
                {part.args[i].dispatch_index, part.args[i].arg_index, sizeof(void*), m.svm});
          } else {
            mem_args_.push_back(part.args[i]);
          }
        }
        err = entry_.enqueue_recording_svm(
            queue, part.recording.get(), mem_args_.size(),
            mem_args_.empty() ? nullptr : mem_args_.data(), svm_args_.size(),
            svm_args_.empty() ? nullptr : svm_args_.data(), 0, nullptr, 0, nullptr, 0, nullptr, 0,
            nullptr, wait_count, waits, last ? done : nullptr);
      }
      if (err != CL_SUCCESS) {
        return cl::CheckCl(err, absl::StrCat(svm == slot_mems.end() ? "clEnqueueRecordingQCOM"
                                                                    : "clEnqueueRecordingSVMQCOM",
                                             "(recording ", p + 1, " of ", parts_.size(), ")"));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status RecordPart(QcomPart& part) {
    const DispatchList& list = res_.list();
    for (size_t d = part.begin; d < part.end; ++d) {
      RECQ_ASSIGN_OR_RETURN(cl::UniqueKernel kernel, res_.CreateKernel(d, {}));
      part.kernels.push_back(std::move(kernel));
    }
    cl_int err = CL_SUCCESS;
    part.recording = UniqueRecordingQcom(entry_.new_recording(record_queue_.get(), &err),
                                         entry_.release_recording);
    RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clNewRecordingQCOM"));
    absl::Status status;
    for (size_t d = part.begin; d < part.end && status.ok(); ++d) {
      status = EnqueueDispatch(record_queue_.get(), list.dispatches[d],
                               part.kernels[d - part.begin].get(), {}, nullptr);
    }
    // End the recording even after a failed enqueue, so the queue is left
    // idle; the first error wins.
    absl::Status end =
        cl::CheckCl(entry_.end_recording(part.recording.get()), "clEndRecordingQCOM");
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("recording dispatches ", part.begin, "..",
                                                      part.end - 1, ": ", status.message()));
    }
    return end;
  }

  RecordingResources res_;
  QcomEntryPoints entry_;
  cl::UniqueQueue record_queue_;
  std::vector<cl_mem> slot_storage_;  // per slot; sized once, never reallocated
  std::vector<QcomPart> parts_;
  // Scratch of SVM replays: one part's cl_mem and SVM substitutions.
  std::vector<cl_array_arg_qcom> mem_args_;
  std::vector<cl_array_arg_qcom> svm_args_;
};

}  // namespace

absl::Status QcomAvailable(const Context& context) {
  if (!context.device_info().HasExtension(CL_QCOM_RECORDABLE_QUEUES_EXTENSION_NAME)) {
    return absl::UnavailableError(absl::StrCat("device '", context.device_info().name,
                                               "' does not list cl_qcom_recordable_queues"));
  }
  return QcomEntryPoints::Load(context.platform()).status();
}

absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateQcomRecording(
    std::shared_ptr<const EngineState> engine) {
  RECQ_ASSIGN_OR_RETURN(RecordingResources res, RecordingResources::Create(std::move(engine)));
  RECQ_RETURN_IF_ERROR(QcomAvailable(res.context()));
  RECQ_ASSIGN_OR_RETURN(QcomEntryPoints entry, QcomEntryPoints::Load(res.context().platform()));
  auto recording = std::make_unique<QcomRecording>(std::move(res), entry);
  RECQ_RETURN_IF_ERROR(recording->Init());
  return recording;
}

RECQ_REGISTER_BACKEND(Qcom) {
  BackendEntry entry;
  entry.id = Backend::kQcom;
  entry.name = "qcom";
  entry.probe = [](const Context& context) -> absl::StatusOr<BackendProbe> {
    RECQ_RETURN_IF_ERROR(QcomAvailable(context));
    return BackendProbe{"device lists cl_qcom_recordable_queues"};
  };
  entry.create = CreateQcomRecording;
  entry.auto_priority = 3;  // the native recording where a device has it
  return table.Add(std::move(entry));
}

}  // namespace recq::internal
