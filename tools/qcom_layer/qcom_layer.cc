// An OpenCL layer (loaded by the ICD loader through OPENCL_LAYERS) that
// emulates Qualcomm's cl_qcom_recordable_queues on any platform, so recq's
// qcom backend runs where no Adreno device is. See README.md for what this
// does and does not prove.
//
// How ocl-icd 2.3.1 drives it (observed): the loader calls clGetLayerInfo,
// then clInitLayer once with a table of the loader's own trampolines (which
// dispatch on the object's ICD table) and routes every API call, including
// both clGetExtensionFunctionAddress variants, through the table returned
// here. Objects are passed unchanged: the cl_command_queue the application
// holds is the platform's own handle, so the layer keys its state on it.
//
// Process-global state: a layer is global by construction (plain C entry
// points, one table per process), so all state lives in one LayerState that
// is never destroyed (calls that race process exit stay safe). Lock order:
// LayerState::mu, then a Recording's replay lock; FaultInjector's lock is a
// leaf. No entry point throws or aborts; allocation failure becomes
// CL_OUT_OF_HOST_MEMORY.

#include <CL/cl_layer.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fault_injection.h"
#include "qcom/cl_qcom_recordable_queues.h"
#include "recording.h"

#define RECQ_LAYER_EXPORT __attribute__((visibility("default")))

namespace recq::qcom_layer {
namespace {

constexpr std::string_view kExtensionName = CL_QCOM_RECORDABLE_QUEUES_EXTENSION_NAME;
constexpr cl_uint kDefaultMaxSize = 64;

struct QueueState {
  uint64_t user_refs = 1;
  std::shared_ptr<Recording> active;  // non-null while the queue records
};

struct KernelState {
  uint64_t user_refs = 1;
  std::vector<KernelArg> args;  // indexed by argument index
  ExecInfo exec_info;           // clSetKernelExecInfo values
};

struct RecordingEntry {
  uint64_t refs = 1;
  std::shared_ptr<Recording> recording;
};

struct LayerState {
  cl_icd_dispatch target{};    // the table below this layer (copied)
  cl_icd_dispatch dispatch{};  // the table handed to the loader
  cl_uint max_size = kDefaultMaxSize;
  bool use_clone = true;  // false: snapshot by clCreateKernel + re-setting args
  bool svm_entry = true;  // false: no clEnqueueRecordingSVMQCOM (RECQ_QCOM_LAYER_NO_SVM)
  FaultInjector faults;

