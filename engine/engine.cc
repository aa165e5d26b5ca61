#include "recq/engine.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/opencl/cl_error.h"
#include "engine/backend_registry.h"
#include "engine/binary_handoff.h"
#include "engine/engine_state.h"
#include "engine/kernel_library.h"
#include "engine/lowering.h"
#include "engine/ops/preprocess.h"
#include "engine/passes.h"
#include "engine/precision.h"
#include "engine/program_merge.h"
#include "engine/recording_impl.h"
#include "engine/tuner.h"
#include "engine/weight_cache.h"
#include "recq/log.h"
#include "recq/status_macros.h"

namespace recq {

namespace internal {
namespace {

std::string ProgramKey(const internal::KernelRef& ref) {
  std::string key = ref.program;
  for (const std::string& option : ref.options) absl::StrAppend(&key, " ", option);
  return key;
}

// WarmUpGlobal is the global size the warm-up launches `dispatch` with: its
// local size where it has one (one work-group is enough to have the driver
// compile it), else its global size.
std::array<size_t, 3> WarmUpGlobal(const Dispatch& dispatch) {
  std::array<size_t, 3> global = dispatch.global;
  if (dispatch.has_local()) {
    for (cl_uint i = 0; i < dispatch.work_dim; ++i) global[i] = dispatch.local[i];
  }
  return global;
}

// WarmLaunchOf is the warm-up's launch of `dispatch` (WarmUp) for a build
// helper; nullopt when an argument is an image, which a helper does not
// make.
std::optional<WarmLaunch> WarmLaunchOf(const DispatchList& list,
                                       const std::vector<std::string>& entry_points,
                                       const Dispatch& dispatch) {
  WarmLaunch launch;
  launch.kernel = entry_points[dispatch.kernel];
  launch.work_dim = dispatch.work_dim;
  const std::array<size_t, 3> global = WarmUpGlobal(dispatch);
  std::copy(global.begin(), global.end(), launch.global.begin());
  std::copy(dispatch.local.begin(), dispatch.local.end(), launch.local.begin());
  // Slack past each buffer's size: a helper's buffers are only zeros.
  constexpr uint64_t kSlack = 256;
  for (const DispatchArg& arg : dispatch.args) {
    WarmLaunch::Arg a;
    switch (arg.kind) {
      case DispatchArg::Kind::kInternal:
        a.kind = WarmLaunch::Arg::Kind::kBuffer;
        a.bytes = list.internal_buffer_bytes[arg.index] + kSlack;
        break;
      case DispatchArg::Kind::kSlot:
        if (list.slots[arg.index].image) return std::nullopt;
        a.kind = WarmLaunch::Arg::Kind::kBuffer;
        a.bytes = list.slots[arg.index].desc.ByteSize() + kSlack;
        break;
      case DispatchArg::Kind::kConstant:
        a.kind = WarmLaunch::Arg::Kind::kBuffer;
        a.bytes = list.constants[arg.index]->byte_size() + kSlack;
        break;
      case DispatchArg::Kind::kScalar:
        a.kind = WarmLaunch::Arg::Kind::kScalar;
        a.value.assign(arg.bytes.begin(), arg.bytes.end());
        break;
      case DispatchArg::Kind::kLocal:
        a.kind = WarmLaunch::Arg::Kind::kLocal;
        a.bytes = arg.local_bytes;
        break;
      case DispatchArg::Kind::kNull:
        a.kind = WarmLaunch::Arg::Kind::kNull;
        break;
    }
    launch.args.push_back(std::move(a));
  }
  return launch;
}

// WarmUpShape is what makes two warm-up launches the same to the driver.
std::string WarmUpShape(const Dispatch& dispatch) {
  const std::array<size_t, 3> global = WarmUpGlobal(dispatch);
  return absl::StrCat(dispatch.kernel, ":", dispatch.work_dim, ":", global[0], ",", global[1], ",",
                      global[2], ":", dispatch.local[0], ",", dispatch.local[1], ",",
                      dispatch.local[2]);
}

// StartBuildHelper hands about half of the programs among `requests` that
// would be built from source to a build helper, where the context has a
// starter and the driver builds one program at a time per process, with
// the warm-up launches of every such program (the helper's first). It
// marks the requests it handed over in `*to_helper`, sets the dispatch of
// each launch, in the plan's order, in state.helper_launches, and returns
// the helper, or null (the engine builds all).
std::unique_ptr<BuildHelper> StartBuildHelper(EngineState& state,
                                              const std::vector<ProgramRequest>& requests,
                                              const std::vector<size_t>& kernel_request,
                                              std::vector<bool>* to_helper) {
  ContextState& cs = *state.context;
  BuildHelperStarter starter = BuildHelperFor(cs);
  if (!starter) return nullptr;
  // Each program's launches, as WarmUp will enqueue them.
  std::vector<std::vector<WarmLaunch>> launches(requests.size());
  std::vector<std::vector<size_t>> launch_dispatch(requests.size());
  std::vector<bool> has_image(requests.size(), false);
  absl::flat_hash_set<std::string> shapes;
  for (size_t di = 0; di < state.list.dispatches.size(); ++di) {
    const Dispatch& d = state.list.dispatches[di];
    if (!shapes.insert(WarmUpShape(d)).second) continue;
    const size_t r = kernel_request[d.kernel];
    std::optional<WarmLaunch> launch = WarmLaunchOf(state.list, state.entry_points, d);
    if (launch.has_value()) {
      launches[r].push_back(*std::move(launch));
      launch_dispatch[r].push_back(di);
    } else {
      has_image[r] = true;
    }
  }
  std::vector<size_t> cold;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!has_image[i] && requests[i].binary.empty() &&
        cs.programs.WouldBuildFromSource(requests[i].source, requests[i].options)) {
      cold.push_back(i);
    }
  }
  if (cold.size() < 2) return nullptr;
  // The program builds are split by source size, largest first, each to
  // the side with less so far; the helper starts two average programs
  // behind (its process start, its context and the compiler's first use),
  // or one where the programs were merged (two, each much larger than a
  // file's). The launches are not split: both sides take them until they
  // meet.
  auto bytes = [&](size_t i) { return requests[i].source.size(); };
  std::stable_sort(cold.begin(), cold.end(),
                   [&](size_t a, size_t b) { return bytes(a) > bytes(b); });
  size_t total = 0;
  for (size_t i : cold) total += bytes(i);
  size_t own = 0, theirs = (state.programs_merged ? 1 : 2) * total / cold.size();
  for (size_t i : cold) {
    if (theirs < own) {
      theirs += bytes(i);
      (*to_helper)[i] = true;
    } else {
      own += bytes(i);
    }
  }
  BinaryHandOff plan;
  plan.device_name = cs.info.name;
  plan.driver_version = cs.info.driver_version;
  state.helper_launches.clear();
  size_t helper_programs = 0;
  for (bool by_compiler : {false, true}) {
    for (size_t i : cold) {
      if ((*to_helper)[i] == by_compiler) continue;
      plan.programs.push_back({requests[i].source, requests[i].options, launches[i], by_compiler});
      state.helper_launches.insert(state.helper_launches.end(), launch_dispatch[i].begin(),
                                   launch_dispatch[i].end());
      if (!by_compiler) ++helper_programs;
    }
  }
  std::string dir = cs.binary_cache ? cs.binary_cache->directory() : std::string();
  std::error_code ec;
  if (dir.empty()) dir = std::filesystem::temp_directory_path(ec).string();
  std::random_device random;
  const std::string path = (std::filesystem::path(dir) / "handoff" /
                            absl::StrCat(getpid(), "-", absl::Hex(random()), ".plan"))
                               .string();
  absl::Status written = WriteBinaryHandOff(path, plan);
  absl::StatusOr<std::unique_ptr<BuildHelper>> helper =
      written.ok() ? starter(path) : absl::StatusOr<std::unique_ptr<BuildHelper>>(written);
  if (!helper.ok() || *helper == nullptr) {
    std::filesystem::remove(path, ec);
    Log(LogLevel::kInfo, absl::StrCat("compile: no build helper (",
                                      helper.ok() ? "none started" : helper.status().ToString(),
                                      "); building every program here"));
    std::fill(to_helper->begin(), to_helper->end(), false);
    state.helper_launches.clear();
    return nullptr;
  }
  Log(LogLevel::kInfo, absl::StrCat("compile: a build helper builds ", helper_programs, " of the ",
                                    cold.size(), " programs to build from source and shares their ",
                                    state.helper_launches.size(), " warm-up launches"));
  return *std::move(helper);
}

// The programs a dispatch list's kernels come from.
struct ProgramPlan {
  std::vector<ProgramRequest> requests;
  std::vector<size_t> kernel_request;     // per kernel: index into requests
  std::vector<std::string> entry_points;  // per kernel: its name there
  bool merged = false;                    // a request holds several programs
  // Per request: the programs merged into it (each a kernel whose file and
  // options stand for it); empty where it is one program.
  std::vector<std::vector<size_t>> parts;
};

// PlanPrograms makes one request per distinct program (file and options)
// of `kernels`; where `merge`, the library's programs are packed into at
// most two (MergePrograms), and entry points carry their suffixes.
absl::StatusOr<ProgramPlan> PlanPrograms(const std::vector<KernelRef>& kernels, bool merge) {
  ProgramPlan plan;
  absl::flat_hash_map<std::string, size_t> request_of;
  std::vector<const KernelRef*> distinct;
  for (const KernelRef& ref : kernels) {
    auto [it, inserted] = request_of.try_emplace(ProgramKey(ref), distinct.size());
    if (inserted) distinct.push_back(&ref);
    plan.kernel_request.push_back(it->second);
    plan.entry_points.push_back(ref.name);
  }
  std::vector<MergeInput> inputs;
  std::vector<size_t> input_of(distinct.size(), SIZE_MAX);
  if (merge && distinct.size() > 1) {
    for (size_t i = 0; i < distinct.size(); ++i) {
      std::optional<absl::string_view> body = LibraryKernelFile(distinct[i]->program);
      if (!body.has_value()) continue;
      input_of[i] = inputs.size();
      inputs.push_back({distinct[i]->program, distinct[i]->options, std::string(*body)});
    }
  }
  MergePlan merged;
  if (inputs.size() > 1) merged = MergePrograms(inputs, KernelPrelude(), /*max_programs=*/2);
  // Per distinct program: the merged program that holds it, if any.
  std::vector<size_t> merged_into(distinct.size(), MergePlan::kNotMerged);
  for (size_t i = 0; i < distinct.size(); ++i) {
    if (input_of[i] != SIZE_MAX && !merged.program_of.empty()) {
      merged_into[i] = merged.program_of[input_of[i]];
    }
  }
  // Requests: the merged programs, then the programs left out of them.
  std::vector<size_t> kernel_of_distinct(distinct.size());
  for (size_t k = kernels.size(); k-- > 0;) kernel_of_distinct[plan.kernel_request[k]] = k;
  plan.parts.resize(merged.programs.size());
  for (const MergedProgram& m : merged.programs) {
    ProgramRequest request;
    request.source = m.source;
    request.options = m.options;
    plan.requests.push_back(std::move(request));
  }
  std::vector<size_t> request_of_distinct(distinct.size());
  for (size_t i = 0; i < distinct.size(); ++i) {
    if (merged_into[i] != MergePlan::kNotMerged) {
      request_of_distinct[i] = merged_into[i];
      plan.parts[merged_into[i]].push_back(kernel_of_distinct[i]);
      continue;
    }
    request_of_distinct[i] = plan.requests.size();
    ProgramRequest request;
    RECQ_ASSIGN_OR_RETURN(request.source, KernelProgramSource(distinct[i]->program));
    request.options = distinct[i]->options;
    plan.requests.push_back(std::move(request));
    plan.parts.emplace_back();
  }
  plan.merged = !merged.programs.empty();
  for (size_t k = 0; k < kernels.size(); ++k) {
    const size_t i = plan.kernel_request[k];
    if (merged_into[i] != MergePlan::kNotMerged) {
      absl::StrAppend(&plan.entry_points[k], merged.suffix_of[input_of[i]]);
    }
    plan.kernel_request[k] = request_of_distinct[i];
  }
  return plan;
}

// BuildPrograms gets the program of every kernel of the dispatch list from
// the context's program cache, building the distinct programs in parallel.
absl::Status BuildPrograms(EngineState& state, bool merge) {
  RECQ_ASSIGN_OR_RETURN(ProgramPlan plan, PlanPrograms(state.list.kernels, /*merge=*/false));
  // Merged only on a cold start, every program to build from source: a
  // merged program serves only its own set of programs, while programs
  // built apart are shared by every compile and process that needs one
  // (engines of a context, the kernel caches). And only where a build
  // helper shares the warm-up: a one-shot process, which hands its
  // binaries to another process that stores the parts apart.
  if (merge && plan.requests.size() > 1 && BuildHelperFor(*state.context) &&
      std::all_of(plan.requests.begin(), plan.requests.end(), [&](const ProgramRequest& r) {
        return state.context->programs.WouldBuildFromSource(r.source, r.options);
      })) {
    RECQ_ASSIGN_OR_RETURN(plan, PlanPrograms(state.list.kernels, /*merge=*/true));
  }
  std::vector<ProgramRequest>& requests = plan.requests;
  const std::vector<size_t>& kernel_request = plan.kernel_request;
  state.entry_points = plan.entry_points;
  state.programs_merged = plan.merged;
  Log(LogLevel::kInfo,
      absl::StrCat("compile: ", requests.size(), " programs", plan.merged ? " (merged)" : ""));
  const auto start = std::chrono::steady_clock::now();
  std::vector<bool> to_helper(requests.size(), false);
  state.build_helper = StartBuildHelper(state, requests, kernel_request, &to_helper);
  if (state.build_helper == nullptr) {
    RECQ_RETURN_IF_ERROR(state.context->programs.GetOrBuildAll(absl::MakeSpan(requests)));
  } else {
    // This process's share first; then the helper's, from the driver's
    // cache once the helper has built them.
    for (bool helpers : {false, true}) {
      if (helpers) state.build_helper->WaitProgramsBuilt();
      std::vector<ProgramRequest> share;
      for (size_t i = 0; i < requests.size(); ++i) {
        if (to_helper[i] == helpers) share.push_back(std::move(requests[i]));
      }
      RECQ_RETURN_IF_ERROR(state.context->programs.GetOrBuildAll(absl::MakeSpan(share)));
      for (size_t i = 0, j = 0; i < requests.size(); ++i) {
        if (to_helper[i] == helpers) requests[i] = std::move(share[j++]);
      }
    }
  }
  Log(LogLevel::kInfo, absl::StrCat("compile: programs ready in ", MsSince(start), " ms"));
  // A merged program is not stored: the programs merged into it are, each
  // warmed with its own launches (what later compiles look up).
  std::vector<std::string> names;
  for (const KernelRef& ref : state.list.kernels) names.push_back(ref.name);
  for (size_t r = 0; r < requests.size(); ++r) {
    if (plan.parts[r].empty() || requests[r].origin != ProgramOrigin::kSource) continue;
    std::vector<HandedOffProgram> parts;
    for (size_t k : plan.parts[r]) {
      const KernelRef& ref = state.list.kernels[k];
      HandedOffProgram part;
      RECQ_ASSIGN_OR_RETURN(part.source, KernelProgramSource(ref.program));
      part.options = ref.options;
      absl::flat_hash_set<std::string> shapes;
      for (const Dispatch& d : state.list.dispatches) {
        if (ProgramKey(state.list.kernels[d.kernel]) != ProgramKey(ref) ||
            !shapes.insert(WarmUpShape(d)).second) {
          continue;
        }
        std::optional<WarmLaunch> launch = WarmLaunchOf(state.list, names, d);
        if (launch.has_value()) part.launches.push_back(*std::move(launch));
      }
      parts.push_back(std::move(part));
    }
    state.context->programs.ReplacePendingStore(requests[r].source, requests[r].options,
                                                std::move(parts));
  }
  std::vector<std::shared_ptr<const std::string>> sources;
  for (internal::ProgramRequest& r : requests) {
    if (r.origin == internal::ProgramOrigin::kSource) ++state.stats.kernels_built;
    if (r.origin == internal::ProgramOrigin::kDisk) ++state.stats.programs_from_disk;
    sources.push_back(std::make_shared<const std::string>(std::move(r.source)));
  }
  for (size_t r : kernel_request) {
    state.programs.push_back(requests[r].program);
    state.kernel_sources.push_back(sources[r]);
  }
  return absl::OkStatus();
}

absl::Status UploadConstants(EngineState& state) {
  for (const auto& data : state.list.constants) {
    size_t bytes = 0;
    cl::UniqueMem mem;
    if (state.weight_cache != nullptr) {
      RECQ_ASSIGN_OR_RETURN(mem, state.weight_cache->Get(state.context->context.get(), data));
      bytes = std::max<size_t>(data->byte_size(), sizeof(float));
    } else {
      RECQ_ASSIGN_OR_RETURN(mem, UploadConstant(state.context->context.get(), *data, &bytes));
    }
    state.stats.weight_bytes += bytes;
    if (!IsFloatingPoint(data->dtype())) state.stats.integer_constant_bytes += bytes;
    state.constants.push_back(std::move(mem));
  }
  return absl::OkStatus();
}

void IndexSlotUses(EngineState& state) {
  state.slot_uses.assign(state.list.slots.size(), {});
  for (size_t d = 0; d < state.list.dispatches.size(); ++d) {
    const auto& args = state.list.dispatches[d].args;
    for (size_t a = 0; a < args.size(); ++a) {
      if (args[a].kind == internal::DispatchArg::Kind::kSlot) {
        state.slot_uses[args[a].index].push_back(
            {static_cast<uint32_t>(d), static_cast<uint32_t>(a)});
      }
    }
  }
  // A slot that a kernel reads as an image2d takes an image (the dispatch
  // list says so; engine files store it).
  for (size_t s = 0; s < state.list.slots.size(); ++s) {
    for (const ArgUse& use : state.slot_uses[s]) {
      const Dispatch& d = state.list.dispatches[use.dispatch];
      state.list.slots[s].image |= KernelReadsImage(state.list.kernels[d.kernel], use.arg);
    }
  }
  for (size_t s = 0; s < state.list.slots.size(); ++s) {
    const internal::Slot& slot = state.list.slots[s];
    BindingInfo info{slot.name, slot.desc};
    for (const ArgUse& use : state.slot_uses[s]) {
      const Dispatch& d = state.list.dispatches[use.dispatch];
      if (DescribeSource(state.list.kernels[d.kernel], use.arg, info)) break;
    }
    (slot.is_input ? state.inputs : state.outputs).push_back(std::move(info));
  }
}

// CheckTensorsFit fails with ResourceExhausted, before anything is
// allocated, when a tensor of `graph` could not be one buffer on the device
// (its byte size above CL_DEVICE_MAX_MEM_ALLOC_SIZE, or not even
// representable: a model file may declare absurd shapes).
absl::Status CheckTensorsFit(const Graph& graph, const DeviceInfo& device) {
  for (const Value& v : graph.values()) {
    uint64_t bytes = DataTypeSize(v.desc.dtype);
    bool overflow = false;
    for (int64_t d : v.desc.shape) {
      overflow |= d <= 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes);
    }
    if (overflow || bytes > device.max_alloc_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("tensor '", v.name, "' (", ShapeToString(v.desc.shape), ") needs ",
                       overflow ? std::string("more than 2^64") : absl::StrCat(bytes),
                       " bytes; the device allows at most ", device.max_alloc_bytes,
                       " bytes per buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)"));
    }
  }
  return absl::OkStatus();
}

