#include "backends/opencl/device.h"

#include <CL/cl_ext.h>
#include <algorithm>

#include <cctype>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "backends/opencl/cl_error.h"
#include "engine/status_macros.h"

namespace recq::cl {

absl::StatusOr<std::string> DeviceString(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  RECQ_RETURN_IF_ERROR(
      CheckCl(clGetDeviceInfo(device, param, 0, nullptr, &size), "clGetDeviceInfo"));
  std::string value(size, '\0');
  RECQ_RETURN_IF_ERROR(
      CheckCl(clGetDeviceInfo(device, param, size, value.data(), nullptr), "clGetDeviceInfo"));
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

absl::StatusOr<std::string> PlatformString(cl_platform_id platform, cl_platform_info param) {
  size_t size = 0;
  RECQ_RETURN_IF_ERROR(
      CheckCl(clGetPlatformInfo(platform, param, 0, nullptr, &size), "clGetPlatformInfo"));
  std::string value(size, '\0');
  RECQ_RETURN_IF_ERROR(CheckCl(clGetPlatformInfo(platform, param, size, value.data(), nullptr),
                               "clGetPlatformInfo"));
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

template <typename T>
absl::StatusOr<T> DeviceScalar(cl_device_id device, cl_device_info param) {
  T value{};
  RECQ_RETURN_IF_ERROR(
      CheckCl(clGetDeviceInfo(device, param, sizeof(T), &value, nullptr), "clGetDeviceInfo"));
  return value;
}
template absl::StatusOr<cl_uint> DeviceScalar<cl_uint>(cl_device_id, cl_device_info);
template absl::StatusOr<cl_ulong> DeviceScalar<cl_ulong>(cl_device_id, cl_device_info);

namespace {

struct Candidate {
  cl_platform_id platform;
  cl_device_id device;
  cl_device_type type;
  std::string device_name;
  std::string platform_name;
};

absl::StatusOr<std::vector<Candidate>> ListDevices() {
  // PoCL 3.1 crashes when several threads make a process's first OpenCL
  // queries at once; device discovery is serialized process-wide.
  static std::mutex* const discovery_mu = new std::mutex;
  std::lock_guard<std::mutex> lock(*discovery_mu);
  cl_uint num_platforms = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && num_platforms == 0)) {
    return absl::NotFoundError(
        "no OpenCL platform found (is an ICD such as pocl-opencl-icd installed?)");
  }
  RECQ_RETURN_IF_ERROR(CheckCl(err, "clGetPlatformIDs"));
  std::vector<cl_platform_id> platforms(num_platforms);
  RECQ_RETURN_IF_ERROR(
      CheckCl(clGetPlatformIDs(num_platforms, platforms.data(), nullptr), "clGetPlatformIDs"));
  std::vector<Candidate> out;
  for (cl_platform_id platform : platforms) {
    cl_uint num_devices = 0;
    err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && num_devices == 0)) continue;
    RECQ_RETURN_IF_ERROR(CheckCl(err, "clGetDeviceIDs"));
    std::vector<cl_device_id> devices(num_devices);
    RECQ_RETURN_IF_ERROR(
        CheckCl(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, num_devices, devices.data(), nullptr),
                "clGetDeviceIDs"));
    RECQ_ASSIGN_OR_RETURN(std::string platform_name, PlatformString(platform, CL_PLATFORM_NAME));
    for (cl_device_id device : devices) {
      RECQ_ASSIGN_OR_RETURN(std::string name, DeviceString(device, CL_DEVICE_NAME));
      RECQ_ASSIGN_OR_RETURN(cl_ulong type, DeviceScalar<cl_ulong>(device, CL_DEVICE_TYPE));
      out.push_back({platform, device, static_cast<cl_device_type>(type), name, platform_name});
    }
  }
  if (out.empty()) return absl::NotFoundError("no OpenCL device found on any platform");
  return out;
}

}  // namespace

absl::StatusOr<DeviceChoice> SelectDevice(absl::string_view spec) {
  RECQ_ASSIGN_OR_RETURN(std::vector<Candidate> devices, ListDevices());
  std::string wanted = absl::AsciiStrToLower(spec);
  if (wanted.empty() || wanted == "auto") {
    for (cl_device_type type :
         {cl_device_type{CL_DEVICE_TYPE_GPU}, cl_device_type{CL_DEVICE_TYPE_CPU}}) {
      for (const Candidate& c : devices) {
        if (c.type & type) return DeviceChoice{c.platform, c.device};
      }
    }
    return DeviceChoice{devices.front().platform, devices.front().device};
  }
  for (const Candidate& c : devices) {
    if (absl::StrContains(absl::AsciiStrToLower(c.device_name), wanted) ||
        absl::StrContains(absl::AsciiStrToLower(c.platform_name), wanted)) {
      return DeviceChoice{c.platform, c.device};
    }
  }
  std::vector<std::string> names;
  for (const Candidate& c : devices)
    names.push_back(absl::StrCat("'", c.device_name, "' (", c.platform_name, ")"));
  return absl::NotFoundError(absl::StrCat("no OpenCL device matches '", spec,
                                          "'; the devices are: ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<DeviceInfo> QueryDeviceInfo(cl_platform_id platform, cl_device_id device) {
  DeviceInfo info;
  RECQ_ASSIGN_OR_RETURN(info.name, DeviceString(device, CL_DEVICE_NAME));
  RECQ_ASSIGN_OR_RETURN(info.vendor, DeviceString(device, CL_DEVICE_VENDOR));
  RECQ_ASSIGN_OR_RETURN(info.version, DeviceString(device, CL_DEVICE_VERSION));
  RECQ_ASSIGN_OR_RETURN(info.driver_version, DeviceString(device, CL_DRIVER_VERSION));
  RECQ_ASSIGN_OR_RETURN(info.platform_name, PlatformString(platform, CL_PLATFORM_NAME));
  RECQ_ASSIGN_OR_RETURN(info.platform_version, PlatformString(platform, CL_PLATFORM_VERSION));
  RECQ_ASSIGN_OR_RETURN(std::string extensions, DeviceString(device, CL_DEVICE_EXTENSIONS));
  info.extensions = absl::StrSplit(extensions, ' ', absl::SkipEmpty());
  std::sort(info.extensions.begin(), info.extensions.end());
  RECQ_ASSIGN_OR_RETURN(cl_ulong type, DeviceScalar<cl_ulong>(device, CL_DEVICE_TYPE));
  info.type = static_cast<cl_device_type>(type);
  RECQ_ASSIGN_OR_RETURN(info.compute_units,
                        DeviceScalar<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS));
  RECQ_ASSIGN_OR_RETURN(info.max_work_group_size,
                        DeviceScalar<size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  RECQ_ASSIGN_OR_RETURN(info.global_mem_bytes,
                        DeviceScalar<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE));
  RECQ_ASSIGN_OR_RETURN(info.max_alloc_bytes,
                        DeviceScalar<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  return info;
}

}  // namespace recq::cl
