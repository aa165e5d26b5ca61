#include "engine/recording_backend.h"

#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_error.h"
#include "engine/status_macros.h"

namespace recq::internal {

absl::StatusOr<RecordingResources> RecordingResources::Create(
    std::shared_ptr<const EngineState> engine) {
  RecordingResources res;
  res.engine_ = std::move(engine);
  for (size_t bytes : res.engine_->list.internal_buffer_bytes) {
    cl_int err = CL_SUCCESS;
    cl::UniqueMem mem(clCreateBuffer(res.engine_->context->context.get(), CL_MEM_READ_WRITE,
                                     std::max<size_t>(bytes, 4), nullptr, &err));
    RECQ_RETURN_IF_ERROR(cl::CheckCl(err, absl::StrCat("clCreateBuffer(", bytes, " bytes)")));
    res.internal_.push_back(std::move(mem));
  }
  return res;
}

cl_mem RecordingResources::MemFor(const DispatchArg& arg,
                                  absl::Span<const cl_mem> slot_mems) const {
  switch (arg.kind) {
    case DispatchArg::Kind::kInternal:
      return internal_[arg.index].get();
    case DispatchArg::Kind::kConstant:
      return engine_->constants[arg.index].get();
    case DispatchArg::Kind::kSlot:
      return slot_mems.empty() ? nullptr : slot_mems[arg.index];
    default:
      return nullptr;
  }
}

absl::Status RecordingResources::SetArg(cl_kernel kernel, cl_uint index, const DispatchArg& arg,
                                        absl::Span<const cl_mem> slot_mems) const {
  cl_int err = CL_SUCCESS;
  switch (arg.kind) {
    case DispatchArg::Kind::kScalar:
      err = clSetKernelArg(kernel, index, arg.bytes.size(), arg.bytes.data());
      break;
    case DispatchArg::Kind::kLocal:
      err = clSetKernelArg(kernel, index, arg.local_bytes, nullptr);
      break;
    default: {
      cl_mem mem = MemFor(arg, slot_mems);
      err = clSetKernelArg(kernel, index, sizeof(cl_mem), &mem);
      break;
    }
  }
  return cl::CheckCl(err, "clSetKernelArg");
}

absl::StatusOr<cl::UniqueKernel> RecordingResources::CreateKernel(
    size_t d, absl::Span<const cl_mem> slot_mems) const {
  const Dispatch& dispatch = engine_->list.dispatches[d];
  const KernelRef& ref = engine_->list.kernels[dispatch.kernel];
  cl_int err = CL_SUCCESS;
  cl::UniqueKernel kernel(
      clCreateKernel(engine_->programs[dispatch.kernel]->get(), ref.name.c_str(), &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, absl::StrCat("clCreateKernel(", ref.name, ")")));
  for (size_t i = 0; i < dispatch.args.size(); ++i) {
    absl::Status status =
        SetArg(kernel.get(), static_cast<cl_uint>(i), dispatch.args[i], slot_mems);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(dispatch.label, " argument ", i, ": ", status.message()));
    }
  }
  return kernel;
}

}  // namespace recq::internal
