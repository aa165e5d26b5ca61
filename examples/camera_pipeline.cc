// A camera pipeline on one in-order queue (OpenVINO's documented
// remote-tensor flow): the application synthesizes NV12 frames with its own
// kernel, recq consumes them zero-copy through a recording whose first
// dispatch converts NV12 to the model's float NCHW input (colour, bilinear
// resize, normalization), and the application's own top-1 kernel reads
// recq's output. One clFinish at the end, no host sync between; every
// frame's top-1 and probabilities are checked against a CPU path.
//
//   camera_pipeline app-context    the application owns the context and the
//                                  queue (NV12 as two images, CL_R + CL_RG, or
//                                  CL_RGBA packing UV pairs without CL_RG),
//                                  recq adopts them
//   camera_pipeline recq-context   recq creates the context; the application
//                                  builds on Context::context(), queue() and
//                                  device() (NV12 as one buffer, UV rows
//                                  after Y)
//
// Exits non-zero if any frame disagrees with the CPU path.
#include <CL/cl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "recq/recq.h"

namespace {

constexpr int kFrames = 6;
constexpr int64_t kSrcW = 64, kSrcH = 48;  // camera frames
constexpr int64_t kH = 32, kW = 32;        // the model's input
constexpr int64_t kF = 8, kClasses = 10;   // conv channels, classes
const float kMean[3] = {123.675f, 116.28f, 103.53f};
const float kScale[3] = {58.395f, 57.12f, 57.375f};

// The application's kernels: NV12 synthesis (as images or as one buffer)
// and top-1.
const char* kAppSource = R"CL(
uint y_of(int x, int y, int f) { return (uint)((x * 3 + y * 5) % 64 + 16 + f * 28); }
uint u_of(int x, int y, int f) { return (uint)((x * 7 + y * 2) % 48 + 16 + (f * 53) % 176); }
uint v_of(int x, int y, int f) { return (uint)((y * 11 + x) % 48 + 16 + (f * 97) % 176); }

__kernel void synth_nv12_images(__write_only image2d_t luma, __write_only image2d_t chroma,
                                int frame) {
  const int x = get_global_id(0), y = get_global_id(1);
  write_imagef(luma, (int2)(x, y), (float4)(y_of(x, y, frame) / 255.0f, 0, 0, 1));
#ifdef PACKED_UV  // CL_RGBA, W/4 x H/2: two UV pairs a texel
  if (x % 4 == 0 && y % 2 == 0) {
    const int cx = x / 2, cy = y / 2;
    write_imagef(chroma, (int2)(x / 4, cy),
                 (float4)(u_of(cx, cy, frame), v_of(cx, cy, frame), u_of(cx + 1, cy, frame),
                          v_of(cx + 1, cy, frame)) / 255.0f);
  }
#else  // CL_RG, W/2 x H/2
  if (x % 2 == 0 && y % 2 == 0) {
    write_imagef(chroma, (int2)(x / 2, y / 2),
                 (float4)(u_of(x / 2, y / 2, frame) / 255.0f, v_of(x / 2, y / 2, frame) / 255.0f,
                          0, 1));
  }
#endif
}

__kernel void synth_nv12_buffer(__global uchar* nv12, int w, int h, int frame) {
  const int x = get_global_id(0), y = get_global_id(1);
  nv12[y * w + x] = (uchar)y_of(x, y, frame);
  if (x % 2 == 0 && y % 2 == 0) {
    __global uchar* uv = nv12 + w * h + (y / 2) * w + x;
    uv[0] = (uchar)u_of(x / 2, y / 2, frame);
    uv[1] = (uchar)v_of(x / 2, y / 2, frame);
  }
}

__kernel void top1(__global const float* prob, int classes, __global int* best) {
  int b = 0;
  for (int i = 1; i < classes; ++i) {
    if (prob[i] > prob[b]) b = i;
  }
  best[get_global_id(0)] = b;
}
)CL";