  std::mutex mu;
  // Recordable queues only; the user reference count is the layer's own
  // (CL_QUEUE_REFERENCE_COUNT includes the platform's internal references).
  std::unordered_map<cl_command_queue, QueueState> queues;
  std::unordered_map<cl_kernel, KernelState> kernels;
  std::unordered_map<cl_recording_qcom, RecordingEntry> recordings;
  // Number of queues with an active recording; lets every enqueue skip `mu`
  // while nothing records.
  std::atomic<int> recording_queues{0};
};

LayerState& State() {
  static auto* const state = new LayerState;
  return *state;
}

const cl_icd_dispatch& Target() { return State().target; }

void SetError(cl_int* errcode_ret, cl_int err) {
  if (errcode_ret != nullptr) *errcode_ret = err;
}

// Runs `body` (returning cl_int) and maps any exception to
// CL_OUT_OF_HOST_MEMORY, so nothing propagates into C callers.
template <typename Body>
cl_int NoThrow(Body&& body) {
  try {
    return body();
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
}

// As NoThrow for entry points that return an object and report errors
// through errcode_ret.
template <typename T, typename Body>
T NoThrowObject(cl_int* errcode_ret, Body&& body) {
  try {
    return body();
  } catch (...) {
    SetError(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    return nullptr;
  }
}

cl_int CopyOut(const void* data, size_t size, size_t param_value_size, void* param_value,
               size_t* param_value_size_ret) {
  if (param_value != nullptr) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, data, size);
  }
  if (param_value_size_ret != nullptr) *param_value_size_ret = size;
  return CL_SUCCESS;
}

bool HasToken(std::string_view list, std::string_view token) {
  size_t pos = 0;
  while (pos < list.size()) {
    const size_t end = std::min(list.find(' ', pos), list.size());
    if (list.substr(pos, end - pos) == token) return true;
    pos = end + 1;
  }
  return false;
}

// Requires State().mu.
void SetActive(QueueState& queue, std::shared_ptr<Recording> recording) {
  LayerState& s = State();
  if (queue.active == nullptr && recording != nullptr) s.recording_queues.fetch_add(1);
  if (queue.active != nullptr && recording == nullptr) s.recording_queues.fetch_sub(1);
  queue.active = std::move(recording);
}

// Requires State().mu. Stops every queue recording into `recording`.
void DetachRecording(const Recording* recording) {
  for (auto& [queue, state] : State().queues) {
    if (state.active.get() == recording) SetActive(state, nullptr);
  }
}

// Records whether a freshly created queue is recordable. A new handle may
// reuse the address of a released one, so any previous entry is dropped.
void RegisterQueue(cl_command_queue queue, bool recordable) {
  LayerState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.queues.find(queue);
  if (it != s.queues.end()) {
    SetActive(it->second, nullptr);
    s.queues.erase(it);
  }
  if (recordable) s.queues.emplace(queue, QueueState{});
}

// As RegisterQueue; if that fails the new queue is released and the
// exception propagates (to NoThrowObject).
void RegisterQueueOrRelease(cl_command_queue queue, bool recordable) {
  try {
    RegisterQueue(queue, recordable);
  } catch (...) {
    Target().clReleaseCommandQueue(queue);
    throw;
  }
}

bool QueueIsRecording(cl_command_queue queue) {
  LayerState& s = State();
  if (s.recording_queues.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.queues.find(queue);
  return it != s.queues.end() && it->second.active != nullptr;
}

// ---------------------------------------------------------------------------
// Device queries.

cl_int CL_API_CALL GetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                 size_t param_value_size, void* param_value,
                                 size_t* param_value_size_ret) {
  const cl_icd_dispatch& t = Target();
  if (param_name == CL_DEVICE_EXTENSIONS) {
    return NoThrow([&]() -> cl_int {
      size_t size = 0;
      cl_int err = t.clGetDeviceInfo(device, param_name, 0, nullptr, &size);
      if (err != CL_SUCCESS) return err;
      std::string extensions(size, '\0');
      if (size != 0) {
        err = t.clGetDeviceInfo(device, param_name, size, extensions.data(), nullptr);
        if (err != CL_SUCCESS) return err;
      }
      extensions.resize(std::strlen(extensions.c_str()));
      if (!HasToken(extensions, kExtensionName)) {
        if (!extensions.empty() && extensions.back() != ' ') extensions += ' ';
        extensions += kExtensionName;
      }
      return CopyOut(extensions.c_str(), extensions.size() + 1, param_value_size, param_value,
                     param_value_size_ret);
    });
  }
  if (param_name == CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE) {
    cl_device_type type = 0;  // validates `device`
    const cl_int err = t.clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, nullptr);
    if (err != CL_SUCCESS) return err;
    const cl_uint max_size = State().max_size;
    return CopyOut(&max_size, sizeof(max_size), param_value_size, param_value,
                   param_value_size_ret);
  }
  return t.clGetDeviceInfo(device, param_name, param_value_size, param_value, param_value_size_ret);
}

// ---------------------------------------------------------------------------
// Queues.

cl_command_queue CL_API_CALL CreateCommandQueue(cl_context context, cl_device_id device,
                                                cl_command_queue_properties properties,
                                                cl_int* errcode_ret) {
  return NoThrowObject<cl_command_queue>(errcode_ret, [&]() -> cl_command_queue {
    const bool recordable = (properties & CL_QUEUE_RECORDABLE_QCOM) != 0;
    cl_command_queue queue = Target().clCreateCommandQueue(
        context, device, properties & ~cl_command_queue_properties{CL_QUEUE_RECORDABLE_QCOM},
        errcode_ret);
    if (queue != nullptr) RegisterQueueOrRelease(queue, recordable);
    return queue;
  });
}

cl_command_queue CL_API_CALL CreateCommandQueueWithProperties(cl_context context,
                                                              cl_device_id device,
                                                              const cl_queue_properties* properties,
                                                              cl_int* errcode_ret) {
  if (const cl_int f = State().faults.Check(FaultPoint::kCreateCommandQueueWithProperties)) {
    SetError(errcode_ret, f);
    return nullptr;
  }
  return NoThrowObject<cl_command_queue>(errcode_ret, [&]() -> cl_command_queue {
    bool recordable = false;
    std::vector<cl_queue_properties> stripped;
    if (properties != nullptr) {
      for (size_t i = 0; properties[i] != 0; i += 2) {
        cl_queue_properties value = properties[i + 1];
        if (properties[i] == CL_QUEUE_PROPERTIES && (value & CL_QUEUE_RECORDABLE_QCOM) != 0) {
          recordable = true;
          value &= ~cl_queue_properties{CL_QUEUE_RECORDABLE_QCOM};
        }
        stripped.push_back(properties[i]);
        stripped.push_back(value);
      }
      stripped.push_back(0);
    }
    cl_command_queue queue = Target().clCreateCommandQueueWithProperties(
        context, device, properties != nullptr ? stripped.data() : nullptr, errcode_ret);
    if (queue != nullptr) RegisterQueueOrRelease(queue, recordable);
    return queue;
  });
}

cl_int CL_API_CALL RetainCommandQueue(cl_command_queue queue) {
  const cl_int err = Target().clRetainCommandQueue(queue);
  if (err == CL_SUCCESS) {
    LayerState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.queues.find(queue);
    if (it != s.queues.end()) ++it->second.user_refs;
  }
  return err;
}

cl_int CL_API_CALL ReleaseCommandQueue(cl_command_queue queue) {
  {
    // Forget before the platform frees the handle: afterwards a new queue may
    // take its address (and RegisterQueue then owns the entry).
    LayerState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.queues.find(queue);
    if (it != s.queues.end() && --it->second.user_refs == 0) {
      SetActive(it->second, nullptr);
      s.queues.erase(it);
    }
  }
  return Target().clReleaseCommandQueue(queue);
}

cl_int CL_API_CALL GetCommandQueueInfo(cl_command_queue queue, cl_command_queue_info param_name,
                                       size_t param_value_size, void* param_value,
                                       size_t* param_value_size_ret) {
  const cl_icd_dispatch& t = Target();
  size_t size = 0;
  const cl_int err =
      t.clGetCommandQueueInfo(queue, param_name, param_value_size, param_value, &size);
  if (param_value_size_ret != nullptr) *param_value_size_ret = size;
  if (err != CL_SUCCESS || param_value == nullptr ||
      (param_name != CL_QUEUE_PROPERTIES && param_name != CL_QUEUE_PROPERTIES_ARRAY)) {
    return err;
  }
  {
    LayerState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.queues.count(queue) == 0) return err;
  }
  if (param_name == CL_QUEUE_PROPERTIES) {
    *static_cast<cl_command_queue_properties*>(param_value) |= CL_QUEUE_RECORDABLE_QCOM;
  } else {
    auto* props = static_cast<cl_queue_properties*>(param_value);
    const size_t count = size / sizeof(cl_queue_properties);
    for (size_t i = 0; i + 1 < count && props[i] != 0; i += 2) {
      if (props[i] == CL_QUEUE_PROPERTIES) props[i + 1] |= CL_QUEUE_RECORDABLE_QCOM;
    }
  }
  return err;
}

