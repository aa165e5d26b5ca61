#include "engine/recording_backend.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/opencl/cl_error.h"
#include "engine/engine_state.h"
#include "recq/status_macros.h"

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
  for (const Slot& slot : res.engine_->list.slots) {
    res.placeholders_.emplace_back();
    if (!slot.image) continue;
    RECQ_ASSIGN_OR_RETURN(res.placeholders_.back(),
                          CreateSlotMemory(res.engine_->context->context.get(), slot, true));
  }
  return res;
}

const Context& RecordingResources::context() const { return engine_->public_context; }
const DispatchList& RecordingResources::list() const { return engine_->list; }
absl::Span<const ArgUse> RecordingResources::slot_uses(size_t slot) const {
  return engine_->slot_uses[slot];
}
cl_program RecordingResources::program(size_t kernel) const {
  return engine_->programs[kernel]->get();
}

const std::string& RecordingResources::entry_point(size_t kernel) const {
  return engine_->EntryPoint(kernel);
}

absl::StatusOr<cl::UniqueMem> CreateSlotMemory(cl_context context, const Slot& slot,
                                               bool placeholder) {
  cl_int err = CL_SUCCESS;
  if (!slot.image) {
    const size_t bytes = std::max<size_t>(slot.desc.ByteSize(), sizeof(float));
    std::vector<uint8_t> zeros(bytes, 0);
    cl::UniqueMem mem(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                                     zeros.data(), &err));
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(err, absl::StrCat("clCreateBuffer('", slot.name, "', ", bytes, " bytes)")));
    return mem;
  }
  const int64_t channels = slot.desc.shape[3];
  cl_image_format format = {};
  // Two channels as CL_RGBA of half the width (packed pairs): every device
  // lists CL_RGBA, not every one CL_RG (PoCL 3.1 does not).
  format.image_channel_order = channels == 1 ? CL_R : CL_RGBA;
  format.image_channel_data_type = slot.desc.dtype == DataType::kUInt8 ? CL_UNORM_INT8 : CL_FLOAT;
  cl_image_desc desc = {};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  const int64_t width = channels == 2 ? (slot.desc.shape[2] + 1) / 2 : slot.desc.shape[2];
  desc.image_width = placeholder ? 1 : static_cast<size_t>(width);
  desc.image_height = placeholder ? 1 : static_cast<size_t>(slot.desc.shape[1]);
  std::vector<uint8_t> zeros(
      desc.image_width * desc.image_height * 4 * DataTypeSize(slot.desc.dtype), 0);
  cl::UniqueMem mem(clCreateImage(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc,
                                  zeros.data(), &err));
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(err, absl::StrCat("clCreateImage('", slot.name, "', ", desc.image_width, "x",
                                    desc.image_height, ")")));
  return mem;
}

cl_int SetSlotArg(cl_kernel kernel, cl_uint index, const SlotMemory& memory) {
  if (memory.is_svm()) return clSetKernelArgSVMPointer(kernel, index, memory.svm);
  return clSetKernelArg(kernel, index, sizeof(cl_mem), &memory.mem);
}

SlotMemory RecordingResources::MemFor(const DispatchArg& arg,
                                      absl::Span<const SlotMemory> slot_mems) const {
  switch (arg.kind) {
    case DispatchArg::Kind::kInternal:
      return {internal_[arg.index].get(), nullptr};
    case DispatchArg::Kind::kConstant:
      return {engine_->constants[arg.index].get(), nullptr};
    case DispatchArg::Kind::kSlot:
      return slot_mems.empty() ? SlotMemory{placeholders_[arg.index].get(), nullptr}
                               : slot_mems[arg.index];
    default:
      return {};
  }
}

absl::Status RecordingResources::SetArg(cl_kernel kernel, cl_uint index, const DispatchArg& arg,
                                        absl::Span<const SlotMemory> slot_mems) const {
  cl_int err = CL_SUCCESS;
  switch (arg.kind) {
    case DispatchArg::Kind::kScalar:
      err = clSetKernelArg(kernel, index, arg.bytes.size(), arg.bytes.data());
      break;
    case DispatchArg::Kind::kLocal:
      err = clSetKernelArg(kernel, index, arg.local_bytes, nullptr);
      break;
    default: {
      err = SetSlotArg(kernel, index, MemFor(arg, slot_mems));
      break;
    }
  }
  return cl::CheckCl(err, arg.kind == DispatchArg::Kind::kSlot && !slot_mems.empty() &&
                                  slot_mems[arg.index].is_svm()
                              ? "clSetKernelArgSVMPointer"
                              : "clSetKernelArg");
}

absl::StatusOr<cl::UniqueKernel> RecordingResources::CreateKernel(
    size_t d, absl::Span<const SlotMemory> slot_mems) const {
  const Dispatch& dispatch = engine_->list.dispatches[d];
  cl_int err = CL_SUCCESS;
  cl::UniqueKernel kernel(
      clCreateKernel(engine_->programs[dispatch.kernel]->get(),
                     engine_->EntryPoint(static_cast<size_t>(dispatch.kernel)).c_str(), &err));
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(err, absl::StrCat("clCreateKernel(", engine_->EntryPoint(dispatch.kernel), ")")));
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

absl::Status EnqueueDispatch(cl_command_queue queue, const Dispatch& dispatch, cl_kernel kernel,
                             absl::Span<const cl_event> wait_list, cl_event* event) {
  cl_int err =
      clEnqueueNDRangeKernel(queue, kernel, dispatch.work_dim, nullptr, dispatch.global.data(),
                             dispatch.has_local() ? dispatch.local.data() : nullptr,
                             static_cast<cl_uint>(wait_list.size()),
                             wait_list.empty() ? nullptr : wait_list.data(), event);
  if (err == CL_SUCCESS) return absl::OkStatus();
  absl::Status status = cl::CheckCl(err, "clEnqueueNDRangeKernel");
  return absl::Status(status.code(), absl::StrCat(dispatch.label, ": ", status.message()));
}

absl::Status EnqueueKernels(cl_command_queue queue, const DispatchList& list,
                            absl::Span<const cl::UniqueKernel> kernels,
                            absl::Span<const cl_event> wait_list, cl_event* done) {
  const size_t count = kernels.size();
  if (count == 0) {
    return cl::CheckCl(
        clEnqueueMarkerWithWaitList(queue, static_cast<cl_uint>(wait_list.size()),
                                    wait_list.empty() ? nullptr : wait_list.data(), done),
        "clEnqueueMarkerWithWaitList");
  }
  for (size_t d = 0; d < count; ++d) {
    RECQ_RETURN_IF_ERROR(EnqueueDispatch(queue, list.dispatches[d], kernels[d].get(),
                                         d == 0 ? wait_list : absl::Span<const cl_event>(),
                                         d + 1 == count ? done : nullptr));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
