#include "recq/tensor.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/opencl/cl_error.h"
#include "backends/opencl/cl_handle.h"
#include "engine/context_state.h"
#include "recq/context.h"
#include "recq/status_macros.h"

namespace recq {

struct Tensor::State {
  std::shared_ptr<internal::ContextState> context;
  cl::UniqueMem mem;
};

absl::StatusOr<Tensor> Tensor::Allocate(const Context& context, const TensorDesc& desc) {
  for (int64_t d : desc.shape) {
    if (d <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Tensor::Allocate: shape ", ShapeToString(desc.shape), " has a non-positive dimension"));
    }
  }
  cl_int err = CL_SUCCESS;
  cl::UniqueMem mem(
      clCreateBuffer(context.context(), CL_MEM_READ_WRITE, desc.ByteSize(), nullptr, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateBuffer"));
  Tensor tensor;
  tensor.state_ = std::make_shared<State>(State{context.state(), std::move(mem)});
  tensor.desc_ = desc;
  return tensor;
}

cl_mem Tensor::mem() const { return state_ ? state_->mem.get() : nullptr; }

absl::Status Tensor::CheckHostType(DataType host, size_t count, const char* what) const {
  if (!state_) return absl::FailedPreconditionError(absl::StrCat(what, " on an empty tensor"));
  if (host != desc_.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": got ", DataTypeName(host),
                                                   " elements, the tensor is ", desc_.ToString()));
  }
  if (count != static_cast<size_t>(desc_.NumElements())) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": got ", count, " elements, the tensor ",
                                                   desc_.ToString(), " holds ",
                                                   desc_.NumElements()));
  }
  return absl::OkStatus();
}

absl::Status Tensor::UploadBytes(absl::Span<const uint8_t> bytes) {
  if (!state_) return absl::FailedPreconditionError("Tensor::Upload on an empty tensor");
  if (bytes.size() != desc_.ByteSize()) {
    return absl::InvalidArgumentError(absl::StrCat("Tensor::UploadBytes: got ", bytes.size(),
                                                   " bytes, the tensor ", desc_.ToString(),
                                                   " holds ", desc_.ByteSize()));
  }
  return cl::CheckCl(clEnqueueWriteBuffer(state_->context->queue.get(), state_->mem.get(), CL_TRUE,
                                          0, bytes.size(), bytes.data(), 0, nullptr, nullptr),
                     "clEnqueueWriteBuffer");
}

absl::Status Tensor::ReadInto(void* dst) const {
  return cl::CheckCl(clEnqueueReadBuffer(state_->context->queue.get(), state_->mem.get(), CL_TRUE,
                                         0, desc_.ByteSize(), dst, 0, nullptr, nullptr),
                     "clEnqueueReadBuffer");
}

absl::StatusOr<std::vector<uint8_t>> Tensor::DownloadBytes() const {
  if (!state_) return absl::FailedPreconditionError("Tensor::Download on an empty tensor");
  std::vector<uint8_t> data(desc_.ByteSize());
  RECQ_RETURN_IF_ERROR(ReadInto(data.data()));
  return data;
}

absl::Status Tensor::Fill(float value) {
  if (!state_) return absl::FailedPreconditionError("Tensor::Fill on an empty tensor");
  if (desc_.dtype != DataType::kFloat32) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::Fill(float) on a ", desc_.ToString(), " tensor; use FillBytes"));
  }
  return FillBytes(&value, sizeof(value));
}

absl::Status Tensor::FillBytes(const void* pattern, size_t pattern_size) {
  if (!state_) return absl::FailedPreconditionError("Tensor::Fill on an empty tensor");
  if (pattern_size == 0 || (pattern_size & (pattern_size - 1)) != 0 || pattern_size > 8 ||
      desc_.ByteSize() % pattern_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Tensor::FillBytes: a pattern of ", pattern_size, " bytes does not tile the tensor ",
        desc_.ToString(), " (", desc_.ByteSize(), " bytes); expected 1, 2, 4 or 8 bytes"));
  }
  cl_command_queue queue = state_->context->queue.get();
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clEnqueueFillBuffer(queue, state_->mem.get(), pattern, pattern_size, 0,
                                      desc_.ByteSize(), 0, nullptr, nullptr),
                  "clEnqueueFillBuffer"));
  return cl::CheckCl(clFinish(queue), "clFinish");
}

absl::Status WriteBuffer(const Context& context, cl_mem mem, absl::Span<const float> data) {
  return cl::CheckCl(
      clEnqueueWriteBuffer(context.queue(), mem, CL_TRUE, 0, data.size() * sizeof(float),
                           data.data(), 0, nullptr, nullptr),
      "clEnqueueWriteBuffer");
}

absl::StatusOr<std::vector<float>> ReadBuffer(const Context& context, cl_mem mem, size_t count) {
  std::vector<float> data(count);
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clEnqueueReadBuffer(context.queue(), mem, CL_TRUE, 0, count * sizeof(float),
                                      data.data(), 0, nullptr, nullptr),
                  "clEnqueueReadBuffer"));
  return data;
}

}  // namespace recq
