// Per-shape matrix products against the device's roofline: for each shape
// M x N x K (Y[M, N] = X[M, K] * W[K, N], W constant, as a Linear layer
// without bias), every GPU (or CPU) kernel variant of MatMul that fits, with
// each parameter set of its tuning space, is compiled alone and its
// dispatches timed through Engine::Profile (device time from profiling
// events); the median of --runs gives GFLOP/s and the fraction of the roof
// that `recq roofline` measures (tools/roofline.h): compute-bound for large
// products, bandwidth-bound (the weights read once) for matrix-vector ones. The heuristic's choice
// (what an untuned compile takes) is marked. --precision=tf32 compiles with
// EngineOptions::Precision::kTf32 (one tf32 product on matrix units); the
// roof stays the fp32 units'.
//
//   build/bench/gemm_bench [--runs=25] [--shapes=3072x768x768,...]
//                          [--op=matmul|gemm] [--target=gpu|cpu]
//                          [--precision=fp32|tf32] [--json=out.json]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "recq/op_registry.h"
#include "recq/recq.h"
#include "tools/roofline.h"

namespace {

struct Shape {
  int64_t m, n, k;
};

struct Row {
  Shape shape;
  std::string variant;
  std::string params;
  bool heuristic = false;
  double ms = 0;
  double gflops = 0;
  double gbps = 0;  // least traffic (each operand once) over the time
  double roof_fraction = 0;
};

absl::StatusOr<std::vector<Shape>> ParseShapeList(const std::string& text) {
  std::vector<Shape> shapes;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<std::string> dims = absl::StrSplit(part, 'x');
    Shape s{};
    if (dims.size() != 3 || !absl::SimpleAtoi(dims[0], &s.m) || !absl::SimpleAtoi(dims[1], &s.n) ||
        !absl::SimpleAtoi(dims[2], &s.k) || s.m <= 0 || s.n <= 0 || s.k <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape '", part, "' is not MxNxK with three positive integers"));
    }
    shapes.push_back(s);
  }
  return shapes;
}

// ProductGraph: MatMul of X by constant W [K, N]; with `gemm`, Gemm with a
// bias [N] (a Linear layer as TorchScript exports a decoder's).
absl::StatusOr<recq::Graph> ProductGraph(const Shape& s, bool gemm) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
  std::vector<float> w(size_t(s.k * s.n));
  for (float& v : w) v = dist(rng);
  recq::GraphBuilder b;
  recq::TensorRef x = b.Input("x", {s.m, s.k});
  recq::TensorRef wt = b.Constant("w", {s.k, s.n}, w);
  recq::TensorRef y =
      gemm ? b.Gemm(x, wt, b.Constant("bias", {s.n}, std::vector<float>(size_t(s.n), 0.01f)), {})
           : b.AddNode(recq::OpType::kMatMul, {x, wt});
  b.Output(y, "y");
  return std::move(b).Build();
}

