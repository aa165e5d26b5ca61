// Recording: the layer's implementation of a cl_recording_qcom.
//
// Lifecycle: the layer creates a Recording when clNewRecordingQCOM succeeds;
// every clEnqueueNDRangeKernel on the recording queue becomes one
// RecordedDispatch (a private snapshot kernel holding the arguments set at
// that moment); clEndRecordingQCOM calls End(); from then on Replay() enqueues
// the dispatches in order on any queue of the same context, applying
// per-replay substitutions and restoring the snapshot afterwards, so nothing
// a replay substitutes is visible to the next one.

#ifndef RECQ_TOOLS_QCOM_LAYER_RECORDING_H_
#define RECQ_TOOLS_QCOM_LAYER_RECORDING_H_

#include <CL/cl_icd.h>

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include "qcom/cl_qcom_recordable_queues.h"

namespace recq::qcom_layer {

// A kernel argument as the application last set it.
struct KernelArg {
  enum class Kind { kUnset, kBytes, kSvmPointer };
  Kind kind = Kind::kUnset;
  size_t size = 0;
  // For kBytes: false when set with a NULL arg_value (local memory, or a
  // NULL cl_mem).
  bool has_value = false;
  std::vector<unsigned char> bytes;
  const void* svm_pointer = nullptr;

  // Apply sets this argument as argument `index` of `kernel` through `target`.
  // Returns CL_INVALID_KERNEL_ARGS for kUnset.
  cl_int Apply(const cl_icd_dispatch& target, cl_kernel kernel, cl_uint index) const;
};

// The clSetKernelExecInfo values the application set on a kernel, by
// parameter name.
using ExecInfo = std::map<cl_uint, std::vector<unsigned char>>;

// IsKnownExecInfo tells whether the layer can substitute and restore exec
// info `name`: CL_KERNEL_EXEC_INFO_SVM_PTRS and
// CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM, whose unset values (no
// pointers, CL_FALSE) it knows.
bool IsKnownExecInfo(cl_uint name);

// ApplyExecInfo sets exec info `name` of `kernel` to `value`, or to its
// unset value when `value` is null.
cl_int ApplyExecInfo(const cl_icd_dispatch& target, cl_kernel kernel, cl_uint name,
                     const std::vector<unsigned char>* value);

// Owns one reference to a cl_kernel, released through the platform below the
// layer. Move-only.
class OwnedKernel {
 public:
  OwnedKernel() = default;
  OwnedKernel(const cl_icd_dispatch* target, cl_kernel kernel) : target_(target), kernel_(kernel) {}
  OwnedKernel(OwnedKernel&& other) noexcept;
  OwnedKernel& operator=(OwnedKernel&& other) noexcept;
  OwnedKernel(const OwnedKernel&) = delete;
  OwnedKernel& operator=(const OwnedKernel&) = delete;
  ~OwnedKernel();

  cl_kernel get() const { return kernel_; }

 private:
  const cl_icd_dispatch* target_ = nullptr;  // not owned; lives for the process
  cl_kernel kernel_ = nullptr;
};

// One recorded clEnqueueNDRangeKernel.
struct RecordedDispatch {
  OwnedKernel kernel;           // snapshot; holds `args` between replays
  std::vector<KernelArg> args;  // the recorded values, one per kernel argument
  ExecInfo exec_info;           // the recorded clSetKernelExecInfo values
  cl_uint work_dim = 1;
  size_t offset[3] = {0, 0, 0};  // all zero when recorded with a NULL offset
  size_t global[3] = {1, 1, 1};
  bool has_local = false;
  size_t local[3] = {1, 1, 1};
};

// The substitution arrays of one clEnqueueRecordingQCOM or
// clEnqueueRecordingSVMQCOM call, unvalidated.
struct ReplaySubstitutions {
  size_t num_args = 0;
  const cl_array_arg_qcom* args = nullptr;
  // SVM variant only: SVM pointers (arg_value is the pointer, as
  // clSetKernelArgSVMPointer takes it; arg_size is not read) and exec info.
  size_t num_svm_args = 0;
  const cl_array_arg_qcom* svm_args = nullptr;
  size_t num_exec_infos = 0;
  const cl_array_kernel_exec_info_qcom* exec_infos = nullptr;
  size_t num_offsets = 0;
  const cl_offset_qcom* offsets = nullptr;
  size_t num_global = 0;
  const cl_workgroup_qcom* global = nullptr;
  size_t num_local = 0;
  const cl_workgroup_qcom* local = nullptr;
};

// Thread-safety: AddDispatch and End must be serialized by the caller (the
// layer calls both under its state lock). Replay may run concurrently from
// several threads, also with itself; replays of one Recording are serialized
// internally (set arguments, enqueue, restore).
class Recording {
 public:
  // Retains `context`; `target` is the dispatch table of the platform below
  // the layer and must outlive the Recording.
  Recording(const cl_icd_dispatch* target, cl_context context);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  cl_context context() const { return context_; }
  bool ended() const { return ended_.load(std::memory_order_acquire); }
  // Number of recorded dispatches; call only under the layer's state lock or
  // after End().
  size_t size() const { return dispatches_.size(); }

  // AddDispatch appends a dispatch while recording; CL_INVALID_OPERATION once
  // ended.
  cl_int AddDispatch(RecordedDispatch dispatch);

  // End makes the recording replayable; CL_INVALID_OPERATION if already ended.
  cl_int End();

  // Replay enqueues every dispatch on `queue` with `subs` applied for this
  // replay only. The wait list gates the first dispatch; *event (if non-null)
  // completes with the last one. An empty recording enqueues a marker.
  // SVM arguments are set with clSetKernelArgSVMPointer and exec info with
  // clSetKernelExecInfo, after the plain arguments; all are restored after
  // the replay (exec info to the recorded value, or to its unset value).
  // Returns CL_INVALID_VALUE for a recording not ended, a NULL array with a
  // nonzero count, an out-of-range dispatch or argument index, a NULL
  // global size, an exec-info name other than the two SVM ones or one with a
  // NULL value; CL_INVALID_CONTEXT for a queue of another context; an error
  // of clSetKernelArg, clSetKernelArgSVMPointer or clSetKernelExecInfo as is
  // (then nothing was enqueued); an error of the enqueue as is (earlier
  // dispatches of this replay may have been enqueued).
  cl_int Replay(cl_command_queue queue, const ReplaySubstitutions& subs, cl_uint num_events,
                const cl_event* wait_list, cl_event* event);

 private:
  cl_int Validate(const ReplaySubstitutions& subs) const;

  const cl_icd_dispatch* target_;  // not owned
  cl_context context_;             // retained
  std::atomic<bool> ended_{false};
  // Written only before ended_ becomes true, read only after.
  std::vector<RecordedDispatch> dispatches_;
  std::mutex replay_mu_;  // serializes replays
};

}  // namespace recq::qcom_layer

#endif  // RECQ_TOOLS_QCOM_LAYER_RECORDING_H_
