#include "backends/opencl/device.h"

#include <CL/cl_ext.h>
#include <algorithm>

#include <cctype>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "backends/opencl/cl_error.h"
#include "recq/status_macros.h"

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

// The device types an index spec may name, with their spec prefixes.
struct TypeName {
  const char* prefix;
  cl_device_type type;
};
constexpr TypeName kIndexTypes[] = {
    {"gpu", CL_DEVICE_TYPE_GPU},
    {"cpu", CL_DEVICE_TYPE_CPU},
    {"accelerator", CL_DEVICE_TYPE_ACCELERATOR},
};

// ParseIndex reads a non-empty run of decimal digits. False when `text` is
// not all digits; `*too_large` when the digits do not fit an index.
bool ParseIndex(absl::string_view text, size_t* value, bool* too_large) {
  if (text.empty() || text.size() > 20) {
    *too_large = text.size() > 20 && std::all_of(text.begin(), text.end(), [](char c) {
                   return std::isdigit(static_cast<unsigned char>(c));
                 });
    return false;
  }
  size_t v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    size_t digit = static_cast<size_t>(c - '0');
    if (v > (static_cast<size_t>(INT32_MAX) - digit) / 10) {
      *too_large = true;
      return false;
    }
    v = v * 10 + digit;
  }
  *value = v;
  return true;
}

std::string Describe(const DeviceEntryRaw& d) {
  cl_device_type type = PrimaryType(d.type);
  return absl::StrCat(d.platform_index, ":", d.device_index, " ", DeviceTypeName(type), ":",
                      d.type_index, " '", d.device_name, "' (", d.platform_name, ")");
}

std::string DeviceListText(const DeviceTable& table) {
  std::vector<std::string> names;
  for (const DeviceEntryRaw& d : table.devices) names.push_back(Describe(d));
  return absl::StrJoin(names, ", ");
}

}  // namespace

cl_device_type PrimaryType(cl_device_type type) {
  for (cl_device_type t :
       {cl_device_type{CL_DEVICE_TYPE_GPU}, cl_device_type{CL_DEVICE_TYPE_CPU},
        cl_device_type{CL_DEVICE_TYPE_ACCELERATOR}, cl_device_type{CL_DEVICE_TYPE_CUSTOM}}) {
    if (type & t) return t;
  }
  return 0;
}

absl::StatusOr<DeviceSpec> ParseDeviceSpec(absl::string_view text) {
  DeviceSpec spec;
  std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  if (lower.empty() || lower == "auto") return spec;
  std::vector<absl::string_view> parts = absl::StrSplit(lower, absl::MaxSplits(':', 1));
  if (parts.size() == 2) {
    size_t second = 0;
    bool too_large = false;
    bool second_ok = ParseIndex(parts[1], &second, &too_large);
    bool first_is_type = false;
    for (const TypeName& t : kIndexTypes) {
      if (parts[0] != t.prefix) continue;
      first_is_type = true;
      if (second_ok) {
        spec.kind = DeviceSpec::Kind::kTypeIndex;
        spec.type = t.type;
        spec.index = second;
        return spec;
      }
    }
    size_t first = 0;
    bool first_too_large = false;
    bool first_ok = !first_is_type && ParseIndex(parts[0], &first, &first_too_large);
    if (first_ok && second_ok) {
      spec.kind = DeviceSpec::Kind::kPlatformDevice;
      spec.platform = first;
      spec.index = second;
      return spec;
    }
    if ((too_large && (first_is_type || first_ok)) || (first_too_large && second_ok)) {
      return absl::InvalidArgumentError(
          absl::StrCat("device '", text, "': the index is too large; expected ",
                       "gpu:N, cpu:N, accelerator:N or P:D with small decimal indices"));
    }
  }
  spec.kind = DeviceSpec::Kind::kName;
  spec.name = std::move(lower);
  return spec;
}

