// Device enumeration, selection and device/platform queries.
//
// A device spec (ContextOptions::device, RECQ_DEVICE) is one of
//   ""  or "auto"          the first GPU of any platform, else the first CPU,
//                          else the first device;
//   "gpu:N", "cpu:N", "accelerator:N"
//                          the N-th device of that type, counting across
//                          platforms in enumeration order;
//   "P:D"                  device D of platform P (both zero-based);
//   anything else          a case-insensitive substring of the device name or
//                          of the platform name (the first match wins).
// Indices are those `recq devices` prints.
#ifndef RECQ_BACKENDS_OPENCL_DEVICE_H_
#define RECQ_BACKENDS_OPENCL_DEVICE_H_

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "recq/context.h"

namespace recq::cl {

// A parsed device spec.
struct DeviceSpec {
  enum class Kind { kAuto, kName, kTypeIndex, kPlatformDevice };
  Kind kind = Kind::kAuto;
  std::string name;         // kName: the lower-cased substring
  cl_device_type type = 0;  // kTypeIndex: CL_DEVICE_TYPE_GPU, _CPU or _ACCELERATOR
  size_t index = 0;         // kTypeIndex: among devices of `type`; kPlatformDevice: D
  size_t platform = 0;      // kPlatformDevice: P
};

// ParseDeviceSpec reads a device spec (see the top of this file). Only a
// number too large for an index is an error (InvalidArgument).
[[nodiscard]] absl::StatusOr<DeviceSpec> ParseDeviceSpec(absl::string_view text);

// One device of the enumeration, with its indices.
struct DeviceEntryRaw {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_device_type type = 0;
  std::string device_name;
  std::string platform_name;
  size_t platform_index = 0;  // P
  size_t device_index = 0;    // D, within the platform
  size_t type_index = 0;      // N of "<type>:N" for the device's primary type
};

// Every platform (also those without devices) and every device, in order.
struct DeviceTable {
  std::vector<std::string> platform_names;
  std::vector<DeviceEntryRaw> devices;
};

// EnumerateDevices lists every device of every platform. NotFound when there
// is no platform or no device. Serialized process-wide (PoCL 3.1 crashes when
// several threads make a process's first OpenCL queries at once).
[[nodiscard]] absl::StatusOr<DeviceTable> EnumerateDevices();

// AssignTypeIndices numbers the devices of each primary type in table order
// (EnumerateDevices calls it; tests call it on hand-made tables).
void AssignTypeIndices(DeviceTable& table);

// PrimaryType returns the first of GPU, CPU, ACCELERATOR, CUSTOM that `type`
// includes (DEFAULT and unknown bits map to 0).
cl_device_type PrimaryType(cl_device_type type);

// MatchDevice returns the position in `table.devices` of the device that
// `spec` (parsed from `text`) selects. Errors: NotFound naming the devices
// there are when a name matches nothing or an index is out of range (saying
// how many devices of that type, or platforms, or devices of the platform
// exist).
[[nodiscard]] absl::StatusOr<size_t> MatchDevice(const DeviceSpec& spec, absl::string_view text,
                                                 const DeviceTable& table);

struct DeviceChoice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

// SelectDevice enumerates the devices and picks the one `spec` selects.
[[nodiscard]] absl::StatusOr<DeviceChoice> SelectDevice(absl::string_view spec);

// QueryDeviceInfo reads the facts recq uses about `device`.
[[nodiscard]] absl::StatusOr<DeviceInfo> QueryDeviceInfo(cl_platform_id platform,
                                                         cl_device_id device);

// DeviceString / PlatformString read a string-valued query.
[[nodiscard]] absl::StatusOr<std::string> DeviceString(cl_device_id device, cl_device_info param);
[[nodiscard]] absl::StatusOr<std::string> PlatformString(cl_platform_id platform,
                                                         cl_platform_info param);

// DeviceScalar reads a fixed-size device query.
template <typename T>
[[nodiscard]] absl::StatusOr<T> DeviceScalar(cl_device_id device, cl_device_info param);

}  // namespace recq::cl

#endif  // RECQ_BACKENDS_OPENCL_DEVICE_H_
