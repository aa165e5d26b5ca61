#include "recording.h"

#include <algorithm>
#include <utility>

namespace recq::qcom_layer {

cl_int KernelArg::Apply(const cl_icd_dispatch& target, cl_kernel kernel, cl_uint index) const {
  switch (kind) {
    case Kind::kBytes:
      return target.clSetKernelArg(kernel, index, size, has_value ? bytes.data() : nullptr);
    case Kind::kSvmPointer:
      if (target.clSetKernelArgSVMPointer == nullptr) return CL_INVALID_OPERATION;
      return target.clSetKernelArgSVMPointer(kernel, index, svm_pointer);
    case Kind::kUnset:
      break;
  }
  return CL_INVALID_KERNEL_ARGS;
}

bool IsKnownExecInfo(cl_uint name) {
  return name == CL_KERNEL_EXEC_INFO_SVM_PTRS || name == CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM;
}

cl_int ApplyExecInfo(const cl_icd_dispatch& target, cl_kernel kernel, cl_uint name,
                     const std::vector<unsigned char>* value) {
  if (target.clSetKernelExecInfo == nullptr) return CL_INVALID_OPERATION;
  if (value != nullptr) {
    return target.clSetKernelExecInfo(kernel, name, value->size(),
                                      value->empty() ? nullptr : value->data());
  }
  if (name == CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM) {
    const cl_bool off = CL_FALSE;
    return target.clSetKernelExecInfo(kernel, name, sizeof(off), &off);
  }
  return target.clSetKernelExecInfo(kernel, name, 0, nullptr);  // no SVM pointers
}

OwnedKernel::OwnedKernel(OwnedKernel&& other) noexcept
    : target_(other.target_), kernel_(std::exchange(other.kernel_, nullptr)) {}

OwnedKernel& OwnedKernel::operator=(OwnedKernel&& other) noexcept {
  if (this != &other) {
    if (kernel_ != nullptr) target_->clReleaseKernel(kernel_);
    target_ = other.target_;
    kernel_ = std::exchange(other.kernel_, nullptr);
  }
  return *this;
}

OwnedKernel::~OwnedKernel() {
  if (kernel_ != nullptr) target_->clReleaseKernel(kernel_);
}

Recording::Recording(const cl_icd_dispatch* target, cl_context context)
    : target_(target), context_(context) {
  target_->clRetainContext(context_);
}

Recording::~Recording() {
  dispatches_.clear();
  target_->clReleaseContext(context_);
}

cl_int Recording::AddDispatch(RecordedDispatch dispatch) {
  if (ended()) return CL_INVALID_OPERATION;
  dispatches_.push_back(std::move(dispatch));
  return CL_SUCCESS;
}

cl_int Recording::End() {
  bool expected = false;
  if (!ended_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
    return CL_INVALID_OPERATION;
  }
  return CL_SUCCESS;
}

cl_int Recording::Validate(const ReplaySubstitutions& subs) const {
  if ((subs.num_args != 0 && subs.args == nullptr) ||
      (subs.num_svm_args != 0 && subs.svm_args == nullptr) ||
      (subs.num_exec_infos != 0 && subs.exec_infos == nullptr) ||
      (subs.num_offsets != 0 && subs.offsets == nullptr) ||
      (subs.num_global != 0 && subs.global == nullptr) ||
      (subs.num_local != 0 && subs.local == nullptr)) {
    return CL_INVALID_VALUE;
  }
  const size_t n = dispatches_.size();
  for (size_t i = 0; i < subs.num_args; ++i) {
    const cl_array_arg_qcom& a = subs.args[i];
    if (a.dispatch_index >= n || a.arg_index >= dispatches_[a.dispatch_index].args.size()) {
      return CL_INVALID_VALUE;
    }
  }
  for (size_t i = 0; i < subs.num_svm_args; ++i) {
    const cl_array_arg_qcom& a = subs.svm_args[i];
    if (a.dispatch_index >= n || a.arg_index >= dispatches_[a.dispatch_index].args.size()) {
      return CL_INVALID_VALUE;
    }
  }
  for (size_t i = 0; i < subs.num_exec_infos; ++i) {
    const cl_array_kernel_exec_info_qcom& e = subs.exec_infos[i];
    if (e.dispatch_index >= n || !IsKnownExecInfo(e.param_name) ||
        (e.param_value == nullptr && e.param_value_size != 0)) {
      return CL_INVALID_VALUE;
    }
  }
  for (size_t i = 0; i < subs.num_offsets; ++i) {
    if (subs.offsets[i].dispatch_index >= n) return CL_INVALID_VALUE;
  }
  for (size_t i = 0; i < subs.num_global; ++i) {
    if (subs.global[i].dispatch_index >= n || subs.global[i].workgroup_size == nullptr) {
      return CL_INVALID_VALUE;
    }
  }
  for (size_t i = 0; i < subs.num_local; ++i) {
    if (subs.local[i].dispatch_index >= n) return CL_INVALID_VALUE;
  }
  return CL_SUCCESS;
}

cl_int Recording::Replay(cl_command_queue queue, const ReplaySubstitutions& subs,
                         cl_uint num_events, const cl_event* wait_list, cl_event* event) {
  if (!ended()) return CL_INVALID_VALUE;
  cl_int err = Validate(subs);
  if (err != CL_SUCCESS) return err;

  cl_context queue_context = nullptr;
  err = target_->clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(queue_context),
                                       &queue_context, nullptr);
  if (err != CL_SUCCESS) return err;
  if (queue_context != context_) return CL_INVALID_CONTEXT;

