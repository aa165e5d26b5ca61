// The state behind a recq::Engine: immutable after Compile.
#ifndef RECQ_ENGINE_ENGINE_STATE_H_
#define RECQ_ENGINE_ENGINE_STATE_H_

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/opencl/cl_handle.h"
#include "engine/context_state.h"
#include "engine/dispatch_list.h"
#include "engine/program_cache.h"
#include "recq/engine.h"
#include "recq/graph.h"
#include "recq/op_registry.h"

namespace recq::internal {

class WeightCache;

// MsSince is the time since `start` in milliseconds.
inline double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

struct EngineState {
  explicit EngineState(Context ctx) : context(ctx.state()), public_context(std::move(ctx)) {}

  std::shared_ptr<ContextState> context;
  Context public_context;
  DispatchList list;
  std::vector<SharedProgram> programs;  // per DispatchList::kernels entry
  // The full source each kernel's program was built from (shared between
  // the kernels of one program), for Engine::Serialize.
  std::vector<std::shared_ptr<const std::string>> kernel_sources;
  // Each kernel's name in its program: KernelRef::name, with a suffix
  // where the program was merged (engine/program_merge.h).
  std::vector<std::string> entry_points;  // empty: every KernelRef::name
  const std::string& EntryPoint(size_t kernel) const {
    return entry_points.empty() ? list.kernels[kernel].name : entry_points[kernel];
  }
  // Some program holds kernels of several library programs: Engine::Serialize
  // writes a twin compiled without merging, whose programs are the files'.
  bool programs_merged = false;
  std::vector<cl::UniqueMem> constants;        // per DispatchList::constants entry, read-only
  std::vector<std::vector<ArgUse>> slot_uses;  // per slot
  std::vector<BindingInfo> inputs;
  std::vector<BindingInfo> outputs;
  EngineStats stats;

  // What Engine::Serialize needs beyond the above: the options, the device
  // facts the lowering read, the memory plan's totals, and the graph given
  // to Compile (or, for an engine loaded from a file, that file's ONNX form
  // of it, or why it has none).
  EngineOptions options;
  DeviceFacts lowered_for;
  Graph source_graph;
  std::shared_ptr<const std::string> graph_onnx;  // null: export source_graph
  std::string graph_missing_reason;
  // The kernel variant lowering chose per node (node name, index into the
  // op's variants), in the order it asked; an engine file stores them so
  // that loading lowers its graph again the same way.
  // Each entry: the node, the variant, and its parameters
  // (KernelParamsString; empty: the heuristic's).
  struct VariantChoice {
    std::string node;
    uint32_t variant = 0;
    std::string params;
  };
  std::vector<VariantChoice> variant_choices;
  // Where `constants` come from when engines share their weights (the
  // buckets of a ShapedEngine); null: this engine uploads its own.
  std::shared_ptr<WeightCache> weight_cache;

  // While compiling: the build helper that builds some programs beside
  // this process (null: none), and the dispatches of the warm-up launches
  // it shares, in its plan's order.
  std::unique_ptr<BuildHelper> build_helper;
  std::vector<size_t> helper_launches;
};

// CompileEngineState is Engine::Compile's work: passes, lowering, programs
// (built in parallel), weights, and the warm-up run. With `weights`, the
// constants' buffers come from that cache (shared with other engines).
// `merge_programs` false builds each library program alone, where the
// device would have them merged (PoCL).
[[nodiscard]] absl::StatusOr<std::shared_ptr<EngineState>> CompileEngineState(
    const Context& context, const Graph& graph, const EngineOptions& options,
    std::shared_ptr<WeightCache> weights = nullptr, bool merge_programs = true);

// FinishEngineState uploads the weights, indexes the slots, fills the
// stats that follow from the dispatch list and, when `warm_up`, runs every
// dispatch once on zero-filled scratch bindings. `state->programs` must be
// built.
[[nodiscard]] absl::Status FinishEngineState(const std::shared_ptr<EngineState>& state,
                                             bool warm_up);

// CheckPlanFits fails with ResourceExhausted when a binding or planned
// buffer exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE or one recording's
// intermediates plus the weights exceed CL_DEVICE_GLOBAL_MEM_SIZE.
[[nodiscard]] absl::Status CheckPlanFits(const DispatchList& list, const DeviceInfo& device);

// RecordingChooser wraps `chooser` (empty: the first variant that fits)
// so that every choice is appended to `*choices`.
VariantChooser RecordingChooser(
    VariantChooser chooser, std::shared_ptr<std::vector<std::pair<std::string, uint32_t>>> choices);

// BuildHelperFor is the starter of build helpers that compiles on `cs` use
// (Context::SetBuildHelper), or null where none is set or none would help:
// a driver that builds programs in parallel in one process, or fewer than
// two hardware threads.
BuildHelperStarter BuildHelperFor(ContextState& cs);

// ProgramsToBuild is how many programs compiling `graph` with `options`
// would build from source (in neither the context nor its binary cache):
// it lowers the graph, and builds nothing.
[[nodiscard]] absl::StatusOr<size_t> ProgramsToBuild(const Context& context, const Graph& graph,
                                                     const EngineOptions& options);

// LoweringFactsFor returns the device facts lowering reads on `device`.
DeviceFacts LoweringFactsFor(const DeviceInfo& device, EngineOptions::KernelTarget kernel_target,
                             bool emulate_matrix_units = false);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_STATE_H_
