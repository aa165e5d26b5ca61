#include "recq/context.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "backends/opencl/cl_error.h"
#include "backends/opencl/device.h"
#include "engine/binary_handoff.h"
#include "engine/context_state.h"
#include "recq/status_macros.h"

namespace recq {

namespace {

// NewBinaryCache returns the persistent program cache for `override_dir`
// (see ResolveBinaryCacheDir), or null when caching is off.
std::unique_ptr<internal::BinaryCache> NewBinaryCache(const std::string& override_dir) {
  std::optional<std::string> dir = internal::ResolveBinaryCacheDir(override_dir);
  if (!dir.has_value()) return nullptr;
  return std::make_unique<internal::BinaryCache>(*std::move(dir));
}

// CheckHandOffDevice is FailedPrecondition when `file` (a `what` at `path`:
// a hand-off file or a build plan) was written for another device or
// driver version than `info`'s.
absl::Status CheckHandOffDevice(const internal::BinaryHandOff& file, const DeviceInfo& info,
                                absl::string_view what, const std::string& path) {
  if (file.device_name == info.name && file.driver_version == info.driver_version) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      what, " '", path, "' is for device '", file.device_name, "' (driver ", file.driver_version,
      "); this context's device is '", info.name, "' (driver ", info.driver_version, ")"));
}

}  // namespace

const char* DeviceTypeName(cl_device_type type) {
  switch (cl::PrimaryType(type)) {
    case CL_DEVICE_TYPE_GPU:
      return "gpu";
    case CL_DEVICE_TYPE_CPU:
      return "cpu";
    case CL_DEVICE_TYPE_ACCELERATOR:
      return "accelerator";
    case CL_DEVICE_TYPE_CUSTOM:
      return "custom";
    default:
      return "unknown";
  }
}

absl::StatusOr<std::vector<DeviceListing>> ListDevices() {
  RECQ_ASSIGN_OR_RETURN(cl::DeviceTable table, cl::EnumerateDevices());
  std::vector<DeviceListing> out;
  for (const cl::DeviceEntryRaw& d : table.devices) {
    DeviceListing listing;
    listing.selector = absl::StrCat(DeviceTypeName(d.type), ":", d.type_index);
    listing.platform_device = absl::StrCat(d.platform_index, ":", d.device_index);
    listing.platform_index = d.platform_index;
    listing.device_index = d.device_index;
    listing.platform = d.platform;
    listing.device = d.device;
    RECQ_ASSIGN_OR_RETURN(listing.info, cl::QueryDeviceInfo(d.platform, d.device));
    out.push_back(std::move(listing));
  }
  return out;
}

bool DeviceInfo::HasExtension(const std::string& extension) const {
  return std::binary_search(extensions.begin(), extensions.end(), extension);
}