  if (dispatches_.empty()) {
    return target_->clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event);
  }

  cl_command_queue_properties properties = 0;
  err = target_->clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(properties), &properties,
                                       nullptr);
  if (err != CL_SUCCESS) return err;
  const bool in_order = (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0;

  struct Geometry {
    size_t offset[3];
    size_t global[3];
    size_t local[3];
    bool has_local;
  };
  std::vector<Geometry> geometry(dispatches_.size());
  for (size_t i = 0; i < dispatches_.size(); ++i) {
    const RecordedDispatch& d = dispatches_[i];
    Geometry& g = geometry[i];
    std::copy_n(d.offset, 3, g.offset);
    std::copy_n(d.global, 3, g.global);
    std::copy_n(d.local, 3, g.local);
    g.has_local = d.has_local;
  }
  for (size_t i = 0; i < subs.num_offsets; ++i) {
    const cl_offset_qcom& o = subs.offsets[i];
    std::copy_n(o.offsets, dispatches_[o.dispatch_index].work_dim,
                geometry[o.dispatch_index].offset);
  }
  for (size_t i = 0; i < subs.num_global; ++i) {
    const cl_workgroup_qcom& w = subs.global[i];
    std::copy_n(w.workgroup_size, dispatches_[w.dispatch_index].work_dim,
                geometry[w.dispatch_index].global);
  }
  for (size_t i = 0; i < subs.num_local; ++i) {
    const cl_workgroup_qcom& w = subs.local[i];
    Geometry& g = geometry[w.dispatch_index];
    g.has_local = w.workgroup_size != nullptr;
    if (g.has_local) std::copy_n(w.workgroup_size, dispatches_[w.dispatch_index].work_dim, g.local);
  }

  std::lock_guard<std::mutex> lock(replay_mu_);

  // Set every substituted argument before enqueueing anything, so a rejected
  // argument leaves the queue untouched.
  std::vector<std::pair<cl_uint, cl_uint>> touched;
  touched.reserve(subs.num_args);
  for (size_t i = 0; i < subs.num_args && err == CL_SUCCESS; ++i) {
    const cl_array_arg_qcom& a = subs.args[i];
    touched.emplace_back(a.dispatch_index, a.arg_index);
    err = target_->clSetKernelArg(dispatches_[a.dispatch_index].kernel.get(), a.arg_index,
                                  a.arg_size, a.arg_value);
  }
  for (size_t i = 0; i < subs.num_svm_args && err == CL_SUCCESS; ++i) {
    const cl_array_arg_qcom& a = subs.svm_args[i];
    touched.emplace_back(a.dispatch_index, a.arg_index);
    err = target_->clSetKernelArgSVMPointer == nullptr
              ? CL_INVALID_OPERATION
              : target_->clSetKernelArgSVMPointer(dispatches_[a.dispatch_index].kernel.get(),
                                                  a.arg_index, a.arg_value);
  }
  std::vector<std::pair<cl_uint, cl_uint>> touched_info;  // (dispatch, exec-info name)
  for (size_t i = 0; i < subs.num_exec_infos && err == CL_SUCCESS; ++i) {
    const cl_array_kernel_exec_info_qcom& e = subs.exec_infos[i];
    touched_info.emplace_back(e.dispatch_index, static_cast<cl_uint>(e.param_name));
    err = target_->clSetKernelExecInfo == nullptr
              ? CL_INVALID_OPERATION
              : target_->clSetKernelExecInfo(dispatches_[e.dispatch_index].kernel.get(),
                                             e.param_name, e.param_value_size, e.param_value);
  }

  cl_event previous = nullptr;
  for (size_t i = 0; i < dispatches_.size() && err == CL_SUCCESS; ++i) {
    const RecordedDispatch& d = dispatches_[i];
    const Geometry& g = geometry[i];
    const bool first = i == 0;
    const bool last = i + 1 == dispatches_.size();
    cl_uint wait_count = 0;
    const cl_event* waits = nullptr;
    if (first) {
      wait_count = num_events;
      waits = wait_list;
    } else if (!in_order) {
      wait_count = 1;
      waits = &previous;
    }
    cl_event out = nullptr;
    cl_event* out_ptr = nullptr;
    if (last ? event != nullptr : !in_order) out_ptr = &out;
    err = target_->clEnqueueNDRangeKernel(queue, d.kernel.get(), d.work_dim, g.offset, g.global,
                                          g.has_local ? g.local : nullptr, wait_count, waits,
                                          out_ptr);
    if (previous != nullptr) target_->clReleaseEvent(previous);
    previous = nullptr;
    if (err != CL_SUCCESS) break;
    if (last) {
      if (event != nullptr) *event = out;
    } else {
      previous = out;
    }
  }
  if (previous != nullptr) target_->clReleaseEvent(previous);

  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  cl_int restore_err = CL_SUCCESS;
  for (const auto& [dispatch, arg] : touched) {
    const RecordedDispatch& d = dispatches_[dispatch];
    const cl_int e = d.args[arg].Apply(*target_, d.kernel.get(), arg);
    if (restore_err == CL_SUCCESS) restore_err = e;
  }
  std::sort(touched_info.begin(), touched_info.end());
  touched_info.erase(std::unique(touched_info.begin(), touched_info.end()), touched_info.end());
  for (const auto& [dispatch, name] : touched_info) {
    const RecordedDispatch& d = dispatches_[dispatch];
    auto it = d.exec_info.find(name);
    const cl_int e = ApplyExecInfo(*target_, d.kernel.get(), name,
                                   it == d.exec_info.end() ? nullptr : &it->second);
    if (restore_err == CL_SUCCESS) restore_err = e;
  }
  return err != CL_SUCCESS ? err : restore_err;
}

}  // namespace recq::qcom_layer
