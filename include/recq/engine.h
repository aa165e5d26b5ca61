// Engine: a Graph compiled for one Context.
//
// Compile builds the kernels (through the context's program cache), uploads
// the weights, and lowers the graph to a dispatch list with a memory plan.
// An Engine is immutable and cheap to copy; it may be shared by threads.
// Each Recording made from it owns its own intermediate memory.
#ifndef RECQ_ENGINE_H_
#define RECQ_ENGINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recq/bindings.h"
#include "recq/context.h"
#include "recq/graph.h"
#include "recq/op_registry.h"
#include "recq/preprocess.h"
#include "recq/recording.h"
#include "recq/tensor.h"

namespace recq {

namespace internal {
struct EngineState;
}

struct EngineOptions {
  // Run the graph passes (BatchNorm folding, activation fusion, dead code).
  bool optimize = true;
  // With optimize: merge chains of element-wise ops into one kernel each
  // (engine/fusion/elementwise_fusion.h); $RECQ_FUSION=off turns it off.
  bool fuse_elementwise = true;

  // Which shape of kernels Compile selects. kAuto: the GPU variants on a
  // device whose CL_DEVICE_TYPE includes CL_DEVICE_TYPE_GPU, else the CPU
  // ones. kCpu / kGpu force one family on any device (both compute the same
  // results; forcing kGpu on PoCL is how CI tests the GPU variants).
  enum class KernelTarget { kAuto, kCpu, kGpu };
  KernelTarget kernel_target = KernelTarget::kAuto;
  // With the GPU family: the variants built on matrix instructions (tf32
  // tensor cores through NVIDIA's inline PTX, matmul_mma.cl) also fit a
  // device without them, computing the same tiles in plain OpenCL C. For
  // testing on PoCL; slow elsewhere. Not stored in engine files.
  bool emulate_matrix_units = false;

  // Picks among the kernel variants that fit each node (recq/op_registry.h);
  // empty takes the first that fits. The auto-tuner's hook: it must answer
  // the same for the same node and device.
  VariantChooser choose_variant;
  // Picks the variant and its parameters (recq/op_registry.h); used when
  // choose_variant is empty. Set, it replaces the auto-tuner.
  KernelChooser choose_kernel;

  // The auto-tuner: for every distinct (op, shapes, attributes) of the
  // graph whose fitting variants and their param_space offer more than one
  // choice, time the candidates as single-node engines and take the fastest.
  // Choices persist in a tuning cache in the binary cache's directory
  // (<cache dir>/tuning, ContextOptions::cache_dir or $RECQ_CACHE_DIR),
  // keyed by device, driver, the kernel library's source hash, the kernel
  // target and the node's shapes and attributes; an unreadable or corrupt
  // entry is ignored and re-tuned. With every key in the cache the choices
  // are read, not measured, so they are deterministic. Without a cache
  // directory every compile measures. Skipped when choose_variant or
  // choose_kernel is set.
  //   kOff: the variants' heuristics.
  //   kFast: up to 4 candidates per key (the heuristics of the first two
  //     fitting variants, then the first's nearest parameter sets), the
  //     biggest keys first, within tuning_budget_s counting the candidates'
  //     compiles: a key starts only while two candidates fit by the costliest
  //     candidate compile so far, and a later candidate only while it fits (a
  //     compile may overrun by one candidate compile); keys left (or cut to
  //     one candidate) take the heuristics, are not cached, and are tuned by
  //     later compiles.
  //   kExhaustive: every candidate of every key, no budget (`recq tune`).
  // The default is $RECQ_TUNING (off, fast, exhaustive) when set, else kFast.
  enum class Tuning { kOff, kFast, kExhaustive };
  Tuning tuning = DefaultTuning();
  double tuning_budget_s = 2.0;  // kFast's limit on compiling and timing candidates

  // DefaultTuning reads $RECQ_TUNING; kFast when unset or unrecognized.
  static Tuning DefaultTuning();

  // Enqueue each kernel once per launch shape, on zero-filled scratch
  // memory, before Compile returns, so that drivers that build kernel code
  // lazily at the first enqueue (PoCL builds a work-group function per
  // kernel and local size then) have nothing left to build at the first
  // real run. A dispatch with an explicit local size runs as one work-group.
  // Counted in EngineStats::warmup_ms and warmup_dispatches.
  bool warm_up = true;