absl::StatusOr<Context> Context::Create(const ContextOptions& options) {
  std::string spec = options.device;
  if (spec.empty()) {
    if (const char* env = std::getenv("RECQ_DEVICE"); env != nullptr) spec = env;
  }
  RECQ_ASSIGN_OR_RETURN(cl::DeviceChoice choice, cl::SelectDevice(spec));
  RECQ_ASSIGN_OR_RETURN(DeviceInfo info, cl::QueryDeviceInfo(choice.platform, choice.device));
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(choice.platform), 0};
  cl_int err = CL_SUCCESS;
  cl::UniqueContext context(clCreateContext(props, 1, &choice.device, nullptr, nullptr, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateContext"));
  cl_queue_properties queue_props[] = {
      CL_QUEUE_PROPERTIES,
      static_cast<cl_queue_properties>(options.profiling ? CL_QUEUE_PROFILING_ENABLE : 0), 0};
  cl::UniqueQueue queue(
      clCreateCommandQueueWithProperties(context.get(), choice.device, queue_props, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateCommandQueueWithProperties"));
  return Context(std::make_shared<internal::ContextState>(
      std::move(context), std::move(queue), choice.platform, choice.device, std::move(info),
      NewBinaryCache(options.cache_dir)));
}

absl::StatusOr<Context> Context::Adopt(cl_context context, cl_command_queue queue) {
  if (context == nullptr || queue == nullptr) {
    return absl::InvalidArgumentError(
        "Context::Adopt needs a non-null cl_context and cl_command_queue");
  }
  cl_context queue_context = nullptr;
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(queue_context),
                                        &queue_context, nullptr),
                  "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)"));
  if (queue_context != context) {
    return absl::InvalidArgumentError(
        "Context::Adopt: the queue belongs to another cl_context than the one given");
  }
  cl_command_queue_properties queue_props = 0;
  RECQ_RETURN_IF_ERROR(cl::CheckCl(
      clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(queue_props), &queue_props, nullptr),
      "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)"));
  if (queue_props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    return absl::InvalidArgumentError(
        "Context::Adopt: the queue is out-of-order; recq needs an in-order queue");
  }
  cl_device_id device = nullptr;
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device), &device, nullptr),
                  "clGetCommandQueueInfo(CL_QUEUE_DEVICE)"));
  cl_platform_id platform = nullptr;
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform), &platform, nullptr),
                  "clGetDeviceInfo(CL_DEVICE_PLATFORM)"));
  RECQ_ASSIGN_OR_RETURN(DeviceInfo info, cl::QueryDeviceInfo(platform, device));
  RECQ_ASSIGN_OR_RETURN(cl::UniqueContext owned_context, cl::UniqueContext::RetainFrom(context));
  RECQ_ASSIGN_OR_RETURN(cl::UniqueQueue owned_queue, cl::UniqueQueue::RetainFrom(queue));
  return Context(std::make_shared<internal::ContextState>(std::move(owned_context),
                                                          std::move(owned_queue), platform, device,
                                                          std::move(info), NewBinaryCache("")));
}

cl_context Context::context() const { return state_->context.get(); }
cl_command_queue Context::queue() const { return state_->queue.get(); }
cl_device_id Context::device() const { return state_->device; }
cl_platform_id Context::platform() const { return state_->platform; }
const DeviceInfo& Context::device_info() const { return state_->info; }

namespace {
absl::Status RunLaunch(cl_context context, cl_command_queue queue, cl_program program,
                       const internal::WarmLaunch& launch);
}  // namespace

void Context::FlushBinaryCache() const { state_->programs.FlushPendingBinaries(); }

absl::StatusOr<size_t> Context::HandOffBinaryCache(const std::string& path) const {
  internal::ProgramCache& programs = state_->programs;
  if (state_->binary_cache == nullptr) return 0;
  if (programs.SerializingIsCheap()) {
    programs.FlushPendingBinaries();
    return 0;
  }
  internal::BinaryHandOff handoff;
  handoff.device_name = state_->info.name;
  handoff.driver_version = state_->info.driver_version;
  handoff.programs = programs.TakePending();
  if (handoff.programs.empty()) return 0;
  RECQ_RETURN_IF_ERROR(internal::WriteBinaryHandOff(path, handoff));
  return handoff.programs.size();
}

absl::Status Context::StoreHandedOffBinaries(const std::string& path) const {
  RECQ_ASSIGN_OR_RETURN(internal::BinaryHandOff handoff, internal::ReadBinaryHandOff(path));
  RECQ_RETURN_IF_ERROR(CheckHandOffDevice(handoff, state_->info, "binary hand-off file", path));
  if (state_->binary_cache == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("binary hand-off file '", path, "': this context has no binary cache"));
  }
  for (const internal::HandedOffProgram& program : handoff.programs) {
    auto warm = [&](cl_program built) {
      for (const internal::WarmLaunch& launch : program.launches) {
        RECQ_RETURN_IF_ERROR(RunLaunch(context(), queue(), built, launch));
      }
      return absl::OkStatus();
    };
    RECQ_RETURN_IF_ERROR(state_->programs.StoreFromSource(program, warm));
  }
  return absl::OkStatus();
}

void Context::SetBuildHelper(BuildHelperStarter starter) const {
  std::lock_guard<std::mutex> lock(state_->helper_mu);
  state_->build_helper = std::move(starter);
}

