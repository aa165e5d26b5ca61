#include "tools/shaped_commands.h"
#include "tools/binary_store.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "recq/engine_file.h"
#include "recq/onnx.h"
#include "recq/recq.h"
#include "recq/shape_profile.h"
#include "recq/shaped_engine.h"
#include "recq/status_macros.h"
#include "tools/build_tuning.h"
#include "tools/json_writer.h"
#include "tools/latency_stats.h"
#include "tools/write_file.h"

namespace recq::tools {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

absl::StatusOr<std::string> ReadBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

absl::StatusOr<std::map<std::string, std::string>> Pairs(const std::vector<std::string>& specs,
                                                         const char* flag) {
  std::map<std::string, std::string> pairs;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " '", spec, "': expected NAME=FILE"));
    }
    pairs[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  return pairs;
}

const OnnxModel::Input* FindInput(const OnnxModel& model, const std::string& name) {
  for (const OnnxModel::Input& in : model.inputs()) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

// Filler values of an input no file gives: integers 1 (a valid token id
// and an attention mask that masks nothing), floats uniform in [-1, 1).
std::vector<uint8_t> FillerBytes(const TensorDesc& desc, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(static_cast<size_t>(desc.NumElements()));
  for (double& v : values) v = IsFloatingPoint(desc.dtype) ? uniform(rng) : 1.0;
  const HostData data = HostData::FromDoubles(desc.dtype, values);
  const auto* bytes = static_cast<const uint8_t*>(data.bytes());
  return std::vector<uint8_t>(bytes, bytes + data.byte_size());
}

struct Loaded {
  Context context;
  OnnxModel model;
  ShapedEngine engine;
};

std::string ProfilesText(const ShapeProfiles& profiles) {
  return absl::StrJoin(profiles, ",", [](std::string* out, const auto& e) {
    absl::StrAppend(out, e.first, ":", InputProfileToString(e.second));
  });
}

// Load builds the ShapedEngine of an ONNX model, or loads a ShapedEngine's
// engine file (recq build --shapes), whose stored profile `shapes` must
// name and whose stored pad values apply.
absl::StatusOr<Loaded> Load(const std::string& model_path, const std::string& shapes,
                            const std::string& pad, const std::string& backend,
                            const std::string& device, const std::string& precision = "",
                            const EngineOptions::Tuning* tuning = nullptr) {
  OnnxOptions load;
  RECQ_ASSIGN_OR_RETURN(load.profiles, ParseShapeProfiles(shapes));
  ShapedEngineOptions options;
  if (tuning != nullptr) {
    options.engine.tuning = *tuning;
    options.engine.tuning_budget_s = 1e9;
  }
  RECQ_ASSIGN_OR_RETURN(options.pad_values, ParsePadValues(pad));
  RECQ_ASSIGN_OR_RETURN(options.backend, ParseBackend(backend));
  if (!precision.empty()) {
    RECQ_ASSIGN_OR_RETURN(options.engine.precision, ParsePrecision(precision));
  }
  ContextOptions context_options;
  context_options.device = device;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(context_options));
  UseBuildHelpers(context, context_options.device);
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(model_path));
  if (LooksLikeEngineFile(bytes)) {
    RECQ_ASSIGN_OR_RETURN(ShapedEngine engine, ShapedEngine::LoadFromBytes(context, bytes));
    if (ProfilesText(engine.profiles()) != ProfilesText(load.profiles)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shapes=", shapes, ": the engine file ", model_path,
                       " was built for --shapes=", ProfilesText(engine.profiles())));
    }
    if (!pad.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--pad applies to ONNX models; the engine file ", model_path, " holds its own"));
    }
    OnnxModel model = engine.model();
    return Loaded{std::move(context), std::move(model), std::move(engine)};
  }
  RECQ_ASSIGN_OR_RETURN(OnnxModel model, OnnxModel::Read(model_path));
  RECQ_ASSIGN_OR_RETURN(ShapedEngine engine, ShapedEngine::Create(context, model, load, options));
  return Loaded{std::move(context), std::move(model), std::move(engine)};
}

std::string Describe(const InputShapes& shapes) {
  return absl::StrJoin(shapes, ",", [](std::string* out, const auto& e) {
    absl::StrAppend(out, e.first, ":", ShapeToString(e.second));
  });
}

