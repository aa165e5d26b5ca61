// The kernel library: the .cl files under engine/kernels/, embedded into the
// binary by the build (see kernel_sources.cc.in).
#ifndef RECQ_ENGINE_KERNEL_LIBRARY_H_
#define RECQ_ENGINE_KERNEL_LIBRARY_H_

#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace recq::internal {

// KernelProgramSource returns the source of `file` ("conv2d.cl") with the
// shared prelude (common.cl) in front, or NotFound.
[[nodiscard]] absl::StatusOr<std::string> KernelProgramSource(absl::string_view file);

// LibraryKernelFile returns the source of `file` as the library embeds it
// (without common.cl), or nullopt for a file not in the library (a
// registered source) and for common.cl itself.
std::optional<absl::string_view> LibraryKernelFile(absl::string_view file);

// KernelPrelude returns common.cl, which KernelProgramSource puts in front
// of every file ("<common.cl>\n#line 1\n<file>").
absl::string_view KernelPrelude();

// KernelLibraryText returns every library file's name and source, in the
// build's order: what the tuning cache hashes into its keys.
std::string KernelLibraryText();

}  // namespace recq::internal

#endif  // RECQ_ENGINE_KERNEL_LIBRARY_H_
