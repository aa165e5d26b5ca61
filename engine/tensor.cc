#include "recq/tensor.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/opencl/cl_error.h"
#include "backends/opencl/cl_handle.h"
#include "engine/context_state.h"
#include "engine/status_macros.h"
#include "recq/context.h"

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

absl::Status Tensor::Upload(absl::Span<const float> data) {
  if (!state_) return absl::FailedPreconditionError("Tensor::Upload on an empty tensor");
  if (data.size() != static_cast<size_t>(desc_.NumElements())) {
    return absl::InvalidArgumentError(absl::StrCat("Tensor::Upload: got ", data.size(),
                                                   " floats, the tensor ", desc_.ToString(),
                                                   " holds ", desc_.NumElements()));
  }
  return cl::CheckCl(clEnqueueWriteBuffer(state_->context->queue.get(), state_->mem.get(), CL_TRUE,
                                          0, desc_.ByteSize(), data.data(), 0, nullptr, nullptr),
                     "clEnqueueWriteBuffer");
}

absl::StatusOr<std::vector<float>> Tensor::Download() const {
  if (!state_) return absl::FailedPreconditionError("Tensor::Download on an empty tensor");
  std::vector<float> data(desc_.NumElements());
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clEnqueueReadBuffer(state_->context->queue.get(), state_->mem.get(), CL_TRUE, 0,
                                      desc_.ByteSize(), data.data(), 0, nullptr, nullptr),
                  "clEnqueueReadBuffer"));
  return data;
}

absl::Status Tensor::Fill(float value) {
  if (!state_) return absl::FailedPreconditionError("Tensor::Fill on an empty tensor");
  cl_command_queue queue = state_->context->queue.get();
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clEnqueueFillBuffer(queue, state_->mem.get(), &value, sizeof(value), 0,
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