// ---------------------------------------------------------------------------
// Kernel argument tracking: a snapshot needs the values to restore after a
// substituted replay, and the platform cannot report them.

// Registers kernels the platform just created (fresh entries: a new handle may
// reuse a released one's address).
void RegisterKernels(const cl_kernel* kernels, cl_uint count, const KernelState* copy_from) {
  LayerState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  for (cl_uint i = 0; i < count; ++i) {
    if (kernels[i] == nullptr) continue;
    KernelState state;
    if (copy_from != nullptr) state.args = copy_from->args;
    s.kernels[kernels[i]] = std::move(state);
  }
}

cl_kernel CL_API_CALL CreateKernel(cl_program program, const char* kernel_name,
                                   cl_int* errcode_ret) {
  if (const cl_int f = State().faults.Check(FaultPoint::kCreateKernel)) {
    SetError(errcode_ret, f);
    return nullptr;
  }
  return NoThrowObject<cl_kernel>(errcode_ret, [&]() -> cl_kernel {
    cl_kernel kernel = Target().clCreateKernel(program, kernel_name, errcode_ret);
    if (kernel != nullptr) RegisterKernels(&kernel, 1, nullptr);
    return kernel;
  });
}

cl_int CL_API_CALL CreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                                          cl_kernel* kernels, cl_uint* num_kernels_ret) {
  return NoThrow([&]() -> cl_int {
    cl_uint created = 0;
    const cl_int err = Target().clCreateKernelsInProgram(program, num_kernels, kernels, &created);
    if (num_kernels_ret != nullptr) *num_kernels_ret = created;
    if (err == CL_SUCCESS && kernels != nullptr) RegisterKernels(kernels, created, nullptr);
    return err;
  });
}

cl_kernel CL_API_CALL CloneKernel(cl_kernel source, cl_int* errcode_ret) {
  return NoThrowObject<cl_kernel>(errcode_ret, [&]() -> cl_kernel {
    cl_kernel clone = Target().clCloneKernel(source, errcode_ret);
    if (clone == nullptr) return nullptr;
    LayerState& s = State();
    KernelState copy;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      auto it = s.kernels.find(source);
      if (it != s.kernels.end()) {
        copy.args = it->second.args;
        copy.exec_info = it->second.exec_info;
      }
    }
    RegisterKernels(&clone, 1, &copy);
    return clone;
  });
}

cl_int CL_API_CALL RetainKernel(cl_kernel kernel) {
  const cl_int err = Target().clRetainKernel(kernel);
  if (err == CL_SUCCESS) {
    LayerState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.kernels.find(kernel);
    if (it != s.kernels.end()) ++it->second.user_refs;
  }
  return err;
}

cl_int CL_API_CALL ReleaseKernel(cl_kernel kernel) {
  {
    LayerState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.kernels.find(kernel);
    if (it != s.kernels.end() && --it->second.user_refs == 0) s.kernels.erase(it);
  }
  return Target().clReleaseKernel(kernel);
}

// Stores `arg` as argument `index` of `kernel` after the platform accepted it.
cl_int TrackArg(cl_kernel kernel, cl_uint index, KernelArg arg) {
  return NoThrow([&]() -> cl_int {
    LayerState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    KernelState& state = s.kernels[kernel];  // kernels made before tracking: best effort
    if (state.args.size() <= index) state.args.resize(size_t{index} + 1);
    state.args[index] = std::move(arg);
    return CL_SUCCESS;
  });
}

cl_int CL_API_CALL SetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                const void* arg_value) {
  if (const cl_int f = State().faults.Check(FaultPoint::kSetKernelArg)) return f;
  const cl_int err = Target().clSetKernelArg(kernel, arg_index, arg_size, arg_value);
  if (err != CL_SUCCESS) return err;
  return NoThrow([&]() -> cl_int {
    KernelArg arg;
    arg.kind = KernelArg::Kind::kBytes;
    arg.size = arg_size;
    arg.has_value = arg_value != nullptr;
    if (arg.has_value) {
      const auto* bytes = static_cast<const unsigned char*>(arg_value);
      arg.bytes.assign(bytes, bytes + arg_size);
    }
    return TrackArg(kernel, arg_index, std::move(arg));
  });
}

