// Camera frames for the preprocessing tests: random source memory of every
// binding kind of recq/preprocess.h (buffers, NV12 planes, image2d) with
// the values the CPU reference reads.
#ifndef RECQ_TESTS_TESTING_FRAMES_H_
#define RECQ_TESTS_TESTING_FRAMES_H_

#include <CL/cl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_handle.h"
#include "engine/ops/preprocess.h"
#include "recq/recq.h"
#include "reference/reference_ops.h"

namespace recq::testing {

// A frame: one cl_mem per source binding and the values the reference
// reads (an image's as RGBA in read order on the u8 scale).
struct Frame {
  std::vector<cl::UniqueMem> planes;
  std::vector<reference::HostTensor> values;

  // Bind binds the planes under `name` (SetNv12 for two planes).
  void Bind(Bindings& b, const std::string& name) const {
    if (planes.size() == 2) {
      b.SetNv12(name, planes[0].get(), planes[1].get());
    } else {
      b.Set(name, planes[0].get());
    }
  }
};

// HasRgImages tells whether `context`'s device lists CL_RG images of
// `type` (PoCL 3.1 does not: NV12's UV plane is then CL_RGBA of half the
// width, two pairs a texel).
inline bool HasRgImages(cl_context context, cl_channel_type type) {
  cl_uint n = 0;
  clGetSupportedImageFormats(context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n);
  std::vector<cl_image_format> formats(n);
  clGetSupportedImageFormats(context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, n, formats.data(),
                             nullptr);
  for (const cl_image_format& f : formats) {
    if (f.image_channel_order == CL_RG && f.image_channel_data_type == type) return true;
  }
  return false;
}

// MakeFrame allocates the sources `attrs` declares in `context`, filled with
// random values of the element type (u8: 0..255 integers; f16, f32: 0..255).
// An RGBX image uses channel order `order` (CL_RGBA or CL_BGRA).
inline absl::StatusOr<Frame> MakeFrame(cl_context context, const internal::PreprocessAttrs& attrs,
                                       uint64_t seed, cl_channel_order order = CL_RGBA) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(0.0f, 256.0f);
  const DataType t = attrs.spec.element_type;
  const bool image = attrs.spec.kind == MemoryKind::kImage2D;
  Frame frame;
  for (const TensorDesc& desc : internal::SourceDescs(attrs)) {
    reference::HostTensor v;
    v.shape = desc.shape;
    v.dtype = desc.dtype;
    v.data.resize(static_cast<size_t>(desc.NumElements()));
    for (float& x : v.data) {
      x = dist(rng);
      if (t == DataType::kUInt8) x = std::floor(std::min(x, 255.0f));
      if (t == DataType::kFloat16) x = HalfToFloat(FloatToHalf(x));
    }
    // Memory order: an image of CL_BGRA stores B, G, R, A.
    std::vector<float> stored = v.data;
    const int64_t channels = desc.shape.back();
    if (image && order == CL_BGRA) {
      for (size_t i = 0; i + 3 < stored.size(); i += 4) std::swap(stored[i], stored[i + 2]);
    }
    std::vector<uint8_t> bytes(stored.size() * DataTypeSize(t));
    for (size_t i = 0; i < stored.size(); ++i) {
      if (t == DataType::kUInt8) {
        bytes[i] = static_cast<uint8_t>(stored[i]);
      } else if (t == DataType::kFloat16) {
        const uint16_t h = FloatToHalf(stored[i]);
        std::memcpy(&bytes[i * 2], &h, 2);
      } else {
        std::memcpy(&bytes[i * 4], &stored[i], 4);
      }
    }
    cl_int err = CL_SUCCESS;
    cl_mem mem = nullptr;
    if (image) {
      cl_image_format format = {};
      format.image_channel_data_type = t == DataType::kUInt8 ? CL_UNORM_INT8 : CL_FLOAT;
      format.image_channel_order = channels == 1 ? CL_R : channels == 2 ? CL_RG : order;
      cl_image_desc d = {};
      d.image_type = CL_MEM_OBJECT_IMAGE2D;
      d.image_width = static_cast<size_t>(desc.shape[2]);
      if (channels == 2 && !HasRgImages(context, format.image_channel_data_type)) {
        format.image_channel_order = CL_RGBA;  // the same bytes, two pairs a texel
        d.image_width /= 2;
      }
      d.image_height = static_cast<size_t>(desc.shape[1]);
      mem = clCreateImage(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &d,
                          bytes.data(), &err);
    } else {
      mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.size(),
                           bytes.data(), &err);
    }
    if (err != CL_SUCCESS) {
      return absl::InternalError(absl::StrCat("creating a frame plane failed: ", err));
    }
    frame.planes.emplace_back(mem);
    frame.values.push_back(std::move(v));
  }
  return frame;
}

// PreprocessNode returns the graph's Preprocess node (the first).
inline const internal::PreprocessAttrs* PreprocessOf(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (node.op == internal::kPreprocess) return node.attrs.get_if<internal::PreprocessAttrs>();
  }
  return nullptr;
}

}  // namespace recq::testing

#endif  // RECQ_TESTS_TESTING_FRAMES_H_