// Times `graph` compiled with `chooser`; the median of `runs` Profile
// calls, each the sum of its dispatches' device times.
absl::StatusOr<double> TimeProduct(const recq::Context& context, const recq::Graph& graph,
                                   recq::EngineOptions options, int runs) {
  options.tuning = recq::EngineOptions::Tuning::kOff;
  absl::StatusOr<recq::Engine> engine = recq::Engine::Compile(context, graph, options);
  if (!engine.ok()) return engine.status();
  recq::Bindings bindings;
  std::vector<recq::Tensor> tensors;
  for (const auto* list : {&engine->inputs(), &engine->outputs()}) {
    for (const recq::BindingInfo& info : *list) {
      absl::StatusOr<recq::Tensor> t = recq::Tensor::Allocate(context, info.desc);
      if (!t.ok()) return t.status();
      std::vector<float> data(info.desc.NumElements(), 0.01f);
      if (absl::Status st = t->Upload(data); !st.ok()) return st;
      bindings.Set(info.name, *t);
      tensors.push_back(*std::move(t));
    }
  }
  std::vector<double> ms;
  for (int r = 0; r < runs + 2; ++r) {
    absl::StatusOr<std::vector<recq::DispatchProfile>> profile = engine->Profile(bindings);
    if (!profile.ok()) return profile.status();
    double total = 0;
    for (const recq::DispatchProfile& p : *profile) total += p.device_ms;
    if (r >= 2) ms.push_back(total);  // the first two warm the caches
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int Main(int argc, char** argv) {
  int runs = 25;
  std::string shapes_text =
      "3072x768x768,3136x64x576,197x3072x768,197x768x3072,128x768x768,"
      "2048x2048x2048";
  std::string json_path;
  recq::OpType op = recq::OpType::kMatMul;
  recq::EngineOptions::KernelTarget target = recq::EngineOptions::KernelTarget::kAuto;
  recq::EngineOptions::Precision precision = recq::EngineOptions::Precision::kFp32;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--runs=")) {
      if (!absl::SimpleAtoi(arg.substr(7), &runs) || runs < 1) {
        std::fprintf(stderr, "--runs takes a positive integer\n");
        return 2;
      }
    } else if (absl::StartsWith(arg, "--shapes=")) {
      shapes_text = arg.substr(9);
    } else if (absl::StartsWith(arg, "--json=")) {
      json_path = arg.substr(7);
    } else if (arg == "--op=gemm") {
      op = recq::OpType::kGemm;
    } else if (arg == "--op=matmul") {
      op = recq::OpType::kMatMul;
    } else if (arg == "--target=gpu") {
      target = recq::EngineOptions::KernelTarget::kGpu;
    } else if (arg == "--target=cpu") {
      target = recq::EngineOptions::KernelTarget::kCpu;
    } else if (absl::StartsWith(arg, "--precision=")) {
      absl::StatusOr<recq::EngineOptions::Precision> p = recq::ParsePrecision(arg.substr(12));
      if (!p.ok()) {
        std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
        return 2;
      }
      precision = *p;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  absl::StatusOr<std::vector<Shape>> shapes = ParseShapeList(shapes_text);
  if (!shapes.ok()) {
    std::fprintf(stderr, "%s\n", shapes.status().ToString().c_str());
    return 2;
  }
  recq::ContextOptions context_options;
  absl::StatusOr<recq::Context> context = recq::Context::Create(context_options);
  if (!context.ok()) {
    std::fprintf(stderr, "%s\n", context.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<recq::tools::Roofline> roof = recq::tools::DeviceRoofline(*context);
  if (!roof.ok()) {
    std::fprintf(stderr, "roofline: %s\n", roof.status().ToString().c_str());
    return 1;
  }
  std::printf("device: %s; roof %.0f GFLOP/s, %.0f GB/s\n", context->device_info().name.c_str(),
              roof->gflops, roof->gbps);
  const recq::OpDef* matmul = recq::FindOp(op);
  std::vector<Row> rows;
  for (const Shape& s : *shapes) {
    absl::StatusOr<recq::Graph> graph = ProductGraph(s, op == recq::OpType::kGemm);
    if (!graph.ok()) {
      std::fprintf(stderr, "%s\n", graph.status().ToString().c_str());
      return 1;
    }
    // The candidates: each fitting variant with each set of its space, as
    // the exhaustive tuner sees them, collected by a chooser that records
    // what it is offered and takes the heuristic.
    struct Candidate {
      size_t variant;
      recq::KernelParams params;
    };
    std::vector<Candidate> candidates;
    recq::EngineOptions probe;
    probe.kernel_target = target;
    probe.precision = precision;
    size_t heuristic_variant = 0;
    probe.choose_kernel = [&](const recq::Node& node, const recq::LoweringContext& ctx,
                              absl::Span<const size_t> fitting) {
      if (node.op == op && candidates.empty()) {
        heuristic_variant = fitting[0];
        for (size_t v : fitting) {
          const recq::KernelVariant& kv = matmul->variants[v];
          std::vector<recq::KernelParams> space;
          if (kv.param_space) space = kv.param_space(node, ctx);
          if (space.empty()) space.push_back({});
          for (recq::KernelParams& p : space) candidates.push_back({v, std::move(p)});
        }
      }
      return recq::KernelChoice{fitting[0], {}};
    };
    if (absl::StatusOr<double> t = TimeProduct(*context, *graph, probe, 1); !t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
      return 1;
    }
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    // Each operand read once and the output written once: the least traffic.
    const double bytes = 4.0 * double(s.m * s.k + s.k * s.n + s.m * s.n);
    std::printf("\n%lldx%lldx%lld (%.2f GFLOP)\n", (long long)s.m, (long long)s.n, (long long)s.k,
                flops * 1e-9);
    for (size_t c = 0; c < candidates.size(); ++c) {
      const Candidate& cand = candidates[c];
      recq::EngineOptions options;
      options.kernel_target = target;
      options.precision = precision;
      options.choose_kernel = [&](const recq::Node& node, const recq::LoweringContext&,
                                  absl::Span<const size_t> fitting) {
        if (node.op == op) return recq::KernelChoice{cand.variant, cand.params};
        return recq::KernelChoice{fitting[0], {}};
      };
      absl::StatusOr<double> ms = TimeProduct(*context, *graph, options, runs);
      Row row;
      row.shape = s;
      row.variant = matmul->variants[cand.variant].name;
      row.params = recq::KernelParamsString(cand.params);
      // The first set of the first fitting variant's space is its heuristic.
      row.heuristic = cand.variant == heuristic_variant &&
                      (c == 0 || candidates[c - 1].variant != cand.variant);
      if (!ms.ok()) {
        std::printf("  %-24s %-24s failed: %s\n", row.variant.c_str(), row.params.c_str(),
                    ms.status().ToString().c_str());
        continue;
      }
      row.ms = *ms;
      row.gflops = flops / (*ms * 1e6);
      row.gbps = bytes / (*ms * 1e6);
      row.roof_fraction = recq::tools::RooflineFraction(*roof, flops, bytes, *ms);
      std::printf("  %-24s %-24s %8.4f ms %8.0f GFLOP/s %7.0f GB/s %5.1f %% of roof%s\n",
                  row.variant.c_str(), row.params.c_str(), row.ms, row.gflops, row.gbps,
                  100 * row.roof_fraction, row.heuristic ? "  (heuristic)" : "");
      rows.push_back(std::move(row));
    }
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"device\": \"" << context->device_info().name
        << "\", \"roof_gflops\": " << roof->gflops << ", \"precision\": \""
        << recq::PrecisionName(precision) << "\", \"runs\": " << runs << ", \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << "  {\"m\": " << r.shape.m << ", \"n\": " << r.shape.n << ", \"k\": " << r.shape.k
          << ", \"variant\": \"" << r.variant << "\", \"params\": \"" << r.params
          << "\", \"heuristic\": " << (r.heuristic ? "true" : "false") << ", \"ms\": " << r.ms
          << ", \"gflops\": " << r.gflops << ", \"gbps\": " << r.gbps
          << ", \"roof_fraction\": " << r.roof_fraction << "}" << (i + 1 < rows.size() ? "," : "")
          << "\n";
    }
    out << "]}\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
