#include "testing/fault_layer_client.h"

#include <CL/cl.h>
#include <dlfcn.h>

#include <cstdlib>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace recq::testing {
namespace {

std::string Fetch(int (*fn)(char*, size_t, size_t*)) {
  size_t size = 0;
  if (fn(nullptr, 0, &size) != CL_SUCCESS) return "";
  std::string text(size, '\0');
  if (fn(text.data(), text.size(), &size) != CL_SUCCESS) return "";
  text.resize(size > 0 ? size - 1 : 0);
  return text;
}

std::vector<std::pair<std::string, uint64_t>> ParseLines(const std::string& text) {
  std::vector<std::pair<std::string, uint64_t>> out;
  std::istringstream in(text);
  std::string name;
  uint64_t count = 0;
  while (in >> name >> count) out.emplace_back(name, count);
  return out;
}

}  // namespace

absl::StatusOr<FaultLayerClient> FaultLayerClient::Find() {
  // Copied before the first OpenCL call: ocl-icd 2.3.1 splits the variable
  // in place (strtok) when it loads the layers.
  const char* env = std::getenv("OPENCL_LAYERS");
  if (env == nullptr) return absl::NotFoundError("OPENCL_LAYERS is not set");
  const std::string layers = env;
  cl_uint platforms = 0;
  clGetPlatformIDs(0, nullptr, &platforms);  // makes the loader load the layers
  for (absl::string_view path : absl::StrSplit(layers, ':', absl::SkipEmpty())) {
    void* lib = dlopen(std::string(path).c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) continue;
    FaultLayerClient client;
    client.set_fault_ =
        reinterpret_cast<recqFaultLayerSetFault_fn>(dlsym(lib, "recqFaultLayerSetFault"));
    client.reset_counts_ =
        reinterpret_cast<recqFaultLayerResetCounts_fn>(dlsym(lib, "recqFaultLayerResetCounts"));
    client.call_counts_ =
        reinterpret_cast<recqFaultLayerCallCounts_fn>(dlsym(lib, "recqFaultLayerCallCounts"));
    client.live_objects_ =
        reinterpret_cast<recqFaultLayerLiveObjects_fn>(dlsym(lib, "recqFaultLayerLiveObjects"));
    client.hold_ =
        reinterpret_cast<recqFaultLayerHoldEvents_fn>(dlsym(lib, "recqFaultLayerHoldEvents"));
    client.set_khr_mutable_ =
        reinterpret_cast<recqFaultLayerSetKhrMutable_fn>(dlsym(lib, "recqFaultLayerSetKhrMutable"));
    client.set_device_memory_ = reinterpret_cast<recqFaultLayerSetDeviceMemory_fn>(
        dlsym(lib, "recqFaultLayerSetDeviceMemory"));
    dlclose(lib);  // drops the NOLOAD reference; the loader keeps its own
    if (client.set_fault_ && client.reset_counts_ && client.call_counts_ && client.live_objects_ &&
        client.hold_ && client.set_khr_mutable_ && client.set_device_memory_) {
      return client;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("no loaded layer in OPENCL_LAYERS='", layers, "' exports the fault hooks"));
}

absl::Status FaultLayerClient::SetFault(const std::string& spec) const {
  if (set_fault_(spec.c_str()) != CL_SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat("fault layer rejected '", spec, "'"));
  }
  return absl::OkStatus();
}

void FaultLayerClient::ResetCounts() const { reset_counts_(); }

std::vector<std::pair<std::string, uint64_t>> FaultLayerClient::CallCounts() const {
  return ParseLines(Fetch(call_counts_));
}

std::map<std::string, uint64_t> FaultLayerClient::LiveObjects() const {
  std::map<std::string, uint64_t> out;
  for (auto& [name, count] : ParseLines(Fetch(live_objects_))) out[name] = count;
  return out;
}

void FaultLayerClient::Hold(bool hold) const { hold_(hold ? 1 : 0); }

void FaultLayerClient::SetKhrMutable(bool emulate) const { set_khr_mutable_(emulate ? 1 : 0); }

void FaultLayerClient::SetDeviceMemory(uint64_t global_mem_size,
                                       uint64_t max_mem_alloc_size) const {
  set_device_memory_(global_mem_size, max_mem_alloc_size);
}

std::string LiveObjectsText(const std::map<std::string, uint64_t>& live) {
  std::string text = "{";
  for (const auto& [name, count] : live) {
    absl::StrAppend(&text, text.size() > 1 ? ", " : "", name, ": ", count);
  }
  return text + "}";
}

std::string ReleasedKind(const std::string& entry) {
  static const auto* kinds = new std::map<std::string, std::string>{
      {"clReleaseContext", "context"},
      {"clReleaseCommandQueue", "queue"},
      {"clReleaseMemObject", "mem"},
      {"clReleaseSampler", "sampler"},
      {"clReleaseProgram", "program"},
      {"clReleaseKernel", "kernel"},
      {"clReleaseEvent", "event"},
      {"clReleaseRecordingQCOM", "qcom_recording"},
      {"clReleaseCommandBufferKHR", "command_buffer"},
  };
  auto it = kinds->find(entry);
  return it == kinds->end() ? "?" : it->second;
}

std::map<std::string, uint64_t> LiveDelta(const std::map<std::string, uint64_t>& after,
                                          const std::map<std::string, uint64_t>& before) {
  std::map<std::string, uint64_t> delta;
  for (const auto& [name, count] : after) {
    auto it = before.find(name);
    const uint64_t old = it == before.end() ? 0 : it->second;
    if (count > old) delta[name] = count - old;
  }
  return delta;
}

}  // namespace recq::testing