  // How float tensors are stored and computed.
  //   kFp32: float32 storage and arithmetic.
  //   kFp16Storage: weights and intermediates stored as half (vload_half /
  //     vstore_half, core OpenCL), arithmetic in float32. Graph inputs and
  //     outputs keep their element types (float32 ones are converted at the
  //     edges by Cast dispatches; a Preprocess input writes half directly).
  //     Part of the program, tuning-cache and engine-file keys.
  //   kFp16Compute: half arithmetic; needs cl_khr_fp16. No kernel library of
  //     recq computes in half yet: Compile returns FailedPrecondition naming
  //     the device and the extension when it is missing, Unimplemented when
  //     it is present.
  //   kTf32: float32 storage; the products that run on matrix units (MatMul,
  //     Gemm, the implicit-GEMM convolution, fused attention) multiply tf32
  //     operands (10 mantissa bits, rounded to nearest) once, accumulating
  //     in float32, as PyTorch's allow_tf32 and TensorRT's TF32 mode do,
  //     instead of the three tf32 products that give float32 accuracy.
  //     About 1e-3 relative error per product. On CPUs (the CPU kernel
  //     family) 3x3 stride-1 convolutions take Winograd F(4x4, 3x3), whose
  //     transforms' rounding (a few 1e-6 relative per layer, several times
  //     the direct sum's) lies far inside that; kFp16Storage allows it too.
  //     Every other kernel computes as kFp32.
  //     Part of the program, tuning-cache and engine-file keys.
  enum class Precision { kFp32, kFp16Storage, kFp16Compute, kTf32 };
  Precision precision = Precision::kFp32;
};

// PrecisionName renders "fp32", "fp16" (storage) or "fp16-compute";
// ParsePrecision reads those names back (InvalidArgument listing them).
const char* PrecisionName(EngineOptions::Precision precision);
[[nodiscard]] absl::StatusOr<EngineOptions::Precision> ParsePrecision(absl::string_view name);

// How LoadEngine treats an engine file made for another device or driver.
struct EngineLoadOptions {
  // Strict: an engine file whose programs or lowering cannot be used as
  // stored (another driver, another device type) is FailedPrecondition
  // instead of being rebuilt or re-lowered.
  bool strict = false;
  // As EngineOptions::warm_up.
  bool warm_up = true;
};

// Where an engine's dispatch list and programs came from.
enum class EngineOrigin {
  kCompiled,             // Engine::Compile
  kFileAsStored,         // an engine file, its lowering and program binaries used as stored
  kFileRebuiltPrograms,  // an engine file for another driver: programs rebuilt from its sources
  kFileRelowered,        // an engine file for another device type: re-lowered from its graph
};
// EngineOriginName: "compiled", "file: as stored", "file: programs rebuilt",
// "file: re-lowered".
const char* EngineOriginName(EngineOrigin origin);

// A named tensor that a recording binds per run.
struct BindingInfo {
  std::string name;
  TensorDesc desc;
  // An input that pre-processing reads (recq/preprocess.h) says how the
  // frame arrives: its colour format, whether it binds an image2d
  // (memory kImage2D: Bindings::Set with an image, never SetSvm) or a
  // buffer, and for a two-plane NV12 frame which plane ("NAME/y",
  // "NAME/uv"; Bindings::SetNv12 binds both).
  enum class Nv12Plane { kNone, kY, kUV };
  bool preprocessed = false;
  ColorFormat color = ColorFormat::kRGB;
  MemoryKind memory = MemoryKind::kBuffer;
  Nv12Plane plane = Nv12Plane::kNone;

