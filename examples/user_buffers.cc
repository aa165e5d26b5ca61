// recq with the user's own OpenCL objects (OpenVINO remote-tensor style):
// the application creates the context, the in-order queue and the buffers,
// recq adopts the context and queue, records once, and replays with a
// different user cl_mem per request, queue-ordered, no host sync between
// runs. Exits non-zero if any output is wrong.
//
//   build/examples/user_buffers
#include <CL/cl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "recq/recq.h"

namespace {

constexpr int kRequests = 4;
constexpr int64_t kC = 3, kH = 8, kW = 8, kOC = 2;

// y[oc] = relu(sum_c w[oc][c] * x[c] + b[oc]) per pixel: a 1x1 convolution.
const std::vector<float> kWeights = {0.5f, -1.0f, 0.25f, 1.0f, 0.5f, -0.5f};
const std::vector<float> kBias = {0.1f, -0.2f};

float Input(int request, int64_t i) {
  return 0.01f * static_cast<float>((i * 7 + request * 13) % 101) - 0.5f;
}

// Replay adopts the application's context and queue, records a 1x1 conv +
// ReLU once, and runs it once per (input, output) pair, each run waiting on
// the previous one's event. The recq objects are released on return.
absl::Status Replay(cl_context cl_ctx, cl_command_queue queue, const std::vector<cl_mem>& inputs,
                    const std::vector<cl_mem>& outputs) {
  // recq: adopt, build, compile, record once.
  absl::StatusOr<recq::Context> ctx = recq::Context::Adopt(cl_ctx, queue);
  if (!ctx.ok()) return ctx.status();
  recq::GraphBuilder b;
  recq::TensorRef x = b.Input("x", {1, kC, kH, kW});
  recq::TensorRef y =
      b.Conv2D(x, b.Constant("w", {kOC, kC, 1, 1}, kWeights), b.Constant("b", {kOC}, kBias), {});
  b.Output(b.Relu(y), "y");
  absl::StatusOr<recq::Graph> graph = std::move(b).Build();
  if (!graph.ok()) return graph.status();
  absl::StatusOr<recq::Engine> engine = recq::Engine::Compile(*ctx, *graph);
  if (!engine.ok()) return engine.status();
  absl::StatusOr<recq::Recording> rec = engine->Record();
  if (!rec.ok()) return rec.status();
  std::printf("backend: %s (%s)\n", recq::BackendName(rec->backend()),
              rec->backend_reason().c_str());

  // Replays with per-request memory, chained by events, no host sync.
  cl_event previous = nullptr;
  for (int r = 0; r < kRequests; ++r) {
    recq::Bindings bindings;
    bindings.Set("x", inputs[r]);
    bindings.Set("y", outputs[r]);
    cl_event done = nullptr;
    absl::Status s = rec->Enqueue(
        queue, bindings,
        previous ? absl::MakeConstSpan(&previous, 1) : absl::Span<const cl_event>(), &done);
    if (!s.ok()) return s;
    if (previous) clReleaseEvent(previous);
    previous = done;
  }
  const cl_int wait = clWaitForEvents(1, &previous);
  clReleaseEvent(previous);
  if (wait != CL_SUCCESS) return absl::InternalError("clWaitForEvents failed");
  return absl::OkStatus();
}

}  // namespace

int main() {
  // The application's own OpenCL objects.
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    std::fprintf(stderr, "no OpenCL device\n");
    return 1;
  }
  cl_int err = CL_SUCCESS;
  cl_context cl_ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueueWithProperties(cl_ctx, device, nullptr, &err);
  const size_t in_bytes = kC * kH * kW * sizeof(float);
  const size_t out_bytes = kOC * kH * kW * sizeof(float);
  std::vector<cl_mem> inputs, outputs;
  for (int r = 0; r < kRequests; ++r) {
    std::vector<float> host(kC * kH * kW);
    for (size_t i = 0; i < host.size(); ++i) host[i] = Input(r, static_cast<int64_t>(i));
    inputs.push_back(clCreateBuffer(cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_bytes,
                                    host.data(), &err));
    std::vector<float> poison(kOC * kH * kW, NAN);
    outputs.push_back(clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, out_bytes,
                                     poison.data(), &err));
  }

  if (absl::Status s = Replay(cl_ctx, queue, inputs, outputs); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }

  // Check every element of every request against the formula.
  int wrong = 0;
  for (int r = 0; r < kRequests; ++r) {
    std::vector<float> got(kOC * kH * kW);
    clEnqueueReadBuffer(queue, outputs[r], CL_TRUE, 0, out_bytes, got.data(), 0, nullptr, nullptr);
    for (int64_t oc = 0; oc < kOC; ++oc) {
      for (int64_t p = 0; p < kH * kW; ++p) {
        float expected = kBias[oc];
        for (int64_t c = 0; c < kC; ++c)
          expected += kWeights[oc * kC + c] * Input(r, c * kH * kW + p);
        expected = std::max(expected, 0.0f);
        if (!(std::fabs(got[oc * kH * kW + p] - expected) <= 1e-5f)) ++wrong;
      }
    }
  }
  std::printf("%d requests, %d wrong elements\n", kRequests, wrong);
  for (int r = 0; r < kRequests; ++r) {
    clReleaseMemObject(inputs[r]);
    clReleaseMemObject(outputs[r]);
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(cl_ctx);
  return wrong == 0 ? 0 : 1;
}
