#include "engine/program_cache.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/opencl/cl_error.h"
#include "engine/status_macros.h"

namespace recq::internal {

namespace {

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
      CL_SUCCESS) {
    return "(no build log)";
  }
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

absl::StatusOr<SharedProgram> ProgramCache::GetOrBuild(absl::string_view source,
                                                       absl::Span<const std::string> options,
                                                       bool* built) {
  std::vector<std::string> sorted(options.begin(), options.end());
  std::sort(sorted.begin(), sorted.end());
  std::string option_string = absl::StrJoin(sorted, " ");
  std::string key = absl::StrCat(option_string, "\n", source);
  if (built != nullptr) *built = false;

  // Builds are serialized: two engines compiling at once share one build.
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = programs_.find(key); it != programs_.end()) return it->second;

  const char* text = source.data();
  size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl::UniqueProgram program(clCreateProgramWithSource(context_, 1, &text, &length, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateProgramWithSource"));
  err = clBuildProgram(program.get(), 1, &device_, option_string.c_str(), nullptr, nullptr);
  if (err == CL_BUILD_PROGRAM_FAILURE) {
    return absl::InvalidArgumentError(
        absl::StrCat("clBuildProgram: CL_BUILD_PROGRAM_FAILURE with options '", option_string,
                     "':\n", BuildLog(program.get(), device_)));
  }
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clBuildProgram"));
  auto shared = std::make_shared<const cl::UniqueProgram>(std::move(program));
  programs_.emplace(std::move(key), shared);
  if (built != nullptr) *built = true;
  return shared;
}

size_t ProgramCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return programs_.size();
}

}  // namespace recq::internal
