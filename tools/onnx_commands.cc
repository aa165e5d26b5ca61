#include "tools/onnx_commands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/status_macros.h"
#include "recq/onnx.h"
#include "recq/recq.h"
#include "tools/random_input.h"
#include "tools/roofline.h"

namespace recq::tools {
namespace {

using Clock = std::chrono::steady_clock;

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
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open input file '", path, "'"));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  if (bytes.size() != b.desc.ByteSize()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input file '", path, "' has ", bytes.size(), " bytes; input '", b.name, "' (",
                     b.desc.ToString(), ") needs ", b.desc.ByteSize(), " bytes of little-endian ",
                     DataTypeName(b.desc.dtype)));
  }
  return bytes;
}

absl::Status WriteBytes(const std::string& path, const std::vector<uint8_t>& data) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("cannot write output file '", path, "'"));
  return absl::OkStatus();
}

}  // namespace

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
  auto line = [&](const char* name, double ms, double flops, double bytes) {
    const double s = std::max(ms, 1e-9) * 1e-3;
    std::printf("%9.3f ms %8.1f GFLOP/s %7.1f GB/s %5.1f%% roof  %s\n", ms, flops / s * 1e-9,
                bytes / s * 1e-9, 100.0 * tools::RooflineFraction(roof, flops, bytes, ms), name);
  };
  Sum total;
  std::map<std::string, Sum> by_kernel;
  std::printf("dispatches in order:\n");
  for (const DispatchProfile& p : profile) {
    line(p.label.c_str(), p.device_ms, p.flops, p.bytes);
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
  for (const DispatchProfile& p : slowest) line(p.label.c_str(), p.device_ms, p.flops, p.bytes);
  return absl::OkStatus();
}

absl::Status RunModelCommand(const RunModelOptions& options) {
  if (options.runs <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("--runs must be positive, got ", options.runs));
  }
  RECQ_ASSIGN_OR_RETURN(auto input_files, ParsePairs(options.inputs, "input"));
  RECQ_ASSIGN_OR_RETURN(auto output_files, ParsePairs(options.outputs, "output"));
  RECQ_ASSIGN_OR_RETURN(Backend backend, ParseBackend(options.backend));
  OnnxOptions load;
  RECQ_ASSIGN_OR_RETURN(load.input_shapes, ParseShapes(options.shapes));
  RECQ_ASSIGN_OR_RETURN(Graph graph, LoadOnnx(options.model_path, load));
  ContextOptions context_options;
  context_options.device = options.device;
  RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(context_options));
  const DeviceInfo& device = context.device_info();
  std::printf("device: %s (%s, %s)\n", device.name.c_str(), device.platform_name.c_str(),
              device.version.c_str());
  RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, graph));
  const EngineStats& stats = engine.stats();
  std::printf("model: %s, %zu graph nodes; %zu dispatches after passes, compile %.1f ms\n",
              options.model_path.c_str(), graph.nodes().size(), stats.dispatches, stats.compile_ms);
  RECQ_ASSIGN_OR_RETURN(Recording recording, engine.Record({backend}));
  std::printf("backend: %s (%s), %zu recorded dispatches\n", BackendName(recording.backend()),
              recording.backend_reason().c_str(), recording.dispatch_count());

  for (const auto& [name, file] : input_files) {
    if (FindBinding(engine.inputs(), name) == nullptr) {
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
    if (it != input_files.end()) {
      RECQ_ASSIGN_OR_RETURN(data, ReadInput(it->second, in));
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

  // One untimed warm-up run: some drivers build kernels lazily on first use.
  RECQ_RETURN_IF_ERROR(recording.Run(bindings));
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
  std::printf("latency over %d runs (after 1 warm-up): min %.3f ms, median %.3f ms, p90 %.3f ms\n",
              options.runs, ms.front(), at(0.5), at(0.9));

  for (size_t i = 0; i < outputs.size(); ++i) {
    const BindingInfo& out = engine.outputs()[i];
    auto it = std::find_if(output_files.begin(), output_files.end(),
                           [&](const auto& p) { return p.first == out.name; });
    if (it == output_files.end()) {
      std::printf("output '%s' %s\n", out.name.c_str(), out.desc.ToString().c_str());
      continue;
    }
    RECQ_ASSIGN_OR_RETURN(std::vector<uint8_t> data, outputs[i].DownloadBytes());
    RECQ_RETURN_IF_ERROR(WriteBytes(it->second, data));
    std::printf("output '%s' %s written to %s\n", out.name.c_str(), out.desc.ToString().c_str(),
                it->second.c_str());
  }
  if (options.profile) RECQ_RETURN_IF_ERROR(PrintProfile(engine, bindings));
  return absl::OkStatus();
}

absl::Status InfoModelCommand(const std::string& path, const std::string& shapes) {
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
  std::printf("import: ok, %zu recq nodes\n", graph->nodes().size());
  for (ValueId id : graph->inputs()) {
    std::printf("  input %s: %s\n", graph->value(id).name.c_str(),
                graph->value(id).desc.ToString().c_str());
  }
  for (ValueId id : graph->outputs()) {
    std::printf("  output %s: %s\n", graph->value(id).name.c_str(),
                graph->value(id).desc.ToString().c_str());
  }
  return absl::OkStatus();
}

}  // namespace recq::tools