cl_int CL_API_CALL SetKernelArgSVMPointer(cl_kernel kernel, cl_uint arg_index,
                                          const void* arg_value) {
  const cl_int err = Target().clSetKernelArgSVMPointer(kernel, arg_index, arg_value);
  if (err != CL_SUCCESS) return err;
  KernelArg arg;
  arg.kind = KernelArg::Kind::kSvmPointer;
  arg.svm_pointer = arg_value;
  return TrackArg(kernel, arg_index, std::move(arg));
}

cl_int CL_API_CALL SetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info name, size_t size,
                                     const void* value) {
  const cl_int err = Target().clSetKernelExecInfo(kernel, name, size, value);
  if (err != CL_SUCCESS) return err;
  return NoThrow([&]() -> cl_int {
    LayerState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    const auto* bytes = static_cast<const unsigned char*>(value);
    s.kernels[kernel].exec_info[static_cast<cl_uint>(name)].assign(
        bytes, bytes == nullptr ? bytes : bytes + size);
    return CL_SUCCESS;
  });
}

// ---------------------------------------------------------------------------
// Fault points on entry points the layer otherwise only forwards.

cl_mem CL_API_CALL CreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr,
                                cl_int* errcode_ret) {
  if (const cl_int f = State().faults.Check(FaultPoint::kCreateBuffer)) {
    SetError(errcode_ret, f);
    return nullptr;
  }
  return Target().clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
}

// An injected failure does not call pfn_notify.
cl_int CL_API_CALL BuildProgram(cl_program program, cl_uint num_devices,
                                const cl_device_id* device_list, const char* options,
                                void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data) {
  if (const cl_int f = State().faults.Check(FaultPoint::kBuildProgram)) return f;
  return Target().clBuildProgram(program, num_devices, device_list, options, pfn_notify, user_data);
}

// ---------------------------------------------------------------------------
// Recording.

// Makes a private kernel equal to `kernel` with `args` set. Requires
// State().mu.
cl_int SnapshotKernel(cl_kernel kernel, const std::vector<KernelArg>& args,
                      const ExecInfo& exec_info, OwnedKernel* out) {
  LayerState& s = State();
  const cl_icd_dispatch& t = s.target;
  cl_int err = CL_SUCCESS;
  // PoCL 3.1 crashes enqueueing a clCloneKernel copy of a kernel with a NULL
  // cl_mem argument, so such kernels (and, harmlessly, those with an all-zero
  // pointer-sized scalar, which look the same) are rebuilt instead.
  bool null_pointer_arg = false;
  for (const KernelArg& arg : args) {
    if (arg.kind != KernelArg::Kind::kBytes || arg.size != sizeof(cl_mem)) continue;
    null_pointer_arg |= !arg.has_value || std::all_of(arg.bytes.begin(), arg.bytes.end(),
                                                      [](unsigned char b) { return b == 0; });
  }
  if (s.use_clone && t.clCloneKernel != nullptr && !null_pointer_arg) {
    cl_kernel clone = t.clCloneKernel(kernel, &err);
    if (clone != nullptr) {
      *out = OwnedKernel(&t, clone);
      return CL_SUCCESS;
    }
    if (err != CL_INVALID_OPERATION) return err;
  }
  // Without clCloneKernel: a new kernel of the same program and name, with the
  // tracked arguments and exec info.
  cl_program program = nullptr;
  err = t.clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof(program), &program, nullptr);
  if (err != CL_SUCCESS) return err;
  size_t name_size = 0;
  err = t.clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &name_size);
  if (err != CL_SUCCESS) return err;
  std::string name(name_size, '\0');
  err = t.clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, name_size, name.data(), nullptr);
  if (err != CL_SUCCESS) return err;
  cl_kernel fresh = t.clCreateKernel(program, name.c_str(), &err);
  if (fresh == nullptr) return err;
  OwnedKernel owned(&t, fresh);
  for (cl_uint i = 0; i < args.size(); ++i) {
    err = args[i].Apply(t, fresh, i);
    if (err != CL_SUCCESS) return err;
  }
  for (const auto& [name, value] : exec_info) {
    err = ApplyExecInfo(t, fresh, name, &value);
    if (err != CL_SUCCESS) return err;
  }
  *out = std::move(owned);
  return CL_SUCCESS;
}

