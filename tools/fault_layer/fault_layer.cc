// An OpenCL layer (loaded by the ICD loader through OPENCL_LAYERS) that counts
// every call of every entry point recq uses, fails call N of entry point E
// with error X, tracks the application's references of every object it
// creates (per kind), can hold kernel enqueues back behind an event it
// completes only when told, and can emulate
// cl_khr_command_buffer_mutable_dispatch on top of a platform's
// cl_khr_command_buffer. See README.md.
//
// Stack it above tools/qcom_layer to count and fail the qcom entry points:
//   OPENCL_LAYERS=libRecqQcomLayer.so:libRecqFaultLayer.so
// (ocl-icd puts the last listed layer nearest the application).
//
// Process-global state, never destroyed; no entry point throws.
#include <CL/cl_ext.h>
#include <CL/cl_layer.h>

#include <algorithm>
#include <array>
#include <atomic>
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
#include <vector>

#include "entry_points.h"
#include "fault_rules.h"
#include "qcom/cl_qcom_recordable_queues.h"

#define RECQ_LAYER_EXPORT __attribute__((visibility("default")))

namespace recq::fault_layer {
namespace {

enum class Kind : int {
  kNone,
  kContext,
  kQueue,
  kMem,
  kSampler,
  kProgram,
  kKernel,
  kEvent,
  kQcomRecording,
  kCommandBuffer,
  kCount,
};
constexpr const char* kKindNames[] = {"none",           "context",       "queue",  "mem",
                                      "sampler",        "program",       "kernel", "event",
                                      "qcom_recording", "command_buffer"};
static_assert(std::size(kKindNames) == static_cast<size_t>(Kind::kCount));

enum class Action { kCall, kCreate, kRetain, kRelease };

// One index per counted entry point: the core ones, then the extensions.
enum EntryIndex : size_t {
#define RECQ_CORE_INDEX(name, kind, action) k_##name,
#define RECQ_EXT_INDEX(name, type, kind, action) k_##name,
  RECQ_FAULT_CORE_ENTRY_POINTS(RECQ_CORE_INDEX) kCoreCount,
  kExtFirst = kCoreCount - 1,
  RECQ_FAULT_EXTENSION_ENTRY_POINTS(RECQ_EXT_INDEX) kEntryCount
#undef RECQ_CORE_INDEX
#undef RECQ_EXT_INDEX
};
constexpr size_t kExtCount = kEntryCount - kCoreCount;

std::vector<std::string_view> EntryNames() {
  return {
#define RECQ_NAME(name, ...) #name,
      RECQ_FAULT_CORE_ENTRY_POINTS(RECQ_NAME) RECQ_FAULT_EXTENSION_ENTRY_POINTS(RECQ_NAME)
#undef RECQ_NAME
  };
}

// ObjectTracker counts the application's references per object. A release
// of an object the application holds no reference to (an over-release that
// would free memory still in use) is refused and counted, not passed down.
class ObjectTracker {
 public:
  void Created(Kind kind, void* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    live_[Index(kind)][handle] = 1;
  }
  void Retained(Kind kind, void* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& map = live_[Index(kind)];
    if (auto it = map.find(handle); it != map.end()) ++it->second;
  }
  // BeginRelease drops one reference before the release goes down; false
  // (and an over-release counted) when the application holds none.
  bool BeginRelease(Kind kind, void* handle, bool* last) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& map = live_[Index(kind)];
    auto it = map.find(handle);
    if (it == map.end()) {
      ++over_released_[Index(kind)];
      return false;
    }
    *last = --it->second == 0;
    if (*last) map.erase(it);
    return true;
  }
  // UndoRelease restores the reference when the release below failed.
  void UndoRelease(Kind kind, void* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    ++live_[Index(kind)][handle];
  }
  // Report returns "<kind> <live>\n" per kind with live objects and
  // "over_released_<kind> <n>\n" per kind with refused releases.
  std::string Report() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (size_t k = 1; k < live_.size(); ++k) {
      if (!live_[k].empty())
        out += std::string(kKindNames[k]) + " " + std::to_string(live_[k].size()) + "\n";
    }
    for (size_t k = 1; k < live_.size(); ++k) {
      if (over_released_[k] != 0) {
        out += "over_released_" + std::string(kKindNames[k]) + " " +
               std::to_string(over_released_[k]) + "\n";
      }
    }
    return out;
  }

