#include "engine/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/context_state.h"
#include "engine/engine_state.h"
#include "engine/kernel_library.h"
#include "engine/tuning_cache.h"
#include "recq/bindings.h"
#include "recq/log.h"
#include "recq/status_macros.h"
#include "recq/tensor.h"

namespace recq {

EngineOptions::Tuning EngineOptions::DefaultTuning() {
  const char* env = std::getenv("RECQ_TUNING");
  if (env == nullptr) return Tuning::kFast;
  const absl::string_view v = env;
  if (v == "off") return Tuning::kOff;
  if (v == "exhaustive") return Tuning::kExhaustive;
  return Tuning::kFast;
}

namespace internal {
namespace {

using Clock = std::chrono::steady_clock;

// KeyWriter renders a node's ONNX form (its attributes) into a key.
class KeyWriter final : public OnnxNodeWriter {
 public:
  void SetOpType(const std::string& op_type) override { absl::StrAppend(&text, op_type); }
  void SetInt(const std::string& name, int64_t value) override {
    absl::StrAppend(&text, " ", name, "=", value);
  }
  void SetFloat(const std::string& name, float value) override {
    absl::StrAppend(&text, " ", name, "=", value);
  }
  void SetInts(const std::string& name, std::vector<int64_t> values) override {
    absl::StrAppend(&text, " ", name, "=", absl::StrJoin(values, ","));
  }
  void AddConstantInput(const std::string& name, std::vector<int64_t> dims,
                        std::vector<float>) override {
    absl::StrAppend(&text, " +", name, ":", ShapeToString(dims));
  }
  void DropTrailingEmptyInputs() override {}
  std::string text;
};

// One (variant, params) to time.
struct Candidate {
  std::string variant;
  KernelParams params;
};

// A key found by the collecting lowering.
struct Pending {
  std::string key;
  std::string node;
  int node_index = -1;
  double flops = 0;
  std::vector<Candidate> all;   // every fitting variant's whole param_space
  std::vector<Candidate> fast;  // kFast's few
};

constexpr size_t kFastCandidates = 4;

void CandidatesOf(const Node& node, const LoweringContext& ctx, absl::Span<const size_t> fitting,
                  Pending& p) {
  const OpDef* def = FindOp(node.op);
  std::vector<std::vector<Candidate>> per_variant;
  for (size_t i : fitting) {
    const KernelVariant& v = def->variants[i];
    std::vector<KernelParams> space;
    if (v.param_space) space = v.param_space(node, ctx);
    if (space.empty()) space.push_back({});
    per_variant.emplace_back();
    for (KernelParams& params : space) per_variant.back().push_back({v.name, std::move(params)});
  }
  for (const auto& list : per_variant) p.all.insert(p.all.end(), list.begin(), list.end());
  // The heuristics of the first two variants, then the first's nearest sets.
  p.fast.push_back(per_variant[0][0]);
  if (per_variant.size() > 1) p.fast.push_back(per_variant[1][0]);
  for (size_t i = 1; i < per_variant[0].size() && p.fast.size() < kFastCandidates; ++i) {
    p.fast.push_back(per_variant[0][i]);
  }
}

// DeviceKey: what a choice depends on besides the node.
absl::StatusOr<std::string> DeviceKey(const Context& context, const LoweringTarget& target) {
  static const absl::StatusOr<std::string>* library_hash =
      new absl::StatusOr<std::string>(Sha256Hex(KernelLibraryText()));
  if (!library_hash->ok()) return library_hash->status();
  const DeviceInfo& d = context.device_info();
  return absl::StrCat(
      "v", kTuningCacheFormatVersion, " device=", d.name, " driver=", d.driver_version,
      " platform=", d.platform_name, " ", d.platform_version, " facts={", target.SelectionKey(),
      "}", " kernels=", **library_hash, target.half_storage ? " precision=fp16-storage" : "",
      target.tf32_products ? " precision=tf32" : "");
}

// Pattern fills a timing input with small finite values.
std::vector<float> Pattern(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.25f * float(int(i % 13) - 6);
  return v;
}

// A candidate compiled as a one-node engine, with its bindings.
struct Prepared {
  size_t candidate = 0;
  Engine engine;
  Bindings bindings;
  std::vector<Tensor> tensors;
  double best_ms = std::numeric_limits<double>::infinity();
};

// TimeOnce runs the prepared engine op by op once and returns the device
// time of all its dispatches (profiling events).
absl::StatusOr<double> TimeOnce(const Prepared& p) {
  RECQ_ASSIGN_OR_RETURN(std::vector<DispatchProfile> profile, p.engine.Profile(p.bindings));
  double ms = 0;
  for (const DispatchProfile& d : profile) ms += d.device_ms;
  return ms;
}

// Prepare compiles `c` for the node as a one-node engine (its warm-up run
// included) with bound input and output tensors.
// OneNodeGraph is node `node_index` of `graph` alone, its constant inputs
// kept and the others made graph inputs.
absl::StatusOr<Graph> OneNodeGraph(const Graph& graph, int node_index) {
  const Node& node = graph.nodes()[node_index];
  GraphBuilder b;
  std::vector<TensorRef> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId id = node.inputs[i];
    if (id == kNoValue) {
      inputs.push_back(TensorRef{});
      continue;
    }
    const Value& v = graph.value(id);
    if (v.kind == Value::Kind::kConstant) {
      inputs.push_back(b.Constant(absl::StrCat("c", i), v.desc.shape, *v.data));
    } else {
      inputs.push_back(b.Input(absl::StrCat("x", i), v.desc.shape, v.desc.dtype));
    }
  }
  TensorRef y = b.AddNode(node.op, inputs, node.attrs, "tuned");
  if (node.fused.kind != ActivationKind::kNone) b.SetFusedActivation(y, node.fused);
  b.Output(y, "y");
  return std::move(b).Build();
}

// CandidateOptions compiles a one-node graph with candidate `c`.
EngineOptions CandidateOptions(const Candidate& c, const EngineOptions& base) {
  EngineOptions options;
  options.optimize = false;
  options.kernel_target = base.kernel_target;
  options.emulate_matrix_units = base.emulate_matrix_units;
  options.precision = base.precision;
  options.tuning = EngineOptions::Tuning::kOff;
  options.warm_up = true;
  options.choose_kernel = [c](const Node& n, const LoweringContext&,
                              absl::Span<const size_t> fitting) {
    const OpDef* def = FindOp(n.op);
    for (size_t i : fitting) {
      if (def->variants[i].name == c.variant) return KernelChoice{i, c.params};
    }
    return KernelChoice{fitting[0], {}};
  };
  return options;
}

absl::StatusOr<std::unique_ptr<Prepared>> Prepare(const Context& context, const Graph& graph,
                                                  int node_index, const Candidate& c,
                                                  const EngineOptions& base) {
  RECQ_ASSIGN_OR_RETURN(Graph one, OneNodeGraph(graph, node_index));
  RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, one, CandidateOptions(c, base)));
  Bindings bindings;
  std::vector<Tensor> tensors;
  for (const BindingInfo& info : engine.inputs()) {
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, info.desc));
    std::vector<float> pattern = Pattern(static_cast<size_t>(info.desc.NumElements()));
    if (info.desc.dtype == DataType::kFloat16) {
      std::vector<uint16_t> half(pattern.size());
      for (size_t i = 0; i < pattern.size(); ++i) half[i] = FloatToHalf(pattern[i]);
      RECQ_RETURN_IF_ERROR(t.Upload(half));
    } else {
      RECQ_RETURN_IF_ERROR(WriteBuffer(context, t.mem(), pattern));
    }
    bindings.Set(info.name, t);
    tensors.push_back(std::move(t));
  }
  for (const BindingInfo& info : engine.outputs()) {
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, info.desc));
    bindings.Set(info.name, t);
    tensors.push_back(std::move(t));
  }
  return std::unique_ptr<Prepared>(
      new Prepared{0, std::move(engine), std::move(bindings), std::move(tensors)});
}

}  // namespace

