// Loading an extension's entry points from one declared table.
#ifndef RECQ_BACKENDS_OPENCL_ENTRY_POINTS_H_
#define RECQ_BACKENDS_OPENCL_ENTRY_POINTS_H_

#include <CL/cl.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace recq::cl {

// One row of an extension's entry-point table: the name the platform knows
// the function by, whether recq needs it, and where its address goes.
struct EntryPointRow {
  const char* name;
  bool required;
  void** slot;
};

// LoadEntryPoints fills every row's slot through
// clGetExtensionFunctionAddressForPlatform. A missing required entry point
// is Unavailable naming `extension` and the function; a missing optional
// one leaves its slot null.
[[nodiscard]] absl::Status LoadEntryPoints(cl_platform_id platform, absl::string_view extension,
                                           absl::Span<const EntryPointRow> rows);

}  // namespace recq::cl

#endif  // RECQ_BACKENDS_OPENCL_ENTRY_POINTS_H_
