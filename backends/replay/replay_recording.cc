#include "backends/replay/replay_recording.h"

#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_error.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

class ReplayRecording final : public RecordingBackend {
 public:
  explicit ReplayRecording(RecordingResources res) : res_(std::move(res)) {}

  absl::Status Init() {
    const DispatchList& list = res_.list();
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
    const DispatchList& list = res_.list();
    for (size_t s = 0; s < bound_.size(); ++s) {
      if (slot_mems[s] == bound_[s]) continue;
      const bool svm_to_mem = svm_held_[s] && !slot_mems[s].is_svm();
      bound_[s] = SlotMemory{};                              // stays unknown if a set below fails
      svm_held_[s] = svm_held_[s] || slot_mems[s].is_svm();  // either, likewise
      for (const ArgUse& use : res_.slot_uses(s)) {
        if (svm_to_mem) {
          // SVM back to cl_mem (recording_backend.h): a fresh kernel.
          RECQ_ASSIGN_OR_RETURN(kernels_[use.dispatch], res_.CreateKernel(use.dispatch, slot_mems));
          continue;
        }
        cl_int err = SetSlotArg(kernels_[use.dispatch].get(), use.arg, slot_mems[s]);
        if (err != CL_SUCCESS) {
          return cl::CheckCl(err, absl::StrCat(slot_mems[s].is_svm() ? "clSetKernelArgSVMPointer("
                                                                     : "clSetKernelArg(",
                                               list.dispatches[use.dispatch].label, ", binding '",
                                               list.slots[s].name, "')"));
        }
      }
      bound_[s] = slot_mems[s];
      svm_held_[s] = slot_mems[s].is_svm();
    }
    return EnqueueKernels(queue, list, kernels_, wait_list, done);
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

RECQ_REGISTER_BACKEND(Replay) {
  BackendEntry entry;
  entry.id = Backend::kReplay;
  entry.name = "replay";
  entry.probe = [](const Context&) -> absl::StatusOr<BackendProbe> { return BackendProbe{}; };
  entry.create = CreateReplayRecording;
  entry.auto_priority = 1;  // runs everywhere: what `auto` falls back to
  return table.Add(std::move(entry));
}

}  // namespace recq::internal
