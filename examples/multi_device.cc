// One process driving several devices: a model is built once, compiled for
// every device by a recq::StreamPool, recorded several times per device
// (streams, each with its own in-order queue), and requests from several
// client threads go to whichever stream is free. Every output is checked
// against the same model computed on the host; exits non-zero if any is wrong.
//
//   multi_device [--streams=N] [--requests=N] [DEVICE...]
//
// DEVICE is what `recq bench --devices` takes: "all" (the default: every GPU,
// else every CPU), an index, or a device spec (gpu:1, P:D, a name). Naming a
// device twice drives it as two devices, which is how CI runs this example
// on PoCL's one CPU device:  multi_device --streams=2 cpu:0 cpu:0
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "recq/recq.h"
#include "recq/stream_pool.h"

namespace {

constexpr int64_t kC = 3, kH = 16, kW = 16, kHidden = 4, kClasses = 5;

// The model: relu(conv1x1(x)) -> global average pool -> fully connected.
struct Weights {
  std::vector<float> conv_w, conv_b, fc_w, fc_b;
};

Weights MakeWeights() {
  Weights w;
  for (int i = 0; i < kHidden * kC; ++i) w.conv_w.push_back(0.1f * ((i * 7) % 11) - 0.5f);
  for (int i = 0; i < kHidden; ++i) w.conv_b.push_back(0.05f * i - 0.1f);
  for (int i = 0; i < kClasses * kHidden; ++i) w.fc_w.push_back(0.2f * ((i * 5) % 7) - 0.6f);
  for (int i = 0; i < kClasses; ++i) w.fc_b.push_back(0.01f * i);
  return w;
}

absl::StatusOr<recq::Graph> BuildModel(const Weights& w) {
  recq::GraphBuilder b;
  recq::TensorRef x = b.Input("x", {1, kC, kH, kW});
  recq::TensorRef h = b.Relu(b.Conv2D(x, b.Constant("conv_w", {kHidden, kC, 1, 1}, w.conv_w),
                                      b.Constant("conv_b", {kHidden}, w.conv_b), {}));
  recq::TensorRef pooled = b.Flatten(b.GlobalAveragePool(h));
  b.Output(b.FullyConnected(pooled, b.Constant("fc_w", {kClasses, kHidden}, w.fc_w),
                            b.Constant("fc_b", {kClasses}, w.fc_b)),
           "y");
  return std::move(b).Build();
}

std::vector<float> Input(int request) {
  std::vector<float> x(kC * kH * kW);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.01f * static_cast<float>((i * 13 + request * 29) % 97) - 0.45f;
  }
  return x;
}

std::vector<float> Expected(const Weights& w, const std::vector<float>& x) {
  std::vector<double> pooled(kHidden, 0.0);
  for (int64_t o = 0; o < kHidden; ++o) {
    for (int64_t p = 0; p < kH * kW; ++p) {
      double v = w.conv_b[o];
      for (int64_t c = 0; c < kC; ++c) v += w.conv_w[o * kC + c] * x[c * kH * kW + p];
      pooled[o] += std::max(v, 0.0) / (kH * kW);
    }
  }
  std::vector<float> y(kClasses);
  for (int64_t k = 0; k < kClasses; ++k) {
    double v = w.fc_b[k];
    for (int64_t o = 0; o < kHidden; ++o) v += w.fc_w[k * kHidden + o] * pooled[o];
    y[k] = static_cast<float>(v);
  }
  return y;
}

// RunRequest runs one request on a leased stream, zero-copy style: the input
// is written into the stream's own tensor on the stream's own queue, the
// recording is enqueued behind it, and the output is read back.
absl::Status RunRequest(recq::StreamPool::Stream& s, const std::vector<float>& x,
                        std::vector<float>* y) {
  cl_command_queue q = s.queue();
  cl_int err = clEnqueueWriteBuffer(q, s.tensor("x")->mem(), CL_FALSE, 0, x.size() * sizeof(float),
                                    x.data(), 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return absl::InternalError("clEnqueueWriteBuffer failed");
  if (absl::Status st = s.recording().Enqueue(q, s.bindings()); !st.ok()) return st;
  y->assign(kClasses, NAN);
  err = clEnqueueReadBuffer(q, s.tensor("y")->mem(), CL_TRUE, 0, y->size() * sizeof(float),
                            y->data(), 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return absl::InternalError("clEnqueueReadBuffer failed");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  int streams = 2, requests = 64;
  std::string devices;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--streams=", 10) == 0) {
      streams = std::atoi(argv[i] + 10);
    } else if (std::strncmp(argv[i], "--requests=", 11) == 0) {
      requests = std::atoi(argv[i] + 11);
    } else {
      devices += (devices.empty() ? "" : ",") + std::string(argv[i]);
    }
  }
  if (devices.empty()) devices = "all";

  const Weights weights = MakeWeights();
  absl::StatusOr<recq::Graph> graph = BuildModel(weights);  // built once, shared by every device
  absl::StatusOr<std::vector<std::string>> specs = recq::ResolveDevices(devices);
  if (!graph.ok() || !specs.ok()) {
    std::fprintf(stderr, "%s\n",
                 (!graph.ok() ? graph.status() : specs.status()).ToString().c_str());
    return 1;
  }
  recq::StreamPoolOptions options;
  options.devices = *specs;
  options.streams_per_device = streams;
  absl::StatusOr<std::unique_ptr<recq::StreamPool>> pool =
      recq::StreamPool::Create(*graph, options);
  if (!pool.ok()) {
    std::fprintf(stderr, "%s\n", pool.status().ToString().c_str());
    return 1;
  }
  for (size_t d = 0; d < (*pool)->device_count(); ++d) {
    const recq::Engine& e = (*pool)->engine(d);
    std::printf("device %zu: %s ('%s'), %zu dispatches\n", d,
                e.context().device_info().name.c_str(), options.devices[d].c_str(),
                e.stats().dispatches);
  }

  // Client threads, as many as streams; each request leases the next free stream.
  std::atomic<int> next{0}, wrong{0}, failed{0};
  std::vector<std::atomic<int>> per_device((*pool)->device_count());
  std::mutex print_mu;
  std::vector<std::thread> clients;
  for (size_t t = 0; t < (*pool)->stream_count(); ++t) {
    clients.emplace_back([&] {
      for (int r = next++; r < requests; r = next++) {
        std::vector<float> x = Input(r), y;
        recq::StreamPool::Lease stream = (*pool)->Acquire();
        absl::Status s = RunRequest(*stream, x, &y);
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(print_mu);
          std::fprintf(stderr, "request %d: %s\n", r, s.ToString().c_str());
          ++failed;
          continue;
        }
        ++per_device[stream->device()];
        std::vector<float> expected = Expected(weights, x);
        for (int64_t k = 0; k < kClasses; ++k) {
          if (!(std::fabs(y[k] - expected[k]) <= 1e-4f + 1e-4f * std::fabs(expected[k]))) ++wrong;
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  std::printf("%d requests over %zu devices x %d streams:", requests, (*pool)->device_count(),
              streams);
  for (size_t d = 0; d < per_device.size(); ++d)
    std::printf(" device %zu ran %d;", d, per_device[d].load());
  std::printf(" %d wrong values, %d failed requests\n", wrong.load(), failed.load());
  return wrong == 0 && failed == 0 ? 0 : 1;
}
