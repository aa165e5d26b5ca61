// Engine::Deserialize and LoadEngine: a verified engine file (verifier.h)
// onto a context. The file's stored lowering is used where the device's
// lowering facts match the file's (SameLowering), its program binaries where
// the driver matches too (SameDriver); otherwise the programs are rebuilt
// from the stored sources, or the stored graph is lowered afresh.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/engine_file/convert.h"
#include "engine/engine_file/load_state.h"
#include "engine/engine_file/stored_lowering.h"
#include "engine/engine_file/verifier.h"
#include "engine/engine_state.h"
#include "recq/engine_file.h"
#include "recq/log.h"
#include "recq/onnx.h"
#include "recq/status_macros.h"

namespace recq {
namespace {
namespace pb = ::recq::engine_file;
}  // namespace

namespace internal {
namespace {

// SameLowering: the stored lowering applies on a device whose lowering
// facts (`here`) are those the file was lowered for.
// The selection key holds every fact that kernel selection reads; files
// written before it had the key compare the first three alone.
bool SameLowering(const pb::Device& built, const DeviceFacts& here) {
  return here.GpuKernels() == built.gpu_kernels() &&
         here.max_work_group_size == built.max_work_group_size() &&
         here.compute_units == built.compute_units() &&
         (built.selection_key().empty() || built.selection_key() == here.SelectionKey());
}

bool SameDriver(const pb::Device& a, const DeviceInfo& b) {
  return a.name() == b.name && a.vendor() == b.vendor && a.version() == b.version &&
         a.driver_version() == b.driver_version && a.platform_name() == b.platform_name &&
         a.platform_version() == b.platform_version;
}

std::string DescribeDevice(const pb::Device& d) {
  return absl::StrCat("'", d.name(), "' (", d.platform_name(), ", driver ", d.driver_version(),
                      "; ", d.gpu_kernels() ? "GPU" : "CPU", " kernels, max work-group ",
                      d.max_work_group_size(), ", ", d.compute_units(), " compute units)");
}

std::string DescribeDevice(const DeviceInfo& d, const DeviceFacts& facts) {
  return absl::StrCat("'", d.name, "' (", d.platform_name, ", driver ", d.driver_version, "; ",
                      facts.GpuKernels() ? "GPU" : "CPU", " kernels, max work-group ",
                      facts.max_work_group_size, ", ", facts.compute_units, " compute units)");
}

}  // namespace
}  // namespace internal

absl::StatusOr<Engine> Engine::Deserialize(const Context& context, absl::string_view bytes,
                                           const EngineLoadOptions& load) {
  auto start = std::chrono::steady_clock::now();
  RECQ_ASSIGN_OR_RETURN(pb::EngineFile f, internal::ParseEngineFile(bytes));
  Log(LogLevel::kInfo, absl::StrCat("load: ", bytes.size(), " bytes checked and parsed in ",
                                    internal::MsSince(start), " ms"));
  RECQ_ASSIGN_OR_RETURN(std::shared_ptr<internal::EngineState> state,
                        internal::LoadEngineState(context, std::move(f), load, nullptr, start));
  return Engine(std::move(state));
}

namespace internal {

absl::StatusOr<std::shared_ptr<EngineState>> LoadEngineState(
    const Context& context, engine_file::EngineFile f, const EngineLoadOptions& load,
    std::shared_ptr<WeightCache> weights, std::chrono::steady_clock::time_point start) {
  f.clear_shape_profile();
  EngineOptions options;
  options.optimize = f.options().optimize();
  options.fuse_elementwise = f.options().fuse_elementwise();
  options.kernel_target = internal::KernelTargetOf(f.options().kernel_target());
  options.precision = internal::PrecisionOf(f.options().precision());
  options.warm_up = load.warm_up;
  const DeviceInfo& device = context.device_info();
  const DeviceFacts here = internal::LoweringFactsFor(device, options.kernel_target);
  const pb::Device& built = f.built_for();
  const bool same_lowering = internal::SameLowering(built, here);
  const bool same_driver = internal::SameDriver(built, device);
  const std::string mismatch =
      absl::StrCat("the engine file was built for ", internal::DescribeDevice(built),
                   "; this device is ", internal::DescribeDevice(device, here));

  if (!same_lowering) {
    if (load.strict) {
      return absl::FailedPreconditionError(
          absl::StrCat(mismatch, ": its lowering does not apply (strict load)"));
    }
    if (f.graph_onnx().empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(mismatch, ", and the file holds no graph to lower afresh (",
                       f.graph_missing_reason(), ")"));
    }
    absl::StatusOr<Graph> graph = LoadOnnxFromBytes(f.graph_onnx());
    if (!graph.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("engine file: its graph does not load: ", graph.status().message()));
    }
    RECQ_ASSIGN_OR_RETURN(std::shared_ptr<internal::EngineState> state,
                          internal::CompileEngineState(context, *graph, options, weights));
    state->graph_onnx = std::make_shared<const std::string>(std::move(*f.mutable_graph_onnx()));
    state->stats.origin = EngineOrigin::kFileRelowered;
    state->stats.origin_reason = absl::StrCat(mismatch, ": re-lowered from the stored graph");
    state->stats.compile_ms = internal::MsSince(start);
    return state;
  }
  if (!same_driver && load.strict) {
    return absl::FailedPreconditionError(
        absl::StrCat(mismatch, ": its program binaries do not apply (strict load)"));
  }

