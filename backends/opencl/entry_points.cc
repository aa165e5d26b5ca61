#include "backends/opencl/entry_points.h"

#include <CL/cl_ext.h>

#include "absl/strings/str_cat.h"

namespace recq::cl {

absl::Status LoadEntryPoints(cl_platform_id platform, absl::string_view extension,
                             absl::Span<const EntryPointRow> rows) {
  for (const EntryPointRow& row : rows) {
    *row.slot = clGetExtensionFunctionAddressForPlatform(platform, row.name);
    if (*row.slot == nullptr && row.required) {
      return absl::UnavailableError(absl::StrCat(extension,
                                                 ": clGetExtensionFunctionAddressForPlatform(\"",
                                                 row.name, "\") returned NULL"));
    }
  }
  return absl::OkStatus();
}

}  // namespace recq::cl