namespace {

// RunLaunch enqueues one warm-up launch of `program` on `queue` with
// zero-filled buffers and waits for it.
absl::Status RunLaunch(cl_context context, cl_command_queue queue, cl_program program,
                       const internal::WarmLaunch& launch) {
  cl_int err = CL_SUCCESS;
  cl::UniqueKernel kernel(clCreateKernel(program, launch.kernel.c_str(), &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, absl::StrCat("clCreateKernel(", launch.kernel, ")")));
  std::vector<cl::UniqueMem> buffers;
  const cl_uchar zero = 0;
  for (size_t i = 0; i < launch.args.size(); ++i) {
    const internal::WarmLaunch::Arg& a = launch.args[i];
    const cl_uint index = static_cast<cl_uint>(i);
    switch (a.kind) {
      case internal::WarmLaunch::Arg::Kind::kBuffer: {
        const size_t bytes = std::max<size_t>(a.bytes, 4);
        cl::UniqueMem mem(clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err));
        RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateBuffer(build helper)"));
        RECQ_RETURN_IF_ERROR(cl::CheckCl(
            clEnqueueFillBuffer(queue, mem.get(), &zero, 1, 0, bytes, 0, nullptr, nullptr),
            "clEnqueueFillBuffer(build helper)"));
        cl_mem handle = mem.get();
        err = clSetKernelArg(kernel.get(), index, sizeof(cl_mem), &handle);
        buffers.push_back(std::move(mem));
        break;
      }
      case internal::WarmLaunch::Arg::Kind::kScalar:
        err = clSetKernelArg(kernel.get(), index, a.value.size(), a.value.data());
        break;
      case internal::WarmLaunch::Arg::Kind::kLocal:
        err = clSetKernelArg(kernel.get(), index, a.bytes, nullptr);
        break;
      case internal::WarmLaunch::Arg::Kind::kNull:
        err = clSetKernelArg(kernel.get(), index, sizeof(cl_mem), nullptr);
        break;
    }
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(err, absl::StrCat("clSetKernelArg(", launch.kernel, ", ", i, ")")));
  }
  size_t global[3], local[3];
  for (int d = 0; d < 3; ++d) {
    global[d] = static_cast<size_t>(launch.global[d]);
    local[d] = static_cast<size_t>(launch.local[d]);
  }
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clEnqueueNDRangeKernel(queue, kernel.get(), launch.work_dim, nullptr, global,
                                         local[0] != 0 ? local : nullptr, 0, nullptr, nullptr),
                  absl::StrCat("clEnqueueNDRangeKernel(", launch.kernel, ")")));
  return cl::CheckCl(clFinish(queue), "clFinish(build helper)");
}

}  // namespace

absl::Status Context::RunBuildPlan(const std::string& path,
                                   const BuildPlanProgress& progress) const {
  absl::StatusOr<internal::BinaryHandOff> plan = internal::ReadBinaryHandOff(path);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (!plan.ok()) return plan.status();
  RECQ_RETURN_IF_ERROR(CheckHandOffDevice(*plan, state_->info, "build plan", path));
  std::vector<cl::UniqueProgram> programs(plan->programs.size());
  for (size_t i = 0; i < programs.size(); ++i) {
    const internal::HandedOffProgram& p = plan->programs[i];
    if (p.built_by_compiler) continue;
    RECQ_ASSIGN_OR_RETURN(programs[i], state_->programs.BuildUncached(p.source, p.options));
  }
  if (progress.programs_built) progress.programs_built();
  absl::Status first_error;
  for (size_t i = 0; i < programs.size(); ++i) {
    const internal::HandedOffProgram& p = plan->programs[i];
    for (const internal::WarmLaunch& launch : p.launches) {
      if (progress.launch_started) progress.launch_started();
      if (!programs[i]) {
        absl::StatusOr<cl::UniqueProgram> built =
            state_->programs.BuildUncached(p.source, p.options);
        if (!built.ok()) {
          if (first_error.ok()) first_error = built.status();
          continue;
        }
        programs[i] = *std::move(built);
      }
      absl::Status ran =
          RunLaunch(state_->context.get(), state_->queue.get(), programs[i].get(), launch);
      if (!ran.ok() && first_error.ok()) first_error = ran;
    }
  }
  return first_error;
}

std::string Context::cache_dir() const {
  return state_->binary_cache ? state_->binary_cache->directory() : std::string();
}

}  // namespace recq
