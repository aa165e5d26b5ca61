// OpenCL error codes as absl::Status.
#ifndef RECQ_BACKENDS_OPENCL_CL_ERROR_H_
#define RECQ_BACKENDS_OPENCL_CL_ERROR_H_

#include <CL/cl.h>

#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace recq::cl {

// ErrorName returns the symbolic name of an OpenCL error ("CL_OUT_OF_RESOURCES"),
// or "CL_ERROR(<code>)" for a code it does not know.
const char* ErrorName(cl_int code);

// CheckCl returns OK for CL_SUCCESS, else a status whose message names the
// call and the error ("clEnqueueNDRangeKernel: CL_INVALID_KERNEL_ARGS").
// Allocation failures map to ResourceExhausted, invalid handles/values to
// InvalidArgument, everything else to Internal.
absl::Status CheckCl(cl_int code, absl::string_view call);

// DrainQueue waits until everything enqueued on `queue` so far has completed:
// clFinish, or where that fails, a marker enqueued and waited on. Error paths
// use it so that nothing they enqueued is left running on memory that is
// about to be freed. The error (both ways failed) is clFinish's.
absl::Status DrainQueue(cl_command_queue queue);

}  // namespace recq::cl

#endif  // RECQ_BACKENDS_OPENCL_CL_ERROR_H_