  auto state = std::make_shared<internal::EngineState>(context);
  state->options = options;
  state->lowered_for = here;
  state->weight_cache = std::move(weights);
  // The programs load from their stored binaries on another thread while
  // this one lowers the stored graph: the two are independent, and each is
  // a large part of the load (PoCL unpacks every binary into its cache).
  std::vector<internal::ProgramRequest> requests(f.programs_size());
  for (int p = 0; p < f.programs_size(); ++p) {
    const pb::Program& program = f.programs(p);
    requests[p].source = program.source();
    requests[p].options.assign(program.options().begin(), program.options().end());
    if (same_driver) requests[p].binary = program.binary();
  }
  internal::ProgramCache& program_cache = state->context->programs;
  std::future<absl::Status> programs_ready =
      std::async(std::launch::async, [&program_cache, &requests] {
        const auto programs_start = std::chrono::steady_clock::now();
        absl::Status built = program_cache.GetOrBuildAll(absl::MakeSpan(requests));
        Log(LogLevel::kInfo,
            absl::StrCat("load: ", requests.size(), " programs ready in ",
                         internal::MsSince(programs_start), " ms (beside the lowering)"));
        return built;
      });
  const bool from_graph = !f.graph_onnx().empty();
  RECQ_ASSIGN_OR_RETURN(internal::DispatchList stored, internal::ListOf(f, !from_graph));
  if (from_graph) {
    // The weights are in the graph: lower it again (replaying the stored
    // variant choices) and check that this gives the stored dispatch list,
    // bindings and work sizes included; the constants come from it.
    auto lower_start = std::chrono::steady_clock::now();
    RECQ_ASSIGN_OR_RETURN(internal::Lowered lowered,
                          internal::LowerStoredGraph(f, context, options, here));
    std::vector<int32_t> constant_of;
    RECQ_RETURN_IF_ERROR(internal::CheckStoredLowering(f, stored, lowered.list, &constant_of));
    // The stored list, with the lowering's constants (in the stored order)
    // and its work estimates for profiles.
    for (int32_t c : constant_of) stored.constants.push_back(lowered.list.constants[c]);
    for (size_t d = 0; d < stored.dispatches.size(); ++d) {
      stored.dispatches[d].flops = lowered.list.dispatches[d].flops;
      stored.dispatches[d].bytes = lowered.list.dispatches[d].bytes;
    }
    state->list = std::move(stored);
    Log(LogLevel::kInfo, absl::StrCat("load: stored graph lowered and checked in ",
                                      internal::MsSince(lower_start), " ms"));
  } else {
    state->list = std::move(stored);
  }
  RECQ_RETURN_IF_ERROR(internal::CheckPlanFits(state->list, device));
  state->stats.intermediate_bytes = f.memory_plan().total_bytes();
  state->stats.lower_bound_bytes = f.memory_plan().lower_bound_bytes();
  for (const pb::VariantChoice& c : f.variant_choices()) {
    state->variant_choices.push_back({c.node(), c.variant(), c.params()});
  }
  if (from_graph) {
    state->graph_onnx = std::make_shared<const std::string>(std::move(*f.mutable_graph_onnx()));
  } else {
    state->graph_missing_reason = f.graph_missing_reason().empty()
                                      ? std::string("the engine file held no graph")
                                      : f.graph_missing_reason();
  }

  RECQ_RETURN_IF_ERROR(programs_ready.get());
  std::vector<std::shared_ptr<const std::string>> sources;
  for (internal::ProgramRequest& r : requests) {
    if (r.origin == internal::ProgramOrigin::kSource) ++state->stats.kernels_built;
    if (r.origin == internal::ProgramOrigin::kDisk) ++state->stats.programs_from_disk;
    if (r.origin == internal::ProgramOrigin::kBinary) ++state->stats.programs_from_file;
    sources.push_back(std::make_shared<const std::string>(std::move(r.source)));
  }
  for (const pb::Kernel& k : f.kernels()) {
    state->programs.push_back(requests[k.program()].program);
    state->kernel_sources.push_back(sources[k.program()]);
  }
  RECQ_RETURN_IF_ERROR(internal::FinishEngineState(state, load.warm_up));
  if (same_driver) {
    state->stats.origin = EngineOrigin::kFileAsStored;
    state->stats.origin_reason =
        state->stats.kernels_built == 0
            ? "same device and driver: stored lowering and program binaries"
            : absl::StrCat("same device and driver: stored lowering; ", state->stats.kernels_built,
                           " program binaries were rejected by the driver and rebuilt");
  } else {
    state->stats.origin = EngineOrigin::kFileRebuiltPrograms;
    state->stats.origin_reason =
        absl::StrCat(mismatch, ": stored lowering, programs rebuilt from the stored sources");
  }
  state->stats.compile_ms = internal::MsSince(start);
  return state;
}

}  // namespace internal

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  // One read(2) loop into a string sized from fstat: a stream iterator read
  // a 200 MB engine file a character at a time (about a second).
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == EACCES) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot open '", path, "': permission denied"));
    }
    return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(error)));
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return absl::NotFoundError(absl::StrCat("cannot read '", path, "': not a regular file"));
  }
  std::string bytes;
  bytes.resize(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  if (done != bytes.size()) {
    return absl::DataLossError(
        absl::StrCat("cannot read '", path, "': read ", done, " of ", bytes.size(), " bytes"));
  }
  return bytes;
}

absl::StatusOr<Engine> LoadEngine(const Context& context, const std::string& path,
                                  const EngineLoadOptions& options) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  absl::StatusOr<Engine> engine = LoadEngineFromBytes(context, bytes, options);
  if (!engine.ok()) {
    return absl::Status(engine.status().code(),
                        absl::StrCat("'", path, "': ", engine.status().message()));
  }
  return engine;
}

absl::StatusOr<Engine> LoadEngineFromBytes(const Context& context, absl::string_view bytes,
                                           const EngineLoadOptions& options) {
  return Engine::Deserialize(context, bytes, options);
}
}  // namespace recq