// Records one clEnqueueNDRangeKernel into `recording`. Requires State().mu.
cl_int RecordDispatch(Recording& recording, cl_kernel kernel, cl_uint work_dim,
                      const size_t* global_work_offset, const size_t* global_work_size,
                      const size_t* local_work_size, cl_uint num_events_in_wait_list,
                      cl_event* event) {
  LayerState& s = State();
  const cl_icd_dispatch& t = s.target;
  // A recorded command has no event of its own and nothing to wait for.
  if (event != nullptr || num_events_in_wait_list != 0) return CL_INVALID_OPERATION;
  if (kernel == nullptr) return CL_INVALID_KERNEL;
  if (work_dim < 1 || work_dim > 3) return CL_INVALID_WORK_DIMENSION;
  if (global_work_size == nullptr) return CL_INVALID_GLOBAL_WORK_SIZE;

  cl_context context = nullptr;
  cl_int err = t.clGetKernelInfo(kernel, CL_KERNEL_CONTEXT, sizeof(context), &context, nullptr);
  if (err != CL_SUCCESS) return err;
  if (context != recording.context()) return CL_INVALID_CONTEXT;
  cl_uint num_args = 0;
  err = t.clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(num_args), &num_args, nullptr);
  if (err != CL_SUCCESS) return err;

  RecordedDispatch dispatch;
  if (num_args != 0) {
    auto it = s.kernels.find(kernel);
    if (it == s.kernels.end() || it->second.args.size() < num_args) return CL_INVALID_KERNEL_ARGS;
    dispatch.args.assign(it->second.args.begin(), it->second.args.begin() + num_args);
    dispatch.exec_info = it->second.exec_info;
    for (const KernelArg& arg : dispatch.args) {
      if (arg.kind == KernelArg::Kind::kUnset) return CL_INVALID_KERNEL_ARGS;
    }
  }
  if (recording.size() >= s.max_size) return CL_OUT_OF_RESOURCES;

  err = SnapshotKernel(kernel, dispatch.args, dispatch.exec_info, &dispatch.kernel);
  if (err != CL_SUCCESS) return err;
  dispatch.work_dim = work_dim;
  for (cl_uint d = 0; d < work_dim; ++d) {
    dispatch.offset[d] = global_work_offset != nullptr ? global_work_offset[d] : 0;
    dispatch.global[d] = global_work_size[d];
    if (local_work_size != nullptr) dispatch.local[d] = local_work_size[d];
  }
  dispatch.has_local = local_work_size != nullptr;
  return recording.AddDispatch(std::move(dispatch));
}

cl_int CL_API_CALL EnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                                        const size_t* global_work_offset,
                                        const size_t* global_work_size,
                                        const size_t* local_work_size,
                                        cl_uint num_events_in_wait_list,
                                        const cl_event* event_wait_list, cl_event* event) {
  LayerState& s = State();
  if (const cl_int f = s.faults.Check(FaultPoint::kEnqueueNDRangeKernel)) return f;
  if (s.recording_queues.load(std::memory_order_acquire) != 0) {
    bool recorded = false;
    const cl_int err = NoThrow([&]() -> cl_int {
      std::lock_guard<std::mutex> lock(s.mu);
      auto it = s.queues.find(queue);
      if (it == s.queues.end() || it->second.active == nullptr) return CL_SUCCESS;
      recorded = true;
      return RecordDispatch(*it->second.active, kernel, work_dim, global_work_offset,
                            global_work_size, local_work_size, num_events_in_wait_list, event);
    });
    if (recorded || err != CL_SUCCESS) return err;
  }
  return s.target.clEnqueueNDRangeKernel(queue, kernel, work_dim, global_work_offset,
                                         global_work_size, local_work_size, num_events_in_wait_list,
                                         event_wait_list, event);
}

// Rejects a non-kernel command on a queue that records: only kernel dispatches
// are known to be recordable. `kMember` is the dispatch table entry.
template <auto kMember>
struct RejectWhileRecording;

template <typename R, typename... Args,
          R (CL_API_CALL* cl_icd_dispatch::*kMember)(cl_command_queue, Args...)>
struct RejectWhileRecording<kMember> {
  static R CL_API_CALL Call(cl_command_queue queue, Args... args) {
    if (QueueIsRecording(queue)) {
      if constexpr (std::is_same_v<R, cl_int>) {
        return CL_INVALID_OPERATION;
      } else {
        // Pointer-returning enqueues (map) report through a trailing errcode_ret.
        static_assert(std::is_pointer_v<R> && sizeof...(Args) > 0);
        cl_int* errcode_ret = std::get<sizeof...(Args) - 1>(std::forward_as_tuple(args...));
        SetError(errcode_ret, CL_INVALID_OPERATION);
        return nullptr;
      }
    }
    return (Target().*kMember)(queue, args...);
  }
};

template <auto kMember>
void Guard(cl_icd_dispatch& table) {
  if (Target().*kMember != nullptr) table.*kMember = &RejectWhileRecording<kMember>::Call;
}

cl_recording_qcom CL_API_CALL NewRecordingQCOM(cl_command_queue queue, cl_int* errcode_ret) {
  LayerState& s = State();
  if (const cl_int f = s.faults.Check(FaultPoint::kNewRecordingQCOM)) {
    SetError(errcode_ret, f);
    return nullptr;
  }
  return NoThrowObject<cl_recording_qcom>(errcode_ret, [&]() -> cl_recording_qcom {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = queue != nullptr ? s.queues.find(queue) : s.queues.end();
    if (it == s.queues.end()) {
      SetError(errcode_ret, CL_INVALID_COMMAND_QUEUE);
      return nullptr;
    }
    if (it->second.active != nullptr) {
      SetError(errcode_ret, CL_INVALID_OPERATION);
      return nullptr;
    }
    cl_context context = nullptr;
    const cl_int err =
        s.target.clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context), &context, nullptr);
    if (err != CL_SUCCESS) {
      SetError(errcode_ret, err);
      return nullptr;
    }
    auto recording = std::make_shared<Recording>(&s.target, context);
    const auto handle = reinterpret_cast<cl_recording_qcom>(recording.get());
    s.recordings[handle] = RecordingEntry{1, recording};
    SetActive(it->second, std::move(recording));
    SetError(errcode_ret, CL_SUCCESS);
    return handle;
  });
}

