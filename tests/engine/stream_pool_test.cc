// StreamPool: device lists, one model compiled for several devices (the one
// test device named twice), requests from several threads spread over every
// stream, outputs checked against the CPU reference.
#include "recq/stream_pool.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceListing Listing(const std::string& selector, cl_device_type type) {
  DeviceListing d;
  d.selector = selector;
  d.info.type = type;
  return d;
}

const std::vector<DeviceListing> kTwoGpusAndACpu = {Listing("gpu:0", CL_DEVICE_TYPE_GPU),
                                                    Listing("gpu:1", CL_DEVICE_TYPE_GPU),
                                                    Listing("cpu:0", CL_DEVICE_TYPE_CPU)};
const std::vector<DeviceListing> kOneCpu = {Listing("cpu:0", CL_DEVICE_TYPE_CPU)};

std::vector<std::string> Resolve(const std::string& list, const std::vector<DeviceListing>& d) {
  absl::StatusOr<std::vector<std::string>> r = ResolveDevices(list, d);
  EXPECT_TRUE(r.ok()) << list << ": " << r.status();
  return r.ok() ? *r : std::vector<std::string>{};
}

TEST(ResolveDevicesTest, AllAndBareIndicesMeanTheDefaultType) {
  EXPECT_THAT(Resolve("all", kTwoGpusAndACpu), ElementsAre("gpu:0", "gpu:1"));
  EXPECT_THAT(Resolve("0,1", kTwoGpusAndACpu), ElementsAre("gpu:0", "gpu:1"));
  EXPECT_THAT(Resolve(" 1 ", kTwoGpusAndACpu), ElementsAre("gpu:1"));
  EXPECT_THAT(Resolve("all", kOneCpu), ElementsAre("cpu:0"));
  EXPECT_THAT(Resolve("0,0", kOneCpu), ElementsAre("cpu:0", "cpu:0"));
}

TEST(ResolveDevicesTest, SpecsPassThrough) {
  EXPECT_THAT(Resolve("gpu:1,cpu:0,0:1,NVIDIA", kTwoGpusAndACpu),
              ElementsAre("gpu:1", "cpu:0", "0:1", "NVIDIA"));
  EXPECT_THAT(Resolve("ALL,cpu:0", kTwoGpusAndACpu), ElementsAre("gpu:0", "gpu:1", "cpu:0"));
}

TEST(ResolveDevicesTest, Errors) {
  absl::StatusOr<std::vector<std::string>> out = ResolveDevices("0,2", kTwoGpusAndACpu);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(out.status().message(),
              HasSubstr("index 2 is out of range; there are 2 gpu devices"));
  out = ResolveDevices("1", kOneCpu);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("there is 1 cpu device"));
  for (const char* bad : {"", "0,", ",1", "0,,1"}) {
    out = ResolveDevices(bad, kTwoGpusAndACpu);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(out.status().message(), HasSubstr("empty item")) << bad;
  }
}

// A small conv -> relu -> pool -> fully connected model with random weights.
Graph SmallModel() {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 4, 8, 8});
  TensorRef w = b.Constant("w", {6, 4, 3, 3}, reference::RandomTensor({6, 4, 3, 3}, 11).data);
  TensorRef bias = b.Constant("b", {6}, reference::RandomTensor({6}, 12).data);
  Conv2DAttrs conv;
  conv.pads = {1, 1, 1, 1};
  TensorRef h = b.Relu(b.Conv2D(x, w, bias, conv));
  TensorRef fc_w = b.Constant("fc_w", {3, 6}, reference::RandomTensor({3, 6}, 13).data);
  TensorRef fc_b = b.Constant("fc_b", {3}, reference::RandomTensor({3}, 14).data);
  b.Output(b.FullyConnected(b.Flatten(b.GlobalAveragePool(h)), fc_w, fc_b), "y");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

// The test device's selector, named `n` times: one device driven as n.
std::vector<std::string> TestDeviceTimes(int n) {
  const Context& ctx = testing::SharedContext();
  absl::StatusOr<std::vector<DeviceListing>> devices = ListDevices();
  EXPECT_TRUE(devices.ok()) << devices.status();
  std::string selector;
  for (const DeviceListing& d : *devices) {
    if (d.device == ctx.device()) selector = d.selector;
  }
  EXPECT_FALSE(selector.empty());
  return std::vector<std::string>(n, selector);
}