// The same frames on the host: a texture whose brightness and colour change
// from frame to frame.
int YOf(int x, int y, int f) { return (x * 3 + y * 5) % 64 + 16 + f * 28; }
int UOf(int x, int y, int f) { return (x * 7 + y * 2) % 48 + 16 + (f * 53) % 176; }
int VOf(int x, int y, int f) { return (y * 11 + x) % 48 + 16 + (f * 97) % 176; }

float Weight(int64_t i, int64_t salt) {
  return 0.05f * static_cast<float>((i * 37 + salt * 11) % 41) - 1.0f;
}

// The model: conv 3x3 stride 2 (3 -> kF) + Relu, global average pool,
// fully connected to kClasses, softmax.
struct Model {
  std::vector<float> conv_w, conv_b, fc_w, fc_b;
  Model() {
    for (int64_t i = 0; i < kF * 3 * 9; ++i) conv_w.push_back(Weight(i, 1) * 0.2f);
    for (int64_t i = 0; i < kF; ++i) conv_b.push_back(Weight(i, 2) * 0.1f);
    for (int64_t i = 0; i < kClasses * kF; ++i) fc_w.push_back(Weight(i, 3));
    for (int64_t i = 0; i < kClasses; ++i) fc_b.push_back(Weight(i, 4) * 0.1f);
  }
};

absl::StatusOr<recq::Graph> BuildGraph(const Model& m) {
  recq::GraphBuilder b;
  recq::TensorRef x = b.Input("image", {1, 3, kH, kW});
  recq::Conv2DAttrs conv;
  conv.strides = {2, 2};
  conv.pads = {1, 1, 1, 1};
  recq::TensorRef y = b.Relu(b.Conv2D(x, b.Constant("conv.w", {kF, 3, 3, 3}, m.conv_w),
                                      b.Constant("conv.b", {kF}, m.conv_b), conv));
  y = b.Flatten(b.GlobalAveragePool(y));
  y = b.FullyConnected(y, b.Constant("fc.w", {kClasses, kF}, m.fc_w),
                       b.Constant("fc.b", {kClasses}, m.fc_b));
  b.Output(b.Softmax(y), "prob");
  return std::move(b).Build();
}

// The CPU path: NV12 -> RGB (BT.601, clamped) -> bilinear half-pixel resize
// -> normalize -> the model.
std::vector<float> CpuPath(const Model& m, int f) {
  auto rgb = [&](int64_t x, int64_t y, int k) {
    const double c = 1.164 * (YOf(x, y, f) - 16), d = UOf(x / 2, y / 2, f) - 128.0,
                 e = VOf(x / 2, y / 2, f) - 128.0;
    const double v[3] = {c + 1.596 * e, c - 0.391 * d - 0.813 * e, c + 2.018 * d};
    return std::clamp(v[k], 0.0, 255.0);
  };
  std::vector<double> in(3 * kH * kW);
  for (int64_t y = 0; y < kH; ++y) {
    for (int64_t x = 0; x < kW; ++x) {
      const double fx = std::max((x + 0.5) * kSrcW / kW - 0.5, 0.0);
      const double fy = std::max((y + 0.5) * kSrcH / kH - 0.5, 0.0);
      const int64_t x0 = std::min<int64_t>(int64_t(fx), kSrcW - 1);
      const int64_t y0 = std::min<int64_t>(int64_t(fy), kSrcH - 1);
      const int64_t x1 = std::min(x0 + 1, kSrcW - 1), y1 = std::min(y0 + 1, kSrcH - 1);
      const double ax = fx - x0, ay = fy - y0;
      for (int k = 0; k < 3; ++k) {
        const double v = (rgb(x0, y0, k) * (1 - ax) + rgb(x1, y0, k) * ax) * (1 - ay) +
                         (rgb(x0, y1, k) * (1 - ax) + rgb(x1, y1, k) * ax) * ay;
        in[(k * kH + y) * kW + x] = (v - kMean[k]) / kScale[k];
      }
    }
  }
  const int64_t oh = kH / 2, ow = kW / 2;
  std::vector<double> pooled(kF, 0.0);
  for (int64_t o = 0; o < kF; ++o) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        double s = m.conv_b[o];
        for (int64_t c = 0; c < 3; ++c) {
          for (int64_t ky = 0; ky < 3; ++ky) {
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = y * 2 - 1 + ky, ix = x * 2 - 1 + kx;
              if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
              s += m.conv_w[((o * 3 + c) * 3 + ky) * 3 + kx] * in[(c * kH + iy) * kW + ix];
            }
          }
        }
        pooled[o] += std::max(s, 0.0) / double(oh * ow);
      }
    }
  }
  std::vector<double> logits(kClasses);
  double top = -1e300, sum = 0;
  for (int64_t k = 0; k < kClasses; ++k) {
    logits[k] = m.fc_b[k];
    for (int64_t i = 0; i < kF; ++i) logits[k] += m.fc_w[k * kF + i] * pooled[i];
    top = std::max(top, logits[k]);
  }
  for (double& l : logits) sum += (l = std::exp(l - top));
  std::vector<float> prob;
  for (double l : logits) prob.push_back(static_cast<float>(l / sum));
  return prob;
}