cl_int CL_API_CALL EndRecordingQCOM(cl_recording_qcom handle) {
  LayerState& s = State();
  if (const cl_int f = s.faults.Check(FaultPoint::kEndRecordingQCOM)) return f;
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.recordings.find(handle);
  if (it == s.recordings.end()) return CL_INVALID_VALUE;
  const cl_int err = it->second.recording->End();
  if (err != CL_SUCCESS) return err;
  DetachRecording(it->second.recording.get());
  return CL_SUCCESS;
}

cl_int CL_API_CALL RetainRecordingQCOM(cl_recording_qcom handle) {
  LayerState& s = State();
  if (const cl_int f = s.faults.Check(FaultPoint::kRetainRecordingQCOM)) return f;
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.recordings.find(handle);
  if (it == s.recordings.end()) return CL_INVALID_VALUE;
  ++it->second.refs;
  return CL_SUCCESS;
}

cl_int CL_API_CALL ReleaseRecordingQCOM(cl_recording_qcom handle) {
  LayerState& s = State();
  if (const cl_int f = s.faults.Check(FaultPoint::kReleaseRecordingQCOM)) return f;
  std::shared_ptr<Recording> last;  // destroyed after the lock is dropped
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.recordings.find(handle);
  if (it == s.recordings.end()) return CL_INVALID_VALUE;
  if (--it->second.refs == 0) {
    DetachRecording(it->second.recording.get());
    last = std::move(it->second.recording);
    s.recordings.erase(it);
  }
  return CL_SUCCESS;
}

cl_int EnqueueRecording(cl_command_queue queue, cl_recording_qcom handle,
                        const ReplaySubstitutions& subs, cl_uint num_events_in_wait_list,
                        const cl_event* event_wait_list, cl_event* event) {
  LayerState& s = State();
  return NoThrow([&]() -> cl_int {
    std::shared_ptr<Recording> recording;  // keeps it alive across a concurrent release
    {
      std::lock_guard<std::mutex> lock(s.mu);
      auto it = s.recordings.find(handle);
      if (it == s.recordings.end()) return CL_INVALID_VALUE;
      recording = it->second.recording;
      auto q = s.queues.find(queue);
      if (q != s.queues.end() && q->second.active != nullptr) return CL_INVALID_OPERATION;
    }
    if (queue == nullptr) return CL_INVALID_COMMAND_QUEUE;
    return recording->Replay(queue, subs, num_events_in_wait_list, event_wait_list, event);
  });
}

// Substitutions gathers the replay call's argument, offset and work-group
// arrays (both replay entry points take them).
ReplaySubstitutions Substitutions(size_t num_args, const cl_array_arg_qcom* args,
                                  size_t num_offsets, const cl_offset_qcom* offsets,
                                  size_t num_global, const cl_workgroup_qcom* global,
                                  size_t num_local, const cl_workgroup_qcom* local) {
  ReplaySubstitutions subs;
  subs.num_args = num_args;
  subs.args = args;
  subs.num_offsets = num_offsets;
  subs.offsets = offsets;
  subs.num_global = num_global;
  subs.global = global;
  subs.num_local = num_local;
  subs.local = local;
  return subs;
}

cl_int CL_API_CALL EnqueueRecordingQCOM(
    cl_command_queue queue, cl_recording_qcom recording, size_t num_args,
    const cl_array_arg_qcom* arg_array, size_t num_global_offsets,
    const cl_offset_qcom* global_offset_array, size_t num_global_workgroups,
    const cl_workgroup_qcom* global_workgroup_array, size_t num_local_workgroups,
    const cl_workgroup_qcom* local_workgroup_array, cl_uint num_events_in_wait_list,
    const cl_event* event_wait_list, cl_event* event) {
  if (const cl_int f = State().faults.Check(FaultPoint::kEnqueueRecordingQCOM)) return f;
  const ReplaySubstitutions subs = Substitutions(
      num_args, arg_array, num_global_offsets, global_offset_array, num_global_workgroups,
      global_workgroup_array, num_local_workgroups, local_workgroup_array);
  return EnqueueRecording(queue, recording, subs, num_events_in_wait_list, event_wait_list, event);
}