absl::StatusOr<DeviceTable> EnumerateDevices() {
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
  DeviceTable table;
  for (size_t p = 0; p < platforms.size(); ++p) {
    cl_platform_id platform = platforms[p];
    RECQ_ASSIGN_OR_RETURN(std::string platform_name, PlatformString(platform, CL_PLATFORM_NAME));
    table.platform_names.push_back(platform_name);
    cl_uint num_devices = 0;
    err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && num_devices == 0)) continue;
    RECQ_RETURN_IF_ERROR(CheckCl(err, "clGetDeviceIDs"));
    std::vector<cl_device_id> devices(num_devices);
    RECQ_RETURN_IF_ERROR(
        CheckCl(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, num_devices, devices.data(), nullptr),
                "clGetDeviceIDs"));
    for (size_t d = 0; d < devices.size(); ++d) {
      DeviceEntryRaw entry;
      entry.platform = platform;
      entry.device = devices[d];
      RECQ_ASSIGN_OR_RETURN(entry.device_name, DeviceString(devices[d], CL_DEVICE_NAME));
      RECQ_ASSIGN_OR_RETURN(cl_ulong type, DeviceScalar<cl_ulong>(devices[d], CL_DEVICE_TYPE));
      entry.type = static_cast<cl_device_type>(type);
      entry.platform_name = platform_name;
      entry.platform_index = p;
      entry.device_index = d;
      table.devices.push_back(std::move(entry));
    }
  }
  if (table.devices.empty()) return absl::NotFoundError("no OpenCL device found on any platform");
  AssignTypeIndices(table);
  return table;
}

void AssignTypeIndices(DeviceTable& table) {
  std::map<cl_device_type, size_t> counts;
  for (DeviceEntryRaw& d : table.devices) d.type_index = counts[PrimaryType(d.type)]++;
}

absl::StatusOr<size_t> MatchDevice(const DeviceSpec& spec, absl::string_view text,
                                   const DeviceTable& table) {
  const std::vector<DeviceEntryRaw>& devices = table.devices;
  if (devices.empty()) return absl::NotFoundError("no OpenCL device found on any platform");
  switch (spec.kind) {
    case DeviceSpec::Kind::kAuto:
      for (cl_device_type type :
           {cl_device_type{CL_DEVICE_TYPE_GPU}, cl_device_type{CL_DEVICE_TYPE_CPU}}) {
        for (size_t i = 0; i < devices.size(); ++i) {
          if (devices[i].type & type) return i;
        }
      }
      return 0;
    case DeviceSpec::Kind::kName:
      for (size_t i = 0; i < devices.size(); ++i) {
        if (absl::StrContains(absl::AsciiStrToLower(devices[i].device_name), spec.name) ||
            absl::StrContains(absl::AsciiStrToLower(devices[i].platform_name), spec.name)) {
          return i;
        }
      }
      return absl::NotFoundError(absl::StrCat(
          "no OpenCL device matches '", text,
          "' (a device or platform name substring; gpu:N, cpu:N or P:D select by index); "
          "the devices are: ",
          DeviceListText(table)));
    case DeviceSpec::Kind::kTypeIndex: {
      size_t count = 0;
      for (size_t i = 0; i < devices.size(); ++i) {
        if (PrimaryType(devices[i].type) != spec.type) continue;
        if (count == spec.index) return i;
        ++count;
      }
      const char* type = DeviceTypeName(spec.type);
      return absl::NotFoundError(absl::StrCat(
          "device '", text, "': ", type, " index ", spec.index, " is out of range; there ",
          count == 1 ? "is " : "are ", count, " ", type, " device", count == 1 ? "" : "s",
          count == 0   ? ""
          : count == 1 ? absl::StrCat(" (", type, ":0)")
                       : absl::StrCat(" (", type, ":0 to ", type, ":", count - 1, ")"),
          "; the devices are: ", DeviceListText(table)));
    }
    case DeviceSpec::Kind::kPlatformDevice: {
      size_t platforms = table.platform_names.size();
      if (spec.platform >= platforms) {
        return absl::NotFoundError(absl::StrCat(
            "device '", text, "': platform index ", spec.platform, " is out of range; there ",
            platforms == 1 ? "is 1 platform" : absl::StrCat("are ", platforms, " platforms"),
            "; the devices are: ", DeviceListText(table)));
      }
      size_t count = 0;
      for (size_t i = 0; i < devices.size(); ++i) {
        if (devices[i].platform_index != spec.platform) continue;
        if (devices[i].device_index == spec.index) return i;
        ++count;
      }
      return absl::NotFoundError(absl::StrCat(
          "device '", text, "': device index ", spec.index, " is out of range; platform ",
          spec.platform, " '", table.platform_names[spec.platform], "' has ", count, " device",
          count == 1 ? "" : "s", "; the devices are: ", DeviceListText(table)));
    }
  }
  return absl::InternalError("unknown device spec kind");
}

