// The entry points the fault layer counts and can fail, as X-macro lists.
//
// RECQ_FAULT_CORE_ENTRY_POINTS(X) lists dispatch-table entries as
//   X(name, kind, action)
// where `kind` is the object kind the call creates, retains or releases
// (kNone for the others) and `action` one of kCreate (returns a new object),
// kRetain, kRelease or kCall. Calls whose last parameter is a `cl_event*`
// also create an event when it is non-null; the layer detects that by type.
//
// RECQ_FAULT_EXTENSION_ENTRY_POINTS(X) lists extension functions handed out
// by clGetExtensionFunctionAddress[ForPlatform] as
//   X(name, function_pointer_type, kind, action).
#ifndef RECQ_TOOLS_FAULT_LAYER_ENTRY_POINTS_H_
#define RECQ_TOOLS_FAULT_LAYER_ENTRY_POINTS_H_

#define RECQ_FAULT_CORE_ENTRY_POINTS(X)                   \
  X(clGetPlatformIDs, kNone, kCall)                       \
  X(clGetPlatformInfo, kNone, kCall)                      \
  X(clGetDeviceIDs, kNone, kCall)                         \
  X(clGetDeviceInfo, kNone, kCall)                        \
  X(clCreateContext, kContext, kCreate)                   \
  X(clCreateContextFromType, kContext, kCreate)           \
  X(clRetainContext, kContext, kRetain)                   \
  X(clReleaseContext, kContext, kRelease)                 \
  X(clGetContextInfo, kNone, kCall)                       \
  X(clCreateCommandQueue, kQueue, kCreate)                \
  X(clCreateCommandQueueWithProperties, kQueue, kCreate)  \
  X(clRetainCommandQueue, kQueue, kRetain)                \
  X(clReleaseCommandQueue, kQueue, kRelease)              \
  X(clGetCommandQueueInfo, kNone, kCall)                  \
  X(clCreateBuffer, kMem, kCreate)                        \
  X(clCreateBufferWithProperties, kMem, kCreate)          \
  X(clCreateSubBuffer, kMem, kCreate)                     \
  X(clCreateImage, kMem, kCreate)                         \
  X(clCreateImageWithProperties, kMem, kCreate)           \
  X(clCreateImage2D, kMem, kCreate)                       \
  X(clCreateImage3D, kMem, kCreate)                       \
  X(clCreatePipe, kMem, kCreate)                          \
  X(clRetainMemObject, kMem, kRetain)                     \
  X(clReleaseMemObject, kMem, kRelease)                   \
  X(clGetMemObjectInfo, kNone, kCall)                     \
  X(clGetImageInfo, kNone, kCall)                         \
  X(clCreateSampler, kSampler, kCreate)                   \
  X(clCreateSamplerWithProperties, kSampler, kCreate)     \
  X(clRetainSampler, kSampler, kRetain)                   \
  X(clReleaseSampler, kSampler, kRelease)                 \
  X(clCreateProgramWithSource, kProgram, kCreate)         \
  X(clCreateProgramWithBinary, kProgram, kCreate)         \
  X(clCreateProgramWithBuiltInKernels, kProgram, kCreate) \
  X(clCreateProgramWithIL, kProgram, kCreate)             \
  X(clLinkProgram, kProgram, kCreate)                     \
  X(clRetainProgram, kProgram, kRetain)                   \
  X(clReleaseProgram, kProgram, kRelease)                 \
  X(clBuildProgram, kNone, kCall)                         \
  X(clCompileProgram, kNone, kCall)                       \
  X(clGetProgramInfo, kNone, kCall)                       \
  X(clGetProgramBuildInfo, kNone, kCall)                  \
  X(clCreateKernel, kKernel, kCreate)                     \
  X(clCloneKernel, kKernel, kCreate)                      \
  X(clRetainKernel, kKernel, kRetain)                     \
  X(clReleaseKernel, kKernel, kRelease)                   \
  X(clSetKernelArg, kNone, kCall)                         \
  X(clSetKernelArgSVMPointer, kNone, kCall)               \
  X(clSetKernelExecInfo, kNone, kCall)                    \
  X(clGetKernelInfo, kNone, kCall)                        \
  X(clGetKernelArgInfo, kNone, kCall)                     \
  X(clGetKernelWorkGroupInfo, kNone, kCall)               \
  X(clCreateUserEvent, kEvent, kCreate)                   \
  X(clSetUserEventStatus, kNone, kCall)                   \
  X(clRetainEvent, kEvent, kRetain)                       \
  X(clReleaseEvent, kEvent, kRelease)                     \
  X(clWaitForEvents, kNone, kCall)                        \
  X(clGetEventInfo, kNone, kCall)                         \
  X(clGetEventProfilingInfo, kNone, kCall)                \
  X(clSetEventCallback, kNone, kCall)                     \
  X(clFlush, kNone, kCall)                                \
  X(clFinish, kNone, kCall)                               \
  X(clEnqueueReadBuffer, kNone, kCall)                    \
  X(clEnqueueReadBufferRect, kNone, kCall)                \
  X(clEnqueueWriteBuffer, kNone, kCall)                   \
  X(clEnqueueWriteBufferRect, kNone, kCall)               \
  X(clEnqueueCopyBuffer, kNone, kCall)                    \
  X(clEnqueueCopyBufferRect, kNone, kCall)                \
  X(clEnqueueFillBuffer, kNone, kCall)                    \
  X(clEnqueueReadImage, kNone, kCall)                     \
  X(clEnqueueWriteImage, kNone, kCall)                    \
  X(clEnqueueCopyImage, kNone, kCall)                     \
  X(clEnqueueFillImage, kNone, kCall)                     \
  X(clEnqueueCopyImageToBuffer, kNone, kCall)             \
  X(clEnqueueCopyBufferToImage, kNone, kCall)             \
  X(clEnqueueMapBuffer, kNone, kCall)                     \
  X(clEnqueueMapImage, kNone, kCall)                      \
  X(clEnqueueUnmapMemObject, kNone, kCall)                \
  X(clEnqueueMigrateMemObjects, kNone, kCall)             \
  X(clEnqueueNDRangeKernel, kNone, kCall)                 \
  X(clEnqueueTask, kNone, kCall)                          \
  X(clEnqueueMarker, kNone, kCall)                        \
  X(clEnqueueMarkerWithWaitList, kNone, kCall)            \
  X(clEnqueueBarrier, kNone, kCall)                       \
  X(clEnqueueBarrierWithWaitList, kNone, kCall)           \
  X(clEnqueueWaitForEvents, kNone, kCall)

