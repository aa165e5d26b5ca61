// Tensor descriptions and device tensors.
//
// A TensorDesc is a float32 NCHW (or any-rank) shape. A Tensor is device
// memory that recq allocated in a Context, with blocking host upload and
// download helpers; its cl_mem can be bound to a Recording like any
// user-owned cl_mem.
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

namespace recq {

class Context;

enum class DataType { kFloat32 };

// Shape and element type of a tensor. Dimensions are positive.
struct TensorDesc {
  std::vector<int64_t> shape;
  DataType dtype = DataType::kFloat32;

  // NumElements returns the product of the dimensions (1 for a scalar).
  int64_t NumElements() const;
  // ByteSize returns NumElements() * 4.
  size_t ByteSize() const;
  // ToString renders "1x3x224x224 float32".
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
  // tensor's element count.
  [[nodiscard]] absl::Status Upload(absl::Span<const float> data);
  // Download copies the tensor's contents to the host.
  [[nodiscard]] absl::StatusOr<std::vector<float>> Download() const;
  // Fill sets every element to `value` (e.g. NaN to poison an output).
  [[nodiscard]] absl::Status Fill(float value);

  // mem is the tensor's buffer; it stays owned by the Tensor.
  cl_mem mem() const;
  const TensorDesc& desc() const { return desc_; }
  bool valid() const { return state_ != nullptr; }

 private:
  struct State;
  std::shared_ptr<State> state_;
  TensorDesc desc_;
};

// WriteBuffer copies host floats into a user cl_mem with a blocking write on
// the context's queue.
[[nodiscard]] absl::Status WriteBuffer(const Context& context, cl_mem mem,
                                       absl::Span<const float> data);
// ReadBuffer copies `count` floats from a user cl_mem with a blocking read.
[[nodiscard]] absl::StatusOr<std::vector<float>> ReadBuffer(const Context& context, cl_mem mem,
                                                            size_t count);

}  // namespace recq

#endif  // RECQ_TENSOR_H_
