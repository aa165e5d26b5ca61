// Tensor descriptions and device tensors.
//
// A TensorDesc is a shape (NCHW or any rank) and an element type
// (recq/data_type.h). A Tensor is device memory that recq allocated in a
// Context, with blocking host upload and download helpers; its cl_mem can be
// bound to a Recording like any user-owned cl_mem.
#ifndef RECQ_TENSOR_H_
#define RECQ_TENSOR_H_

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "recq/data_type.h"

namespace recq {

class Context;

// Shape and element type of a tensor. Dimensions are positive.
struct TensorDesc {
  std::vector<int64_t> shape;
  DataType dtype = DataType::kFloat32;

  // NumElements returns the product of the dimensions (1 for a scalar).
  int64_t NumElements() const;
  // ByteSize returns NumElements() * DataTypeSize(dtype).
  size_t ByteSize() const;
  // ToString renders "1x3x224x224 float32" ("1x128 int64"...).
  std::string ToString() const;

  friend bool operator==(const TensorDesc& a, const TensorDesc& b) {
    return a.shape == b.shape && a.dtype == b.dtype;
  }
  friend bool operator!=(const TensorDesc& a, const TensorDesc& b) { return !(a == b); }
};

// ShapeToString renders {1, 3, 224, 224} as "1x3x224x224" ("scalar" for {}).
std::string ShapeToString(absl::Span<const int64_t> shape);

// Tensor is device memory owned by recq. Copies share the same memory
// (reference counted); the memory is released with the last copy.
// Upload and Download are blocking and use the context's queue.
class Tensor {
 public:
  Tensor() = default;

  // Allocate creates an uninitialized device tensor in `context`.
  [[nodiscard]] static absl::StatusOr<Tensor> Allocate(const Context& context,
                                                       const TensorDesc& desc);

  // Upload copies `data` into the tensor; `data.size()` must equal the
  // tensor's element count and the element type its dtype (float for
  // float32, uint16_t bits for float16, int64_t, int32_t, int8_t, uint8_t,
  // bool, double, int16_t, uint32_t, uint64_t; uint16 tensors take
  // UploadBytes).
  [[nodiscard]] absl::Status Upload(absl::Span<const float> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const uint16_t> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const int64_t> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const int32_t> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const int8_t> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const uint8_t> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const bool> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const double> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const int16_t> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const uint32_t> data) { return UploadAs(data); }
  [[nodiscard]] absl::Status Upload(absl::Span<const uint64_t> data) { return UploadAs(data); }
  // UploadBytes copies exactly ByteSize() bytes of elements of the tensor's
  // dtype.
  [[nodiscard]] absl::Status UploadBytes(absl::Span<const uint8_t> bytes);
  // Download copies a float32 tensor's contents to the host.
  [[nodiscard]] absl::StatusOr<std::vector<float>> Download() const { return DownloadAs<float>(); }
  // DownloadAs copies the contents as elements of T, which must be the host
  // type of the tensor's dtype (see Upload).
  template <typename T>
  [[nodiscard]] absl::StatusOr<std::vector<T>> DownloadAs() const;
  // DownloadBytes copies the raw contents (ByteSize() bytes).
  [[nodiscard]] absl::StatusOr<std::vector<uint8_t>> DownloadBytes() const;
  // Fill sets every element of a float32 tensor to `value` (e.g. NaN to
  // poison an output); FillBytes repeats a pattern of 1, 2, 4 or 8 bytes,
  // for any dtype.
  [[nodiscard]] absl::Status Fill(float value);
  [[nodiscard]] absl::Status FillBytes(const void* pattern, size_t pattern_size);

  // mem is the tensor's buffer; it stays owned by the Tensor.
  cl_mem mem() const;
  const TensorDesc& desc() const { return desc_; }
  bool valid() const { return state_ != nullptr; }

 private:
  struct State;
  template <typename T>
  absl::Status UploadAs(absl::Span<const T> data);
  absl::Status CheckHostType(DataType host, size_t count, const char* what) const;
  absl::Status ReadInto(void* dst) const;

  std::shared_ptr<State> state_;
  TensorDesc desc_;
};

template <typename T>
absl::Status Tensor::UploadAs(absl::Span<const T> data) {
  static_assert(sizeof(bool) == 1, "bool elements are one byte");
  if (absl::Status s = CheckHostType(DataTypeOf<T>::value, data.size(), "Tensor::Upload");
      !s.ok()) {
    return s;
  }
  return UploadBytes(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()),
                                               data.size() * sizeof(T)));
}

template <typename T>
absl::StatusOr<std::vector<T>> Tensor::DownloadAs() const {
  if (absl::Status s = CheckHostType(DataTypeOf<T>::value, static_cast<size_t>(desc_.NumElements()),
                                     "Tensor::Download");
      !s.ok()) {
    return s;
  }
  std::vector<T> data(static_cast<size_t>(desc_.NumElements()));
  if (absl::Status s = ReadInto(data.data()); !s.ok()) return s;
  return data;
}

// WriteBuffer copies host floats into a user cl_mem with a blocking write on
// the context's queue.
[[nodiscard]] absl::Status WriteBuffer(const Context& context, cl_mem mem,
                                       absl::Span<const float> data);
// ReadBuffer copies `count` floats from a user cl_mem with a blocking read.
[[nodiscard]] absl::StatusOr<std::vector<float>> ReadBuffer(const Context& context, cl_mem mem,
                                                            size_t count);

}  // namespace recq

#endif  // RECQ_TENSOR_H_
