// Validation of image2d bindings (engine/image_binding.h).
#include "engine/image_binding.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_error.h"

namespace recq::internal {

const char* MemObjectTypeName(cl_mem_object_type type) {
  switch (type) {
    case CL_MEM_OBJECT_BUFFER:
      return "a buffer";
    case CL_MEM_OBJECT_IMAGE2D:
      return "an image2d";
    case CL_MEM_OBJECT_IMAGE3D:
      return "an image3d";
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
      return "an image2d array";
    case CL_MEM_OBJECT_IMAGE1D:
      return "an image1d";
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
      return "an image1d array";
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
      return "an image1d buffer";
    default:
      return "a memory object of an unknown type";
  }
}

namespace {

const char* ChannelOrderName(cl_channel_order order) {
  switch (order) {
    case CL_R:
      return "CL_R";
    case CL_RG:
      return "CL_RG";
    case CL_RGB:
      return "CL_RGB";
    case CL_RGBA:
      return "CL_RGBA";
    case CL_BGRA:
      return "CL_BGRA";
    case CL_ARGB:
      return "CL_ARGB";
    case CL_A:
      return "CL_A";
    case CL_INTENSITY:
      return "CL_INTENSITY";
    case CL_LUMINANCE:
      return "CL_LUMINANCE";
    default:
      return "another channel order";
  }
}

const char* ChannelTypeName(cl_channel_type type) {
  switch (type) {
    case CL_UNORM_INT8:
      return "CL_UNORM_INT8";
    case CL_FLOAT:
      return "CL_FLOAT";
    case CL_HALF_FLOAT:
      return "CL_HALF_FLOAT";
    case CL_UNSIGNED_INT8:
      return "CL_UNSIGNED_INT8";
    case CL_SNORM_INT8:
      return "CL_SNORM_INT8";
    case CL_UNORM_INT16:
      return "CL_UNORM_INT16";
    default:
      return "another channel type";
  }
}

}  // namespace

absl::Status CheckImageBinding(const Slot& slot, cl_mem mem, cl_mem_object_type type) {
  const int64_t height = slot.desc.shape[1], width = slot.desc.shape[2];
  const int64_t channels = slot.desc.shape[3];
  const char* want_order = channels == 1 ? "CL_R"
                           : channels == 2
                               ? "CL_RG (or CL_RGBA of half the width, two pairs a texel)"
                               : "CL_RGBA or CL_BGRA";
  const cl_channel_type want_type = slot.desc.dtype == DataType::kUInt8 ? CL_UNORM_INT8 : CL_FLOAT;
  const std::string want = absl::StrCat("an image2d ", width, "x", height, " of ", want_order,
                                        " / ", ChannelTypeName(want_type));
  if (type != CL_MEM_OBJECT_IMAGE2D) {
    return absl::InvalidArgumentError(absl::StrCat("binding '", slot.name, "' is ",
                                                   MemObjectTypeName(type), "; the engine binds ",
                                                   want, " here"));
  }
  cl_image_format format = {};
  size_t w = 0, h = 0;
  cl_mem_flags flags = 0;
  cl_int err = clGetImageInfo(mem, CL_IMAGE_FORMAT, sizeof(format), &format, nullptr);
  if (err == CL_SUCCESS) err = clGetImageInfo(mem, CL_IMAGE_WIDTH, sizeof(w), &w, nullptr);
  if (err == CL_SUCCESS) err = clGetImageInfo(mem, CL_IMAGE_HEIGHT, sizeof(h), &h, nullptr);
  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof(flags), &flags, nullptr);
  if (err != CL_SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat("binding '", slot.name, "': clGetImageInfo failed (",
                     cl::ErrorName(err) ? cl::ErrorName(err) : "?", ")"));
  }
  const cl_channel_order order = format.image_channel_order;
  // A 2-channel plane (NV12's UV) may also be CL_RGBA holding two pairs per
  // texel, width / 2 texels wide, for devices without CL_RG.
  const bool packed = channels == 2 && order == CL_RGBA;
  const bool order_ok = channels == 1   ? order == CL_R
                        : channels == 2 ? order == CL_RG || packed
                                        : order == CL_RGBA || order == CL_BGRA;
  if (!order_ok || format.image_channel_data_type != want_type) {
    return absl::InvalidArgumentError(
        absl::StrCat("binding '", slot.name, "' is an image of ", ChannelOrderName(order), " / ",
                     ChannelTypeName(format.image_channel_data_type), "; the engine binds ", want));
  }
  if ((packed ? static_cast<int64_t>(w) * 2 != width : static_cast<int64_t>(w) != width) ||
      static_cast<int64_t>(h) != height) {
    return absl::InvalidArgumentError(absl::StrCat("binding '", slot.name, "' is an image ", w, "x",
                                                   h, "; the engine binds ", want));
  }
  if (flags & CL_MEM_WRITE_ONLY) {
    return absl::InvalidArgumentError(
        absl::StrCat("binding '", slot.name, "' is a write-only image; the engine reads it"));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