// SVM pointers and exec info are substituted for the replay only, like
// plain arguments (Recording::Replay).
cl_int CL_API_CALL EnqueueRecordingSVMQCOM(
    cl_command_queue queue, cl_recording_qcom recording, size_t num_args,
    const cl_array_arg_qcom* arg_array, size_t num_svm_args, const cl_array_arg_qcom* svm_arg_array,
    size_t num_global_offsets, const cl_offset_qcom* global_offset_array,
    size_t num_global_workgroups, const cl_workgroup_qcom* global_workgroup_array,
    size_t num_local_workgroups, const cl_workgroup_qcom* local_workgroup_array,
    size_t num_non_arg_objs, const cl_array_kernel_exec_info_qcom* non_arg_obj_array,
    cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event) {
  if (const cl_int f = State().faults.Check(FaultPoint::kEnqueueRecordingSVMQCOM)) return f;
  ReplaySubstitutions subs = Substitutions(
      num_args, arg_array, num_global_offsets, global_offset_array, num_global_workgroups,
      global_workgroup_array, num_local_workgroups, local_workgroup_array);
  subs.num_svm_args = num_svm_args;
  subs.svm_args = svm_arg_array;
  subs.num_exec_infos = num_non_arg_objs;
  subs.exec_infos = non_arg_obj_array;
  return EnqueueRecording(queue, recording, subs, num_events_in_wait_list, event_wait_list, event);
}

// ---------------------------------------------------------------------------
// Extension entry points.

void* LookupExtension(const char* name) {
  if (name == nullptr) return nullptr;
  const std::string_view n(name);
  if (n == "clNewRecordingQCOM") return reinterpret_cast<void*>(&NewRecordingQCOM);
  if (n == "clEndRecordingQCOM") return reinterpret_cast<void*>(&EndRecordingQCOM);
  if (n == "clRetainRecordingQCOM") return reinterpret_cast<void*>(&RetainRecordingQCOM);
  if (n == "clReleaseRecordingQCOM") return reinterpret_cast<void*>(&ReleaseRecordingQCOM);
  if (n == "clEnqueueRecordingQCOM") return reinterpret_cast<void*>(&EnqueueRecordingQCOM);
  if (n == "clEnqueueRecordingSVMQCOM") {
    return State().svm_entry ? reinterpret_cast<void*>(&EnqueueRecordingSVMQCOM) : nullptr;
  }
  return nullptr;
}

void* CL_API_CALL GetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                         const char* func_name) {
  if (void* fn = LookupExtension(func_name)) return fn;
  return Target().clGetExtensionFunctionAddressForPlatform(platform, func_name);
}

void* CL_API_CALL GetExtensionFunctionAddress(const char* func_name) {
  if (void* fn = LookupExtension(func_name)) return fn;
  return Target().clGetExtensionFunctionAddress(func_name);
}

// ---------------------------------------------------------------------------
// Set-up.

cl_uint MaxSizeFromEnv() {
  const char* text = std::getenv("RECQ_QCOM_LAYER_MAX_SIZE");
  if (text == nullptr || *text == '\0') return kDefaultMaxSize;
  char* end = nullptr;
  const uint64_t value = std::strtoull(text, &end, 10);
  if (*end != '\0' || value == 0 || value > UINT32_MAX) {
    std::fprintf(stderr,
                 "recq qcom layer: ignoring RECQ_QCOM_LAYER_MAX_SIZE='%s' (want a positive "
                 "integer); using %u\n",
                 text, kDefaultMaxSize);
    return kDefaultMaxSize;
  }
  return static_cast<cl_uint>(value);
}