 private:
  static size_t Index(Kind kind) { return static_cast<size_t>(kind); }
  mutable std::mutex mu_;
  std::array<std::unordered_map<void*, uint64_t>, static_cast<size_t>(Kind::kCount)> live_;
  std::array<uint64_t, static_cast<size_t>(Kind::kCount)> over_released_{};
};

// A command recorded with a mutable handle by the emulation: the kernel it
// dispatches (retained below the layer) is what an update changes.
struct MutableCommand {
  cl_command_buffer_khr buffer;
  cl_kernel kernel;
};

struct LayerState {
  cl_icd_dispatch target{};
  cl_icd_dispatch dispatch{};
  FaultRules rules{EntryNames()};
  ObjectTracker objects;
  // The function each extension wrapper calls (the emulation or the one
  // below), and the one below.
  std::array<std::atomic<void*>, kExtCount> ext_call{};
  std::array<std::atomic<void*>, kExtCount> ext_below{};

  // RECQ_FAULT_LAYER_KHR_MUTABLE or recqFaultLayerSetKhrMutable; read at
  // each extension lookup and device query.
  std::atomic<bool> emulate_mutable{false};

  // RECQ_FAULT_LAYER_GLOBAL_MEM_SIZE / _MAX_MEM_ALLOC_SIZE or
  // recqFaultLayerSetDeviceMemory: what CL_DEVICE_GLOBAL_MEM_SIZE and
  // CL_DEVICE_MAX_MEM_ALLOC_SIZE report instead of the device's (0: the
  // device's own). Only the reports change, not what can be allocated.
  std::atomic<cl_ulong> global_mem_size{0};
  std::atomic<cl_ulong> max_mem_alloc_size{0};
  // RECQ_FAULT_LAYER_NO_SVM: CL_DEVICE_SVM_CAPABILITIES reports 0.
  std::atomic<bool> no_svm{false};

  std::mutex hold_mu;
  bool hold = false;
  cl_event gate = nullptr;  // user event gating held enqueues (layer-owned)

  std::mutex mutable_mu;
  std::unordered_map<cl_command_buffer_khr, std::vector<std::unique_ptr<MutableCommand>>>
      mutable_commands;
};

LayerState& State() {
  static auto* const state = new LayerState;
  return *state;
}

template <typename T>
constexpr bool kIsEventOut = std::is_same_v<T, cl_event*>;

template <typename R, typename... Args>
R Failed(cl_int error, Args... args) {
  if constexpr (std::is_same_v<R, cl_int>) {
    return error;
  } else {
    static_assert(std::is_pointer_v<R>);
    if constexpr (sizeof...(Args) > 0) {
      using Last = std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>;
      if constexpr (std::is_same_v<Last, cl_int*>) {
        cl_int* errcode_ret = std::get<sizeof...(Args) - 1>(std::forward_as_tuple(args...));
        if (errcode_ret != nullptr) *errcode_ret = error;
      }
    }
    return nullptr;
  }
}

void ForgetMutableCommands(cl_command_buffer_khr buffer);

// Invoke runs one counted call of entry point kIndex through `fn`.
template <size_t kIndex, Kind kKind, Action kAction, typename R, typename... Args>
R Invoke(R(CL_API_CALL* fn)(Args...), Args... args) {
  LayerState& s = State();
  if (const cl_int fault = s.rules.Check(kIndex)) return Failed<R>(fault, args...);
  if constexpr (kAction == Action::kRelease) {
    void* handle = std::get<0>(std::forward_as_tuple(args...));
    bool last = false;
    if (!s.objects.BeginRelease(kKind, handle, &last)) return CL_INVALID_VALUE;
    const R result = fn(args...);
    if (result != CL_SUCCESS) {
      s.objects.UndoRelease(kKind, handle);
    } else if constexpr (kKind == Kind::kCommandBuffer) {
      if (last) ForgetMutableCommands(static_cast<cl_command_buffer_khr>(handle));
    }
    return result;
  } else {
    const R result = fn(args...);
    bool ok = false;
    if constexpr (std::is_same_v<R, cl_int>) {
      ok = result == CL_SUCCESS;
    } else {
      ok = result != nullptr;
    }
    if constexpr (kAction == Action::kCreate) {
      if (ok) s.objects.Created(kKind, result);
    }
    if constexpr (kAction == Action::kRetain) {
      if (ok) s.objects.Retained(kKind, std::get<0>(std::forward_as_tuple(args...)));
    }
    constexpr size_t n = sizeof...(Args);
    if constexpr (n >= 1) {
      using Last = std::tuple_element_t<n - 1, std::tuple<Args...>>;
      if constexpr (kIsEventOut<Last>) {
        cl_event* event = std::get<n - 1>(std::forward_as_tuple(args...));
        if (ok && event != nullptr && *event != nullptr) s.objects.Created(Kind::kEvent, *event);
      } else if constexpr (n >= 2) {
        using BeforeLast = std::tuple_element_t<n - 2, std::tuple<Args...>>;
        if constexpr (kIsEventOut<BeforeLast>) {  // clEnqueueMap*: event, then errcode_ret
          cl_event* event = std::get<n - 2>(std::forward_as_tuple(args...));
          if (ok && event != nullptr && *event != nullptr) s.objects.Created(Kind::kEvent, *event);
        }
      }
    }
    return result;
  }
}

