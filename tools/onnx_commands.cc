#include "tools/onnx_commands.h"
#include "tools/binary_store.h"
#include "tools/build_tuning.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "recq/engine_file.h"
#include "recq/onnx.h"
#include "recq/preprocess.h"
#include "recq/recq.h"
#include "recq/status_macros.h"
#include "tools/image_file.h"
#include "tools/random_input.h"
#include "tools/roofline.h"
#include "tools/write_file.h"

namespace recq::tools {
namespace {

using Clock = std::chrono::steady_clock;

// Set during static initialization, before main: "since the process started".
const Clock::time_point kProcessStart = Clock::now();

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParsePairs(
    const std::vector<std::string>& specs, const char* flag) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& spec : specs) {
    std::pair<std::string, std::string> p = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    if (p.first.empty() || p.second.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " '", spec, "': expected NAME=FILE"));
    }
    pairs.push_back(std::move(p));
  }
  return pairs;
}

const BindingInfo* FindBinding(const std::vector<BindingInfo>& list, const std::string& name) {
  for (const BindingInfo& b : list) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::string Names(const std::vector<BindingInfo>& list) {
  std::string s;
  for (const BindingInfo& b : list) absl::StrAppend(&s, s.empty() ? "" : ", ", "'", b.name, "'");
  return s;
}

// ReadInput reads a raw file of the binding's element type (little-endian,
// row-major), as `recq run --input` takes it.
absl::StatusOr<std::vector<uint8_t>> ReadInput(const std::string& path, const BindingInfo& b) {
  RECQ_ASSIGN_OR_RETURN(std::string file, ReadFileBytes(path));
  std::vector<uint8_t> bytes(file.begin(), file.end());
  if (bytes.size() != b.desc.ByteSize()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input file '", path, "' has ", bytes.size(), " bytes; input '", b.name, "' (",
                     b.desc.ToString(), ") needs ", b.desc.ByteSize(), " bytes of little-endian ",
                     DataTypeName(b.desc.dtype)));
  }
  return bytes;
}

// A model from an ONNX file (imported and compiled) or an engine file (loaded).
struct LoadedModel {
  Engine engine;
  std::string what;  // "ONNX, 103 graph nodes" / "engine file"
};

// FrameFromImage makes `ppp` take a decoded PNG / JPEG for input `name`:
// an RGB (or BGR: the bytes are swapped) u8 NHWC buffer of the image's
// size, with the mean, scale and model colour order --input-format gave.
absl::Status FrameFromImage(const std::string& name, DecodedImage& image, PrePostProcessing& ppp) {
  const bool declared = ppp.inputs.count(name) != 0;
  InputPreprocess& in = ppp.inputs[name];
  const std::string what = absl::StrCat("--input '", name, "': a ", image.format,
                                        " decodes to a u8 RGB NHWC buffer frame");
  if ((in.color != ColorFormat::kRGB && in.color != ColorFormat::kBGR) ||
      in.element_type != DataType::kUInt8 || in.layout != TensorLayout::kNHWC ||
      in.kind != MemoryKind::kBuffer) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "; --input-format for it says ", ColorFormatName(in.color), ", ",
        DataTypeName(in.element_type), ", ", in.layout == TensorLayout::kNHWC ? "nhwc" : "nchw",
        in.kind == MemoryKind::kImage2D ? ", image" : "", " (use rgb or bgr, type=u8, nhwc)"));
  }
  if ((in.source_height != 0 && in.source_height != image.height) ||
      (in.source_width != 0 && in.source_width != image.width)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " of ", image.width, "x", image.height,
                                                   "; --input-format says ", in.source_width, "x",
                                                   in.source_height));
  }
  in.source_height = image.height;
  in.source_width = image.width;
  if (in.color == ColorFormat::kBGR) {
    for (size_t i = 0; i + 2 < image.rgb.size(); i += 3) std::swap(image.rgb[i], image.rgb[i + 2]);
  }
  if (!declared) {
    std::printf(
        "input '%s': %s frame %lldx%lld, pre-processed as rgb (no mean or scale: values "
        "0..255; give --input-format=rgb,mean=...,scale=... to normalize)\n",
        name.c_str(), image.format, static_cast<long long>(image.width),
        static_cast<long long>(image.height));
  }
  return absl::OkStatus();
}

