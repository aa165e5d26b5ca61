// Bindings: the per-run memory of a recording, by tensor name.
//
// A binding is any cl_mem of the recording's context: the user's own buffer
// (zero copy, like OpenVINO's remote tensors), a recq Tensor, or, for an
// input declared as an image2d or an NV12 frame (recq/preprocess.h), the
// user's image2d or the frame's planes (SetNv12), or, where the device
// supports shared virtual memory, an SVM allocation (SetSvm). Bindings
// holds handles only; it neither retains nor validates them. Validation
// happens at Recording::Enqueue, which checks every name, size (an image's
// width, height and format) and context.
// The memory must stay alive until the run that uses it has completed.
#ifndef RECQ_BINDINGS_H_
#define RECQ_BINDINGS_H_

#include <CL/cl.h>

#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "recq/tensor.h"

namespace recq {

class Bindings {
 public:
  // Set binds `name` to `mem`, replacing an earlier binding of that name.
  // With a cl_mem the caller keeps the memory alive while it is bound; a
  // Tensor is kept alive by the bindings (a temporary Tensor may be bound).
  void Set(absl::string_view name, cl_mem mem);
  void Set(absl::string_view name, const Tensor& tensor);
  // SetNv12 binds the two planes of an NV12 frame to an input preprocessed
  // as ColorFormat::kNv12TwoPlane (recq/preprocess.h): `y` to "NAME/y" and
  // `uv` to "NAME/uv". Both are buffers ([N, H, W, 1] and [N, H/2, W/2, 2]
  // u8) or both image2d (CL_R W x H and CL_RG W/2 x H/2, or CL_RGBA W/4 x
  // H/2 with two UV pairs a texel where CL_RG is missing), as the input
  // declares. A single-plane NV12 frame (one buffer, UV rows at the declared
  // uv_offset) and an image2d of another colour format bind with Set(NAME,
  // mem) like any buffer; Enqueue checks each against the declaration
  // (image or buffer, channel order and type, width and height, context).
  void SetNv12(absl::string_view name, cl_mem y, cl_mem uv);
  // SetSvm binds `name` (a buffer binding, not an image) to shared virtual
  // memory: the kernels get `allocation + offset` through
  // clSetKernelArgSVMPointer, and `bytes` (from there) must hold the
  // tensor. `allocation` must be a pointer clSVMAlloc returned for the
  // engine's context, not a pointer into one: pass a position inside it as
  // `offset`, a multiple of the device's CL_DEVICE_MEM_BASE_ADDR_ALIGN (in
  // bits; 1024 on PoCL), like a sub-buffer's origin. Enqueue checks that
  // the device has SVM (CL_DEVICE_SVM_CAPABILITIES), that `allocation` is
  // one of this context's SVM allocations holding `offset + bytes` (it asks
  // the driver: clCreateBuffer with CL_MEM_USE_HOST_PTR on it, then
  // CL_MEM_USES_SVM_POINTER), the offset's alignment, `bytes` against the
  // tensor's size, and that an output shares no byte with another SVM
  // binding; each failure is InvalidArgument naming the binding. Whether a
  // pointer into an allocation passes is the driver's answer: PoCL rejects
  // it, NVIDIA's driver accepts it (and the run then uses it correctly).
  //
  // Synchronisation is the application's: with coarse-grained SVM the host
  // may touch the memory only while it is mapped (clEnqueueSVMMap), and it
  // must be unmapped (clEnqueueSVMUnmap, ordered before the run: the same
  // in-order queue, or an event in Enqueue's wait list) while a run reads
  // or writes it. Read an output by mapping it after the run's done event
  // (or on the run's queue). Fine-grained buffer SVM needs no map, but the
  // host still may not touch the memory while a run uses it.
  void SetSvm(absl::string_view name, void* allocation, size_t bytes, size_t offset = 0);
  // Get returns the cl_mem bound to `name`, or nullptr (also for an SVM
  // binding).
  cl_mem Get(absl::string_view name) const;
  void Clear() { entries_.clear(); }

  // One binding: a cl_mem, or (mem null) an SVM region.
  struct Entry {
    std::string name;
    cl_mem mem = nullptr;
    bool is_svm = false;  // bound by SetSvm
    void* svm = nullptr;  // the allocation SetSvm was given
    size_t svm_bytes = 0;
    size_t svm_offset = 0;
    Tensor tensor;  // Set(name, Tensor): held so that its memory stays alive
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  Entry& Slot(absl::string_view name);

  // A handful of entries: a vector beats a hash map here.
  std::vector<Entry> entries_;
};

}  // namespace recq

#endif  // RECQ_BINDINGS_H_
