// The test hooks libRecqFaultLayer.so exports (C linkage). Tests find them
// with dlopen(path, RTLD_NOLOAD) + dlsym on the path in OPENCL_LAYERS after
// their first OpenCL call (tests/testing/fault_layer_client.h does that).
#ifndef RECQ_TOOLS_FAULT_LAYER_FAULT_LAYER_HOOKS_H_
#define RECQ_TOOLS_FAULT_LAYER_FAULT_LAYER_HOOKS_H_

#include <stddef.h>

extern "C" {

// Replaces the fault rules ("<entrypoint>:<N>:<ERROR>,...", NULL or "" for
// none) and zeroes every call counter. CL_SUCCESS, or CL_INVALID_VALUE for a
// malformed spec (the rules are then cleared).
typedef int (*recqFaultLayerSetFault_fn)(const char* spec);

// Zeroes every call counter and keeps the rules.
typedef void (*recqFaultLayerResetCounts_fn)();

// Copies "<entrypoint> <calls>\n" lines (entry points called since the last
// reset) into `buffer` as a NUL-terminated string; *size_ret gets the size
// needed. CL_INVALID_VALUE when `size` is too small (buffer NULL: size only).
typedef int (*recqFaultLayerCallCounts_fn)(char* buffer, size_t size, size_t* size_ret);

// As recqFaultLayerCallCounts for "<kind> <live objects>\n" (kinds: context,
// queue, mem, sampler, program, kernel, event, qcom_recording,
// command_buffer) and "over_released_<kind> <n>\n" for releases refused
// because the application held no reference.
typedef int (*recqFaultLayerLiveObjects_fn)(char* buffer, size_t size, size_t* size_ret);

// hold != 0: every later clEnqueueNDRangeKernel also waits on an event of
// the layer, so nothing after it on an in-order queue completes. hold == 0:
// completes that event (the held work runs) and stops holding.
typedef int (*recqFaultLayerHoldEvents_fn)(int hold);

// emulate != 0: report cl_khr_command_buffer_mutable_dispatch (argument
// updates) on devices with cl_khr_command_buffer and implement
// clUpdateMutableCommandsKHR; applies to extension lookups and device
// queries made from then on (recq looks both up at each Record).
typedef int (*recqFaultLayerSetKhrMutable_fn)(int emulate);
// Non-zero sizes: CL_DEVICE_GLOBAL_MEM_SIZE and CL_DEVICE_MAX_MEM_ALLOC_SIZE
// report them instead of the device's values (0: the device's own), for
// queries made from then on (recq reads both at Context::Create). Only the
// reports change, not what can be allocated.
typedef int (*recqFaultLayerSetDeviceMemory_fn)(unsigned long long global_mem_size,
                                                unsigned long long max_mem_alloc_size);

}  // extern "C"

#endif  // RECQ_TOOLS_FAULT_LAYER_FAULT_LAYER_HOOKS_H_