// `shapes` (ParseShapes), the pre- and post-processing, decoded images and
// `precision` (ParsePrecision; empty: fp32) apply to ONNX files; an engine
// file has its shapes and precision (naming another one is an error).
absl::StatusOr<LoadedModel> LoadModel(const Context& context, const std::string& path,
                                      const std::string& shapes,
                                      const std::string& input_format = "",
                                      const std::vector<std::string>& output_format = {},
                                      const std::string& precision = "",
                                      std::map<std::string, DecodedImage>* images = nullptr) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  EngineOptions options;
  if (!precision.empty()) {
    RECQ_ASSIGN_OR_RETURN(options.precision, ParsePrecision(precision));
  }
  if (LooksLikeEngineFile(bytes)) {
    if (!shapes.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--shapes applies to ONNX models; the engine file ", path, " was built for its shapes"));
    }
    if (!input_format.empty() || !output_format.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-format and --output-format apply to ONNX models, not to the "
                       "engine file ",
                       path));
    }
    if (images != nullptr && !images->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input '", images->begin()->first,
          "': PNG / JPEG inputs are pre-processed inside the model, which needs an ONNX model, "
          "not the engine file ",
          path));
    }
    if (!precision.empty()) {
      // Checked before the load (which would be wasted); without the flag
      // the file is read and checked once, by the load.
      RECQ_ASSIGN_OR_RETURN(EngineFileSummary summary, SummarizeEngineFile(bytes));
      if (summary.precision != options.precision) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--precision=", precision, ": the engine file ", path, " was built for precision ",
            PrecisionName(summary.precision), " (rebuild it with recq build --precision)"));
      }
    }
    RECQ_ASSIGN_OR_RETURN(Engine engine, LoadEngineFromBytes(context, bytes));
    const EngineOptions::Precision built = engine.options().precision;
    return LoadedModel{std::move(engine),
                       absl::StrCat("engine file, precision ", PrecisionName(built))};
  }
  OnnxOptions load;
  RECQ_ASSIGN_OR_RETURN(load.input_shapes, ParseShapes(shapes));
  // From the path, so that external data files are found beside the model.
  RECQ_ASSIGN_OR_RETURN(Graph graph, LoadOnnx(path, load));
  RECQ_ASSIGN_OR_RETURN(PrePostProcessing ppp, ParsePrePost(graph, input_format, output_format));
  if (images != nullptr) {
    for (auto& [name, image] : *images) RECQ_RETURN_IF_ERROR(FrameFromImage(name, image, ppp));
  }
  RECQ_RETURN_IF_ERROR(ApplyPrePostProcessing(graph, ppp));
  RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, graph, options));
  return LoadedModel{std::move(engine),
                     absl::StrCat("ONNX, ", graph.nodes().size(), " graph nodes, precision ",
                                  PrecisionName(options.precision))};
}

}  // namespace