bool Tuner::KeyOf(const Node& node, const LoweringContext& ctx, std::string* key) {
  const OpDef* def = FindOp(node.op);
  if (def == nullptr) return false;
  // The attributes: the node's ONNX form, else the op's own rendering
  // (ops made by the passes, such as Attention and FusedElementwise).
  std::string attrs;
  if (def->export_onnx) {
    KeyWriter writer;
    if (!def->export_onnx(node, ctx.graph(), writer).ok()) return false;
    attrs = std::move(writer.text);
  } else if (def->tuning_attrs) {
    attrs = def->tuning_attrs(node);
    if (attrs.empty()) return false;
    attrs = absl::StrCat(node.op.name(), " ", attrs);
  } else {
    return false;
  }
  std::string shapes;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      absl::StrAppend(&shapes, " -");
      continue;
    }
    const Value& v = ctx.graph().value(id);
    // Float tensors: float32, or float16 under fp16 storage (the precision
    // is part of the device key).
    if (v.desc.dtype != DataType::kFloat32 && v.desc.dtype != DataType::kFloat16) return false;
    absl::StrAppend(&shapes, " ", ShapeToString(v.desc.shape),
                    v.kind == Value::Kind::kConstant ? "c" : "");
  }
  *key = absl::StrCat(node.op.name(), shapes, " -> ",
                      ShapeToString(ctx.graph().value(node.outputs[0]).desc.shape), " {", attrs,
                      "} act=", ActivationKindName(node.fused.kind));
  return true;
}

