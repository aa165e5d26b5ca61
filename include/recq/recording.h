// Recording: a compiled engine's dispatch sequence, recorded once and
// replayed many times with per-run memory.
//
// Lifecycle:
//   Recording rec = engine.Record({.backend = Backend::kAuto}).value();
//   for each request:
//     Bindings b; b.Set("input", in_mem); b.Set("prob", out_mem);
//     rec.Enqueue(queue, b, wait_events, &done);   // queue-ordered, no host sync
//   // or rec.Run(b): Enqueue on the context's queue and wait.
//
// A Recording owns its intermediate memory and its backend's native
// recording, and keeps the engine and context it came from alive. Runs of
// one recording are ordered: on the same in-order queue by the queue, and
// across queues by an event recq inserts (no host sync). A Recording may be
// used from several threads (calls are serialized); two recordings of one
// engine run concurrently. A recording retains the last queue it ran on (and
// the last one it validated) until it is destroyed. A failed Enqueue (bad binding, wrong queue)
// enqueues nothing and leaves the recording usable; one that fails in an
// OpenCL call may leave the dispatches enqueued before it running. Destroying
// a recording waits for its runs to complete (it drains the queues it last
// ran on and validated, so other work there is waited for too).
#ifndef RECQ_RECORDING_H_
#define RECQ_RECORDING_H_

#include <CL/cl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "recq/bindings.h"
#include "recq/context.h"

namespace recq {

enum class Backend {
  kAuto,              // qcom if available, else khr_command_buffer if it pays off, else replay
  kReplay,            // emulated replay list: the reference, on any OpenCL 1.2 device
  kKhrCommandBuffer,  // cl_khr_command_buffer
  kQcom,              // cl_qcom_recordable_queues
  kUnrecorded,        // no recording: every argument set and every op enqueued on every run
};

// BackendName returns "auto", "replay", "khr_command_buffer", "qcom" or
// "unrecorded": the name its backend registered ("?" for a value none did).
const char* BackendName(Backend backend);
// ParseBackend is the inverse of BackendName; an unknown name is
// InvalidArgument listing the registered ones.
[[nodiscard]] absl::StatusOr<Backend> ParseBackend(absl::string_view name);

// RegisteredBackends lists the backends built into this library, in enum
// order (kAuto, a choice among them, is not one).
std::vector<Backend> RegisteredBackends();

// BackendAvailable is OK when `backend` can record engines of `context`'s
// device (kAuto always can); otherwise Unavailable with the reason, the one
// Engine::Record gives (for example "device 'X' does not list
// cl_qcom_recordable_queues").
[[nodiscard]] absl::Status BackendAvailable(const Context& context, Backend backend);

struct RecordOptions {
  Backend backend = Backend::kAuto;
};

namespace internal {
class RecordingImpl;
}

class Recording {
 public:
  Recording(Recording&&) noexcept;
  Recording& operator=(Recording&&) noexcept;
  ~Recording();

  // Enqueue runs the recording on `queue` (an in-order queue of the
  // recording's context) with the memory in `bindings`, after the events in
  // `wait_list`. If `done` is non-null it receives an event (owned by the
  // caller) that completes with the run. Errors: InvalidArgument for an
  // unknown, missing, too small or foreign binding or a bad queue;
  // FailedPrecondition for a moved-from recording; Internal/ResourceExhausted
  // for OpenCL failures, naming the call.
  [[nodiscard]] absl::Status Enqueue(cl_command_queue queue, const Bindings& bindings,
                                     absl::Span<const cl_event> wait_list = {},
                                     cl_event* done = nullptr);
  // Run enqueues on the context's queue and waits for completion.
  [[nodiscard]] absl::Status Run(const Bindings& bindings);

  // Run with a deadline: as Run, but waits at most `timeout` for the run to
  // complete. If it has not by then, Run returns DeadlineExceeded and the
  // recording is unusable (every Enqueue or Run returns FailedPrecondition)
  // until that run's work completes on the device, because the run still
  // uses the recording's intermediate memory; the first call after it has
  // completed works as usual. A device that never finishes keeps the
  // recording unusable; destroying it is still safe: its memory and OpenCL
  // objects are then kept (never freed while the device may use them).
  // Any other failed Run returns only once nothing of it is in flight.
  [[nodiscard]] absl::Status Run(const Bindings& bindings, absl::Duration timeout);

  // The backend that records, and why it was chosen.
  Backend backend() const;
  const std::string& backend_reason() const;
  size_t dispatch_count() const;

 private:
  friend class Engine;
  explicit Recording(std::unique_ptr<internal::RecordingImpl> impl);
  std::unique_ptr<internal::RecordingImpl> impl_;
};

}  // namespace recq

#endif  // RECQ_RECORDING_H_