absl::StatusOr<PrePostProcessing> ParsePrePost(const Graph& graph, const std::string& inputs,
                                               const std::vector<std::string>& outputs) {
  PrePostProcessing ppp;
  for (absl::string_view spec : absl::StrSplit(inputs, ';', absl::SkipEmpty())) {
    std::string name;
    const size_t eq = spec.find('=');
    if (eq != absl::string_view::npos &&
        spec.substr(0, eq).find_first_of(",:") == absl::string_view::npos) {
      name = std::string(spec.substr(0, eq));
      spec = spec.substr(eq + 1);
    } else if (graph.inputs().size() == 1) {
      name = graph.value(graph.inputs()[0]).name;
    } else {
      std::string names;
      for (ValueId id : graph.inputs()) {
        absl::StrAppend(&names, names.empty() ? "" : ", ", "'", graph.value(id).name, "'");
      }
      return absl::InvalidArgumentError(absl::StrCat("--input-format '", spec,
                                                     "': the model has several inputs (", names,
                                                     "); write NAME=FORMAT"));
    }
    RECQ_ASSIGN_OR_RETURN(ppp.inputs[name], ParseInputFormat(spec));
  }
  for (const std::string& spec : outputs) {
    std::pair<std::string, std::string> p = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    std::pair<std::string, std::string> tl = absl::StrSplit(p.second, absl::MaxSplits(':', 1));
    OutputPostprocess out;
    absl::StatusOr<DataType> type = ParseDataType(tl.first);
    if (p.first.empty() || !type.ok() ||
        (!tl.second.empty() && tl.second != "nchw" && tl.second != "nhwc")) {
      return absl::InvalidArgumentError(
          absl::StrCat("--output-format '", spec, "': expected NAME=f32|f16[:nchw|nhwc]"));
    }
    out.element_type = *type;
    out.layout = tl.second == "nhwc" ? TensorLayout::kNHWC : TensorLayout::kNCHW;
    ppp.outputs[p.first] = out;
  }
  return ppp;
}

absl::Status BuildEngineCommand(const std::string& model_path, const std::string& engine_path,
                                const std::string& device_spec, const std::string& precision,
                                const std::string& shapes, const std::string& tuning) {
  EngineOptions options;
  if (!precision.empty()) {
    RECQ_ASSIGN_OR_RETURN(options.precision, ParsePrecision(precision));
  }
  RECQ_ASSIGN_OR_RETURN(options.tuning, BuildTuning(tuning));
  options.tuning_budget_s = 1e9;
  if (engine_path.empty()) {
    return absl::InvalidArgumentError("recq build: name the engine file with -o FILE.recq");
  }
  ContextOptions context_options;
  context_options.device = device_spec;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(context_options));
  UseBuildHelpers(context, context_options.device);
  const Clock::time_point start = Clock::now();
  OnnxOptions load;
  RECQ_ASSIGN_OR_RETURN(load.profiles, ParseShapeProfiles(shapes));
  RECQ_ASSIGN_OR_RETURN(Graph graph, LoadOnnx(model_path, load));
  PrintBuildTuningStart(options.tuning);
  RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, graph, options));
  RECQ_RETURN_IF_ERROR(engine.SerializeToFile(engine_path));
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(engine_path));
  const EngineStats& stats = engine.stats();
  std::printf(
      "built %s from %s for %s (%s, driver %s): %zu dispatches, %zu bytes, %.1f ms "
      "(compile %.1f ms, warm-up %.1f ms)\n",
      engine_path.c_str(), model_path.c_str(), context.device_info().name.c_str(),
      context.device_info().platform_name.c_str(), context.device_info().driver_version.c_str(),
      stats.dispatches, bytes.size(), ms, stats.compile_ms, stats.warmup_ms);
  std::printf("tuning: %zu keys, %zu from the tuning cache, %zu measured, %.1f ms\n",
              stats.tuning_keys, stats.tuning_cache_hits, stats.tuning_measured, stats.tuning_ms);
  return absl::OkStatus();
}

