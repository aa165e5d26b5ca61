#include "engine/engine_file/writer.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/engine_file/archive.h"
#include "engine/engine_file/convert.h"
#include "engine/engine_file/pocl_binary.h"
#include "engine/program_cache.h"
#include "recq/onnx.h"
#include "recq/op_registry.h"
#include "recq/status_macros.h"

namespace recq {
namespace internal {
namespace {
namespace pb = ::recq::engine_file;
}  // namespace

// UnmergedTwin compiles the engine of `state` again with each library
// program built apart, replaying its kernel-variant choices, for the
// engine-file writer: a file holds the library's programs as they are,
// since its loader checks the stored kernels against a fresh lowering,
// which does not merge, and the twin's warm-up puts the work-group
// functions of its launches into the programs' binaries.
absl::StatusOr<std::shared_ptr<EngineState>> UnmergedTwin(const EngineState& state) {
  EngineOptions options = state.options;
  options.choose_variant = nullptr;
  auto choices = std::make_shared<std::vector<EngineState::VariantChoice>>(state.variant_choices);
  auto next = std::make_shared<size_t>(0);
  options.choose_kernel = [choices, next](const Node& node, const LoweringContext&,
                                          absl::Span<const size_t> fitting) -> KernelChoice {
    if (*next < choices->size() && (*choices)[*next].node == node.name) {
      const EngineState::VariantChoice& c = (*choices)[(*next)++];
      absl::StatusOr<KernelParams> params = ParseKernelParams(c.params);
      if (params.ok() && std::find(fitting.begin(), fitting.end(), c.variant) != fitting.end()) {
        return KernelChoice{c.variant, *std::move(params)};
      }
    }
    return KernelChoice{fitting[0], {}};
  };
  options.warm_up = true;
  RECQ_ASSIGN_OR_RETURN(std::shared_ptr<EngineState> twin,
                        CompileEngineState(state.public_context, state.source_graph, options,
                                           state.weight_cache, /*merge_programs=*/false));
  if (twin->variant_choices.size() != state.variant_choices.size()) {
    return absl::InternalError(
        absl::StrCat("Engine::Serialize: compiling the engine with unmerged programs chose ",
                     twin->variant_choices.size(), " kernel variants instead of ",
                     state.variant_choices.size()));
  }
  twin->options = state.options;
  twin->graph_onnx = state.graph_onnx;
  twin->graph_missing_reason = state.graph_missing_reason;
  twin->stats.origin = state.stats.origin;
  return twin;
}

absl::StatusOr<std::string> SerializeEngineState(const EngineState& state) {
  if (state.programs_merged) {
    RECQ_ASSIGN_OR_RETURN(std::shared_ptr<EngineState> twin, UnmergedTwin(state));
    return SerializeEngineState(*twin);
  }
  pb::EngineFile f;
  f.set_producer("recq");
  const DeviceInfo& info = state.context->info;
  pb::Device* device = f.mutable_built_for();
  device->set_name(info.name);
  device->set_vendor(info.vendor);
  device->set_version(info.version);
  device->set_driver_version(info.driver_version);
  device->set_platform_name(info.platform_name);
  device->set_platform_version(info.platform_version);
  device->set_device_type(info.type);
  device->set_gpu_kernels(state.lowered_for.GpuKernels());
  device->set_selection_key(state.lowered_for.SelectionKey());
  device->set_max_work_group_size(state.lowered_for.max_work_group_size);
  device->set_compute_units(state.lowered_for.compute_units);
  pb::Options* options = f.mutable_options();
  options->set_optimize(state.options.optimize);
  options->set_fuse_elementwise(state.options.fuse_elementwise);
  switch (state.options.kernel_target) {
    case EngineOptions::KernelTarget::kAuto:
      options->set_kernel_target(pb::Options::AUTO);
      break;
    case EngineOptions::KernelTarget::kCpu:
      options->set_kernel_target(pb::Options::CPU);
      break;
    case EngineOptions::KernelTarget::kGpu:
      options->set_kernel_target(pb::Options::GPU);
      break;
  }
  options->set_had_variant_chooser(static_cast<bool>(state.options.choose_variant));
  options->set_precision(PrecisionField(state.options.precision));
  const DispatchList& list = state.list;
  for (const Slot& slot : list.slots) {
    pb::Binding* b = f.add_bindings();
    b->set_name(slot.name);
    SetDesc(b->mutable_desc(), slot.desc);
    b->set_is_input(slot.is_input);
  }
  pb::MemoryPlan* plan = f.mutable_memory_plan();
  for (size_t bytes : list.internal_buffer_bytes) plan->add_buffer_bytes(bytes);
  plan->set_total_bytes(state.stats.intermediate_bytes);
  plan->set_unplanned_bytes(list.unplanned_bytes);
  plan->set_lower_bound_bytes(state.stats.lower_bound_bytes);
  // The graph first: with it, the constants' data is not stored (the loader
  // lowers the graph again), so the weights are in the file once.
  if (state.graph_onnx != nullptr) {
    f.set_graph_onnx(*state.graph_onnx);
  } else if (!state.graph_missing_reason.empty()) {
    f.set_graph_missing_reason(state.graph_missing_reason);
  } else {
    absl::StatusOr<std::string> onnx = SaveOnnxToBytes(state.source_graph, "recq-engine");
    if (onnx.ok()) {
      f.set_graph_onnx(*std::move(onnx));
    } else {
      f.set_graph_missing_reason(std::string(onnx.status().message()));
    }
  }
  for (const EngineState::VariantChoice& c : state.variant_choices) {
    pb::VariantChoice* choice = f.add_variant_choices();
    choice->set_node(c.node);
    choice->set_variant(c.variant);
    choice->set_params(c.params);
  }
  for (const auto& data : list.constants) {
    pb::Constant* c = f.add_constants();
    c->set_element_type(ElementTypeOf(data->dtype()));
    c->set_elements(data->size());
    if (f.graph_onnx().empty()) {
      c->set_data(std::string(static_cast<const char*>(data->bytes()),
                              data->byte_size()));  // little-endian hosts
    }
  }
  // One Program per distinct (sorted options, source); its binary is taken
  // now, after the warm-up, so that drivers that add code lazily (PoCL's
  // work-group functions) store it too.
  absl::flat_hash_map<std::string, uint32_t> program_of;
  for (size_t k = 0; k < list.kernels.size(); ++k) {
    const KernelRef& ref = list.kernels[k];
    const std::string sorted = OptionString(ref.options);
    auto [it, inserted] = program_of.try_emplace(
        absl::StrCat(sorted, "\n", ref.program, "\n", *state.kernel_sources[k]),
        static_cast<uint32_t>(f.programs_size()));
    if (inserted) {
      pb::Program* p = f.add_programs();
      p->set_name(ref.program);
      std::vector<std::string> options_sorted = ref.options;
      std::sort(options_sorted.begin(), options_sorted.end());
      for (const std::string& o : options_sorted) p->add_options(o);
      p->set_source(*state.kernel_sources[k]);
      // An engine loaded as stored keeps its file's binaries (it serializes
      // to the file it came from); otherwise the binary is taken as the
      // driver has the program now (ProgramCache::CurrentBinary).
      RECQ_ASSIGN_OR_RETURN(
          std::vector<uint8_t> binary,
          state.stats.origin == EngineOrigin::kFileAsStored
              ? ProgramBinary(state.programs[k]->get(), state.context->device)
              : state.context->programs.CurrentBinary(state.programs[k]->get(),
                                                      *state.kernel_sources[k], ref.options));
      std::string stored(binary.begin(), binary.end());
      CanonicalizePoclBinary(&stored);
      p->set_binary(std::move(stored));
    }
    pb::Kernel* kernel = f.add_kernels();
    kernel->set_program(it->second);
    kernel->set_entry_point(ref.name);
    for (const std::string& o : ref.options) kernel->add_options(o);
  }
  for (const Dispatch& d : list.dispatches) {
    pb::Dispatch* out = f.add_dispatches();
    out->set_kernel(static_cast<uint32_t>(d.kernel));
    out->set_work_dim(d.work_dim);
    for (size_t g : d.global) out->add_global(g);
    if (d.has_local()) {
      for (size_t l : d.local) out->add_local(l);
    }
    out->set_label(d.label);
    for (const DispatchArg& a : d.args) {
      pb::DispatchArg* arg = out->add_args();
      arg->set_index(a.index);
      switch (a.kind) {
        case DispatchArg::Kind::kInternal:
          arg->set_kind(pb::DispatchArg::INTERNAL);
          break;
        case DispatchArg::Kind::kSlot:
          arg->set_kind(pb::DispatchArg::SLOT);
          break;
        case DispatchArg::Kind::kConstant:
          arg->set_kind(pb::DispatchArg::CONSTANT);
          break;
        case DispatchArg::Kind::kScalar:
          arg->set_kind(pb::DispatchArg::SCALAR);
          arg->set_scalar(std::string(a.bytes.begin(), a.bytes.end()));
          break;
        case DispatchArg::Kind::kLocal:
          arg->set_kind(pb::DispatchArg::LOCAL);
          arg->set_local_bytes(a.local_bytes);
          break;
        case DispatchArg::Kind::kNull:
          arg->set_kind(pb::DispatchArg::NULL_BUFFER);
          break;
      }
    }
  }
  std::string payload;
  if (f.ByteSizeLong() > static_cast<size_t>(INT_MAX) ||
      (payload = SerializeDeterministically(f)).empty()) {
    return absl::UnimplementedError(absl::StrCat("Engine::Serialize: the engine file would need ",
                                                 f.ByteSizeLong(),
                                                 " bytes; protobuf messages are limited to 2 GiB"));
  }
  return SealEngineFilePayload(std::move(payload));
}

}  // namespace internal

absl::StatusOr<std::string> Engine::Serialize() const {
  return internal::SerializeEngineState(*state_);
}

absl::Status Engine::SerializeToFile(const std::string& path) const {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, Serialize());
  const std::string temp = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      return absl::UnavailableError(absl::StrCat("cannot write engine file '", temp, "'"));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot rename '", temp, "' to '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace recq
