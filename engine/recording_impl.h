// RecordingImpl: binding validation, run ordering and the backend behind a
// public recq::Recording.
#ifndef RECQ_ENGINE_RECORDING_IMPL_H_
#define RECQ_ENGINE_RECORDING_IMPL_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "backends/opencl/cl_handle.h"
#include "engine/engine_state.h"
#include "engine/recording_backend.h"
#include "recq/recording.h"

namespace recq::internal {

// ResolveBindings sets `slot_mems[i]` to the memory `bindings` binds to slot
// i of `engine`, checking names, sizes, contexts, SVM (Bindings::SetSvm) and
// output aliasing; the error names the binding.
[[nodiscard]] absl::Status ResolveBindings(const EngineState& engine, const Bindings& bindings,
                                           std::vector<SlotMemory>& slot_mems);

class RecordingImpl {
 public:
  RecordingImpl(std::shared_ptr<const EngineState> engine, Backend backend, std::string reason,
                std::unique_ptr<RecordingBackend> impl);
  // Waits for the recording's runs before freeing anything they use (see
  // recording.cc).
  ~RecordingImpl();

  [[nodiscard]] absl::Status Enqueue(cl_command_queue queue, const Bindings& bindings,
                                     absl::Span<const cl_event> wait_list, cl_event* done);

  // Run enqueues on the context's queue and waits for the run, at most
  // `timeout` (absl::InfiniteDuration() waits as long as it takes). See
  // Recording::Run for the deadline's contract.
  [[nodiscard]] absl::Status Run(const Bindings& bindings, absl::Duration timeout);

  Backend backend() const { return backend_; }
  const std::string& reason() const { return reason_; }
  const EngineState& engine() const { return *engine_; }

 private:
  absl::Status CheckQueue(cl_command_queue queue);
  // CheckNotOverdue fails while a run that exceeded its deadline is still
  // executing, and forgets it once it has completed. Requires mu_.
  absl::Status CheckNotOverdue();
  // EnqueueLocked enqueues one run. If the backend fails after it may have
  // enqueued part of the run and `drain_on_failure` is set (Run), it waits
  // for the queue before returning. Requires mu_.
  absl::Status EnqueueLocked(cl_command_queue queue, const Bindings& bindings,
                             absl::Span<const cl_event> wait_list, cl_event* done,
                             bool drain_on_failure);

  std::shared_ptr<const EngineState> engine_;
  Backend backend_;
  std::string reason_;
  std::unique_ptr<RecordingBackend> impl_;

  std::mutex mu_;                      // serializes Enqueue
  std::vector<SlotMemory> slot_mems_;  // scratch, per slot
  cl::UniqueQueue checked_queue_;      // the last queue that passed CheckQueue
  cl::UniqueQueue last_queue_;         // the queue of the previous run
  cl::UniqueEvent overdue_;            // the run that exceeded its deadline, until it completes
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_RECORDING_IMPL_H_
