// fp16 storage against fp32 (EngineOptions::precision) on ONNX models: for
// each model, both engines are compiled on one device and recorded; runs
// alternate between them (fp32, fp16, fp32, ... the order flipping every
// round), each timed from Run's start to its return (enqueue + wait). It
// prints and writes the medians, their ratio fp16/fp32, and how far the
// fp16 output is from the fp32 one: the relative L2 distance
// ||y16 - y32|| / ||y32|| and whether the argmax agrees, on the model's own
// input (MODEL.input.f32 beside it, when present) and on --random inputs
// drawn uniformly from [-1, 1). Inputs and outputs are float32 for both
// engines (fp16 converts at the edges). The models have random weights:
// argmax agreement on one input is a weak check, hence the random inputs.
//
//   build/bench/fp16_bench [--runs=25] [--random=4] [--json=out.json]
//                          [--device=SPEC] MODEL.onnx...
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "recq/onnx.h"
#include "recq/recq.h"

namespace {

#define RETURN_IF_ERROR(expr)       \
  do {                              \
    const absl::Status _s = (expr); \
    if (!_s.ok()) return _s;        \
  } while (0)

using Clock = std::chrono::steady_clock;

struct Side {
  recq::Engine engine;
  recq::Recording recording;
  std::vector<recq::Tensor> inputs;
  std::vector<recq::Tensor> outputs;
  recq::Bindings bindings;
  std::vector<double> ms;
};

absl::StatusOr<Side> Prepare(const recq::Context& context, const recq::Graph& graph,
                             recq::EngineOptions::Precision precision) {
  recq::EngineOptions options;
  options.precision = precision;
  absl::StatusOr<recq::Engine> engine = recq::Engine::Compile(context, graph, options);
  if (!engine.ok()) return engine.status();
  absl::StatusOr<recq::Recording> recording = engine->Record();
  if (!recording.ok()) return recording.status();
  Side side{*std::move(engine), *std::move(recording), {}, {}, {}, {}};
  for (const recq::BindingInfo& b : side.engine.inputs()) {
    if (b.desc.dtype != recq::DataType::kFloat32) {
      return absl::UnimplementedError(absl::StrCat("input '", b.name, "' is not float32"));
    }
    absl::StatusOr<recq::Tensor> t = recq::Tensor::Allocate(context, b.desc);
    if (!t.ok()) return t.status();
    side.bindings.Set(b.name, *t);
    side.inputs.push_back(*std::move(t));
  }
  for (const recq::BindingInfo& b : side.engine.outputs()) {
    absl::StatusOr<recq::Tensor> t = recq::Tensor::Allocate(context, b.desc);
    if (!t.ok()) return t.status();
    side.bindings.Set(b.name, *t);
    side.outputs.push_back(*std::move(t));
  }
  return side;
}

absl::Status SetInputs(Side& side, const std::vector<std::vector<float>>& values) {
  for (size_t i = 0; i < side.inputs.size(); ++i) RETURN_IF_ERROR(side.inputs[i].Upload(values[i]));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> FirstOutput(const Side& side) {
  return side.outputs.at(0).Download();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Compared {
  double rel_l2 = 0;
  bool argmax_equal = false;
};

Compared CompareOutputs(const std::vector<float>& a32, const std::vector<float>& a16) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a32.size(); ++i) {
    num += (double(a16[i]) - a32[i]) * (double(a16[i]) - a32[i]);
    den += double(a32[i]) * a32[i];
  }
  Compared c;
  c.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  c.argmax_equal = std::max_element(a32.begin(), a32.end()) - a32.begin() ==
                   std::max_element(a16.begin(), a16.end()) - a16.begin();
  return c;
}

struct Row {
  std::string model;
  std::string error;
  double fp32_ms = 0, fp16_ms = 0;
  size_t dispatches32 = 0, dispatches16 = 0, weights32 = 0, weights16 = 0;
  Compared given;
  bool has_given = false;
  double random_rel_l2_max = 0;
  int random_agree = 0, random_total = 0;
};

std::string Stem(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') + 1);
  return s.substr(0, s.rfind('.'));
}

absl::Status RunModel(const recq::Context& context, const std::string& path, int runs, int random,
                      Row& row) {
  absl::StatusOr<recq::Graph> graph = recq::LoadOnnx(path);
  if (!graph.ok()) return graph.status();
  absl::StatusOr<Side> s32 = Prepare(context, *graph, recq::EngineOptions::Precision::kFp32);
  if (!s32.ok()) return s32.status();
  absl::StatusOr<Side> s16 = Prepare(context, *graph, recq::EngineOptions::Precision::kFp16Storage);
  if (!s16.ok()) return s16.status();
  row.dispatches32 = s32->engine.stats().dispatches;
  row.dispatches16 = s16->engine.stats().dispatches;
  row.weights32 = s32->engine.stats().weight_bytes;
  row.weights16 = s16->engine.stats().weight_bytes;

  std::vector<std::vector<float>> values;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto draw = [&] {
    values.clear();
    for (const recq::BindingInfo& b : s32->engine.inputs()) {
      std::vector<float> v(static_cast<size_t>(b.desc.NumElements()));
      for (float& x : v) x = uniform(rng);
      values.push_back(std::move(v));
    }
  };
  auto compare = [&]() -> absl::StatusOr<Compared> {
    RETURN_IF_ERROR(SetInputs(*s32, values));
    RETURN_IF_ERROR(SetInputs(*s16, values));
    RETURN_IF_ERROR(s32->recording.Run(s32->bindings));
    RETURN_IF_ERROR(s16->recording.Run(s16->bindings));
    absl::StatusOr<std::vector<float>> y32 = FirstOutput(*s32);
    if (!y32.ok()) return y32.status();
    absl::StatusOr<std::vector<float>> y16 = FirstOutput(*s16);
    if (!y16.ok()) return y16.status();
    return CompareOutputs(*y32, *y16);
  };

  // The model's own input, when there is one of the right size.
  draw();
  const std::string given = path.substr(0, path.rfind('.')) + ".input.f32";
  std::ifstream in(given, std::ios::binary);
  if (in && values.size() == 1) {
    std::vector<float> v(values[0].size());
    in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
    if (in.gcount() == std::streamsize(v.size() * sizeof(float))) {
      values[0] = std::move(v);
      absl::StatusOr<Compared> c = compare();
      if (!c.ok()) return c.status();
      row.given = *c;
      row.has_given = true;
    }
  }
  const std::vector<std::vector<float>> timing_inputs = values;
  for (int r = 0; r < random; ++r) {
    draw();
    absl::StatusOr<Compared> c = compare();
    if (!c.ok()) return c.status();
    row.random_rel_l2_max = std::max(row.random_rel_l2_max, c->rel_l2);
    row.random_agree += c->argmax_equal;
    ++row.random_total;
  }

  // Timing: interleaved, after one untimed run each.
  values = timing_inputs;
  RETURN_IF_ERROR(SetInputs(*s32, values));
  RETURN_IF_ERROR(SetInputs(*s16, values));
  RETURN_IF_ERROR(s32->recording.Run(s32->bindings));
  RETURN_IF_ERROR(s16->recording.Run(s16->bindings));
  for (int r = 0; r < runs; ++r) {
    Side* order[2] = {&*s32, &*s16};
    if (r % 2) std::swap(order[0], order[1]);
    for (Side* side : order) {
      const Clock::time_point start = Clock::now();
      RETURN_IF_ERROR(side->recording.Run(side->bindings));
      side->ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  }
  row.fp32_ms = Median(s32->ms);
  row.fp16_ms = Median(s16->ms);
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 25, random = 4;
  std::string json, device;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const std::string f = flag;
      return a.compare(0, f.size(), f) == 0 ? a.c_str() + f.size() : nullptr;
    };
    if (const char* v = value("--runs=")) {
      runs = std::atoi(v);
    } else if (const char* v = value("--random=")) {
      random = std::atoi(v);
    } else if (const char* v = value("--json=")) {
      json = v;
    } else if (const char* v = value("--device=")) {
      device = v;
    } else if (a.compare(0, 2, "--") == 0) {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    } else {
      models.push_back(a);
    }
  }
  if (models.empty() || runs < 1) {
    std::fprintf(stderr,
                 "usage: fp16_bench [--runs=25] [--random=4] [--json=F] [--device=S] M.onnx...\n");
    return 2;
  }
  recq::ContextOptions options;
  options.device = device;
  absl::StatusOr<recq::Context> context = recq::Context::Create(options);
  if (!context.ok()) {
    std::fprintf(stderr, "%s\n", context.status().ToString().c_str());
    return 1;
  }
  std::printf("device: %s (%s); medians of %d interleaved runs\n",
              context->device_info().name.c_str(), context->device_info().platform_name.c_str(),
              runs);
  std::printf("%-30s %9s %9s %6s %10s %6s %12s %8s\n", "model", "fp32 ms", "fp16 ms", "ratio",
              "relL2", "top1", "rand relL2", "rand top1");
  std::vector<Row> rows;
  for (const std::string& path : models) {
    Row row;
    row.model = Stem(path);
    if (absl::Status s = RunModel(*context, path, runs, random, row); !s.ok()) {
      row.error = s.ToString();
      std::printf("%-30s error: %s\n", row.model.c_str(), row.error.c_str());
    } else {
      std::printf("%-30s %9.3f %9.3f %6.3f %10.2e %6s %12.2e %5d/%-3d\n", row.model.c_str(),
                  row.fp32_ms, row.fp16_ms, row.fp16_ms / row.fp32_ms,
                  row.has_given ? row.given.rel_l2 : 0.0,
                  row.has_given ? (row.given.argmax_equal ? "same" : "DIFF") : "-",
                  row.random_rel_l2_max, row.random_agree, row.random_total);
    }
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"device\": \"" << context->device_info().name << "\", \"runs\": " << runs
        << ", \"models\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << "  {\"model\": \"" << r.model << "\"";
      if (!r.error.empty()) {
        std::string e = r.error;
        std::replace(e.begin(), e.end(), '"', '\'');
        out << ", \"error\": \"" << e << "\"}";
      } else {
        out << ", \"fp32_ms\": " << r.fp32_ms << ", \"fp16_ms\": " << r.fp16_ms
            << ", \"ratio\": " << r.fp16_ms / r.fp32_ms
            << ", \"dispatches_fp32\": " << r.dispatches32
            << ", \"dispatches_fp16\": " << r.dispatches16
            << ", \"weight_bytes_fp32\": " << r.weights32
            << ", \"weight_bytes_fp16\": " << r.weights16;
        if (r.has_given) {
          out << ", \"rel_l2\": " << r.given.rel_l2
              << ", \"top1_equal\": " << (r.given.argmax_equal ? "true" : "false");
        }
        out << ", \"random_rel_l2_max\": " << r.random_rel_l2_max
            << ", \"random_top1_equal\": " << r.random_agree
            << ", \"random_inputs\": " << r.random_total << "}";
      }
      out << (i + 1 < rows.size() ? ",\n" : "\n");
    }
    out << "]}\n";
    std::printf("wrote %s\n", json.c_str());
  }
  return 0;
}