absl::StatusOr<std::shared_ptr<const Tuner>> Tuner::Tune(const Context& context, const Graph& graph,
                                                         const EngineOptions& options,
                                                         const LoweringTarget& target) {
  const Clock::time_point start = Clock::now();
  std::shared_ptr<Tuner> tuner(new Tuner());
  RECQ_ASSIGN_OR_RETURN(tuner->device_key_, DeviceKey(context, target));

  // Collect: every node with more than one candidate, lowered with the
  // heuristics (no programs are built).
  std::vector<Pending> pending;
  LoweringTarget collect = target;
  collect.choose_variant = nullptr;
  collect.choose_kernel = [&pending](const Node& node, const LoweringContext& ctx,
                                     absl::Span<const size_t> fitting) {
    Pending p;
    if (KeyOf(node, ctx, &p.key)) {
      CandidatesOf(node, ctx, fitting, p);
      if (p.all.size() > 1) {
        p.node = node.name;
        p.node_index = static_cast<int>(&node - ctx.graph().nodes().data());
        pending.push_back(std::move(p));
      }
    }
    return KernelChoice{fitting[0], {}};
  };
  RECQ_ASSIGN_OR_RETURN(Lowered lowered, Lower(graph, collect));
  // Group by key, the most floating-point work first.
  std::map<std::string, Pending> by_key;
  for (Pending& p : pending) {
    const std::string prefix = absl::StrCat(p.node, "/");
    for (const Dispatch& d : lowered.list.dispatches) {
      if (absl::StartsWith(d.label, prefix)) p.flops += d.flops;
    }
    auto [it, inserted] = by_key.try_emplace(p.key, p);
    if (!inserted) it->second.flops += p.flops;
  }
  std::vector<const Pending*> order;
  for (const auto& [key, p] : by_key) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(),
                   [](const Pending* a, const Pending* b) { return a->flops > b->flops; });

  const ContextState& cs = *context.state();
  std::optional<TuningCache> cache;
  if (cs.binary_cache != nullptr) cache.emplace(cs.binary_cache->directory() + "/tuning");
  const bool exhaustive = options.tuning == EngineOptions::Tuning::kExhaustive;
  const int reps = exhaustive ? 5 : 3;
  auto over_budget = [&] { return !exhaustive && MsSince(start) > options.tuning_budget_s * 1e3; };
  // The costliest candidate compile so far (a one-node engine: its program
  // builds and its warm-up, where PoCL compiles the work-group function).
  double candidate_ms = 0;
  auto fits = [&](int candidates) {
    return exhaustive ||
           MsSince(start) + candidates * candidate_ms <= options.tuning_budget_s * 1e3;
  };
  EngineStats& stats = tuner->stats_;
  stats.tuning_keys = order.size();
  // Set when kFast finds the programs cold (see below): no more compiles.
  std::string cold;
  for (const Pending* p : order) {
    const std::string full = absl::StrCat(tuner->device_key_, " | ", p->key);
    TuningChoice report;
    report.key = p->key;
    report.node = p->node;
    // kExhaustive measures every key again (a kFast entry saw fewer
    // candidates) and stores over it.
    if (cache && !exhaustive) {
      bool corrupt = false;
      std::optional<TuningEntry> entry = cache->Load(full, &corrupt);
      const bool known =
          entry && std::any_of(p->all.begin(), p->all.end(), [&](const Candidate& c) {
            return c.variant == entry->variant && c.params == entry->params;
          });
      if (entry && !known) corrupt = true;
      if (corrupt) {
        ++stats.tuning_invalid_entries;
        Log(LogLevel::kWarning, absl::StrCat("tuning cache: ignoring the corrupt entry ",
                                             cache->PathFor(full), "; tuning again"));
      }
      if (known) {
        ++stats.tuning_cache_hits;
        report.variant = entry->variant;
        report.params = KernelParamsString(entry->params);
        report.best_ms = entry->ms;
        report.from_cache = true;
        stats.tuning_choices.push_back(report);
        tuner->choices_[full] = *std::move(entry);
        continue;
      }
    }
    // kFast counts the candidates' compiles in its budget: a key starts
    // only when two candidates (the fewest worth timing) fit by the
    // costliest candidate compile seen so far.
    if (!cold.empty() || over_budget() || !fits(2)) {
      ++stats.tuning_over_budget;
      continue;
    }
    const std::vector<Candidate>& candidates = exhaustive ? p->all : p->fast;
    // Compile every candidate first, then time them in interleaved rounds
    // (the fastest of `reps` per candidate), so that a change in the
    // machine's load during the search does not favour one candidate.
    std::vector<std::unique_ptr<Prepared>> prepared;
    // The first candidate is the heuristic's choice, whose programs and
    // work-group functions the engine reuses; later ones start only while
    // they fit in the budget.
    bool cut = false;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (i > 0 && !fits(1)) {
        cut = true;
        break;
      }
      // Cold, found before compiling, where the engine's compile has a
      // build helper: the heuristic's programs are in neither the context
      // nor the binary cache. Two more compiles that slow would not fit
      // the budget, so kFast measures nothing and leaves every program to
      // the engine's compile, which builds them beside the helper. (Without
      // a helper the first compile goes ahead: PoCL's own kernel cache may
      // make it quick.)
      if (!exhaustive && i == 0 && BuildHelperFor(*context.state())) {
        absl::StatusOr<Graph> probe_graph = OneNodeGraph(graph, p->node_index);
        absl::StatusOr<size_t> to_build =
            probe_graph.ok()
                ? ProgramsToBuild(context, *probe_graph, CandidateOptions(candidates[i], options))
                : absl::StatusOr<size_t>(probe_graph.status());
        if (to_build.ok() && *to_build > 0) {
          cold = "programs are cold (the first candidate's are in no cache), nothing measured; ";
          break;
        }
      }
      const Clock::time_point candidate_start = Clock::now();
      absl::StatusOr<std::unique_ptr<Prepared>> one =
          Prepare(context, graph, p->node_index, candidates[i], options);
      candidate_ms = std::max(candidate_ms, MsSince(candidate_start));
      if (!one.ok()) {
        Log(LogLevel::kWarning, absl::StrCat("tuning '", p->node, "': ", candidates[i].variant, "[",
                                             KernelParamsString(candidates[i].params),
                                             "] failed, skipped: ", one.status().ToString()));
        continue;
      }
      (*one)->candidate = i;
      // Cold: the heuristic's programs had to be compiled from source (in
      // neither this context nor the binary cache), and two more compiles
      // that slow do not fit the budget: no key could be measured, so kFast
      // stops here. The engine reuses this candidate's program.
      if (!exhaustive && i == 0 && (*one)->engine.stats().kernels_built > 0 && !fits(2)) {
        cold = absl::StrCat("programs are cold (the first candidate compiled from source in ",
                            static_cast<int64_t>(candidate_ms), " ms of a ",
                            static_cast<int64_t>(options.tuning_budget_s * 1e3),
                            " ms budget), nothing measured; ");
        prepared.clear();
        break;
      }
      prepared.push_back(*std::move(one));
    }
    // One candidate has nothing to be compared with: the key is left to
    // the heuristics and to a later compile.
    if (cut && prepared.size() < 2) prepared.clear();
    for (int r = 0; r < reps; ++r) {
      for (auto& one : prepared) {
        absl::StatusOr<double> ms = TimeOnce(*one);
        if (ms.ok()) one->best_ms = std::min(one->best_ms, *ms);
      }
    }
    TuningEntry best;
    best.ms = std::numeric_limits<double>::infinity();
    size_t timed = 0;
    for (const auto& one : prepared) {
      if (!std::isfinite(one->best_ms)) continue;
      ++timed;
      const Candidate& c = candidates[one->candidate];
      Log(LogLevel::kDebug, absl::StrCat("tuning '", p->node, "': ", c.variant, "[",
                                         KernelParamsString(c.params), "] ", one->best_ms, " ms"));
      if (one->candidate == 0) report.default_ms = one->best_ms;
      if (one->best_ms < best.ms) best = {c.variant, c.params, one->best_ms};
    }
    // The heuristic keeps its place unless another is clearly faster (3 %):
    // timing noise alone should not move a choice.
    if (report.default_ms > 0 && best.ms > 0.97 * report.default_ms) {
      best = {candidates[0].variant, candidates[0].params, report.default_ms};
    }
    prepared.clear();
    if (timed == 0) {
      ++stats.tuning_over_budget;
      continue;
    }
    ++stats.tuning_measured;
    report.variant = best.variant;
    report.params = KernelParamsString(best.params);
    report.best_ms = best.ms;
    report.candidates = timed;
    stats.tuning_choices.push_back(report);
    if (cache) {
      absl::Status stored = cache->Store(full, best);
      if (!stored.ok()) Log(LogLevel::kWarning, std::string(stored.message()));
    }
    tuner->choices_[full] = std::move(best);
  }
  stats.tuning_ms = MsSince(start);
  Log(LogLevel::kInfo,
      absl::StrCat("tuning: ", cold, stats.tuning_keys, " keys, ", stats.tuning_cache_hits,
                   " from the cache, ", stats.tuning_measured, " measured, ",
                   stats.tuning_over_budget, " over budget, ", stats.tuning_ms, " ms"));
  return std::shared_ptr<const Tuner>(std::move(tuner));
}

KernelChooser Tuner::Chooser() const {
  return [this](const Node& node, const LoweringContext& ctx, absl::Span<const size_t> fitting) {
    std::string key;
    if (KeyOf(node, ctx, &key)) {
      auto it = choices_.find(absl::StrCat(device_key_, " | ", key));
      if (it != choices_.end()) {
        const OpDef* def = FindOp(node.op);
        for (size_t i : fitting) {
          if (def->variants[i].name == it->second.variant)
            return KernelChoice{i, it->second.params};
        }
      }
    }
    return KernelChoice{fitting[0], {}};
  };
}

void Tuner::CopyStatsTo(EngineStats& stats) const {
  stats.tuning_ms = stats_.tuning_ms;
  stats.tuning_keys = stats_.tuning_keys;
  stats.tuning_cache_hits = stats_.tuning_cache_hits;
  stats.tuning_measured = stats_.tuning_measured;
  stats.tuning_invalid_entries = stats_.tuning_invalid_entries;
  stats.tuning_over_budget = stats_.tuning_over_budget;
  stats.tuning_choices = stats_.tuning_choices;
}

}  // namespace internal
}  // namespace recq