TEST(StreamPoolTest, OneDeviceAsTwoStreamsInterleaveDevices) {
  const Graph graph = SmallModel();
  StreamPoolOptions options;
  options.devices = TestDeviceTimes(2);
  options.streams_per_device = 3;
  RECQ_ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamPool> pool, StreamPool::Create(graph, options));
  ASSERT_EQ(pool->device_count(), 2u);
  ASSERT_EQ(pool->stream_count(), 6u);
  // Two devices: two contexts and two engines, each compiled from the one graph.
  EXPECT_NE(pool->engine(0).context().context(), pool->engine(1).context().context());
  std::set<cl_command_queue> queues;
  for (size_t i = 0; i < pool->stream_count(); ++i) {
    StreamPool::Stream& s = pool->stream(i);
    EXPECT_EQ(s.index(), i);
    EXPECT_EQ(s.device(), i % 2);
    EXPECT_EQ(s.context().context(), pool->engine(i % 2).context().context());
    EXPECT_NE(s.queue(), s.context().queue());  // its own queue, not the context's
    queues.insert(s.queue());
    ASSERT_NE(s.tensor("x"), nullptr);
    ASSERT_NE(s.tensor("y"), nullptr);
    EXPECT_EQ(s.tensor("nope"), nullptr);
    EXPECT_EQ(s.bindings().Get("x"), s.tensor("x")->mem());
    EXPECT_EQ(s.bindings().Get("y"), s.tensor("y")->mem());
  }
  EXPECT_EQ(queues.size(), 6u);
}

TEST(StreamPoolTest, InferFromManyThreadsMatchesTheCpuReference) {
  const Graph graph = SmallModel();
  StreamPoolOptions options;
  options.devices = TestDeviceTimes(2);
  options.streams_per_device = 2;
  RECQ_ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamPool> pool, StreamPool::Create(graph, options));
  constexpr int kRequests = 24;
  std::vector<std::vector<float>> got(kRequests);
  std::vector<absl::Status> status(kRequests);
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int r = next++; r < kRequests; r = next++) {
        std::vector<float> x = reference::RandomTensor({1, 4, 8, 8}, 100 + r).data;
        absl::StatusOr<std::map<std::string, std::vector<float>>> out = pool->Infer({{"x", x}});
        status[r] = out.status();
        if (out.ok()) got[r] = out->at("y");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kRequests; ++r) {
    ASSERT_TRUE(status[r].ok()) << "request " << r << ": " << status[r];
    std::vector<float> expected =
        testing::ReferenceOutput(graph, "x", reference::RandomTensor({1, 4, 8, 8}, 100 + r), "y");
    reference::CompareResult cmp = reference::Compare(got[r], expected, 1e-5f, 1e-4f);
    EXPECT_TRUE(cmp.ok()) << "request " << r << ": " << cmp.ToString();
  }
}

TEST(StreamPoolTest, LeasesAreExclusiveAndSpreadOverDevices) {
  const Graph graph = SmallModel();
  StreamPoolOptions options;
  options.devices = TestDeviceTimes(2);
  options.streams_per_device = 2;
  RECQ_ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamPool> pool, StreamPool::Create(graph, options));
  {
    StreamPool::Lease a = pool->Acquire();
    StreamPool::Lease b = pool->Acquire();
    // The two longest-free streams are on different devices.
    EXPECT_NE(a->device(), b->device());
    StreamPool::Lease c = pool->Acquire();
    StreamPool::Lease d = pool->Acquire();
    std::set<size_t> held = {a->index(), b->index(), c->index(), d->index()};
    EXPECT_EQ(held.size(), 4u);
    // A fifth Acquire waits until a lease is given back.
    std::atomic<bool> got{false};
    const size_t b_index = b->index();
    std::thread waiter([&] {
      StreamPool::Lease e = pool->Acquire();
      got = true;
      EXPECT_EQ(e->index(), b_index);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(got.load());
    { StreamPool::Lease moved = std::move(b); }  // gives b's stream back
    waiter.join();
    EXPECT_TRUE(got.load());
  }
}

TEST(StreamPoolTest, InferRejectsBadInputs) {
  StreamPoolOptions options;
  options.devices = TestDeviceTimes(1);
  RECQ_ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamPool> pool,
                            StreamPool::Create(SmallModel(), options));
  std::vector<float> x(4 * 8 * 8, 0.5f), short_x(10, 0.5f);
  auto missing = pool->Infer({});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("input 'x' (1x4x8x8 float32) is missing"));
  auto size = pool->Infer({{"x", short_x}});
  ASSERT_FALSE(size.ok());
  EXPECT_THAT(size.status().message(),
              HasSubstr("input 'x' has 10 floats; 1x4x8x8 float32 needs 256"));
  auto unknown = pool->Infer({{"x", x}, {"z", x}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("no input 'z'"));
  // The pool still works after the errors.
  auto ok = pool->Infer({{"x", x}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->at("y").size(), 3u);
}

TEST(StreamPoolTest, CreateErrorsNameTheDevice) {
  StreamPoolOptions options;
  options.devices = {"no-such-device-xyz"};
  absl::StatusOr<std::unique_ptr<StreamPool>> pool = StreamPool::Create(SmallModel(), options);
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(pool.status().message(),
              HasSubstr("StreamPool device 0 ('no-such-device-xyz'): no OpenCL device matches"));
  options.devices = TestDeviceTimes(1);
  options.streams_per_device = 0;
  pool = StreamPool::Create(SmallModel(), options);
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pool.status().message(), HasSubstr("streams_per_device must be at least 1, got 0"));
}

}  // namespace
}  // namespace recq
