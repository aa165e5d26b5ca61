// Device selection and device/platform queries.
#ifndef RECQ_BACKENDS_OPENCL_DEVICE_H_
#define RECQ_BACKENDS_OPENCL_DEVICE_H_

#include <CL/cl.h>

#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "recq/context.h"

namespace recq::cl {

struct DeviceChoice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

// SelectDevice picks a device. `spec` is "auto" (or empty): the first GPU of
// any platform, else the first CPU, else the first device; otherwise a
// case-insensitive substring of the device or platform name. NotFound lists
// the devices there are.
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
