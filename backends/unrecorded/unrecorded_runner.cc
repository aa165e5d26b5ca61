#include "backends/unrecorded/unrecorded_runner.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_error.h"
#include "backends/replay/replay_recording.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

class UnrecordedRunner final : public RecordingBackend {
 public:
  explicit UnrecordedRunner(RecordingResources res) : res_(std::move(res)) {}

  absl::Status Init() {
    const DispatchList& list = res_.engine().list;
    for (size_t d = 0; d < list.dispatches.size(); ++d) {
      cl_int err = CL_SUCCESS;
      const KernelRef& ref = list.kernels[list.dispatches[d].kernel];
      cl::UniqueKernel kernel(clCreateKernel(
          res_.engine().programs[list.dispatches[d].kernel]->get(), ref.name.c_str(), &err));
      RECQ_RETURN_IF_ERROR(cl::CheckCl(err, absl::StrCat("clCreateKernel(", ref.name, ")")));
      kernels_.push_back(std::move(kernel));
    }
    return absl::OkStatus();
  }

  absl::Status Enqueue(cl_command_queue queue, absl::Span<const SlotMemory> slot_mems,
                       absl::Span<const cl_event> wait_list, cl_event* done) override {
    const DispatchList& list = res_.engine().list;
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

absl::StatusOr<std::vector<double>> ProfileDispatches(std::shared_ptr<const EngineState> engine,
                                                      absl::Span<const SlotMemory> slot_mems) {
  RECQ_ASSIGN_OR_RETURN(RecordingResources res, RecordingResources::Create(engine));
  const ContextState& ctx = *engine->context;
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_int err = CL_SUCCESS;
  cl::UniqueQueue queue(
      clCreateCommandQueueWithProperties(ctx.context.get(), ctx.device, props, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateCommandQueueWithProperties(profiling)"));
  const DispatchList& list = engine->list;
  std::vector<cl::UniqueKernel> kernels;
  std::vector<cl::UniqueEvent> events(list.dispatches.size());
  absl::Status enqueued;
  for (size_t d = 0; d < list.dispatches.size() && enqueued.ok(); ++d) {
    absl::StatusOr<cl::UniqueKernel> kernel = res.CreateKernel(d, slot_mems);
    enqueued = kernel.status();
    if (!enqueued.ok()) break;
    enqueued = EnqueueDispatch(queue.get(), list.dispatches[d], kernel->get(), {}, events[d].out());
    kernels.push_back(*std::move(kernel));
  }
  // Waits for what was enqueued before returning, even after a failure: the
  // dispatches use `res`'s memory and the caller's.
  const absl::Status drained = cl::DrainQueue(queue.get());
  RECQ_RETURN_IF_ERROR(enqueued);
  RECQ_RETURN_IF_ERROR(drained);
  std::vector<double> ms;
  for (const cl::UniqueEvent& event : events) {
    cl_ulong start = 0, end = 0;
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(clGetEventProfilingInfo(event.get(), CL_PROFILING_COMMAND_START, sizeof(start),
                                            &start, nullptr),
                    "clGetEventProfilingInfo"));
    RECQ_RETURN_IF_ERROR(cl::CheckCl(
        clGetEventProfilingInfo(event.get(), CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr),
        "clGetEventProfilingInfo"));
    ms.push_back(static_cast<double>(end - start) * 1e-6);
  }
  return ms;
}

}  // namespace recq::internal
