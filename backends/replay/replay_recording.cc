#include "backends/replay/replay_recording.h"

#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_error.h"
#include "recq/status_macros.h"

namespace recq::internal {

absl::Status EnqueueDispatch(cl_command_queue queue, const Dispatch& dispatch, cl_kernel kernel,
                             absl::Span<const cl_event> wait_list, cl_event* event) {
  cl_int err =
      clEnqueueNDRangeKernel(queue, kernel, dispatch.work_dim, nullptr, dispatch.global.data(),
                             dispatch.has_local() ? dispatch.local.data() : nullptr,
                             static_cast<cl_uint>(wait_list.size()),
                             wait_list.empty() ? nullptr : wait_list.data(), event);
  if (err == CL_SUCCESS) return absl::OkStatus();
  absl::Status status = cl::CheckCl(err, "clEnqueueNDRangeKernel");
  return absl::Status(status.code(), absl::StrCat(dispatch.label, ": ", status.message()));
}

absl::Status EnqueueKernels(cl_command_queue queue, const DispatchList& list,
                            absl::Span<const cl::UniqueKernel> kernels,
                            absl::Span<const cl_event> wait_list, cl_event* done) {
  const size_t count = kernels.size();
  if (count == 0) {
    return cl::CheckCl(
        clEnqueueMarkerWithWaitList(queue, static_cast<cl_uint>(wait_list.size()),
                                    wait_list.empty() ? nullptr : wait_list.data(), done),
        "clEnqueueMarkerWithWaitList");
  }
  for (size_t d = 0; d < count; ++d) {
    RECQ_RETURN_IF_ERROR(EnqueueDispatch(queue, list.dispatches[d], kernels[d].get(),
                                         d == 0 ? wait_list : absl::Span<const cl_event>(),
                                         d + 1 == count ? done : nullptr));
  }
  return absl::OkStatus();
}

namespace {

class ReplayRecording final : public RecordingBackend {
 public:
  explicit ReplayRecording(RecordingResources res) : res_(std::move(res)) {}

  absl::Status Init() {
    const DispatchList& list = res_.engine().list;
    kernels_.reserve(list.dispatches.size());
    for (size_t d = 0; d < list.dispatches.size(); ++d) {
      RECQ_ASSIGN_OR_RETURN(cl::UniqueKernel kernel, res_.CreateKernel(d, {}));
      kernels_.push_back(std::move(kernel));
    }
    bound_.assign(list.slots.size(), SlotMemory{});
    svm_held_.assign(list.slots.size(), false);
    return absl::OkStatus();
  }

  absl::Status Enqueue(cl_command_queue queue, absl::Span<const SlotMemory> slot_mems,
                       absl::Span<const cl_event> wait_list, cl_event* done) override {
    const EngineState& engine = res_.engine();
    for (size_t s = 0; s < bound_.size(); ++s) {
      if (slot_mems[s] == bound_[s]) continue;
      const bool svm_to_mem = svm_held_[s] && !slot_mems[s].is_svm();
      bound_[s] = SlotMemory{};                              // stays unknown if a set below fails
      svm_held_[s] = svm_held_[s] || slot_mems[s].is_svm();  // either, likewise
      for (const ArgUse& use : engine.slot_uses[s]) {
        if (svm_to_mem) {
          // SVM back to cl_mem (recording_backend.h): a fresh kernel.
          RECQ_ASSIGN_OR_RETURN(kernels_[use.dispatch], res_.CreateKernel(use.dispatch, slot_mems));
          continue;
        }
        cl_int err = SetSlotArg(kernels_[use.dispatch].get(), use.arg, slot_mems[s]);
        if (err != CL_SUCCESS) {
          return cl::CheckCl(err, absl::StrCat(slot_mems[s].is_svm() ? "clSetKernelArgSVMPointer("
                                                                     : "clSetKernelArg(",
                                               engine.list.dispatches[use.dispatch].label,
                                               ", binding '", engine.list.slots[s].name, "')"));
        }
      }
      bound_[s] = slot_mems[s];
      svm_held_[s] = slot_mems[s].is_svm();
    }
    return EnqueueKernels(queue, engine.list, kernels_, wait_list, done);
  }

 private:
  RecordingResources res_;
  std::vector<cl::UniqueKernel> kernels_;
  std::vector<SlotMemory> bound_;  // per slot: the memory its arguments hold now
  std::vector<bool> svm_held_;     // per slot: some argument may hold an SVM pointer
};

}  // namespace

absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateReplayRecording(
    std::shared_ptr<const EngineState> engine) {
  RECQ_ASSIGN_OR_RETURN(RecordingResources res, RecordingResources::Create(std::move(engine)));
  auto recording = std::make_unique<ReplayRecording>(std::move(res));
  RECQ_RETURN_IF_ERROR(recording->Init());
  return recording;
}

}  // namespace recq::internal
