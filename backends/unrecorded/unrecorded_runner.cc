#include "backends/unrecorded/unrecorded_runner.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_error.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

class UnrecordedRunner final : public RecordingBackend {
 public:
  explicit UnrecordedRunner(RecordingResources res) : res_(std::move(res)) {}

  absl::Status Init() {
    const DispatchList& list = res_.list();
    for (size_t d = 0; d < list.dispatches.size(); ++d) {
      cl_int err = CL_SUCCESS;
      const size_t k = static_cast<size_t>(list.dispatches[d].kernel);
      const std::string& name = res_.entry_point(k);
      cl::UniqueKernel kernel(clCreateKernel(res_.program(k), name.c_str(), &err));
      RECQ_RETURN_IF_ERROR(cl::CheckCl(err, absl::StrCat("clCreateKernel(", name, ")")));
      kernels_.push_back(std::move(kernel));
    }
    return absl::OkStatus();
  }

  absl::Status Enqueue(cl_command_queue queue, absl::Span<const SlotMemory> slot_mems,
                       absl::Span<const cl_event> wait_list, cl_event* done) override {
    const DispatchList& list = res_.list();
    if (kernels_.empty()) return EnqueueKernels(queue, list, kernels_, wait_list, done);
    // Per slot: some argument may hold an SVM pointer (either kind while
    // this run sets them, in case a set fails).
    svm_held_.resize(slot_mems.size(), false);
    svm_to_mem_.resize(slot_mems.size());
    for (size_t s = 0; s < slot_mems.size(); ++s) {
      svm_to_mem_[s] = svm_held_[s] && !slot_mems[s].is_svm();
      svm_held_[s] = svm_held_[s] || slot_mems[s].is_svm();
    }
    for (size_t d = 0; d < kernels_.size(); ++d) {
      const Dispatch& dispatch = list.dispatches[d];
      const bool fresh =
          std::any_of(dispatch.args.begin(), dispatch.args.end(), [&](const DispatchArg& arg) {
            return arg.kind == DispatchArg::Kind::kSlot && svm_to_mem_[arg.index];
          });
      if (fresh) {
        // SVM back to cl_mem (recording_backend.h): a fresh kernel.
        RECQ_ASSIGN_OR_RETURN(kernels_[d], res_.CreateKernel(d, slot_mems));
      } else {
        for (size_t i = 0; i < dispatch.args.size(); ++i) {
          absl::Status status =
              res_.SetArg(kernels_[d].get(), static_cast<cl_uint>(i), dispatch.args[i], slot_mems);
          if (!status.ok()) {
            return absl::Status(status.code(), absl::StrCat(dispatch.label, " argument ", i, ": ",
                                                            status.message()));
          }
        }
      }
      RECQ_RETURN_IF_ERROR(EnqueueDispatch(queue, dispatch, kernels_[d].get(),
                                           d == 0 ? wait_list : absl::Span<const cl_event>(),
                                           d + 1 == kernels_.size() ? done : nullptr));
    }
    for (size_t s = 0; s < slot_mems.size(); ++s) svm_held_[s] = slot_mems[s].is_svm();
    return absl::OkStatus();
  }

 private:
  RecordingResources res_;
  std::vector<cl::UniqueKernel> kernels_;
  std::vector<bool> svm_held_;    // per slot, as in the replay list
  std::vector<bool> svm_to_mem_;  // per slot: from SVM back to a cl_mem this run
};

}  // namespace

absl::StatusOr<std::unique_ptr<RecordingBackend>> CreateUnrecordedRunner(
    std::shared_ptr<const EngineState> engine) {
  RECQ_ASSIGN_OR_RETURN(RecordingResources res, RecordingResources::Create(std::move(engine)));
  auto runner = std::make_unique<UnrecordedRunner>(std::move(res));
  RECQ_RETURN_IF_ERROR(runner->Init());
  return runner;
}

RECQ_REGISTER_BACKEND(Unrecorded) {
  BackendEntry entry;
  entry.id = Backend::kUnrecorded;
  entry.name = "unrecorded";
  entry.probe = [](const Context&) -> absl::StatusOr<BackendProbe> { return BackendProbe{}; };
  entry.create = CreateUnrecordedRunner;
  entry.auto_priority = 0;  // the baseline a recording improves on, never `auto`'s pick
  return table.Add(std::move(entry));
}

}  // namespace recq::internal