absl::Status TuneModelCommand(const std::string& model_path, bool exhaustive,
                              const std::string& device_spec, const std::string& shapes) {
  ContextOptions context_options;
  context_options.device = device_spec;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(context_options));
  UseBuildHelpers(context, context_options.device);
  OnnxOptions load;
  RECQ_ASSIGN_OR_RETURN(load.input_shapes, ParseShapes(shapes));
  RECQ_ASSIGN_OR_RETURN(Graph graph, LoadOnnx(model_path, load));
  EngineOptions options;
  options.tuning = exhaustive ? EngineOptions::Tuning::kExhaustive : EngineOptions::Tuning::kFast;
  options.tuning_budget_s = 1e9;
  RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, graph, options));
  const EngineStats& stats = engine.stats();
  std::printf("device: %s (%s, driver %s)\n", context.device_info().name.c_str(),
              context.device_info().platform_name.c_str(),
              context.device_info().driver_version.c_str());
  std::printf("%-10s %8s %8s %5s  %-22s %-22s %s\n", "source", "best ms", "heur ms", "cands",
              "variant", "params", "key (first node)");
  for (const TuningChoice& c : stats.tuning_choices) {
    std::printf("%-10s %8.3f %8.3f %5zu  %-22s %-22s %s (%s)\n",
                c.from_cache ? "cache" : "measured", c.best_ms, c.default_ms, c.candidates,
                c.variant.c_str(), c.params.c_str(), c.key.c_str(), c.node.c_str());
  }
  std::printf(
      "tuned %s (%s): %zu keys, %zu from the tuning cache, %zu measured, %zu corrupt entries "
      "ignored; tuning %.1f ms of compile %.1f ms\n",
      model_path.c_str(), exhaustive ? "exhaustive" : "fast", stats.tuning_keys,
      stats.tuning_cache_hits, stats.tuning_measured, stats.tuning_invalid_entries, stats.tuning_ms,
      stats.compile_ms);
  return absl::OkStatus();
}

absl::Status InfoEngineFile(const std::string& path, absl::string_view bytes) {
  RECQ_ASSIGN_OR_RETURN(EngineFileSummary s, SummarizeEngineFile(bytes));
  std::printf("engine file: %s\n  format version %u, producer '%s', %zu bytes\n", path.c_str(),
              s.format_version, s.producer.c_str(), bytes.size());
  const DeviceInfo& d = s.built_for;
  std::printf("built for: %s (%s), %s %s, driver %s, %s\n", d.name.c_str(), DeviceTypeName(d.type),
              d.platform_name.c_str(), d.platform_version.c_str(), d.driver_version.c_str(),
              d.version.c_str());
  std::printf("  lowering: %s kernels, max work-group %zu, %u compute units\n",
              s.gpu_kernels ? "GPU" : "CPU", d.max_work_group_size, d.compute_units);
  const char* target = s.kernel_target == EngineOptions::KernelTarget::kCpu   ? "cpu"
                       : s.kernel_target == EngineOptions::KernelTarget::kGpu ? "gpu"
                                                                              : "auto";
  std::printf("options: optimize %s, kernel_target %s, precision %s%s\n", s.optimize ? "on" : "off",
              target, PrecisionName(s.precision),
              s.had_variant_chooser ? ", variants chosen by a hook" : "");
  std::printf("inputs:\n");
  for (const BindingInfo& b : s.inputs) {
    std::printf("  %s: %s\n", b.name.c_str(), b.Describe().c_str());
  }
  std::printf("outputs:\n");
  for (const BindingInfo& b : s.outputs) {
    std::printf("  %s: %s\n", b.name.c_str(), b.desc.ToString().c_str());
  }
  std::printf(
      "programs: %zu (%zu with a binary for the build device); weights %zu bytes; "
      "intermediates %zu bytes per recording\n",
      s.programs, s.programs_with_binary, s.weight_bytes, s.intermediate_bytes);
  std::printf("graph: %s\n", s.has_graph ? "stored (re-lowerable on another device type)"
                                         : ("none: " + s.graph_missing_reason).c_str());
  if (!s.shape_profile.empty()) {
    std::printf(
        "shape profile: %s, %zu buckets (recq run|bench --shapes=... serve them all; "
        "the bindings above are the first bucket's)\n",
        s.shape_profile.c_str(), s.shape_buckets);
  }
  std::printf("dispatches (%zu, node/kernel variant):\n", s.dispatches.size());
  for (size_t i = 0; i < s.dispatches.size(); ++i) {
    std::printf("  %4zu  %s\n", i, s.dispatches[i].c_str());
  }
  return absl::OkStatus();
}