#define CHECK_CL(call)                                                                  \
  do {                                                                                  \
    const cl_int e = (call);                                                            \
    if (e != CL_SUCCESS)                                                                \
      return absl::InternalError(std::string(#call) + " failed: " + std::to_string(e)); \
  } while (0)

struct App {
  cl_program program = nullptr;
  cl_kernel synth = nullptr, top1 = nullptr;
  ~App() {
    if (synth) clReleaseKernel(synth);
    if (top1) clReleaseKernel(top1);
    if (program) clReleaseProgram(program);
  }
};

// RunPipeline runs kFrames frames through synth -> recq -> top1 on `queue`
// and checks them. `images`: NV12 as two images, else as one buffer.
absl::Status RunPipeline(const recq::Context& ctx, cl_context cl_ctx, cl_command_queue queue,
                         cl_device_id device, bool images) {
  App app;
  cl_int err = CL_SUCCESS;
  app.program = clCreateProgramWithSource(cl_ctx, 1, &kAppSource, nullptr, &err);
  CHECK_CL(err);
  // NV12's UV plane is a CL_RG image where the device has that format, else
  // CL_RGBA of half the width (PoCL lists no CL_RG).
  bool has_rg = false;
  cl_uint count = 0;
  CHECK_CL(clGetSupportedImageFormats(cl_ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, nullptr,
                                      &count));
  std::vector<cl_image_format> formats(count);
  CHECK_CL(clGetSupportedImageFormats(cl_ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, count,
                                      formats.data(), nullptr));
  for (const cl_image_format& f : formats) {
    has_rg |= f.image_channel_order == CL_RG && f.image_channel_data_type == CL_UNORM_INT8;
  }
  CHECK_CL(clBuildProgram(app.program, 1, &device, has_rg ? "" : "-DPACKED_UV", nullptr, nullptr));
  app.synth = clCreateKernel(app.program, images ? "synth_nv12_images" : "synth_nv12_buffer", &err);
  CHECK_CL(err);
  app.top1 = clCreateKernel(app.program, "top1", &err);
  CHECK_CL(err);

  // recq: the model with NV12 preprocessing compiled in, recorded once.
  Model model;
  absl::StatusOr<recq::Graph> graph = BuildGraph(model);
  if (!graph.ok()) return graph.status();
  recq::PrePostProcessing ppp;
  recq::InputPreprocess& in = ppp.inputs["image"];
  in.color = images ? recq::ColorFormat::kNv12TwoPlane : recq::ColorFormat::kNv12SinglePlane;
  in.kind = images ? recq::MemoryKind::kImage2D : recq::MemoryKind::kBuffer;
  in.source_width = kSrcW;
  in.source_height = kSrcH;
  in.mean.assign(kMean, kMean + 3);
  in.scale.assign(kScale, kScale + 3);
  if (absl::Status s = recq::ApplyPrePostProcessing(*graph, ppp); !s.ok()) return s;
  absl::StatusOr<recq::Engine> engine = recq::Engine::Compile(ctx, *graph);
  if (!engine.ok()) return engine.status();
  absl::StatusOr<recq::Recording> rec = engine->Record();
  if (!rec.ok()) return rec.status();
  std::printf("backend %s, %zu dispatches (NV12 -> %lldx%lld float NCHW fused into the first)\n",
              recq::BackendName(rec->backend()), rec->dispatch_count(), static_cast<long long>(kW),
              static_cast<long long>(kH));

  // The application's memory: two frame slots used in turn (zero copy: recq
  // reads them where the synth kernel wrote), an output per frame, top-1s.
  std::vector<cl_mem> mems;
  auto keep = [&](cl_mem m) {
    mems.push_back(m);
    return m;
  };
  struct Slot {
    cl_mem y = nullptr, uv = nullptr, nv12 = nullptr;
  } slots[2];
  for (Slot& s : slots) {
    if (images) {
      cl_image_format luma = {CL_R, CL_UNORM_INT8};
      cl_image_format chroma = {static_cast<cl_channel_order>(has_rg ? CL_RG : CL_RGBA),
                                CL_UNORM_INT8};
      cl_image_desc d = {};
      d.image_type = CL_MEM_OBJECT_IMAGE2D;
      d.image_width = kSrcW;
      d.image_height = kSrcH;
      s.y = keep(clCreateImage(cl_ctx, CL_MEM_READ_WRITE, &luma, &d, nullptr, &err));
      CHECK_CL(err);
      d.image_width = has_rg ? kSrcW / 2 : kSrcW / 4;
      d.image_height = kSrcH / 2;
      s.uv = keep(clCreateImage(cl_ctx, CL_MEM_READ_WRITE, &chroma, &d, nullptr, &err));
      CHECK_CL(err);
    } else {
      s.nv12 =
          keep(clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, kSrcW * kSrcH * 3 / 2, nullptr, &err));
      CHECK_CL(err);
    }
  }
  std::vector<cl_mem> probs;
  for (int f = 0; f < kFrames; ++f) {
    probs.push_back(
        keep(clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, kClasses * sizeof(float), nullptr, &err)));
    CHECK_CL(err);
  }
  cl_mem best =
      keep(clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, kFrames * sizeof(int), nullptr, &err));
  CHECK_CL(err);

  // The pipeline: everything queue-ordered, no host sync.
  absl::Status status;
  for (int f = 0; f < kFrames && status.ok(); ++f) {
    const Slot& s = slots[f % 2];
    const int w = kSrcW, h = kSrcH;
    if (images) {
      CHECK_CL(clSetKernelArg(app.synth, 0, sizeof(cl_mem), &s.y));
      CHECK_CL(clSetKernelArg(app.synth, 1, sizeof(cl_mem), &s.uv));
      CHECK_CL(clSetKernelArg(app.synth, 2, sizeof(int), &f));
    } else {
      CHECK_CL(clSetKernelArg(app.synth, 0, sizeof(cl_mem), &s.nv12));
      CHECK_CL(clSetKernelArg(app.synth, 1, sizeof(int), &w));
      CHECK_CL(clSetKernelArg(app.synth, 2, sizeof(int), &h));
      CHECK_CL(clSetKernelArg(app.synth, 3, sizeof(int), &f));
    }
    const size_t frame_size[2] = {kSrcW, kSrcH};
    CHECK_CL(clEnqueueNDRangeKernel(queue, app.synth, 2, nullptr, frame_size, nullptr, 0, nullptr,
                                    nullptr));
    recq::Bindings b;
    if (images) {
      b.SetNv12("image", s.y, s.uv);
    } else {
      b.Set("image", s.nv12);
    }
    b.Set("prob", probs[f]);
    status = rec->Enqueue(queue, b);
    const int classes = kClasses;
    CHECK_CL(clSetKernelArg(app.top1, 0, sizeof(cl_mem), &probs[f]));
    CHECK_CL(clSetKernelArg(app.top1, 1, sizeof(int), &classes));
    CHECK_CL(clSetKernelArg(app.top1, 2, sizeof(cl_mem), &best));
    const size_t one = 1, at = static_cast<size_t>(f);
    CHECK_CL(clEnqueueNDRangeKernel(queue, app.top1, 1, &at, &one, nullptr, 0, nullptr, nullptr));
  }
  CHECK_CL(clFinish(queue));  // the one host sync
  if (!status.ok()) return status;

  std::vector<int> top(kFrames);
  CHECK_CL(clEnqueueReadBuffer(queue, best, CL_TRUE, 0, kFrames * sizeof(int), top.data(), 0,
                               nullptr, nullptr));
  int wrong = 0;
  for (int f = 0; f < kFrames; ++f) {
    std::vector<float> got(kClasses);
    CHECK_CL(clEnqueueReadBuffer(queue, probs[f], CL_TRUE, 0, kClasses * sizeof(float), got.data(),
                                 0, nullptr, nullptr));
    const std::vector<float> want = CpuPath(model, f);
    const int want_top =
        static_cast<int>(std::max_element(want.begin(), want.end()) - want.begin());
    float max_err = 0;
    for (int64_t k = 0; k < kClasses; ++k) max_err = std::max(max_err, std::fabs(got[k] - want[k]));
    const bool ok = top[f] == want_top && max_err <= 1e-4f;
    wrong += ok ? 0 : 1;
    std::printf("frame %d: top-1 %d (CPU %d, p=%.4f), max |prob - CPU| %.2g %s\n", f, top[f],
                want_top, want[want_top], max_err, ok ? "ok" : "WRONG");
  }
  for (cl_mem m : mems) clReleaseMemObject(m);
  if (wrong != 0)
    return absl::InternalError(std::to_string(wrong) + " frames disagree with the CPU");
  return absl::OkStatus();
}