// CheckFloat64 fails with Unimplemented, naming the tensor and the device,
// when `graph` holds a float64 tensor and the device lacks cl_khr_fp64
// (which every float64 kernel needs).
absl::Status CheckFloat64(const Graph& graph, const DeviceInfo& device) {
  for (const Value& v : graph.values()) {
    if (v.desc.dtype != DataType::kFloat64) continue;
    for (const std::string& e : device.extensions) {
      if (e == "cl_khr_fp64") return absl::OkStatus();
    }
    return absl::UnimplementedError(absl::StrCat(
        "tensor '", v.name, "' is float64; the device '", device.name,
        "' lacks cl_khr_fp64, which recq's float64 kernels need (cast the model to float32)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPlanFits(const internal::DispatchList& list, const DeviceInfo& device) {
  uint64_t total = 0;
  for (const internal::Slot& slot : list.slots) {
    if (slot.desc.ByteSize() > device.max_alloc_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("binding '", slot.name, "' needs ", slot.desc.ByteSize(),
                       " bytes; the device allows at most ", device.max_alloc_bytes,
                       " bytes per buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)"));
    }
  }
  for (size_t bytes : list.internal_buffer_bytes) {
    if (bytes > device.max_alloc_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("an intermediate buffer needs ", bytes, " bytes; the device allows at most ",
                       device.max_alloc_bytes, " bytes per buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)"));
    }
    total += bytes;
  }
  for (const auto& data : list.constants) total += data->byte_size();
  if (total > device.global_mem_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "one recording's intermediates and the weights need ", total, " bytes; the device has ",
        device.global_mem_bytes, " bytes of global memory (CL_DEVICE_GLOBAL_MEM_SIZE)"));
  }
  return absl::OkStatus();
}