// PrintProfile prints every dispatch's device time, achieved GFLOP/s and
// GB/s and fraction of the device's roofline (tools/roofline.h), each
// kernel's totals, and the ten slowest dispatches.
absl::Status PrintProfile(const Engine& engine, const Bindings& bindings) {
  RECQ_ASSIGN_OR_RETURN(std::vector<DispatchProfile> profile, engine.Profile(bindings));
  RECQ_ASSIGN_OR_RETURN(tools::Roofline roof, tools::DeviceRoofline(engine.context()));
  std::printf("roofline (%s%s): %.1f GFLOP/s, %.1f GB/s\n", roof.cached ? "cached in " : "measured",
              roof.cached ? roof.cache_file.c_str() : "", roof.gflops, roof.gbps);
  struct Sum {
    double ms = 0, flops = 0, bytes = 0;
    int count = 0;
  };
  const uint32_t units = engine.context().device_info().compute_units;
  auto line = [&](const DispatchProfile& p) {
    const double s = std::max(p.device_ms, 1e-9) * 1e-3;
    const std::string groups = p.work_groups == 0 ? "-" : absl::StrCat(p.work_groups);
    std::printf("%9.3f ms %8.1f GFLOP/s %7.1f GB/s %5.1f%% roof %6s wg  %s\n", p.device_ms,
                p.flops / s * 1e-9, p.bytes / s * 1e-9,
                100.0 * tools::RooflineFraction(roof, p.flops, p.bytes, p.device_ms),
                groups.c_str(), p.label.c_str());
  };
  Sum total;
  std::map<std::string, Sum> by_kernel;
  std::printf("dispatches in order:\n");
  for (const DispatchProfile& p : profile) {
    line(p);
    std::string kernel = p.label.substr(p.label.rfind('/') + 1);
    for (Sum* sum : {&total, &by_kernel[kernel]}) {
      sum->ms += p.device_ms;
      sum->flops += p.flops;
      sum->bytes += p.bytes;
      sum->count += 1;
    }
  }
  std::printf("profile (one op-by-op run, device time): %.3f ms in %zu dispatches\n", total.ms,
              profile.size());
  for (const auto& [kernel, t] : by_kernel) {
    std::printf("  %-24s %8.3f ms  %5.1f%%  %3d dispatches  %8.1f GFLOP/s %7.1f GB/s\n",
                kernel.c_str(), t.ms, 100.0 * t.ms / std::max(total.ms, 1e-9), t.count,
                t.flops / std::max(t.ms, 1e-9) * 1e-6, t.bytes / std::max(t.ms, 1e-9) * 1e-6);
  }
  std::vector<DispatchProfile> slowest = profile;
  std::sort(slowest.begin(), slowest.end(), [](const DispatchProfile& a, const DispatchProfile& b) {
    return a.device_ms > b.device_ms;
  });
  slowest.resize(std::min<size_t>(slowest.size(), 10));
  std::printf("  slowest dispatches:\n");
  for (const DispatchProfile& p : slowest) line(p);
  const tools::ProfileOccupancy o = tools::SummarizeOccupancy(profile, units);
  std::printf(
      "compute units: %u; the work-groups (wg) keep %.1f%% of them busy, weighted by device "
      "time; %zu dispatches (%.3f ms, %.1f%%) launch fewer work-groups than units",
      o.units, 100.0 * o.busy_fraction, o.below_units, o.below_units_ms,
      100.0 * o.below_units_ms / std::max(total.ms, 1e-9));
  if (o.unknown_groups > 0) std::printf("; %zu left to the driver", o.unknown_groups);
  std::printf(
      "\nbetween dispatches: the device idled %.3f ms of the %.3f ms from the first start to the "
      "last end (%.1f%%); gaps median %.3f ms, max %.3f ms\n",
      o.gaps_ms, o.span_ms, 100.0 * o.gaps_ms / std::max(o.span_ms, 1e-9), o.gap_median_ms,
      o.gap_max_ms);
  return absl::OkStatus();
}