absl::Status AppContext() {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  CHECK_CL(clGetPlatformIDs(1, &platform, nullptr));
  CHECK_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr));
  cl_int err = CL_SUCCESS;
  cl_context cl_ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK_CL(err);
  cl_command_queue queue = clCreateCommandQueueWithProperties(cl_ctx, device, nullptr, &err);
  if (err != CL_SUCCESS) {
    clReleaseContext(cl_ctx);
    return absl::InternalError("clCreateCommandQueueWithProperties failed");
  }
  absl::Status status;
  {
    absl::StatusOr<recq::Context> ctx = recq::Context::Adopt(cl_ctx, queue);
    status = ctx.ok() ? RunPipeline(*ctx, cl_ctx, queue, device, /*images=*/true) : ctx.status();
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(cl_ctx);
  return status;
}

absl::Status RecqContext() {
  absl::StatusOr<recq::Context> ctx = recq::Context::Create();
  if (!ctx.ok()) return ctx.status();
  return RunPipeline(*ctx, ctx->context(), ctx->queue(), ctx->device(), /*images=*/false);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "app-context";
  absl::Status s;
  if (mode == "app-context") {
    s = AppContext();
  } else if (mode == "recq-context") {
    s = RecqContext();
  } else {
    std::fprintf(stderr, "usage: camera_pipeline app-context|recq-context\n");
    return 2;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("pipeline ok\n");
  return 0;
}