// WarmUp enqueues each kernel once per launch shape that makes a driver
// build code lazily (PoCL builds a work-group function per kernel and local
// size at the first enqueue) on zero-filled scratch memory, and waits. A
// dispatch with an explicit local size runs as a single work-group of it;
// one whose local size the runtime picks runs whole (the pick depends on
// the global size). Repeated shapes run once.
absl::Status WarmUp(const std::shared_ptr<EngineState>& state) {
  auto start = std::chrono::steady_clock::now();
  const ContextState& ctx = *state->context;
  RECQ_ASSIGN_OR_RETURN(RecordingResources res, RecordingResources::Create(state));
  std::vector<cl::UniqueMem> scratch;
  std::vector<SlotMemory> slot_mems;
  // Zeros, not garbage: valid data for every kernel (indices included).
  for (const internal::Slot& slot : state->list.slots) {
    RECQ_ASSIGN_OR_RETURN(cl::UniqueMem mem, CreateSlotMemory(ctx.context.get(), slot, false));
    slot_mems.push_back({mem.get(), nullptr});
    scratch.push_back(std::move(mem));
  }
  std::vector<std::pair<cl_mem, size_t>> fills;
  for (size_t i = 0; i < state->list.internal_buffer_bytes.size(); ++i) {
    fills.push_back({res.MemFor(DispatchArg::Internal(static_cast<int32_t>(i)), {}).mem,
                     state->list.internal_buffer_bytes[i]});
  }
  const cl_uchar zero = 0;
  for (const auto& [mem, bytes] : fills) {
    if (mem == nullptr || bytes == 0) continue;
    RECQ_RETURN_IF_ERROR(cl::CheckCl(
        clEnqueueFillBuffer(ctx.queue.get(), mem, &zero, 1, 0, bytes, 0, nullptr, nullptr),
        "clEnqueueFillBuffer(warm-up)"));
  }
  absl::flat_hash_set<std::string> shapes;
  std::vector<cl::UniqueKernel> kernels;  // alive until the queue is done
  // Enqueue runs dispatch `d` with its local size as the global one, unless
  // a launch of that shape ran already.
  auto enqueue = [&](size_t d) -> absl::Status {
    if (!shapes.insert(WarmUpShape(state->list.dispatches[d])).second) return absl::OkStatus();
    Dispatch dispatch = state->list.dispatches[d];
    if (LogEnabled(LogLevel::kDebug)) {
      // Each is a compile on PoCL: what a cold start pays for.
      const KernelRef& k = state->list.kernels[size_t(dispatch.kernel)];
      Log(LogLevel::kDebug, absl::StrCat("warm-up launch: ", k.program, " ", k.name, " [",
                                         absl::StrJoin(k.options, " "), "] local ",
                                         absl::StrJoin(dispatch.local, ",")));
    }
    dispatch.global = WarmUpGlobal(dispatch);
    RECQ_ASSIGN_OR_RETURN(cl::UniqueKernel kernel, res.CreateKernel(d, slot_mems));
    RECQ_RETURN_IF_ERROR(EnqueueDispatch(ctx.queue.get(), dispatch, kernel.get(), {}, nullptr));
    kernels.push_back(std::move(kernel));
    return absl::OkStatus();
  };
  auto finish = [&] { return cl::CheckCl(clFinish(ctx.queue.get()), "clFinish(warm-up)"); };
  // With a build helper, the launches it shares (WarmLaunchOf) are taken
  // from the back of its list while it works from the front, each waited
  // for, until the two meet; the rest, compiled by the helper by then, go
  // last.
  if (state->build_helper != nullptr) {
    absl::flat_hash_set<std::string> shared;
    for (size_t d : state->helper_launches) shared.insert(WarmUpShape(state->list.dispatches[d]));
    for (size_t d = 0; d < state->list.dispatches.size(); ++d) {
      if (!shared.contains(WarmUpShape(state->list.dispatches[d]))) {
        RECQ_RETURN_IF_ERROR(enqueue(d));
      }
    }
    RECQ_RETURN_IF_ERROR(finish());
    size_t taken = 0;
    for (size_t j = state->helper_launches.size(); j-- > 0;) {
      BuildHelper& helper = *state->build_helper;
      if (helper.Ended() || j < helper.LaunchesStarted()) break;
      RECQ_RETURN_IF_ERROR(enqueue(state->helper_launches[j]));
      RECQ_RETURN_IF_ERROR(finish());
      ++taken;
    }
    const auto wait_start = std::chrono::steady_clock::now();
    state->build_helper->WaitDone();
    state->build_helper.reset();
    Log(LogLevel::kInfo, absl::StrCat("warm-up: ", taken, " of the ", state->helper_launches.size(),
                                      " shared launches here; then ", MsSince(wait_start),
                                      " ms waiting for the build helper"));
  }
  for (size_t d = 0; d < state->list.dispatches.size(); ++d) RECQ_RETURN_IF_ERROR(enqueue(d));
  RECQ_RETURN_IF_ERROR(finish());
  state->stats.warmup_dispatches = kernels.size();
  state->stats.warmup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return absl::OkStatus();
}