// Bound memory of one run: inputs of `shapes`, outputs of the bucket.
struct RunMemory {
  Bindings bindings;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

absl::StatusOr<RunMemory> AllocateRun(const Context& context, const Engine& bucket,
                                      const InputShapes& shapes,
                                      const std::map<std::string, std::string>& files,
                                      std::mt19937& rng) {
  RunMemory mem;
  for (const BindingInfo& in : bucket.inputs()) {
    TensorDesc desc = in.desc;
    auto given = shapes.find(in.name);
    if (given != shapes.end()) desc.shape = given->second;
    std::vector<uint8_t> bytes;
    auto file = files.find(in.name);
    if (file != files.end()) {
      RECQ_ASSIGN_OR_RETURN(std::string data, ReadBytes(file->second));
      bytes.assign(data.begin(), data.end());
    } else {
      bytes = FillerBytes(desc, rng);
    }
    if (bytes.size() != desc.ByteSize()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", in.name, "' ", desc.ToString(),
                                                     " needs ", desc.ByteSize(), " bytes, got ",
                                                     bytes.size()));
    }
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, desc));
    RECQ_RETURN_IF_ERROR(t.UploadBytes(bytes));
    mem.bindings.Set(in.name, t);
    mem.inputs.push_back(std::move(t));
  }
  for (const BindingInfo& out : bucket.outputs()) {
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, out.desc));
    mem.bindings.Set(out.name, t);
    mem.outputs.push_back(std::move(t));
  }
  return mem;
}

// RunShapes derives the run's input shapes from the input files' sizes
// (one ranged dimension per input), tied dimensions (one dim_param) from
// the files, the rest at the profile's largest.
absl::StatusOr<InputShapes> RunShapes(const OnnxModel& model, const ShapeProfiles& profiles,
                                      const std::map<std::string, std::string>& files) {
  std::map<std::string, int64_t> by_param;
  InputShapes shapes;
  for (const auto& [name, profile] : profiles) {
    auto file = files.find(name);
    const OnnxModel::Input* in = FindInput(model, name);
    if (file == files.end() || in == nullptr) continue;
    RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadBytes(file->second));
    const size_t element = DataTypeSize(in->dtype);
    int64_t fixed = 1;
    int ranged = -1;
    for (size_t i = 0; i < profile.size(); ++i) {
      if (profile[i].fixed()) {
        fixed *= profile[i].min;
      } else if (ranged >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input '", name, "': its profile ", InputProfileToString(profile),
                         " has several ranges; a file's size gives one dimension only"));
      } else {
        ranged = static_cast<int>(i);
      }
    }
    const size_t row = static_cast<size_t>(fixed) * element;
    if (bytes.empty() || bytes.size() % row != 0) {
      return absl::InvalidArgumentError(absl::StrCat("--input '", name, "': ", file->second,
                                                     " has ", bytes.size(),
                                                     " bytes, not a multiple of ", row));
    }
    std::vector<int64_t> shape;
    for (const DimProfile& d : profile) shape.push_back(d.min);
    if (ranged >= 0) {
      shape[ranged] = static_cast<int64_t>(bytes.size() / row);
      if (static_cast<size_t>(ranged) < in->dim_params.size() && !in->dim_params[ranged].empty()) {
        by_param[in->dim_params[ranged]] = shape[ranged];
      }
    }
    shapes[name] = std::move(shape);
  }
  for (const auto& [name, profile] : profiles) {
    if (shapes.count(name) != 0) continue;
    const OnnxModel::Input* in = FindInput(model, name);
    std::vector<int64_t> shape;
    for (size_t i = 0; i < profile.size(); ++i) {
      int64_t v = profile[i].max;
      if (in != nullptr && i < in->dim_params.size()) {
        auto tied = by_param.find(in->dim_params[i]);
        if (tied != by_param.end()) v = tied->second;
      }
      shape.push_back(v);
    }
    shapes[name] = std::move(shape);
  }
  return shapes;
}

}  // namespace

bool IsRangeProfile(absl::string_view shapes) {
  absl::StatusOr<ShapeProfiles> p = ParseShapeProfiles(shapes);
  return p.ok() && !IsFixed(*p);
}

