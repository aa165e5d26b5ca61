// Symbolic names of the standard OpenCL error codes (cl.h, OpenCL 3.0).

#ifndef RECQ_TOOLS_QCOM_LAYER_CL_ERROR_NAMES_H_
#define RECQ_TOOLS_QCOM_LAYER_CL_ERROR_NAMES_H_

#include <CL/cl.h>

#include <string_view>

namespace recq::qcom_layer {

// ParseClError accepts a standard name ("CL_OUT_OF_RESOURCES") or a decimal
// integer ("-5") and stores the code in *code. Returns false, leaving *code
// untouched, for anything else.
bool ParseClError(std::string_view text, cl_int* code);

}  // namespace recq::qcom_layer

#endif  // RECQ_TOOLS_QCOM_LAYER_CL_ERROR_NAMES_H_