namespace {

// A dispatch's CL_PROFILING_COMMAND_START and _END, in ns.
struct DispatchSpan {
  cl_ulong start = 0, end = 0;
};

// ProfileDispatches runs every dispatch once on a new profiling queue of the
// engine's context with `slot_mems` bound, waits, and returns each one's
// start and end on the device's clock.
absl::StatusOr<std::vector<DispatchSpan>> ProfileDispatches(
    std::shared_ptr<const EngineState> engine, absl::Span<const SlotMemory> slot_mems) {
  RECQ_ASSIGN_OR_RETURN(RecordingResources res, RecordingResources::Create(engine));
  const ContextState& ctx = *engine->context;
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_int err = CL_SUCCESS;
  cl::UniqueQueue queue(
      clCreateCommandQueueWithProperties(ctx.context.get(), ctx.device, props, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateCommandQueueWithProperties(profiling)"));
  const DispatchList& list = engine->list;
  std::vector<cl::UniqueKernel> kernels;
  std::vector<cl::UniqueEvent> events(list.dispatches.size());
  absl::Status enqueued;
  for (size_t d = 0; d < list.dispatches.size() && enqueued.ok(); ++d) {
    absl::StatusOr<cl::UniqueKernel> kernel = res.CreateKernel(d, slot_mems);
    enqueued = kernel.status();
    if (!enqueued.ok()) break;
    enqueued = EnqueueDispatch(queue.get(), list.dispatches[d], kernel->get(), {}, events[d].out());
    kernels.push_back(*std::move(kernel));
  }
  // Waits for what was enqueued before returning, even after a failure: the
  // dispatches use `res`'s memory and the caller's.
  const absl::Status drained = cl::DrainQueue(queue.get());
  RECQ_RETURN_IF_ERROR(enqueued);
  RECQ_RETURN_IF_ERROR(drained);
  std::vector<DispatchSpan> spans;
  for (const cl::UniqueEvent& event : events) {
    DispatchSpan span;
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(clGetEventProfilingInfo(event.get(), CL_PROFILING_COMMAND_START,
                                            sizeof(span.start), &span.start, nullptr),
                    "clGetEventProfilingInfo(CL_PROFILING_COMMAND_START)"));
    RECQ_RETURN_IF_ERROR(cl::CheckCl(clGetEventProfilingInfo(event.get(), CL_PROFILING_COMMAND_END,
                                                             sizeof(span.end), &span.end, nullptr),
                                     "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)"));
    spans.push_back(span);
  }
  return spans;
}

// WorkGroups is how many work-groups `d` launches; 0 where the driver picks
// its local size.
size_t WorkGroups(const Dispatch& d) {
  if (!d.has_local()) return 0;
  size_t groups = 1;
  for (cl_uint i = 0; i < d.work_dim; ++i) groups *= (d.global[i] + d.local[i] - 1) / d.local[i];
  return groups;
}

}  // namespace

absl::Status FinishEngineState(const std::shared_ptr<EngineState>& state, bool warm_up) {
  const auto upload_start = std::chrono::steady_clock::now();
  RECQ_RETURN_IF_ERROR(UploadConstants(*state));
  Log(LogLevel::kInfo, absl::StrCat("weights: ", state->list.constants.size(), " uploaded in ",
                                    MsSince(upload_start), " ms"));
  IndexSlotUses(*state);
  state->stats.dispatches = state->list.dispatches.size();
  state->stats.unplanned_bytes = state->list.unplanned_bytes;
  if (warm_up) {
    Log(LogLevel::kInfo, absl::StrCat("warm-up: ", state->list.dispatches.size(), " dispatches"));
    RECQ_RETURN_IF_ERROR(WarmUp(state));
  }
  state->build_helper.reset();  // waits for it, where the warm-up did not
  // The binaries of programs built from source reach the disk cache later,
  // through Context::FlushBinaryCache (or, on drivers other than PoCL, the
  // context's destruction): after the warm-up, so that they hold what the
  // driver built lazily for it, and off the path to the first result.
  return absl::OkStatus();
}

DeviceFacts LoweringFactsFor(const DeviceInfo& device, EngineOptions::KernelTarget kernel_target,
                             bool emulate_matrix_units) {
  DeviceFacts facts = DeviceFactsFromInfo(device);
  facts.matrix_units_emulated = emulate_matrix_units;
  if (kernel_target == EngineOptions::KernelTarget::kCpu) facts.kernel_family = KernelFamily::kCpu;
  if (kernel_target == EngineOptions::KernelTarget::kGpu) facts.kernel_family = KernelFamily::kGpu;
  return facts;
}

// RecordingChooser picks as `variant_chooser` or `kernel_chooser` (the
// auto-tuner's) would, or the first that fits, and appends each pick to
// `choices`, which an engine file stores.
KernelChooser RecordingChooser(VariantChooser variant_chooser, KernelChooser kernel_chooser,
                               std::shared_ptr<std::vector<EngineState::VariantChoice>> choices) {
  return [variant_chooser = std::move(variant_chooser), kernel_chooser = std::move(kernel_chooser),
          choices = std::move(choices)](const Node& node, const LoweringContext& ctx,
                                        absl::Span<const size_t> fitting) {
    KernelChoice choice;
    if (variant_chooser) {
      choice.variant = variant_chooser(node, ctx, fitting);
    } else if (kernel_chooser) {
      choice = kernel_chooser(node, ctx, fitting);
    } else {
      choice.variant = fitting[0];
    }
    choices->push_back(
        {node.name, static_cast<uint32_t>(choice.variant), KernelParamsString(choice.params)});
    return choice;
  };
}

BuildHelperStarter BuildHelperFor(ContextState& cs) {
  if (!cs.programs.BuildsOneAtATime() || std::thread::hardware_concurrency() < 2) return nullptr;
  std::lock_guard<std::mutex> lock(cs.helper_mu);
  return cs.build_helper;
}

namespace {

// What Compile lowers: the graph after the passes (when options.optimize,
// fusing elementwise chains when `fuse`) and, for fp16 storage, converted,
// and the target for the context's device, its kernel choosers not set.
struct ToLower {
  Graph graph;
  LoweringTarget target;
};

absl::StatusOr<ToLower> PrepareLowering(const Context& context, const Graph& graph,
                                        const EngineOptions& options, bool fuse) {
  ToLower out{graph, {}};
  static_cast<DeviceFacts&>(out.target) =
      LoweringFactsFor(context.device_info(), options.kernel_target, options.emulate_matrix_units);
  if (options.optimize) {
    RECQ_ASSIGN_OR_RETURN(out.graph, Optimize(graph, context, fuse, out.target.GpuKernels()));
  }
  RECQ_RETURN_IF_ERROR(ApplyPrecision(options.precision, &out.graph, &out.target));
  return out;
}

}  // namespace

absl::StatusOr<size_t> ProgramsToBuild(const Context& context, const Graph& graph,
                                       const EngineOptions& options) {
  RECQ_ASSIGN_OR_RETURN(ToLower to_lower,
                        PrepareLowering(context, graph, options, options.fuse_elementwise));
  to_lower.target.choose_kernel =
      RecordingChooser(options.choose_variant, options.choose_kernel,
                       std::make_shared<std::vector<EngineState::VariantChoice>>());
  RECQ_ASSIGN_OR_RETURN(Lowered lowered, Lower(to_lower.graph, to_lower.target));
  // Programs apart: what the binary cache holds (a merged one never is).
  RECQ_ASSIGN_OR_RETURN(ProgramPlan plan, PlanPrograms(lowered.list.kernels, /*merge=*/false));
  return static_cast<size_t>(
      std::count_if(plan.requests.begin(), plan.requests.end(), [&](const ProgramRequest& r) {
        return context.state()->programs.WouldBuildFromSource(r.source, r.options);
      }));
}

absl::StatusOr<std::shared_ptr<EngineState>> CompileEngineState(
    const Context& context, const Graph& graph, const EngineOptions& options,
    std::shared_ptr<WeightCache> weights, bool merge_programs) {
  auto start = std::chrono::steady_clock::now();
  RECQ_RETURN_IF_ERROR(CheckPrecision(options.precision, context.device_info()));
  RECQ_RETURN_IF_ERROR(CheckTensorsFit(graph, context.device_info()));
  RECQ_RETURN_IF_ERROR(CheckFloat64(graph, context.device_info()));
  auto state = std::make_shared<EngineState>(context);
  state->weight_cache = std::move(weights);
  state->options = options;
  state->options.fuse_elementwise =
      options.fuse_elementwise && !internal::FusionDisabledByEnvironment();
  state->source_graph = graph;
  RECQ_ASSIGN_OR_RETURN(ToLower to_lower,
                        PrepareLowering(context, graph, options, state->options.fuse_elementwise));
  const Graph& optimized = to_lower.graph;
  internal::LoweringTarget& target = to_lower.target;
  state->lowered_for = target;
  const DeviceInfo& device = context.device_info();
  KernelChooser kernel_chooser = options.choose_kernel;
  std::shared_ptr<const internal::Tuner> tuner;
  if (!options.choose_variant && !options.choose_kernel &&
      options.tuning != EngineOptions::Tuning::kOff) {
    RECQ_ASSIGN_OR_RETURN(tuner, internal::Tuner::Tune(context, optimized, options, target));
    kernel_chooser = tuner->Chooser();
    tuner->CopyStatsTo(state->stats);
  }
  auto choices = std::make_shared<std::vector<EngineState::VariantChoice>>();
  target.choose_kernel = RecordingChooser(options.choose_variant, kernel_chooser, choices);
  RECQ_ASSIGN_OR_RETURN(internal::Lowered lowered, internal::Lower(optimized, target));
  state->variant_choices = std::move(*choices);
  RECQ_RETURN_IF_ERROR(CheckPlanFits(lowered.list, device));
  state->list = std::move(lowered.list);
  state->stats.intermediate_bytes = lowered.plan.total_bytes;
  state->stats.lower_bound_bytes = lowered.plan.lower_bound_bytes;
  absl::Status built =
      BuildPrograms(*state, merge_programs && state->context->programs.BuildCostIsPerProgram());
  if (!built.ok() && state->programs_merged) {
    // Merging is an optimization: a program it could not merge cleanly
    // builds apart.
    Log(LogLevel::kWarning, absl::StrCat("compile: the merged programs do not build (",
                                         built.ToString(), "); building each apart"));
    state->build_helper.reset();
    built = BuildPrograms(*state, /*merge=*/false);
  }
  RECQ_RETURN_IF_ERROR(built);
  RECQ_RETURN_IF_ERROR(FinishEngineState(state, options.warm_up));
  state->stats.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return state;
}

}  // namespace internal

