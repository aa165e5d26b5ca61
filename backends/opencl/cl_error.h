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

}  // namespace recq::cl

#endif  // RECQ_BACKENDS_OPENCL_CL_ERROR_H_