absl::Status ShapedRunCommand(const ShapedRunOptions& options) {
  if (options.runs <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("--runs must be positive, got ", options.runs));
  }
  const Clock::time_point begin = Clock::now();
  RECQ_ASSIGN_OR_RETURN(auto input_files, Pairs(options.inputs, "input"));
  RECQ_ASSIGN_OR_RETURN(auto output_files, Pairs(options.outputs, "output"));
  RECQ_ASSIGN_OR_RETURN(Loaded loaded, Load(options.model_path, options.shapes, options.pad,
                                            options.backend, options.device));
  const DeviceInfo& device = loaded.context.device_info();
  std::printf("device: %s (%s, %s)\n", device.name.c_str(), device.platform_name.c_str(),
              device.version.c_str());
  std::string profile_text;
  for (const auto& [name, profile] : loaded.engine.profiles()) {
    absl::StrAppend(&profile_text, profile_text.empty() ? "" : ", ", name, ":",
                    InputProfileToString(profile));
  }
  std::printf("model: %s, profile %s, pad %s\n", options.model_path.c_str(), profile_text.c_str(),
              options.pad.empty() ? "none (every size its own bucket)" : options.pad.c_str());
  for (const auto& [name, file] : input_files) {
    if (FindInput(loaded.model, name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--input '", name, "': no such model input"));
    }
  }
  RECQ_ASSIGN_OR_RETURN(InputShapes shapes,
                        RunShapes(loaded.model, loaded.engine.profiles(), input_files));
  const size_t buckets_before = loaded.engine.stats().buckets.size();
  const Clock::time_point first_start = Clock::now();
  RECQ_ASSIGN_OR_RETURN(Engine bucket, loaded.engine.EngineFor(shapes));
  const bool compiled_now = loaded.engine.stats().buckets.size() > buckets_before;
  std::mt19937 rng(1);
  RECQ_ASSIGN_OR_RETURN(RunMemory mem,
                        AllocateRun(loaded.context, bucket, shapes, input_files, rng));
  RECQ_ASSIGN_OR_RETURN(ShapedRun run, loaded.engine.Run(mem.bindings, shapes));
  const double first_ms = MsSince(first_start);
  std::printf("inputs %s -> bucket %s%s\n", Describe(shapes).c_str(), Describe(run.bucket).c_str(),
              run.padded ? " (padded)" : "");
  std::vector<double> ms;
  for (int i = 0; i < options.runs; ++i) {
    const Clock::time_point start = Clock::now();
    RECQ_RETURN_IF_ERROR(loaded.engine.Run(mem.bindings, shapes).status());
    ms.push_back(MsSince(start));
  }
  const LatencyStats stats = Summarize(ms);
  const ShapedEngineStats es = loaded.engine.stats();
  double compile_ms = 0;
  for (const BucketStats& b : es.buckets) {
    if (b.shapes == run.bucket) compile_ms = b.engine.compile_ms;
  }
  if (compiled_now) {
    std::printf(
        "first result of the bucket: %.1f ms (import + compile + record %.1f ms, then inputs "
        "and the first run)\n",
        first_ms, compile_ms);
  } else {
    std::printf(
        "first result of the bucket: %.1f ms (inputs and the first run; the bucket was loaded "
        "from the engine file in %.1f ms before)\n",
        first_ms, compile_ms);
  }
  std::printf("latency over %d runs (after the first): min %.3f ms, median %.3f ms, p90 %.3f ms\n",
              options.runs, stats.min, stats.p50, stats.p90);
  std::printf("weights: %zu bytes uploaded once (%zu constants)\n", es.weight_bytes_uploaded,
              es.weight_uploads);
  for (size_t i = 0; i < mem.outputs.size(); ++i) {
    const BindingInfo& out = bucket.outputs()[i];
    auto file = output_files.find(out.name);
    const char* note = run.padded ? " (the bucket's; unpadded positions first along each padded "
                                    "dimension)"
                                  : "";
    if (file == output_files.end()) {
      std::printf("output '%s' %s%s\n", out.name.c_str(), out.desc.ToString().c_str(), note);
      continue;
    }
    RECQ_ASSIGN_OR_RETURN(std::vector<uint8_t> data, mem.outputs[i].DownloadBytes());
    RECQ_RETURN_IF_ERROR(WriteFile(
        file->second, absl::string_view(reinterpret_cast<const char*>(data.data()), data.size())));
    std::printf("output '%s' %s%s written to %s\n", out.name.c_str(), out.desc.ToString().c_str(),
                note, file->second.c_str());
  }
  std::printf("total %.1f ms\n", MsSince(begin));
  std::fflush(stdout);
  if (options.finish_binary_cache) {
    options.finish_binary_cache(loaded.context);
  } else {
    loaded.context.FlushBinaryCache();
  }
  return absl::OkStatus();
}

