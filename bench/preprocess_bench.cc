// Camera frames into MobileNet V2 (224x224): NV12 1280x720 preprocessing
// fused into the recording, against the same model fed by a separate
// preprocessing pass. Three pipelines, run interleaved (one run of each per
// round, the order rotating), each timed from its first enqueue to clFinish:
//
//   fused      one recording: NV12 planes -> Preprocess (colour, bilinear
//              resize, normalization in one kernel) -> MobileNet V2
//   separate   what an application does without recq's preprocessing: its
//              own NV12 -> float RGB kernel at the frame's size (a float copy
//              of every frame, outside the recording), then a recording of
//              Resize -> Sub(mean) -> Div(scale) -> MobileNet V2
//   two_pass   the fused kernel as a recording of its own (NV12 -> 224x224
//              float), then a recording of MobileNet V2: the cost of the
//              second enqueue and the float tensor in between
//
// All three compute the same function (checked: probabilities within 1e-2;
// the random-weight model amplifies float rounding to about 1e-3).
// Prints medians and dispatch counts; --json=FILE writes them.
//
//   build/bench/preprocess_bench [--runs=25] [--json=out.json] [--device=gpu:0]
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/layout_attrs.h"
#include "recq/recq.h"
#include "tools/models/mobilenet.h"

namespace {

constexpr int64_t kSrcW = 1280, kSrcH = 720, kRes = 224;
const std::vector<float> kMean = {123.675f, 116.28f, 103.53f};
const std::vector<float> kScale = {58.395f, 57.12f, 57.375f};

#define RETURN_IF_ERROR(expr)       \
  do {                              \
    const absl::Status _s = (expr); \
    if (!_s.ok()) return _s;        \
  } while (0)

// PrependSeparateChain rewrites `model` so that its input "input" is computed from a
// new float input "frame" [1, 3, kSrcH, kSrcW] by Resize, Sub and Div.
absl::StatusOr<recq::Graph> PrependSeparateChain(const recq::Graph& model) {
  recq::GraphBuilder b;
  recq::TensorRef frame = b.Input("frame", {1, 3, kSrcH, kSrcW});
  recq::internal::ResizeAttrs resize;
  resize.mode = recq::internal::ResizeMode::kLinear;
  resize.out_shape = {1, 3, kRes, kRes};
  resize.scales = {1.0, 1.0, double(kRes) / kSrcH, double(kRes) / kSrcW};
  recq::TensorRef x = b.AddNode(recq::OpType("Resize"), {frame}, resize);
  x = b.AddNode(recq::OpType::kSub, {x, b.Constant("mean", {1, 3, 1, 1}, kMean)});
  x = b.AddNode(recq::OpType::kDiv, {x, b.Constant("scale", {1, 3, 1, 1}, kScale)});
  b.Output(x, "input");
  absl::StatusOr<recq::Graph> head = std::move(b).Build();
  if (!head.ok()) return head.status();
  // Splice: the head's values and nodes, then the model's with ids shifted;
  // the model's input becomes the head's output.
  std::vector<recq::Value> values = head->values();
  std::vector<recq::Node> nodes = head->nodes();
  const recq::ValueId head_out = head->outputs()[0];
  std::vector<recq::ValueId> id_of(model.values().size());
  for (recq::ValueId i = 0; i < static_cast<recq::ValueId>(model.values().size()); ++i) {
    if (i == model.inputs()[0]) {
      id_of[i] = head_out;
      continue;
    }
    id_of[i] = static_cast<recq::ValueId>(values.size());
    values.push_back(model.values()[i]);
  }
  for (recq::Node n : model.nodes()) {
    for (recq::ValueId& id : n.inputs) id = id == recq::kNoValue ? id : id_of[id];
    for (recq::ValueId& id : n.outputs) id = id_of[id];
    nodes.push_back(std::move(n));
  }
  return recq::Graph::Create(std::move(values), std::move(nodes), head->inputs(),
                             {id_of[model.outputs()[0]]});
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Pipeline {
  std::string name;
  size_t dispatches = 0;
  std::function<absl::Status()> enqueue;  // everything up to (not incl.) clFinish
  cl_mem prob = nullptr;
  std::vector<double> ms;
};

absl::Status Run(int runs, const std::string& json_path, const std::string& device) {
  recq::ContextOptions options;
  options.device = device;
  absl::StatusOr<recq::Context> ctx = recq::Context::Create(options);
  if (!ctx.ok()) return ctx.status();
  cl_context cl_ctx = ctx->context();
  cl_command_queue queue = ctx->queue();
  std::printf("device: %s (%s)\n", ctx->device_info().name.c_str(),
              ctx->device_info().platform_name.c_str());
  absl::StatusOr<recq::Graph> model = recq::models::BuildMobileNetV2({});
  if (!model.ok()) return model.status();

  recq::InputPreprocess nv12;
  nv12.color = recq::ColorFormat::kNv12TwoPlane;
  nv12.source_height = kSrcH;
  nv12.source_width = kSrcW;
  nv12.mean = kMean;
  nv12.scale = kScale;

  // fused
  recq::Graph fused_graph = *model;
  recq::PrePostProcessing ppp;
  ppp.inputs["input"] = nv12;
  RETURN_IF_ERROR(recq::ApplyPrePostProcessing(fused_graph, ppp));
  absl::StatusOr<recq::Engine> fused = recq::Engine::Compile(*ctx, fused_graph);
  if (!fused.ok()) return fused.status();
  absl::StatusOr<recq::Recording> fused_rec = fused->Record();
  if (!fused_rec.ok()) return fused_rec.status();

  // two_pass: the preprocessing alone (NV12 -> float 224x224), then the model.
  recq::GraphBuilder pb;
  pb.Output(pb.AddNode(recq::OpType::kIdentity, {pb.Input("input", {1, 3, kRes, kRes})}), "x");
  absl::StatusOr<recq::Graph> pre_graph = std::move(pb).Build();
  if (!pre_graph.ok()) return pre_graph.status();
  RETURN_IF_ERROR(recq::ApplyPrePostProcessing(*pre_graph, ppp));
  absl::StatusOr<recq::Engine> pre = recq::Engine::Compile(*ctx, *pre_graph);
  if (!pre.ok()) return pre.status();
  absl::StatusOr<recq::Recording> pre_rec = pre->Record();
  absl::StatusOr<recq::Engine> plain = recq::Engine::Compile(*ctx, *model);
  if (!plain.ok()) return plain.status();
  absl::StatusOr<recq::Recording> plain_rec = plain->Record();
  if (!pre_rec.ok() || !plain_rec.ok()) return absl::InternalError("record failed");

  // separate: NV12 -> float RGB at 1280x720 (the same kernel, no resize, as
  // the application's own pass), then Resize -> Sub -> Div -> model.
  recq::InputPreprocess full = nv12;
  full.mean.clear();
  full.scale.clear();
  recq::GraphBuilder fb;
  fb.Output(fb.AddNode(recq::OpType::kIdentity, {fb.Input("input", {1, 3, kSrcH, kSrcW})}), "rgb");
  absl::StatusOr<recq::Graph> full_graph = std::move(fb).Build();
  if (!full_graph.ok()) return full_graph.status();
  recq::PrePostProcessing full_ppp;
  full_ppp.inputs["input"] = full;
  RETURN_IF_ERROR(recq::ApplyPrePostProcessing(*full_graph, full_ppp));
  absl::StatusOr<recq::Engine> to_rgb = recq::Engine::Compile(*ctx, *full_graph);
  if (!to_rgb.ok()) return to_rgb.status();
  absl::StatusOr<recq::Recording> to_rgb_rec = to_rgb->Record({recq::Backend::kUnrecorded});
  absl::StatusOr<recq::Graph> chain_graph = PrependSeparateChain(*model);
  if (!chain_graph.ok()) return chain_graph.status();
  absl::StatusOr<recq::Engine> chain = recq::Engine::Compile(*ctx, *chain_graph);
  if (!chain.ok()) return chain.status();
  absl::StatusOr<recq::Recording> chain_rec = chain->Record();
  if (!to_rgb_rec.ok() || !chain_rec.ok()) return absl::InternalError("record failed");

  // Memory: one NV12 frame (Y and UV planes), the float copies, outputs.
  std::mt19937 rng(7);
  std::vector<uint8_t> y(kSrcW * kSrcH), uv(kSrcW * kSrcH / 2);
  for (uint8_t& v : y) v = static_cast<uint8_t>(16 + rng() % 220);
  for (uint8_t& v : uv) v = static_cast<uint8_t>(16 + rng() % 225);
  cl_int err = CL_SUCCESS;
  std::vector<cl_mem> mems;
  auto buffer = [&](size_t bytes, void* host) {
    mems.push_back(clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                                  bytes, host, &err));
    return mems.back();
  };
  cl_mem y_mem = buffer(y.size(), y.data()), uv_mem = buffer(uv.size(), uv.data());
  cl_mem rgb = buffer(3 * kSrcW * kSrcH * sizeof(float), nullptr);
  cl_mem x224 = buffer(3 * kRes * kRes * sizeof(float), nullptr);
  std::vector<Pipeline> pipes(3);
  for (Pipeline& p : pipes) p.prob = buffer(1000 * sizeof(float), nullptr);
  if (err != CL_SUCCESS) return absl::InternalError("clCreateBuffer failed");

  pipes[0].name = "fused";
  pipes[0].dispatches = fused_rec->dispatch_count();
  pipes[0].enqueue = [&] {
    recq::Bindings b;
    b.SetNv12("input", y_mem, uv_mem);
    b.Set("prob", pipes[0].prob);
    return fused_rec->Enqueue(queue, b);
  };
  pipes[1].name = "separate";
  pipes[1].dispatches = to_rgb_rec->dispatch_count() + chain_rec->dispatch_count();
  pipes[1].enqueue = [&] {
    recq::Bindings a, b;
    a.SetNv12("input", y_mem, uv_mem);
    a.Set("rgb", rgb);
    RETURN_IF_ERROR(to_rgb_rec->Enqueue(queue, a));
    b.Set("frame", rgb);
    b.Set("prob", pipes[1].prob);
    return chain_rec->Enqueue(queue, b);
  };
  pipes[2].name = "two_pass";
  pipes[2].dispatches = pre_rec->dispatch_count() + plain_rec->dispatch_count();
  pipes[2].enqueue = [&] {
    recq::Bindings a, b;
    a.SetNv12("input", y_mem, uv_mem);
    a.Set("x", x224);
    RETURN_IF_ERROR(pre_rec->Enqueue(queue, a));
    b.Set("input", x224);
    b.Set("prob", pipes[2].prob);
    return plain_rec->Enqueue(queue, b);
  };

  for (Pipeline& p : pipes) {  // warm: first runs build PoCL's work-group code
    for (int i = 0; i < 2; ++i) {
      RETURN_IF_ERROR(p.enqueue());
      if (clFinish(queue) != CL_SUCCESS) return absl::InternalError("clFinish failed");
    }
  }
  for (int r = 0; r < runs; ++r) {
    for (size_t k = 0; k < pipes.size(); ++k) {
      Pipeline& p = pipes[(k + r) % pipes.size()];
      const auto start = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(p.enqueue());
      if (clFinish(queue) != CL_SUCCESS) return absl::InternalError("clFinish failed");
      p.ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
  }
  // The three compute the same function.
  std::vector<std::vector<float>> probs;
  for (Pipeline& p : pipes) {
    std::vector<float> v(1000);
    clEnqueueReadBuffer(queue, p.prob, CL_TRUE, 0, 1000 * sizeof(float), v.data(), 0, nullptr,
                        nullptr);
    probs.push_back(v);
  }
  double max_diff = 0;
  for (size_t k = 1; k < probs.size(); ++k) {
    for (size_t i = 0; i < 1000; ++i) {
      max_diff = std::max(max_diff, double(std::fabs(probs[k][i] - probs[0][i])));
    }
  }
  for (cl_mem m : mems) clReleaseMemObject(m);
  std::printf("%-10s %10s %12s\n", "pipeline", "dispatches", "median ms");
  for (const Pipeline& p : pipes) {
    std::printf("%-10s %10zu %12.3f\n", p.name.c_str(), p.dispatches, Median(p.ms));
  }
  std::printf("runs per pipeline: %d (interleaved); max |prob - fused| %.2g\n", runs, max_diff);
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << "{\n  \"device\": \"" << ctx->device_info().name << "\",\n  \"model\": \"MobileNet V2 "
      << kRes << "x" << kRes << ", NV12 " << kSrcW << "x" << kSrcH << "\",\n  \"runs\": " << runs
      << ",\n  \"max_abs_prob_diff\": " << max_diff << ",\n  \"pipelines\": {";
    for (size_t k = 0; k < pipes.size(); ++k) {
      const Pipeline& p = pipes[k];
      f << (k ? "," : "") << "\n    \"" << p.name << "\": {\"dispatches\": " << p.dispatches
        << ", \"median_ms\": " << Median(p.ms)
        << ", \"min_ms\": " << *std::min_element(p.ms.begin(), p.ms.end()) << "}";
    }
    f << "\n  },\n  \"fused_vs_separate\": " << Median(pipes[0].ms) / Median(pipes[1].ms)
      << ",\n  \"fused_vs_two_pass\": " << Median(pipes[0].ms) / Median(pipes[2].ms) << "\n}\n";
  }
  if (max_diff > 1e-2) return absl::InternalError("the pipelines disagree");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 25;
  std::string json, device;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--runs=", 0) == 0) {
      runs = std::stoi(a.substr(7));
    } else if (a.rfind("--json=", 0) == 0) {
      json = a.substr(7);
    } else if (a.rfind("--device=", 0) == 0) {
      device = a.substr(9);
    } else {
      std::fprintf(stderr, "usage: preprocess_bench [--runs=N] [--json=FILE] [--device=SPEC]\n");
      return 2;
    }
  }
  if (absl::Status s = Run(runs, json, device); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