namespace {

// RunModel is RunModelCommand until its context is released; `*first_result`
// is when the first output was downloaded.
absl::Status RunModel(const RunModelOptions& options, Clock::time_point* first_result) {
  if (options.runs <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("--runs must be positive, got ", options.runs));
  }
  RECQ_ASSIGN_OR_RETURN(auto input_files, ParsePairs(options.inputs, "input"));
  RECQ_ASSIGN_OR_RETURN(auto output_files, ParsePairs(options.outputs, "output"));
  RECQ_ASSIGN_OR_RETURN(Backend backend, ParseBackend(options.backend));
  const Clock::time_point begin = Clock::now();
  ContextOptions context_options;
  context_options.device = options.device;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(context_options));
  UseBuildHelpers(context, context_options.device);
  const DeviceInfo& device = context.device_info();
  std::printf("device: %s (%s, %s)\n", device.name.c_str(), device.platform_name.c_str(),
              device.version.c_str());
  // PNG / JPEG inputs: decoded now, their size sets the pre-processing's.
  std::map<std::string, DecodedImage> images;
  for (const auto& [name, file] : input_files) {
    if (!IsImageFileName(file)) continue;
    RECQ_ASSIGN_OR_RETURN(images[name], DecodeImageFile(file));
  }
  RECQ_ASSIGN_OR_RETURN(LoadedModel model,
                        LoadModel(context, options.model_path, options.shapes, options.input_format,
                                  options.output_format, options.precision, &images));
  const Engine& engine = model.engine;
  const EngineStats& stats = engine.stats();
  std::printf(
      "model: %s, %s; %zu dispatches, %s %.1f ms (warm-up %.1f ms of it; %zu programs "
      "compiled, %zu from the binary cache, %zu from the engine file)\n",
      options.model_path.c_str(), model.what.c_str(), stats.dispatches,
      stats.origin == EngineOrigin::kCompiled ? "compile" : "load", stats.compile_ms,
      stats.warmup_ms, stats.kernels_built, stats.programs_from_disk, stats.programs_from_file);
  if (stats.tuning_keys > 0) {
    std::printf(
        "tuning: %.1f ms, %zu keys, %zu from the tuning cache, %zu measured, %zu over budget\n",
        stats.tuning_ms, stats.tuning_keys, stats.tuning_cache_hits, stats.tuning_measured,
        stats.tuning_over_budget);
  }
  if (stats.origin != EngineOrigin::kCompiled) {
    std::printf("engine file: %s (%s)\n", EngineOriginName(stats.origin),
                stats.origin_reason.c_str());
  }
  const Clock::time_point record_start = Clock::now();
  RECQ_ASSIGN_OR_RETURN(Recording recording, engine.Record({backend}));
  const double record_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - record_start).count();
  std::printf("backend: %s (%s), %zu recorded dispatches\n", BackendName(recording.backend()),
              recording.backend_reason().c_str(), recording.dispatch_count());

  for (const auto& [name, file] : input_files) {
    if (FindBinding(engine.inputs(), name) == nullptr &&
        FindBinding(engine.inputs(), name + "/y") == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input '", name, "': the model's inputs are ", Names(engine.inputs())));
    }
  }
  for (const auto& [name, file] : output_files) {
    if (FindBinding(engine.outputs(), name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--output '", name, "': the model's outputs are ", Names(engine.outputs())));
    }
  }
  Bindings bindings;
  std::vector<Tensor> tensors;
  std::mt19937 rng(1);
  for (const BindingInfo& in : engine.inputs()) {
    std::vector<uint8_t> data;
    auto it = std::find_if(input_files.begin(), input_files.end(),
                           [&](const auto& p) { return p.first == in.name; });
    // A two-plane NV12 input ("NAME/y", "NAME/uv") reads one file of Y then UV.
    const absl::string_view base = in.name;
    const bool plane = absl::EndsWith(base, "/y") || absl::EndsWith(base, "/uv");
    auto frame = std::find_if(input_files.begin(), input_files.end(), [&](const auto& p) {
      return plane && p.first == base.substr(0, base.rfind('/'));
    });
    auto image = images.find(in.name);
    if (image != images.end()) {
      const DecodedImage& d = image->second;
      if (d.rgb.size() != in.desc.ByteSize()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--input '", in.name, "': ", it->second, " is one ", d.width, "x", d.height,
            " frame; the input is ", in.desc.ToString(), " (a batch of one frame only)"));
      }
      data = d.rgb;
      std::printf("input '%s' %s: from %s (%s %lldx%lld)\n", in.name.c_str(),
                  in.desc.ToString().c_str(), it->second.c_str(), d.format,
                  static_cast<long long>(d.width), static_cast<long long>(d.height));
    } else if (it != input_files.end()) {
      RECQ_ASSIGN_OR_RETURN(data, ReadInput(it->second, in));
    } else if (frame != input_files.end()) {
      const BindingInfo* y = FindBinding(engine.inputs(), frame->first + "/y");
      const BindingInfo* uv = FindBinding(engine.inputs(), frame->first + "/uv");
      if (y == nullptr || uv == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input '", frame->first, "': the model binds ", Names(engine.inputs())));
      }
      BindingInfo whole{frame->first,
                        {{int64_t(y->desc.ByteSize() + uv->desc.ByteSize())}, DataType::kUInt8}};
      RECQ_ASSIGN_OR_RETURN(std::vector<uint8_t> file, ReadInput(frame->second, whole));
      const size_t split = y->desc.ByteSize();
      data = absl::EndsWith(base, "/y") ? std::vector<uint8_t>(file.begin(), file.begin() + split)
                                        : std::vector<uint8_t>(file.begin() + split, file.end());
      std::printf("input '%s' %s: from %s (NV12, %s)\n", in.name.c_str(),
                  in.desc.ToString().c_str(), frame->second.c_str(),
                  absl::EndsWith(base, "/y") ? "Y plane" : "UV plane");
    } else {
      data = RandomInput(in.desc, rng);
      std::printf("input '%s' %s: random values in %s\n", in.name.c_str(),
                  in.desc.ToString().c_str(),
                  IsFloatingPoint(in.desc.dtype)     ? "[-1, 1)"
                  : in.desc.dtype == DataType::kBool ? "{0, 1}"
                                                     : "[0, 10)");
    }
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, in.desc));
    RECQ_RETURN_IF_ERROR(t.UploadBytes(data));
    bindings.Set(in.name, t);
    tensors.push_back(t);
  }
  std::vector<Tensor> outputs;
  for (const BindingInfo& out : engine.outputs()) {
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, out.desc));
    bindings.Set(out.name, t);
    outputs.push_back(t);
  }

  // The first run is the first result: Compile / LoadEngine left nothing to
  // build, so it should cost about what a steady run does.
  const Clock::time_point first_start = Clock::now();
  RECQ_RETURN_IF_ERROR(recording.Run(bindings));
  const Clock::time_point first_end = Clock::now();
  const double first_ms =
      std::chrono::duration<double, std::milli>(first_end - first_start).count();
  *first_result = first_end;
  std::vector<double> ms;
  for (int i = 0; i < options.runs; ++i) {
    Clock::time_point start = Clock::now();
    RECQ_RETURN_IF_ERROR(recording.Run(bindings));
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * (ms.size() - 1) + 0.5))];
  };
  std::printf("latency over %d runs (after the first): min %.3f ms, median %.3f ms, p90 %.3f ms\n",
              options.runs, ms.front(), at(0.5), at(0.9));
  std::printf(
      "time to first result: %.1f ms (context, %s, record %.1f ms, inputs, first run %.3f ms = "
      "%.2fx the median)\n",
      std::chrono::duration<double, std::milli>(first_end - begin).count(),
      stats.origin == EngineOrigin::kCompiled ? "import + compile" : "engine-file load", record_ms,
      first_ms, first_ms / std::max(at(0.5), 1e-9));

  for (size_t i = 0; i < outputs.size(); ++i) {
    const BindingInfo& out = engine.outputs()[i];
    auto it = std::find_if(output_files.begin(), output_files.end(),
                           [&](const auto& p) { return p.first == out.name; });
    if (it == output_files.end()) {
      std::printf("output '%s' %s\n", out.name.c_str(), out.desc.ToString().c_str());
      continue;
    }
    RECQ_ASSIGN_OR_RETURN(std::vector<uint8_t> data, outputs[i].DownloadBytes());
    RECQ_RETURN_IF_ERROR(WriteFile(
        it->second, absl::string_view(reinterpret_cast<const char*>(data.data()), data.size())));
    std::printf("output '%s' %s written to %s\n", out.name.c_str(), out.desc.ToString().c_str(),
                it->second.c_str());
  }
  if (options.profile) RECQ_RETURN_IF_ERROR(PrintProfile(engine, bindings));
  // The new programs' binaries go to the disk cache once every result is
  // printed; the context's release waits for them. On PoCL this compiles a
  // generic work-group function for every kernel of each program (seconds
  // when cold), but only on a start that built programs: without the
  // binaries, every later start builds its programs from source against
  // PoCL's kernel cache (measured about 1 s instead of 0.1 s for MobileNet
  // V2; docs/engine_files.md).
  std::fflush(stdout);
  if (options.finish_binary_cache) {
    options.finish_binary_cache(context);
  } else {
    context.FlushBinaryCache();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunModelCommand(const RunModelOptions& options) {
  Clock::time_point first_result = Clock::now();
  RECQ_RETURN_IF_ERROR(RunModel(options, &first_result));
  // Every engine and the context are released by now.
  auto since_start = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(t - kProcessStart).count();
  };
  std::printf("process: first result %.1f ms, context released %.1f ms after the process started\n",
              since_start(first_result), since_start(Clock::now()));
  return absl::OkStatus();
}

