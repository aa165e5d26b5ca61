// Concurrency stress: many threads, recordings and queues on one engine,
// every output checked bit for bit. CI runs a short version; scripts/soak.sh
// sets RECQ_STRESS_RUNS for the long one. TSan runs this suite
// (scripts/sanitize.sh tsan).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "testing/test_env.h"

namespace recq {
namespace {

constexpr int64_t kN = 4096;

int RunsFromEnv(int default_runs) {
  const char* text = std::getenv("RECQ_STRESS_RUNS");
  const int runs = text == nullptr ? 0 : std::atoi(text);
  return runs > 0 ? runs : default_runs;
}

std::vector<float> RandomValues(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(kN);
  for (float& x : v) x = dist(rng);
  return v;
}

// A per-thread queue of the shared context, released at scope end.
struct OwnQueue {
  explicit OwnQueue(const Context& context) {
    cl_int err = CL_SUCCESS;
    queue = clCreateCommandQueueWithProperties(context.context(), context.device(), nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
  }
  ~OwnQueue() {
    if (queue != nullptr) clReleaseCommandQueue(queue);
  }
  cl_command_queue queue = nullptr;
};

bool ReadAndCompare(cl_command_queue queue, cl_mem mem, const std::vector<float>& expected) {
  std::vector<float> got(expected.size(), NAN);
  if (clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, got.size() * sizeof(float), got.data(), 0,
                          nullptr, nullptr) != CL_SUCCESS) {
    return false;
  }
  return std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0;
}

class ConcurrencyStressTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    graph_ = testing::ChainGraph(12, kN);
    absl::StatusOr<Engine> engine = Engine::Compile(testing::SharedContext(), graph_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::make_unique<Engine>(*std::move(engine));
    absl::StatusOr<Recording> probe = engine_->Record({GetParam()});
    if (absl::IsUnavailable(probe.status())) GTEST_SKIP() << probe.status().message();
    ASSERT_TRUE(probe.ok()) << probe.status();
    // Expected outputs from one plain run per input, checked against the CPU
    // reference once.
    for (uint32_t i = 0; i < kInputs; ++i) {
      inputs_.push_back(RandomValues(100 + i));
      Tensor in = testing::NewTensor(TensorDesc{{kN}}, inputs_.back());
      Tensor out = testing::NewTensor(TensorDesc{{kN}});
      Bindings b;
      b.Set("x", in.mem());
      b.Set("y", out.mem());
      ASSERT_TRUE(probe->Run(b).ok());
      expected_.push_back(testing::Download(out));
      reference::HostTensor host{{kN}, inputs_.back()};
      const std::vector<float> ref = testing::ReferenceOutput(graph_, "x", host, "y");
      for (int64_t k = 0; k < kN; ++k) ASSERT_FLOAT_EQ(expected_.back()[k], ref[k]) << k;
    }
  }

  static constexpr uint32_t kInputs = 4;
  Graph graph_;
  std::unique_ptr<Engine> engine_;
  std::vector<std::vector<float>> inputs_;
  std::vector<std::vector<float>> expected_;
};

TEST_P(ConcurrencyStressTest, EightThreadsEightRecordingsEachOnOwnQueues) {
  constexpr int kThreads = 8, kRecordings = 8;
  const int runs = RunsFromEnv(40);
  std::atomic<int> checked{0}, wrong{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Context& context = testing::SharedContext();
      OwnQueue own(context);
      std::vector<Recording> recordings;
      for (int r = 0; r < kRecordings; ++r) {
        absl::StatusOr<Recording> rec = engine_->Record({GetParam()});
        if (!rec.ok()) {
          ++errors;
          return;
        }
        recordings.push_back(*std::move(rec));
      }
      std::vector<Tensor> ins, outs;
      for (uint32_t i = 0; i < kInputs; ++i) {
        ins.push_back(testing::NewTensor(TensorDesc{{kN}}, inputs_[i]));
      }
      for (int r = 0; r < kRecordings; ++r) outs.push_back(testing::NewTensor(TensorDesc{{kN}}));
      for (int run = 0; run < runs; ++run) {
        // Every recording runs once per round with a rotating input, then
        // the round's outputs are checked.
        for (int r = 0; r < kRecordings; ++r) {
          Bindings b;
          b.Set("x", ins[(run + r + t) % kInputs].mem());
          b.Set("y", outs[r].mem());
          if (!recordings[r].Enqueue(own.queue, b).ok()) ++errors;
        }
        for (int r = 0; r < kRecordings; ++r) {
          ++checked;
          if (!ReadAndCompare(own.queue, outs[r].mem(), expected_[(run + r + t) % kInputs])) {
            ++wrong;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "of " << checked.load() << " outputs";
  EXPECT_EQ(checked.load(), kThreads * kRecordings * runs);
}

TEST_P(ConcurrencyStressTest, SeveralThreadsEnqueueTheSameRecording) {
  constexpr int kThreads = 4;
  const int runs = RunsFromEnv(40) * 8;
  absl::StatusOr<Recording> shared = engine_->Record({GetParam()});
  ASSERT_TRUE(shared.ok()) << shared.status();
  std::atomic<int> checked{0}, wrong{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Context& context = testing::SharedContext();
      OwnQueue own(context);
      Tensor out = testing::NewTensor(TensorDesc{{kN}});
      std::vector<Tensor> ins;
      for (uint32_t i = 0; i < kInputs; ++i) {
        ins.push_back(testing::NewTensor(TensorDesc{{kN}}, inputs_[i]));
      }
      for (int run = 0; run < runs; ++run) {
        const uint32_t which = static_cast<uint32_t>(run + t) % kInputs;
        Bindings b;
        b.Set("x", ins[which].mem());
        b.Set("y", out.mem());
        // Alternate between the thread's own queue and Run (the context's
        // queue): the recording orders runs across queues itself.
        const absl::Status s = run % 2 == 0 ? shared->Enqueue(own.queue, b) : shared->Run(b);
        if (!s.ok()) {
          ++errors;
          continue;
        }
        if (run % 2 == 0 && clFinish(own.queue) != CL_SUCCESS) ++errors;
        ++checked;
        if (!ReadAndCompare(own.queue, out.mem(), expected_[which])) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "of " << checked.load() << " outputs";
  EXPECT_EQ(checked.load(), kThreads * runs);
}

INSTANTIATE_TEST_SUITE_P(Backends, ConcurrencyStressTest,
                         ::testing::Values(Backend::kReplay, Backend::kKhrCommandBuffer,
                                           Backend::kUnrecorded),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace recq