void InstallOverrides(cl_icd_dispatch& d) {
  d.clGetDeviceInfo = &GetDeviceInfo;
  d.clCreateCommandQueue = &CreateCommandQueue;
  d.clCreateCommandQueueWithProperties = &CreateCommandQueueWithProperties;
  d.clRetainCommandQueue = &RetainCommandQueue;
  d.clReleaseCommandQueue = &ReleaseCommandQueue;
  d.clGetCommandQueueInfo = &GetCommandQueueInfo;
  d.clCreateKernel = &CreateKernel;
  d.clCreateKernelsInProgram = &CreateKernelsInProgram;
  if (Target().clCloneKernel != nullptr) d.clCloneKernel = &CloneKernel;
  d.clRetainKernel = &RetainKernel;
  d.clReleaseKernel = &ReleaseKernel;
  d.clSetKernelArg = &SetKernelArg;
  if (Target().clSetKernelArgSVMPointer != nullptr) {
    d.clSetKernelArgSVMPointer = &SetKernelArgSVMPointer;
  }
  if (Target().clSetKernelExecInfo != nullptr) d.clSetKernelExecInfo = &SetKernelExecInfo;
  d.clCreateBuffer = &CreateBuffer;
  d.clBuildProgram = &BuildProgram;
  d.clEnqueueNDRangeKernel = &EnqueueNDRangeKernel;
  d.clGetExtensionFunctionAddressForPlatform = &GetExtensionFunctionAddressForPlatform;
  d.clGetExtensionFunctionAddress = &GetExtensionFunctionAddress;

  Guard<&cl_icd_dispatch::clEnqueueReadBuffer>(d);
  Guard<&cl_icd_dispatch::clEnqueueReadBufferRect>(d);
  Guard<&cl_icd_dispatch::clEnqueueWriteBuffer>(d);
  Guard<&cl_icd_dispatch::clEnqueueWriteBufferRect>(d);
  Guard<&cl_icd_dispatch::clEnqueueCopyBuffer>(d);
  Guard<&cl_icd_dispatch::clEnqueueCopyBufferRect>(d);
  Guard<&cl_icd_dispatch::clEnqueueFillBuffer>(d);
  Guard<&cl_icd_dispatch::clEnqueueReadImage>(d);
  Guard<&cl_icd_dispatch::clEnqueueWriteImage>(d);
  Guard<&cl_icd_dispatch::clEnqueueCopyImage>(d);
  Guard<&cl_icd_dispatch::clEnqueueFillImage>(d);
  Guard<&cl_icd_dispatch::clEnqueueCopyImageToBuffer>(d);
  Guard<&cl_icd_dispatch::clEnqueueCopyBufferToImage>(d);
  Guard<&cl_icd_dispatch::clEnqueueMapBuffer>(d);
  Guard<&cl_icd_dispatch::clEnqueueMapImage>(d);
  Guard<&cl_icd_dispatch::clEnqueueUnmapMemObject>(d);
  Guard<&cl_icd_dispatch::clEnqueueMigrateMemObjects>(d);
  Guard<&cl_icd_dispatch::clEnqueueTask>(d);
  Guard<&cl_icd_dispatch::clEnqueueNativeKernel>(d);
  Guard<&cl_icd_dispatch::clEnqueueMarker>(d);
  Guard<&cl_icd_dispatch::clEnqueueBarrier>(d);
  Guard<&cl_icd_dispatch::clEnqueueWaitForEvents>(d);
  Guard<&cl_icd_dispatch::clEnqueueMarkerWithWaitList>(d);
  Guard<&cl_icd_dispatch::clEnqueueBarrierWithWaitList>(d);
  Guard<&cl_icd_dispatch::clEnqueueSVMFree>(d);
  Guard<&cl_icd_dispatch::clEnqueueSVMMemcpy>(d);
  Guard<&cl_icd_dispatch::clEnqueueSVMMemFill>(d);
  Guard<&cl_icd_dispatch::clEnqueueSVMMap>(d);
  Guard<&cl_icd_dispatch::clEnqueueSVMUnmap>(d);
  Guard<&cl_icd_dispatch::clEnqueueSVMMigrateMem>(d);
}

}  // namespace
}  // namespace recq::qcom_layer

using recq::qcom_layer::State;

extern "C" {

RECQ_LAYER_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name,
                                                                 size_t param_value_size,
                                                                 void* param_value,
                                                                 size_t* param_value_size_ret) {
  if (param_name != CL_LAYER_API_VERSION) return CL_INVALID_VALUE;
  const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  return recq::qcom_layer::CopyOut(&version, sizeof(version), param_value_size, param_value,
                                   param_value_size_ret);
}

// The loader calls this once, before any other entry point of the layer.
RECQ_LAYER_EXPORT CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch, cl_uint* num_entries_ret,
            const cl_icd_dispatch** layer_dispatch_ret) {
  if (target_dispatch == nullptr || num_entries_ret == nullptr || layer_dispatch_ret == nullptr) {
    return CL_INVALID_VALUE;
  }
  auto& s = State();
  constexpr size_t kOurEntries = sizeof(cl_icd_dispatch) / sizeof(void*);
  const size_t copied = std::min<size_t>(num_entries, kOurEntries);
  s.target = cl_icd_dispatch{};
  std::memcpy(static_cast<void*>(&s.target), target_dispatch, copied * sizeof(void*));
  s.max_size = recq::qcom_layer::MaxSizeFromEnv();
  const char* no_clone = std::getenv("RECQ_QCOM_LAYER_NO_CLONE");
  s.use_clone = no_clone == nullptr || *no_clone == '\0' || std::strcmp(no_clone, "0") == 0;
  const char* no_svm = std::getenv("RECQ_QCOM_LAYER_NO_SVM");
  s.svm_entry = no_svm == nullptr || *no_svm == '\0' || std::strcmp(no_svm, "0") == 0;
  std::string problem;
  if (!s.faults.Configure(std::getenv("RECQ_QCOM_LAYER_FAIL"), &problem)) {
    std::fprintf(stderr, "recq qcom layer: ignoring RECQ_QCOM_LAYER_FAIL: %s\n", problem.c_str());
  }
  s.dispatch = s.target;
  recq::qcom_layer::InstallOverrides(s.dispatch);
  *num_entries_ret = static_cast<cl_uint>(kOurEntries);
  *layer_dispatch_ret = &s.dispatch;
  return CL_SUCCESS;
}

// Test hook (not part of the extension): replaces the fault-injection rules
// with `spec` (same syntax as RECQ_QCOM_LAYER_FAIL; NULL or "" clears them)
// and zeroes every call counter. Returns CL_SUCCESS, or CL_INVALID_VALUE for a
// malformed spec (which also clears the rules). Tests reach it with dlsym on
// the library named in OPENCL_LAYERS.
RECQ_LAYER_EXPORT int recqQcomLayerSetFault(const char* spec) {
  try {
    std::string problem;
    if (State().faults.Configure(spec, &problem)) return CL_SUCCESS;
    std::fprintf(stderr, "recq qcom layer: recqQcomLayerSetFault: %s\n", problem.c_str());
    return CL_INVALID_VALUE;
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
}

}  // extern "C"