#define RECQ_FAULT_EXTENSION_ENTRY_POINTS(X)                                           \
  X(clNewRecordingQCOM, clNewRecordingQCOM_fn, kQcomRecording, kCreate)                \
  X(clEndRecordingQCOM, clEndRecordingQCOM_fn, kNone, kCall)                           \
  X(clRetainRecordingQCOM, clRetainRecordingQCOM_fn, kQcomRecording, kRetain)          \
  X(clReleaseRecordingQCOM, clReleaseRecordingQCOM_fn, kQcomRecording, kRelease)       \
  X(clEnqueueRecordingQCOM, clEnqueueRecordingQCOM_fn, kNone, kCall)                   \
  X(clEnqueueRecordingSVMQCOM, clEnqueueRecordingSVMQCOM_fn, kNone, kCall)             \
  X(clCreateCommandBufferKHR, clCreateCommandBufferKHR_fn, kCommandBuffer, kCreate)    \
  X(clFinalizeCommandBufferKHR, clFinalizeCommandBufferKHR_fn, kNone, kCall)           \
  X(clRetainCommandBufferKHR, clRetainCommandBufferKHR_fn, kCommandBuffer, kRetain)    \
  X(clReleaseCommandBufferKHR, clReleaseCommandBufferKHR_fn, kCommandBuffer, kRelease) \
  X(clCommandNDRangeKernelKHR, clCommandNDRangeKernelKHR_fn, kNone, kCall)             \
  X(clEnqueueCommandBufferKHR, clEnqueueCommandBufferKHR_fn, kNone, kCall)             \
  X(clUpdateMutableCommandsKHR, clUpdateMutableCommandsKHR_fn, kNone, kCall)           \
  X(clGetCommandBufferInfoKHR, clGetCommandBufferInfoKHR_fn, kNone, kCall)

#endif  // RECQ_TOOLS_FAULT_LAYER_ENTRY_POINTS_H_