// ---------------------------------------------------------------------------
// Holding enqueues back (recqFaultLayerHoldEvents).

cl_int CL_API_CALL HeldNDRange(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                               const size_t* offset, const size_t* global, const size_t* local,
                               cl_uint num_events, const cl_event* wait_list, cl_event* event) {
  LayerState& s = State();
  cl_event gate = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.hold_mu);
    if (s.hold) {
      if (s.gate == nullptr) {
        cl_context context = nullptr;
        cl_int err = s.target.clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context),
                                                    &context, nullptr);
        if (err != CL_SUCCESS) return err;
        s.gate = s.target.clCreateUserEvent(context, &err);
        if (err != CL_SUCCESS) return err;
      }
      gate = s.gate;
      s.target.clRetainEvent(gate);
    }
  }
  if (gate == nullptr) {
    return s.target.clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local,
                                           num_events, wait_list, event);
  }
  std::vector<cl_event> waits(wait_list, wait_list + (wait_list == nullptr ? 0 : num_events));
  waits.push_back(gate);
  const cl_int err =
      s.target.clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local,
                                      static_cast<cl_uint>(waits.size()), waits.data(), event);
  s.target.clReleaseEvent(gate);
  return err;
}

// ---------------------------------------------------------------------------
// cl_khr_command_buffer_mutable_dispatch emulation (argument updates only).
//
// It relies on the platform reading a recorded kernel's arguments when the
// command buffer is submitted (PoCL 3.1 does; see
// backends/khr_command_buffer): an update sets the arguments of the kernel
// the command was recorded with.

constexpr cl_version kMutableVersion = CL_MAKE_VERSION(0, 9, 0);
constexpr char kMutableName[] = "cl_khr_command_buffer_mutable_dispatch";

bool HasToken(std::string_view list, std::string_view token) {
  size_t pos = 0;
  while (pos < list.size()) {
    const size_t end = std::min(list.find(' ', pos), list.size());
    if (list.substr(pos, end - pos) == token) return true;
    pos = end + 1;
  }
  return false;
}

cl_int CopyOut(const void* data, size_t size, size_t value_size, void* value, size_t* size_ret) {
  if (value != nullptr) {
    if (value_size < size) return CL_INVALID_VALUE;
    std::memcpy(value, data, size);
  }
  if (size_ret != nullptr) *size_ret = size;
  return CL_SUCCESS;
}

bool BelowHasCommandBuffer(cl_device_id device) {
  const cl_icd_dispatch& t = State().target;
  size_t size = 0;
  if (t.clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size) != CL_SUCCESS) {
    return false;
  }
  std::string text(size, '\0');
  if (t.clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, text.data(), nullptr) != CL_SUCCESS) {
    return false;
  }
  text.resize(std::strlen(text.c_str()));
  return HasToken(text, "cl_khr_command_buffer") && !HasToken(text, kMutableName);
}