using internal::EngineState;

std::string BindingInfo::Describe() const {
  std::string text = desc.ToString();
  if (!preprocessed) return text;
  const char* what = plane == Nv12Plane::kY    ? "NV12 Y plane"
                     : plane == Nv12Plane::kUV ? "NV12 UV plane"
                                               : nullptr;
  absl::StrAppend(&text, ", ", what != nullptr ? what : ColorFormatName(color),
                  what != nullptr ? "" : " frame", ", ",
                  memory == MemoryKind::kImage2D ? "image2d" : "buffer");
  return text;
}

std::vector<BindingInfo> DescribeInputs(const Graph& graph) {
  std::vector<BindingInfo> infos;
  for (ValueId id : graph.inputs()) {
    BindingInfo info{graph.value(id).name, graph.value(id).desc};
    for (const Node& node : graph.nodes()) {
      const auto* pre = node.op == internal::kPreprocess
                            ? node.attrs.get_if<internal::PreprocessAttrs>()
                            : nullptr;
      const auto at = std::find(node.inputs.begin(), node.inputs.end(), id);
      if (pre == nullptr || at == node.inputs.end()) continue;
      info.preprocessed = true;
      info.color = pre->spec.color;
      info.memory = pre->spec.kind;
      if (info.color == ColorFormat::kNv12TwoPlane) {
        info.plane =
            at == node.inputs.begin() ? BindingInfo::Nv12Plane::kY : BindingInfo::Nv12Plane::kUV;
      }
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

const char* PrecisionName(EngineOptions::Precision precision) {
  switch (precision) {
    case EngineOptions::Precision::kFp32:
      return "fp32";
    case EngineOptions::Precision::kFp16Storage:
      return "fp16";
    case EngineOptions::Precision::kFp16Compute:
      return "fp16-compute";
    case EngineOptions::Precision::kTf32:
      return "tf32";
  }
  return "unknown";
}

absl::StatusOr<EngineOptions::Precision> ParsePrecision(absl::string_view name) {
  for (auto p : {EngineOptions::Precision::kFp32, EngineOptions::Precision::kFp16Storage,
                 EngineOptions::Precision::kFp16Compute, EngineOptions::Precision::kTf32}) {
    if (name == PrecisionName(p)) return p;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown precision '", name,
                   "': expected fp32, fp16 (half storage), fp16-compute or tf32 (one tf32 "
                   "product on matrix units)"));
}

const char* EngineOriginName(EngineOrigin origin) {
  switch (origin) {
    case EngineOrigin::kCompiled:
      return "compiled";
    case EngineOrigin::kFileAsStored:
      return "file: as stored";
    case EngineOrigin::kFileRebuiltPrograms:
      return "file: programs rebuilt";
    case EngineOrigin::kFileRelowered:
      return "file: re-lowered";
  }
  return "unknown";
}

absl::StatusOr<Engine> Engine::Compile(const Context& context, const Graph& graph,
                                       const EngineOptions& options) {
  RECQ_ASSIGN_OR_RETURN(std::shared_ptr<EngineState> state,
                        internal::CompileEngineState(context, graph, options));
  return Engine(std::move(state));
}

const std::vector<BindingInfo>& Engine::inputs() const { return state_->inputs; }
const std::vector<BindingInfo>& Engine::outputs() const { return state_->outputs; }
const EngineStats& Engine::stats() const { return state_->stats; }
const Context& Engine::context() const { return state_->public_context; }
const EngineOptions& Engine::options() const { return state_->options; }

absl::StatusOr<Recording> Engine::Record(const RecordOptions& options) const {
  RECQ_ASSIGN_OR_RETURN(internal::BackendChoice choice,
                        internal::ChooseBackend(state_->public_context, options.backend));
  RECQ_ASSIGN_OR_RETURN(std::unique_ptr<internal::RecordingBackend> impl,
                        choice.entry->create(state_));
  return Recording(std::make_unique<internal::RecordingImpl>(
      state_, choice.entry->id, std::move(choice.reason), std::move(impl)));
}

std::vector<std::string> Engine::DispatchLabels() const {
  std::vector<std::string> labels;
  for (const internal::Dispatch& d : state_->list.dispatches) labels.push_back(d.label);
  return labels;
}

absl::StatusOr<std::vector<DispatchProfile>> Engine::Profile(const Bindings& bindings) const {
  std::vector<internal::SlotMemory> slot_mems;
  RECQ_RETURN_IF_ERROR(internal::ResolveBindings(*state_, bindings, slot_mems));
  RECQ_ASSIGN_OR_RETURN(std::vector<internal::DispatchSpan> spans,
                        internal::ProfileDispatches(state_, slot_mems));
  std::vector<DispatchProfile> profile;
  for (size_t d = 0; d < spans.size(); ++d) {
    const internal::Dispatch& dispatch = state_->list.dispatches[d];
    DispatchProfile& p = profile.emplace_back();
    p.label = dispatch.label;
    p.device_ms = static_cast<double>(spans[d].end - spans[d].start) * 1e-6;
    p.flops = dispatch.flops;
    p.bytes = dispatch.bytes;
    p.work_groups = internal::WorkGroups(dispatch);
    // Signed: a driver's clock need not order commands that it ran at once.
    p.start_ms = static_cast<double>(static_cast<int64_t>(spans[d].start - spans[0].start)) * 1e-6;
  }
  return profile;
}

absl::Status Engine::RunUnrecorded(const Bindings& bindings) const {
  RECQ_ASSIGN_OR_RETURN(Recording recording, Record({Backend::kUnrecorded}));
  return recording.Run(bindings);
}

}  // namespace recq