absl::Status ShapedBuildCommand(const std::string& model_path, const std::string& engine_path,
                                const std::string& shapes, const std::string& pad,
                                const std::string& device, const std::string& precision,
                                const std::string& tuning) {
  if (engine_path.empty()) {
    return absl::InvalidArgumentError("recq build: name the engine file with -o FILE.recq");
  }
  RECQ_ASSIGN_OR_RETURN(const EngineOptions::Tuning build_tuning, BuildTuning(tuning));
  PrintBuildTuningStart(build_tuning);
  const Clock::time_point start = Clock::now();
  RECQ_ASSIGN_OR_RETURN(Loaded loaded,
                        Load(model_path, shapes, pad, "auto", device, precision, &build_tuning));
  RECQ_RETURN_IF_ERROR(loaded.engine.SerializeToFile(engine_path));
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(engine_path));
  const ShapedEngineStats stats = loaded.engine.stats();
  for (const BucketStats& b : stats.buckets) {
    std::printf("bucket %s: %zu dispatches, compile %.1f ms\n", Describe(b.shapes).c_str(),
                b.engine.dispatches, b.engine.compile_ms);
  }
  const DeviceInfo& device_info = loaded.context.device_info();
  std::printf("built %s from %s for %s (%s, driver %s): %zu buckets of %s, %zu bytes, %.1f ms\n",
              engine_path.c_str(), model_path.c_str(), device_info.name.c_str(),
              device_info.platform_name.c_str(), device_info.driver_version.c_str(),
              stats.buckets.size(), ProfilesText(loaded.engine.profiles()).c_str(), bytes.size(),
              MsSince(start));
  return absl::OkStatus();
}

namespace {

// Measure runs `run` for `seconds` (or exactly `iterations` times) and
// appends each run's wall time.
absl::Status Measure(const std::function<absl::Status()>& run, double seconds, int64_t iterations,
                     std::vector<double>* ms) {
  const Clock::time_point start = Clock::now();
  for (int64_t i = 0;; ++i) {
    if (iterations > 0 ? i >= iterations
                       : std::chrono::duration<double>(Clock::now() - start).count() >= seconds) {
      break;
    }
    const Clock::time_point t = Clock::now();
    RECQ_RETURN_IF_ERROR(run());
    if (ms != nullptr) ms->push_back(MsSince(t));
  }
  return absl::OkStatus();
}

void WriteLatency(JsonWriter& j, const LatencyStats& s) {
  j.BeginObject();
  j.Key("count");
  j.Int(static_cast<int64_t>(s.count));
  for (auto [k, v] : {std::pair{"min", s.min},
                      {"mean", s.mean},
                      {"p50", s.p50},
                      {"p90", s.p90},
                      {"p99", s.p99},
                      {"max", s.max}}) {
    j.Key(k);
    j.Number(v);
  }
  j.EndObject();
}

}  // namespace