cl_int CL_API_CALL MutableDeviceInfo(cl_device_id device, cl_device_info name, size_t value_size,
                                     void* value, size_t* size_ret) {
  LayerState& s = State();
  if (name == CL_DEVICE_GLOBAL_MEM_SIZE || name == CL_DEVICE_MAX_MEM_ALLOC_SIZE) {
    const cl_ulong bytes =
        name == CL_DEVICE_GLOBAL_MEM_SIZE ? s.global_mem_size.load() : s.max_mem_alloc_size.load();
    if (bytes != 0) {
      // Validates the device handle as the call below would.
      cl_ulong real = 0;
      const cl_int err = s.target.clGetDeviceInfo(device, name, sizeof(real), &real, nullptr);
      if (err != CL_SUCCESS) return err;
      return CopyOut(&bytes, sizeof(bytes), value_size, value, size_ret);
    }
  }
  if (name == CL_DEVICE_SVM_CAPABILITIES && s.no_svm) {
    cl_device_svm_capabilities real = 0;
    const cl_int err = s.target.clGetDeviceInfo(device, name, sizeof(real), &real, nullptr);
    if (err != CL_SUCCESS) return err;
    const cl_device_svm_capabilities none = 0;
    return CopyOut(&none, sizeof(none), value_size, value, size_ret);
  }
  if (!s.emulate_mutable || !BelowHasCommandBuffer(device)) {
    return s.target.clGetDeviceInfo(device, name, value_size, value, size_ret);
  }
  try {
    if (name == CL_DEVICE_EXTENSIONS) {
      size_t size = 0;
      cl_int err = s.target.clGetDeviceInfo(device, name, 0, nullptr, &size);
      if (err != CL_SUCCESS) return err;
      std::string text(size, '\0');
      err = s.target.clGetDeviceInfo(device, name, size, text.data(), nullptr);
      if (err != CL_SUCCESS) return err;
      text.resize(std::strlen(text.c_str()));
      if (!text.empty() && text.back() != ' ') text += ' ';
      text += kMutableName;
      return CopyOut(text.c_str(), text.size() + 1, value_size, value, size_ret);
    }
    if (name == CL_DEVICE_EXTENSIONS_WITH_VERSION) {
      size_t size = 0;
      cl_int err = s.target.clGetDeviceInfo(device, name, 0, nullptr, &size);
      if (err != CL_SUCCESS) return err;
      std::vector<cl_name_version> list(size / sizeof(cl_name_version) + 1);
      err = s.target.clGetDeviceInfo(device, name, size, list.data(), nullptr);
      if (err != CL_SUCCESS) return err;
      cl_name_version& added = list.back();
      added = cl_name_version{};
      added.version = kMutableVersion;
      std::snprintf(added.name, sizeof(added.name), "%s", kMutableName);
      return CopyOut(list.data(), list.size() * sizeof(cl_name_version), value_size, value,
                     size_ret);
    }
    if (name == CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR) {
      const cl_mutable_dispatch_fields_khr fields = CL_MUTABLE_DISPATCH_ARGUMENTS_KHR;
      return CopyOut(&fields, sizeof(fields), value_size, value, size_ret);
    }
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
  return s.target.clGetDeviceInfo(device, name, value_size, value, size_ret);
}

template <typename Fn>
Fn Below(size_t index) {
  return reinterpret_cast<Fn>(State().ext_below[index - kCoreCount].load());
}

cl_command_buffer_khr CL_API_CALL MutableCreateCommandBuffer(
    cl_uint num_queues, const cl_command_queue* queues,
    const cl_command_buffer_properties_khr* properties, cl_int* errcode_ret) {
  std::vector<cl_command_buffer_properties_khr> props;
  for (const cl_command_buffer_properties_khr* p = properties; p != nullptr && *p != 0; p += 2) {
    cl_command_buffer_properties_khr v = p[1];
    if (p[0] == CL_COMMAND_BUFFER_FLAGS_KHR) v &= ~CL_COMMAND_BUFFER_MUTABLE_KHR;
    props.push_back(p[0]);
    props.push_back(v);
  }
  props.push_back(0);
  return Below<clCreateCommandBufferKHR_fn>(k_clCreateCommandBufferKHR)(
      num_queues, queues, properties == nullptr ? nullptr : props.data(), errcode_ret);
}

cl_int CL_API_CALL MutableCommandNDRangeKernel(
    cl_command_buffer_khr buffer, cl_command_queue queue,
    const cl_ndrange_kernel_command_properties_khr* properties, cl_kernel kernel, cl_uint work_dim,
    const size_t* offset, const size_t* global, const size_t* local, cl_uint num_sync_points,
    const cl_sync_point_khr* sync_points, cl_sync_point_khr* sync_point,
    cl_mutable_command_khr* mutable_handle) {
  LayerState& s = State();
  for (const cl_ndrange_kernel_command_properties_khr* p = properties; p != nullptr && *p != 0;
       p += 2) {
    if (p[0] != CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR ||
        (p[1] & ~cl_ndrange_kernel_command_properties_khr{CL_MUTABLE_DISPATCH_ARGUMENTS_KHR}) !=
            0) {
      return CL_INVALID_VALUE;  // the emulation updates arguments only
    }
  }
  const cl_int err = Below<clCommandNDRangeKernelKHR_fn>(k_clCommandNDRangeKernelKHR)(
      buffer, queue, nullptr, kernel, work_dim, offset, global, local, num_sync_points, sync_points,
      sync_point, nullptr);
  if (err != CL_SUCCESS || mutable_handle == nullptr) return err;
  try {
    auto command = std::make_unique<MutableCommand>(MutableCommand{buffer, kernel});
    std::lock_guard<std::mutex> lock(s.mutable_mu);
    *mutable_handle = reinterpret_cast<cl_mutable_command_khr>(command.get());
    s.mutable_commands[buffer].push_back(std::move(command));
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
  s.target.clRetainKernel(kernel);
  return CL_SUCCESS;
}

cl_int CL_API_CALL MutableUpdate(cl_command_buffer_khr buffer,
                                 const cl_mutable_base_config_khr* config) {
  LayerState& s = State();
  if (config == nullptr || config->type != CL_STRUCTURE_TYPE_MUTABLE_BASE_CONFIG_KHR ||
      config->next != nullptr ||
      (config->num_mutable_dispatch > 0 && config->mutable_dispatch_list == nullptr)) {
    return CL_INVALID_VALUE;
  }
  std::lock_guard<std::mutex> lock(s.mutable_mu);
  auto it = s.mutable_commands.find(buffer);
  if (it == s.mutable_commands.end()) return CL_INVALID_COMMAND_BUFFER_KHR;
  // Validate everything before changing anything.
  std::vector<const MutableCommand*> commands;
  for (cl_uint i = 0; i < config->num_mutable_dispatch; ++i) {
    const cl_mutable_dispatch_config_khr& d = config->mutable_dispatch_list[i];
    const MutableCommand* found = nullptr;
    for (const auto& c : it->second) {
      if (reinterpret_cast<cl_mutable_command_khr>(c.get()) == d.command) found = c.get();
    }
    if (d.type != CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR || d.next != nullptr ||
        found == nullptr || d.num_exec_infos != 0 || d.global_work_offset != nullptr ||
        d.global_work_size != nullptr || d.local_work_size != nullptr ||
        (d.num_args > 0 && d.arg_list == nullptr) ||
        (d.num_svm_args > 0 && d.arg_svm_list == nullptr)) {
      return CL_INVALID_VALUE;
    }
    commands.push_back(found);
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    const cl_mutable_dispatch_config_khr& d = config->mutable_dispatch_list[i];
    for (cl_uint a = 0; a < d.num_args; ++a) {
      const cl_mutable_dispatch_arg_khr& arg = d.arg_list[a];
      const cl_int err =
          s.target.clSetKernelArg(commands[i]->kernel, arg.arg_index, arg.arg_size, arg.arg_value);
      if (err != CL_SUCCESS) return err;
    }
    for (cl_uint a = 0; a < d.num_svm_args; ++a) {
      const cl_mutable_dispatch_arg_khr& arg = d.arg_svm_list[a];
      const cl_int err =
          s.target.clSetKernelArgSVMPointer(commands[i]->kernel, arg.arg_index, arg.arg_value);
      if (err != CL_SUCCESS) return err;
    }
  }
  return CL_SUCCESS;
}

void ForgetMutableCommands(cl_command_buffer_khr buffer) {
  LayerState& s = State();
  std::vector<std::unique_ptr<MutableCommand>> commands;
  {
    std::lock_guard<std::mutex> lock(s.mutable_mu);
    auto it = s.mutable_commands.find(buffer);
    if (it == s.mutable_commands.end()) return;
    commands = std::move(it->second);
    s.mutable_commands.erase(it);
  }
  for (const auto& c : commands) s.target.clReleaseKernel(c->kernel);
}

// ---------------------------------------------------------------------------
// Wrappers.

template <size_t kIndex, Kind kKind, Action kAction, auto kMember>
struct Core;

template <size_t kIndex, Kind kKind, Action kAction, typename R, typename... Args,
          R (CL_API_CALL* cl_icd_dispatch::*kMember)(Args...)>
struct Core<kIndex, kKind, kAction, kMember> {
  static R CL_API_CALL Call(Args... args) {
    if constexpr (kIndex == k_clEnqueueNDRangeKernel) {
      return Invoke<kIndex, kKind, kAction, R, Args...>(&HeldNDRange, args...);
    } else if constexpr (kIndex == k_clGetDeviceInfo) {
      return Invoke<kIndex, kKind, kAction, R, Args...>(&MutableDeviceInfo, args...);
    } else {
      return Invoke<kIndex, kKind, kAction, R, Args...>(State().target.*kMember, args...);
    }
  }
};

template <size_t kIndex, Kind kKind, Action kAction, typename Fn>
struct Ext;

template <size_t kIndex, Kind kKind, Action kAction, typename R, typename... Args>
struct Ext<kIndex, kKind, kAction, R(CL_API_CALL*)(Args...)> {
  static R CL_API_CALL Call(Args... args) {
    auto fn =
        reinterpret_cast<R(CL_API_CALL*)(Args...)>(State().ext_call[kIndex - kCoreCount].load());
    if (fn == nullptr) return Failed<R>(CL_INVALID_OPERATION, args...);
    return Invoke<kIndex, kKind, kAction, R, Args...>(fn, args...);
  }
};

// WrapExtension returns the counted wrapper of extension function `name`
// whose implementation below is `below` (may be null), or `below` itself for
// functions the layer does not count.
void* WrapExtension(const char* name, void* below) {
  if (name == nullptr) return below;
  LayerState& s = State();
  const std::string_view n(name);
  void* call = below;
  if (s.emulate_mutable) {
    if (n == "clUpdateMutableCommandsKHR" && below == nullptr) {
      call = reinterpret_cast<void*>(&MutableUpdate);
    }
    if (n == "clCreateCommandBufferKHR" && below != nullptr) {
      call = reinterpret_cast<void*>(&MutableCreateCommandBuffer);
    }
    if (n == "clCommandNDRangeKernelKHR" && below != nullptr) {
      call = reinterpret_cast<void*>(&MutableCommandNDRangeKernel);
    }
  }
  if (call == nullptr) return nullptr;
#define RECQ_WRAP_EXT(fname, type, kind, action)                                             \
  if (n == #fname) {                                                                         \
    s.ext_below[k_##fname - kCoreCount].store(below);                                        \
    s.ext_call[k_##fname - kCoreCount].store(call);                                          \
    return reinterpret_cast<void*>(&Ext<k_##fname, Kind::kind, Action::action, type>::Call); \
  }
  RECQ_FAULT_EXTENSION_ENTRY_POINTS(RECQ_WRAP_EXT)
#undef RECQ_WRAP_EXT
  return below;
}

void* CL_API_CALL GetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                         const char* name) {
  return WrapExtension(name,
                       State().target.clGetExtensionFunctionAddressForPlatform(platform, name));
}

void* CL_API_CALL GetExtensionFunctionAddress(const char* name) {
  return WrapExtension(name, State().target.clGetExtensionFunctionAddress(name));
}

void InstallOverrides(cl_icd_dispatch& d) {
  const cl_icd_dispatch& t = State().target;
#define RECQ_WRAP_CORE(name, kind, action)                                              \
  if (t.name != nullptr) {                                                              \
    d.name = &Core<k_##name, Kind::kind, Action::action, &cl_icd_dispatch::name>::Call; \
  }
  RECQ_FAULT_CORE_ENTRY_POINTS(RECQ_WRAP_CORE)
#undef RECQ_WRAP_CORE
  d.clGetExtensionFunctionAddressForPlatform = &GetExtensionFunctionAddressForPlatform;
  d.clGetExtensionFunctionAddress = &GetExtensionFunctionAddress;
}

int CopyText(const std::string& text, char* buffer, size_t size, size_t* size_ret) {
  if (size_ret != nullptr) *size_ret = text.size() + 1;
  if (buffer == nullptr) return CL_SUCCESS;
  if (size < text.size() + 1) return CL_INVALID_VALUE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return CL_SUCCESS;
}

}  // namespace
}  // namespace recq::fault_layer

using recq::fault_layer::State;

extern "C" {

RECQ_LAYER_EXPORT CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name,
                                                                 size_t param_value_size,
                                                                 void* param_value,
                                                                 size_t* param_value_size_ret) {
  if (param_name != CL_LAYER_API_VERSION) return CL_INVALID_VALUE;
  const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  return recq::fault_layer::CopyOut(&version, sizeof(version), param_value_size, param_value,
                                    param_value_size_ret);
}

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
  const char* emulate = std::getenv("RECQ_FAULT_LAYER_KHR_MUTABLE");
  s.emulate_mutable.store(emulate != nullptr && *emulate != '\0' && std::strcmp(emulate, "0") != 0);
  const char* no_svm = std::getenv("RECQ_FAULT_LAYER_NO_SVM");
  s.no_svm.store(no_svm != nullptr && *no_svm != '\0' && std::strcmp(no_svm, "0") != 0);
  for (auto [var, size] :
       {std::pair{"RECQ_FAULT_LAYER_GLOBAL_MEM_SIZE", &s.global_mem_size},
        std::pair{"RECQ_FAULT_LAYER_MAX_MEM_ALLOC_SIZE", &s.max_mem_alloc_size}}) {
    const char* text = std::getenv(var);
    size->store(text == nullptr ? 0 : std::strtoull(text, nullptr, 10));
  }
  std::string problem;
  if (!s.rules.Configure(std::getenv("RECQ_FAULT_LAYER_FAIL"), &problem)) {
    std::fprintf(stderr, "recq fault layer: ignoring RECQ_FAULT_LAYER_FAIL: %s\n", problem.c_str());
  }
  s.dispatch = s.target;
  recq::fault_layer::InstallOverrides(s.dispatch);
  *num_entries_ret = static_cast<cl_uint>(kOurEntries);
  *layer_dispatch_ret = &s.dispatch;
  return CL_SUCCESS;
}

// Test hooks (see fault_layer_hooks.h for the contracts).
RECQ_LAYER_EXPORT int recqFaultLayerSetFault(const char* spec) {
  try {
    std::string problem;
    if (State().rules.Configure(spec, &problem)) return CL_SUCCESS;
    std::fprintf(stderr, "recq fault layer: recqFaultLayerSetFault: %s\n", problem.c_str());
    return CL_INVALID_VALUE;
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
}

RECQ_LAYER_EXPORT void recqFaultLayerResetCounts() { State().rules.ResetCounts(); }

RECQ_LAYER_EXPORT int recqFaultLayerCallCounts(char* buffer, size_t size, size_t* size_ret) {
  try {
    return recq::fault_layer::CopyText(State().rules.Counts(), buffer, size, size_ret);
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
}

RECQ_LAYER_EXPORT int recqFaultLayerLiveObjects(char* buffer, size_t size, size_t* size_ret) {
  try {
    return recq::fault_layer::CopyText(State().objects.Report(), buffer, size, size_ret);
  } catch (...) {
    return CL_OUT_OF_HOST_MEMORY;
  }
}

RECQ_LAYER_EXPORT int recqFaultLayerSetKhrMutable(int emulate) {
  State().emulate_mutable.store(emulate != 0);
  return CL_SUCCESS;
}

RECQ_LAYER_EXPORT int recqFaultLayerSetDeviceMemory(unsigned long long global_mem_size,
                                                    unsigned long long max_mem_alloc_size) {
  State().global_mem_size.store(global_mem_size);
  State().max_mem_alloc_size.store(max_mem_alloc_size);
  return CL_SUCCESS;
}

RECQ_LAYER_EXPORT int recqFaultLayerHoldEvents(int hold) {
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.hold_mu);
  s.hold = hold != 0;
  if (!s.hold && s.gate != nullptr) {
    s.target.clSetUserEventStatus(s.gate, CL_COMPLETE);
    s.target.clReleaseEvent(s.gate);
    s.gate = nullptr;
  }
  return CL_SUCCESS;
}

}  // extern "C"