absl::StatusOr<DeviceChoice> SelectDevice(absl::string_view spec_text) {
  RECQ_ASSIGN_OR_RETURN(DeviceSpec spec, ParseDeviceSpec(spec_text));
  RECQ_ASSIGN_OR_RETURN(DeviceTable table, EnumerateDevices());
  RECQ_ASSIGN_OR_RETURN(size_t i, MatchDevice(spec, spec_text, table));
  return DeviceChoice{table.devices[i].platform, table.devices[i].device};
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
  absl::StatusOr<cl_uint> lanes =
      DeviceScalar<cl_uint>(device, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT);
  info.native_vector_width_float = lanes.ok() ? *lanes : 0;
  RECQ_ASSIGN_OR_RETURN(info.global_mem_bytes,
                        DeviceScalar<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE));
  RECQ_ASSIGN_OR_RETURN(info.max_alloc_bytes,
                        DeviceScalar<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  // Devices before OpenCL 2.0 do not know these queries: no SVM then.
  absl::StatusOr<cl_ulong> svm = DeviceScalar<cl_ulong>(device, CL_DEVICE_SVM_CAPABILITIES);
  info.svm_capabilities = svm.ok() ? static_cast<cl_device_svm_capabilities>(*svm) : 0;
  absl::StatusOr<cl_uint> align = DeviceScalar<cl_uint>(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
  if (align.ok() && *align >= 8) info.mem_base_addr_align_bytes = *align / 8;
  RECQ_ASSIGN_OR_RETURN(info.local_mem_bytes,
                        DeviceScalar<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE));
  RECQ_ASSIGN_OR_RETURN(info.local_mem_type,
                        DeviceScalar<cl_uint>(device, CL_DEVICE_LOCAL_MEM_TYPE));
  RECQ_ASSIGN_OR_RETURN(cl_uint images, DeviceScalar<cl_uint>(device, CL_DEVICE_IMAGE_SUPPORT));
  info.image_support = images != CL_FALSE;
  if (info.image_support) {
    RECQ_ASSIGN_OR_RETURN(info.image2d_max_width,
                          DeviceScalar<size_t>(device, CL_DEVICE_IMAGE2D_MAX_WIDTH));
    RECQ_ASSIGN_OR_RETURN(info.image2d_max_height,
                          DeviceScalar<size_t>(device, CL_DEVICE_IMAGE2D_MAX_HEIGHT));
    // OpenCL 1.2 and later; an older device has no image buffers.
    absl::StatusOr<size_t> buffer = DeviceScalar<size_t>(device, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE);
    info.image_max_buffer_size = buffer.ok() ? *buffer : 0;
  }
  // Vendor queries: only where the extension is listed (others may fail or
  // return garbage), and a failure leaves the fact unknown.
  if (info.HasExtension("cl_intel_required_subgroup_size")) {
    size_t size = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL, 0, nullptr, &size) == CL_SUCCESS &&
        size >= sizeof(size_t)) {
      std::vector<size_t> sizes(size / sizeof(size_t));
      if (clGetDeviceInfo(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL, sizes.size() * sizeof(size_t),
                          sizes.data(), nullptr) == CL_SUCCESS) {
        info.sub_group_sizes_intel = std::move(sizes);
      }
    }
  }
  if (info.HasExtension("cl_intel_device_attribute_query")) {
    absl::StatusOr<cl_uint> ip = DeviceScalar<cl_uint>(device, CL_DEVICE_IP_VERSION_INTEL);
    if (ip.ok()) info.ip_version_intel = *ip;
  }
  if (info.HasExtension("cl_amd_device_attribute_query")) {
    absl::StatusOr<cl_uint> width = DeviceScalar<cl_uint>(device, CL_DEVICE_WAVEFRONT_WIDTH_AMD);
    if (width.ok()) info.wavefront_width_amd = *width;
  }
  if (info.HasExtension("cl_nv_device_attribute_query")) {
    absl::StatusOr<cl_uint> major =
        DeviceScalar<cl_uint>(device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
    absl::StatusOr<cl_uint> minor =
        DeviceScalar<cl_uint>(device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
    if (major.ok() && minor.ok()) info.compute_capability_nv = *major * 10 + *minor;
  }
  return info;
}

}  // namespace recq::cl