absl::Status ShapedBenchCommand(const ShapedBenchOptions& options) {
  if (options.iterations < 0 || (options.iterations == 0 && !(options.duration_s > 0))) {
    return absl::InvalidArgumentError("--duration must be > 0 seconds, or give --iterations");
  }
  RECQ_ASSIGN_OR_RETURN(Loaded loaded, Load(options.model_path, options.shapes, options.pad,
                                            options.backend, options.device));
  RECQ_ASSIGN_OR_RETURN(Backend backend, ParseBackend(options.backend));
  RECQ_ASSIGN_OR_RETURN(std::vector<InputShapes> buckets,
                        loaded.engine.ListBuckets(options.max_buckets));
  const DeviceInfo& device = loaded.context.device_info();
  std::printf("device: %s (%s, driver %s)\n", device.name.c_str(), device.platform_name.c_str(),
              device.driver_version.c_str());
  std::printf("model: %s, %zu buckets; per bucket: warm-up %.1f s, %s%s\n",
              options.model_path.c_str(), buckets.size(), options.warmup_s,
              options.iterations > 0
                  ? absl::StrCat(options.iterations, " runs").c_str()
                  : absl::StrFormat("%.1f s measured", options.duration_s).c_str(),
              options.exact ? ", against an engine compiled for the bucket's shape alone" : "");
  std::fflush(stdout);
  struct Row {
    InputShapes shapes;
    double first_ms = 0;
    LatencyStats latency;
    double throughput = 0;
    double exact_first_ms = 0;
    LatencyStats exact_latency;
    double exact_throughput = 0;
  };
  std::vector<Row> rows;
  std::mt19937 rng(1);
  const std::map<std::string, std::string> no_files;
  constexpr int kRounds = 4;
  for (const InputShapes& shapes : buckets) {
    Row row;
    row.shapes = shapes;
    // The first result of a new bucket of the loaded engine.
    const Clock::time_point first_start = Clock::now();
    RECQ_ASSIGN_OR_RETURN(Engine bucket, loaded.engine.EngineFor(shapes));
    RECQ_ASSIGN_OR_RETURN(RunMemory mem,
                          AllocateRun(loaded.context, bucket, shapes, no_files, rng));
    RECQ_RETURN_IF_ERROR(loaded.engine.Run(mem.bindings, shapes).status());
    row.first_ms = MsSince(first_start);
    auto run_bucket = [&] { return loaded.engine.Run(mem.bindings, shapes).status(); };
    // An engine for this shape alone: import from the file, compile,
    // record (the same process: the program cache is warm).
    std::optional<Engine> exact;
    std::optional<Recording> exact_rec;
    if (options.exact) {
      const Clock::time_point exact_start = Clock::now();
      OnnxOptions load;
      load.input_shapes = shapes;
      RECQ_ASSIGN_OR_RETURN(Graph graph, LoadOnnx(options.model_path, load));
      RECQ_ASSIGN_OR_RETURN(exact, Engine::Compile(loaded.context, graph));
      RECQ_ASSIGN_OR_RETURN(exact_rec, exact->Record({backend}));
      RECQ_RETURN_IF_ERROR(exact_rec->Run(mem.bindings));
      row.exact_first_ms = MsSince(exact_start);
    }
    auto run_exact = [&] { return exact_rec->Run(mem.bindings); };
    RECQ_RETURN_IF_ERROR(Measure(run_bucket, options.warmup_s, 0, nullptr));
    if (options.exact) RECQ_RETURN_IF_ERROR(Measure(run_exact, options.warmup_s, 0, nullptr));
    // Alternating rounds, so that both see the same machine.
    std::vector<double> ms, exact_ms;
    double wall = 0, exact_wall = 0;
    for (int r = 0; r < (options.exact ? kRounds : 1); ++r) {
      const double seconds = options.duration_s / (options.exact ? kRounds : 1);
      const int64_t iterations =
          options.iterations > 0
              ? std::max<int64_t>(1, options.iterations / (options.exact ? kRounds : 1))
              : 0;
      Clock::time_point t = Clock::now();
      RECQ_RETURN_IF_ERROR(Measure(run_bucket, seconds, iterations, &ms));
      wall += MsSince(t);
      if (options.exact) {
        t = Clock::now();
        RECQ_RETURN_IF_ERROR(Measure(run_exact, seconds, iterations, &exact_ms));
        exact_wall += MsSince(t);
      }
    }
    row.latency = Summarize(ms);
    row.throughput = 1e3 * static_cast<double>(ms.size()) / std::max(wall, 1e-9);
    if (options.exact) {
      row.exact_latency = Summarize(exact_ms);
      row.exact_throughput =
          1e3 * static_cast<double>(exact_ms.size()) / std::max(exact_wall, 1e-9);
    }
    rows.push_back(std::move(row));
  }
  const ShapedEngineStats stats = loaded.engine.stats();
  std::printf("%-40s %10s %10s %9s %9s %9s %11s %12s %10s", "bucket", "first ms", "compile ms",
              "p50 ms", "mean ms", "p99 ms", "per s", "interm. B", "weights B");
  if (options.exact) std::printf(" %12s %10s %8s", "exact first", "exact p50", "p50 x");
  std::printf("\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const BucketStats* b = nullptr;
    for (const BucketStats& s : stats.buckets) {
      if (s.shapes == r.shapes) b = &s;
    }
    std::printf("%-40s %10.1f %10.1f %9.3f %9.3f %9.3f %11.1f %12zu %10zu",
                Describe(r.shapes).c_str(), r.first_ms, b ? b->engine.compile_ms : 0.0,
                r.latency.p50, r.latency.mean, r.latency.p99, r.throughput,
                b ? b->engine.intermediate_bytes + b->staging_bytes : 0,
                b ? b->weight_bytes_uploaded : 0);
    if (options.exact) {
      std::printf(" %12.1f %10.3f %8.3f", r.exact_first_ms, r.exact_latency.p50,
                  r.latency.p50 / std::max(r.exact_latency.p50, 1e-9));
    }
    std::printf("\n");
  }
  std::printf(
      "weights: %zu bytes uploaded once for %zu buckets (%zu constants; %zu found already "
      "uploaded); 'weights B': what each bucket's compile added (constants that shape folding "
      "made for its sizes, weight layouts that only its kernel variants use); 'interm. B': its "
      "recording's intermediates and padding buffers\n",
      stats.weight_bytes_uploaded, stats.buckets.size(), stats.weight_uploads, stats.weight_reuses);
  if (options.exact) {
    std::printf(
        "p50 x: the bucket's median latency / the exact engine's. exact first: its import from "
        "the file, compile, record and first run, after the bucket's in the same process (with "
        "the bucket's programs in memory): compare a bucket's first result with a separate "
        "`recq run --shapes=<the bucket's shape>` instead\n");
  }
  std::fflush(stdout);
  if (!options.json_path.empty()) {
    JsonWriter j;
    j.BeginObject();
    j.Key("model");
    j.String(options.model_path);
    j.Key("device");
    j.String(device.name);
    j.Key("driver");
    j.String(device.driver_version);
    j.Key("shapes");
    j.String(options.shapes);
    j.Key("pad");
    j.String(options.pad);
    j.Key("weight_bytes_uploaded");
    j.Int(static_cast<int64_t>(stats.weight_bytes_uploaded));
    j.Key("weight_uploads");
    j.Int(static_cast<int64_t>(stats.weight_uploads));
    j.Key("buckets");
    j.BeginArray();
    for (const Row& r : rows) {
      const BucketStats* b = nullptr;
      for (const BucketStats& s : stats.buckets) {
        if (s.shapes == r.shapes) b = &s;
      }
      j.BeginObject();
      j.Key("shapes");
      j.String(Describe(r.shapes));
      j.Key("first_result_ms");
      j.Number(r.first_ms);
      if (b != nullptr) {
        j.Key("compile_ms");
        j.Number(b->engine.compile_ms);
        j.Key("intermediate_bytes");
        j.Int(static_cast<int64_t>(b->engine.intermediate_bytes));
        j.Key("staging_bytes");
        j.Int(static_cast<int64_t>(b->staging_bytes));
        j.Key("weight_bytes_bound");
        j.Int(static_cast<int64_t>(b->engine.weight_bytes));
        j.Key("weight_bytes_uploaded");
        j.Int(static_cast<int64_t>(b->weight_bytes_uploaded));
        j.Key("dispatches");
        j.Int(static_cast<int64_t>(b->engine.dispatches));
      }
      j.Key("latency_ms");
      WriteLatency(j, r.latency);
      j.Key("throughput_per_s");
      j.Number(r.throughput);
      if (options.exact) {
        j.Key("exact");
        j.BeginObject();
        j.Key("first_result_ms");
        j.Number(r.exact_first_ms);
        j.Key("latency_ms");
        WriteLatency(j, r.exact_latency);
        j.Key("throughput_per_s");
        j.Number(r.exact_throughput);
        j.EndObject();
      }
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
    RECQ_RETURN_IF_ERROR(WriteFile(options.json_path, j.str()));
    std::printf("report: %s\n", options.json_path.c_str());
  }
  loaded.context.FlushBinaryCache();
  return absl::OkStatus();
}

}  // namespace recq::tools