  // Describe renders desc.ToString() ("1x720x1280x1 uint8") plus, for a
  // pre-processed input, ", NV12 Y plane, image2d" or ", rgbx frame, buffer".
  std::string Describe() const;
};

// DescribeInputs returns what each input of `graph` binds, in graph order,
// as Engine::inputs() will describe it once compiled: an input that a
// pre-processing step reads (ApplyPrePostProcessing) with its frame format
// and memory kind, and each plane of a two-plane NV12 frame on its own.
std::vector<BindingInfo> DescribeInputs(const Graph& graph);

// One auto-tuner decision (EngineOptions::tuning).
struct TuningChoice {
  std::string key;        // "<op> <input shapes> -> <output shape> <attributes>"
  std::string node;       // the first node of the graph with this key
  std::string variant;    // the chosen kernel variant
  std::string params;     // its parameters, "name=value,..." ("": heuristic)
  double best_ms = 0;     // measured device time of the choice (as cached)
  double default_ms = 0;  // of the heuristic (first candidate); 0 when from the cache
  size_t candidates = 0;  // timed now (0: from the cache)
  bool from_cache = false;
};

// Facts about a compiled engine.
struct EngineStats {
  size_t dispatches = 0;
  size_t kernels_built = 0;       // programs compiled from source by this compile
  size_t programs_from_disk = 0;  // programs created from the on-disk binary cache
  size_t intermediate_bytes = 0;  // planned intermediate memory per recording
  size_t unplanned_bytes = 0;     // sum of all intermediate tensors
  size_t lower_bound_bytes = 0;   // most intermediate bytes alive at one step
  size_t weight_bytes = 0;        // every constant uploaded, tables included
  // Of weight_bytes: the integer and bool constants (the model's integer
  // tensors, index tables of the lowering), which fp16 storage leaves as
  // they are.
  size_t integer_constant_bytes = 0;
  double compile_ms = 0;          // Compile or LoadEngine in all, warm-up included
  double warmup_ms = 0;           // of which the warm-up run (EngineOptions::warm_up)
  size_t warmup_dispatches = 0;   // distinct launch shapes the warm-up enqueued
  size_t programs_from_file = 0;  // programs created from an engine file's binaries
  EngineOrigin origin = EngineOrigin::kCompiled;
  std::string origin_reason;  // for a loaded engine: why its origin is what it is
  // The auto-tuner (EngineOptions::tuning); its time is part of compile_ms.
  double tuning_ms = 0;
  size_t tuning_keys = 0;             // distinct keys with more than one candidate
  size_t tuning_cache_hits = 0;       // keys whose choice came from the tuning cache
  size_t tuning_measured = 0;         // keys timed by this compile
  size_t tuning_invalid_entries = 0;  // corrupt or foreign cache entries ignored
  size_t tuning_over_budget = 0;      // keys left to the heuristics (kFast's budget)
  std::vector<TuningChoice> tuning_choices;
};

// Device time of one dispatch, from OpenCL profiling events.
struct DispatchProfile {
  std::string label;  // "<node name>/<kernel>"
  double device_ms = 0;
  double flops = 0;  // Dispatch::flops, Dispatch::bytes: 0 when unknown
  double bytes = 0;
  // Work-groups it launched; 0 where the driver chose the local size.
  size_t work_groups = 0;
  // When it started (CL_PROFILING_COMMAND_START), in ms after the first
  // dispatch of the run started: dispatch i+1 waited start_ms[i+1] -
  // (start_ms[i] + device_ms[i]) after dispatch i ended.
  double start_ms = 0;
};

class Engine {
 public:
  [[nodiscard]] static absl::StatusOr<Engine> Compile(const Context& context, const Graph& graph,
                                                      const EngineOptions& options = {});

  const std::vector<BindingInfo>& inputs() const;
  const std::vector<BindingInfo>& outputs() const;
  const EngineStats& stats() const;
  const Context& context() const;
  // The options it was compiled with (for an engine file, those it was
  // built with: precision, kernel target, tuning).
  const EngineOptions& options() const;
  // DispatchLabels lists the dispatches in order as "<node>/<kernel variant>".
  std::vector<std::string> DispatchLabels() const;

  // Record creates a recording with the requested backend. Forcing a backend
  // the device cannot run is an Unavailable status that says why.
  [[nodiscard]] absl::StatusOr<Recording> Record(const RecordOptions& options = {}) const;

  // RunUnrecorded dispatches op by op on the context's queue, setting every
  // argument, and waits. It allocates intermediates per call: a debugging
  // aid. For repeated unrecorded runs use Record({Backend::kUnrecorded}).
  [[nodiscard]] absl::Status RunUnrecorded(const Bindings& bindings) const;

  // Profile runs the dispatch list once, op by op, on a profiling queue of
  // its own in the engine's context, waits, and returns each dispatch's
  // device time in order. Bindings are validated as for a recording.
  [[nodiscard]] absl::StatusOr<std::vector<DispatchProfile>> Profile(
      const Bindings& bindings) const;

  // Serialize writes the engine as an engine file (recq/engine_file.h): the
  // graph given to Compile, the dispatch list, bindings, memory plan,
  // weights, kernel sources and this device's program binaries, taken now
  // (after the warm-up). The same model, options, device, driver and cache
  // state give the same bytes (a driver's binary may carry code it built
  // lazily: PoCL's holds the work-group functions built so far, so build
  // from empty caches for byte-identical files). Unimplemented if the
  // driver cannot return program binaries.
  [[nodiscard]] absl::StatusOr<std::string> Serialize() const;
  // SerializeToFile writes Serialize()'s bytes to `path` (replacing it).
  [[nodiscard]] absl::Status SerializeToFile(const std::string& path) const;

  // Deserialize loads an engine file's bytes into `context`; LoadEngine and
  // LoadEngineFromBytes (recq/engine_file.h) are the documented entry points.
  [[nodiscard]] static absl::StatusOr<Engine> Deserialize(const Context& context,
                                                          absl::string_view bytes,
                                                          const EngineLoadOptions& options = {});

  const std::shared_ptr<const internal::EngineState>& state() const { return state_; }

 private:
  friend class ShapedEngine;  // wraps the engines of its buckets
  friend class Generator;     // its prefill steps share the decode step's weights
  explicit Engine(std::shared_ptr<const internal::EngineState> state) : state_(std::move(state)) {}
  std::shared_ptr<const internal::EngineState> state_;
};

}  // namespace recq

#endif  // RECQ_ENGINE_H_