absl::Status InfoModelCommand(const std::string& path, const std::string& shapes,
                              const std::string& input_format) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  if (LooksLikeEngineFile(bytes)) return InfoEngineFile(path, bytes);
  RECQ_ASSIGN_OR_RETURN(OnnxModelSummary s, SummarizeOnnx(path));
  std::printf("model: %s\n  ir_version %lld, opset %lld, producer '%s', %lld initializers\n",
              path.c_str(), static_cast<long long>(s.ir_version), static_cast<long long>(s.opset),
              s.producer.c_str(), static_cast<long long>(s.initializers));
  std::printf("inputs:\n");
  for (const auto& t : s.inputs) {
    std::printf("  %s: %s %s\n", t.name.c_str(), t.shape.c_str(), t.dtype.c_str());
  }
  std::printf("outputs:\n");
  for (const auto& t : s.outputs) {
    std::printf("  %s: %s %s\n", t.name.c_str(), t.shape.c_str(), t.dtype.c_str());
  }
  std::printf("ops:\n");
  for (const auto& [op, count] : s.op_counts) {
    std::printf("  %-20s %lld%s\n", op.c_str(), static_cast<long long>(count),
                IsSupportedOnnxOp(op) ? "" : "  (unsupported)");
  }
  if (!s.unsupported_ops.empty()) {
    std::string list;
    for (const std::string& op : s.unsupported_ops)
      absl::StrAppend(&list, list.empty() ? "" : ", ", op);
    std::printf("unsupported ops: %s\n", list.c_str());
  }
  OnnxOptions load;
  RECQ_ASSIGN_OR_RETURN(load.input_shapes, ParseShapes(shapes));
  absl::StatusOr<Graph> graph = LoadOnnx(path, load);
  if (!graph.ok()) {
    std::printf("import: fails: %s\n", graph.status().ToString().c_str());
    return absl::OkStatus();
  }
  RECQ_ASSIGN_OR_RETURN(PrePostProcessing ppp, ParsePrePost(*graph, input_format, {}));
  RECQ_RETURN_IF_ERROR(ApplyPrePostProcessing(*graph, ppp));
  std::printf("import: ok, %zu recq nodes\n", graph->nodes().size());
  // What each input binds, pre-processed ones included (as Engine::inputs()
  // will say).
  for (const BindingInfo& info : DescribeInputs(*graph)) {
    std::printf("  input %s: %s\n", info.name.c_str(), info.Describe().c_str());
  }
  for (ValueId id : graph->outputs()) {
    std::printf("  output %s: %s\n", graph->value(id).name.c_str(),
                graph->value(id).desc.ToString().c_str());
  }
  return absl::OkStatus();
}

}  // namespace recq::tools
