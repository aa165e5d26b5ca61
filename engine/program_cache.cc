#include "engine/program_cache.h"

#include <algorithm>
#include <optional>

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

absl::StatusOr<cl::UniqueProgram> BuildFromSource(cl_context context, cl_device_id device,
                                                  absl::string_view source,
                                                  const std::string& option_string) {
  const char* text = source.data();
  size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl::UniqueProgram program(clCreateProgramWithSource(context, 1, &text, &length, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateProgramWithSource"));
  err = clBuildProgram(program.get(), 1, &device, option_string.c_str(), nullptr, nullptr);
  if (err == CL_BUILD_PROGRAM_FAILURE) {
    return absl::InvalidArgumentError(
        absl::StrCat("clBuildProgram: CL_BUILD_PROGRAM_FAILURE with options '", option_string,
                     "':\n", BuildLog(program.get(), device)));
  }
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clBuildProgram"));
  return program;
}

// BuildFromBinary creates and builds (as OpenCL requires for binaries) a
// program from a binary for `device`.
absl::StatusOr<cl::UniqueProgram> BuildFromBinary(cl_context context, cl_device_id device,
                                                  const std::vector<uint8_t>& binary,
                                                  const std::string& option_string) {
  const unsigned char* data = binary.data();
  size_t size = binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl::UniqueProgram program(
      clCreateProgramWithBinary(context, 1, &device, &size, &data, &binary_status, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateProgramWithBinary"));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(binary_status, "clCreateProgramWithBinary(binary_status)"));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(
      clBuildProgram(program.get(), 1, &device, option_string.c_str(), nullptr, nullptr),
      "clBuildProgram(binary)"));
  return program;
}

// ProgramBinary returns the binary of a built `program` for `device`.
absl::StatusOr<std::vector<uint8_t>> ProgramBinary(cl_program program, cl_device_id device) {
  cl_uint num_devices = 0;
  RECQ_RETURN_IF_ERROR(cl::CheckCl(
      clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof(num_devices), &num_devices, nullptr),
      "clGetProgramInfo(CL_PROGRAM_NUM_DEVICES)"));
  std::vector<cl_device_id> devices(num_devices);
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetProgramInfo(program, CL_PROGRAM_DEVICES, num_devices * sizeof(cl_device_id),
                                   devices.data(), nullptr),
                  "clGetProgramInfo(CL_PROGRAM_DEVICES)"));
  auto it = std::find(devices.begin(), devices.end(), device);
  if (it == devices.end()) {
    return absl::InternalError("clGetProgramInfo(CL_PROGRAM_DEVICES): the device is not listed");
  }
  const size_t index = static_cast<size_t>(it - devices.begin());
  std::vector<size_t> sizes(num_devices);
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, num_devices * sizeof(size_t),
                                   sizes.data(), nullptr),
                  "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)"));
  if (sizes[index] == 0) {
    return absl::UnimplementedError("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES): no binary");
  }
  std::vector<uint8_t> binary(sizes[index]);
  // Null entries tell the driver to skip the other devices' binaries.
  std::vector<unsigned char*> pointers(num_devices, nullptr);
  pointers[index] = binary.data();
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetProgramInfo(program, CL_PROGRAM_BINARIES,
                                   num_devices * sizeof(unsigned char*), pointers.data(), nullptr),
                  "clGetProgramInfo(CL_PROGRAM_BINARIES)"));
  return binary;
}

}  // namespace

absl::StatusOr<SharedProgram> ProgramCache::GetOrBuild(absl::string_view source,
                                                       absl::Span<const std::string> options,
                                                       ProgramOrigin* origin) {
  std::vector<std::string> sorted(options.begin(), options.end());
  std::sort(sorted.begin(), sorted.end());
  std::string option_string = absl::StrJoin(sorted, " ");
  std::string key = absl::StrCat(option_string, "\n", source);
  if (origin != nullptr) *origin = ProgramOrigin::kMemory;

  // Builds are serialized: two engines compiling at once share one build.
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = programs_.find(key); it != programs_.end()) return it->second;

  // The disk cache is an optimization: failing to hash, read, or write it
  // only means building from source.
  std::optional<BinaryCacheKey> disk_key;
  if (disk_ != nullptr) {
    absl::StatusOr<BinaryCacheKey> k = MakeBinaryCacheKey(source, sorted, *device_info_);
    if (k.ok()) disk_key = *k;
  }
  cl::UniqueProgram program;
  ProgramOrigin from = ProgramOrigin::kSource;
  if (disk_key.has_value()) {
    if (std::optional<std::vector<uint8_t>> binary = disk_->Load(*disk_key)) {
      absl::StatusOr<cl::UniqueProgram> loaded =
          BuildFromBinary(context_, device_, *binary, option_string);
      if (loaded.ok()) {
        program = *std::move(loaded);
        from = ProgramOrigin::kDisk;
      } else {
        disk_->MarkInvalid();  // rebuilt below and overwritten
      }
    }
  }
  if (!program) {
    RECQ_ASSIGN_OR_RETURN(program, BuildFromSource(context_, device_, source, option_string));
    if (disk_key.has_value()) {
      absl::StatusOr<std::vector<uint8_t>> binary = ProgramBinary(program.get(), device_);
      // A failed store is counted by the cache and otherwise ignored.
      if (binary.ok()) disk_->Store(*disk_key, *binary).IgnoreError();
    }
  }
  auto shared = std::make_shared<const cl::UniqueProgram>(std::move(program));
  programs_.emplace(std::move(key), shared);
  if (origin != nullptr) *origin = from;
  return shared;
}

size_t ProgramCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return programs_.size();
}

}  // namespace recq::internal
