// Replay semantics of recordings: per-run memory substitution, recorded vs
// unrecorded equality, recovery after a failed run, concurrency, events.
#include <cmath>
#include <thread>

#include "backends/opencl/cl_handle.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/small_net.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using testing::NewTensor;
using testing::SharedContext;
using testing::SmallNet;

constexpr float kAtol = 1e-4f;  // float32 sums of <= 80 terms of magnitude ~1
constexpr float kRtol = 1e-4f;

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = SmallNet();
    auto engine = Engine::Compile(SharedContext(), graph_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::make_unique<Engine>(*std::move(engine));
  }

  reference::HostTensor Input(uint64_t seed) {
    return reference::RandomTensor({1, 8, 10, 12}, seed);
  }
  std::vector<float> Expected(const reference::HostTensor& in) {
    return testing::ReferenceOutput(graph_, "x", in, "y");
  }
  TensorDesc OutDesc() const { return engine_->outputs()[0].desc; }

  Graph graph_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(ReplayTest, SubstitutedInputsMatchReferenceAndFreshUnrecordedRuns) {
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine_->Record({Backend::kReplay}));
  EXPECT_EQ(rec.backend(), Backend::kReplay);
  Tensor out = NewTensor(OutDesc());
  for (uint64_t run = 0; run < 6; ++run) {
    auto host = Input(100 + run);
    Tensor in = NewTensor({host.shape}, host.data);
    RECQ_ASSERT_OK(out.Fill(NAN));
    Bindings b;
    b.Set("x", in);
    b.Set("y", out);
    RECQ_ASSERT_OK(rec.Run(b));
    std::vector<float> got = Download(out);
    auto cmp = reference::Compare(got, Expected(host), kAtol, kRtol);
    EXPECT_TRUE(cmp.ok()) << "run " << run << ": " << cmp.ToString();

    // A fresh unrecorded run on the same input gives the same bits.
    Tensor out2 = NewTensor(OutDesc());
    RECQ_ASSERT_OK(engine_->RunUnrecorded([&] {
      Bindings u;
      u.Set("x", in);
      u.Set("y", out2);
      return u;
    }()));
    EXPECT_EQ(Download(out2), got) << "run " << run;
  }
}

TEST_F(ReplayTest, ChangingOnlyTheOutputBinding) {
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine_->Record());
  auto host = Input(7);
  Tensor in = NewTensor({host.shape}, host.data);
  Tensor out_a = NewTensor(OutDesc());
  Tensor out_b = NewTensor(OutDesc());
  Bindings b;
  b.Set("x", in);
  b.Set("y", out_a);
  RECQ_ASSERT_OK(rec.Run(b));
  b.Set("y", out_b);
  RECQ_ASSERT_OK(rec.Run(b));
  std::vector<float> expected = Expected(host);
  EXPECT_TRUE(reference::Compare(Download(out_a), expected, kAtol, kRtol).ok());
  auto cmp = reference::Compare(Download(out_b), expected, kAtol, kRtol);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  // Switching back writes out_a again, and leaves out_b alone.
  RECQ_ASSERT_OK(out_a.Fill(NAN));
  RECQ_ASSERT_OK(out_b.Fill(-7.0f));
  b.Set("y", out_a);
  RECQ_ASSERT_OK(rec.Run(b));
  EXPECT_TRUE(reference::Compare(Download(out_a), expected, kAtol, kRtol).ok());
  for (float v : Download(out_b)) ASSERT_EQ(v, -7.0f);
}

TEST_F(ReplayTest, ReplayAfterAFailedRunStillWorks) {
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine_->Record());
  auto host1 = Input(21), host2 = Input(22);
  Tensor in1 = NewTensor({host1.shape}, host1.data);
  Tensor in2 = NewTensor({host2.shape}, host2.data);
  Tensor out = NewTensor(OutDesc());
  Tensor tiny = NewTensor({{3}});
  Bindings good;
  good.Set("x", in1);
  good.Set("y", out);
  RECQ_ASSERT_OK(rec.Run(good));
  Bindings bad;
  bad.Set("x", tiny);
  bad.Set("y", out);
  EXPECT_EQ(rec.Run(bad).code(), absl::StatusCode::kInvalidArgument);
  RECQ_ASSERT_OK(out.Fill(NAN));
  good.Set("x", in2);
  RECQ_ASSERT_OK(rec.Run(good));
  auto cmp = reference::Compare(Download(out), Expected(host2), kAtol, kRtol);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST_F(ReplayTest, RecordedAndUnrecordedOutputsAreIdentical) {
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine_->Record({Backend::kReplay}));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording direct, engine_->Record({Backend::kUnrecorded}));
  EXPECT_EQ(direct.backend(), Backend::kUnrecorded);
  for (uint64_t seed : {31u, 32u, 33u}) {
    auto host = Input(seed);
    Tensor in = NewTensor({host.shape}, host.data);
    Tensor out1 = NewTensor(OutDesc()), out2 = NewTensor(OutDesc());
    Bindings b1, b2;
    b1.Set("x", in);
    b1.Set("y", out1);
    b2.Set("x", in);
    b2.Set("y", out2);
    RECQ_ASSERT_OK(rec.Run(b1));
    RECQ_ASSERT_OK(direct.Run(b2));
    std::vector<float> v1 = Download(out1);
    EXPECT_EQ(v1, Download(out2));
    EXPECT_TRUE(reference::Compare(v1, Expected(host), kAtol, kRtol).ok());
  }
}

TEST_F(ReplayTest, RecordingOutlivesItsEngineHandle) {
  absl::StatusOr<Recording> rec = engine_->Record();
  ASSERT_TRUE(rec.ok()) << rec.status();
  engine_.reset();
  auto host = Input(41);
  Tensor in = NewTensor({host.shape}, host.data);
  Tensor out = NewTensor({{1, 4, 10, 12}});
  Bindings b;
  b.Set("x", in);
  b.Set("y", out);
  RECQ_ASSERT_OK(rec->Run(b));
  EXPECT_TRUE(reference::Compare(Download(out), Expected(host), kAtol, kRtol).ok());
}

TEST_F(ReplayTest, TwoRecordingsOnTwoQueuesFromTwoThreads) {
  const Context& ctx = SharedContext();
  cl_int err = CL_SUCCESS;
  cl::UniqueQueue q1(
      clCreateCommandQueueWithProperties(ctx.context(), ctx.device(), nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  cl::UniqueQueue q2(
      clCreateCommandQueueWithProperties(ctx.context(), ctx.device(), nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording r1, engine_->Record());
  RECQ_ASSERT_OK_AND_ASSIGN(Recording r2, engine_->Record());
  constexpr int kRuns = 8;
  std::vector<reference::HostTensor> hosts;
  std::vector<Tensor> ins, outs;
  for (int i = 0; i < 2 * kRuns; ++i) {
    hosts.push_back(Input(500 + i));
    ins.push_back(NewTensor({hosts.back().shape}, hosts.back().data));
    outs.push_back(NewTensor(OutDesc()));
  }
  auto worker = [&](Recording* rec, cl_command_queue q, int first, absl::Status* status) {
    for (int i = first; i < first + kRuns && status->ok(); ++i) {
      Bindings b;
      b.Set("x", ins[i]);
      b.Set("y", outs[i]);
      *status = rec->Enqueue(q, b);
    }
    if (status->ok() && clFinish(q) != CL_SUCCESS) *status = absl::InternalError("clFinish");
  };
  absl::Status s1, s2;
  std::thread t1(worker, &r1, q1.get(), 0, &s1);
  std::thread t2(worker, &r2, q2.get(), kRuns, &s2);
  t1.join();
  t2.join();
  RECQ_ASSERT_OK(s1);
  RECQ_ASSERT_OK(s2);
  for (int i = 0; i < 2 * kRuns; ++i) {
    auto cmp = reference::Compare(Download(outs[i]), Expected(hosts[i]), kAtol, kRtol);
    EXPECT_TRUE(cmp.ok()) << "run " << i << ": " << cmp.ToString();
  }
}

TEST_F(ReplayTest, OneRecordingAlternatingQueuesStaysOrdered) {
  const Context& ctx = SharedContext();
  cl_int err = CL_SUCCESS;
  cl::UniqueQueue q2(
      clCreateCommandQueueWithProperties(ctx.context(), ctx.device(), nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine_->Record());
  std::vector<reference::HostTensor> hosts;
  std::vector<Tensor> ins, outs;
  for (int i = 0; i < 6; ++i) {
    hosts.push_back(Input(700 + i));
    ins.push_back(NewTensor({hosts.back().shape}, hosts.back().data));
    outs.push_back(NewTensor(OutDesc()));
    Bindings b;
    b.Set("x", ins[i]);
    b.Set("y", outs[i]);
    RECQ_ASSERT_OK(rec.Enqueue(i % 2 ? q2.get() : ctx.queue(), b));
  }
  ASSERT_EQ(clFinish(ctx.queue()), CL_SUCCESS);
  ASSERT_EQ(clFinish(q2.get()), CL_SUCCESS);
  for (int i = 0; i < 6; ++i) {
    auto cmp = reference::Compare(Download(outs[i]), Expected(hosts[i]), kAtol, kRtol);
    EXPECT_TRUE(cmp.ok()) << "run " << i << ": " << cmp.ToString();
  }
}

TEST_F(ReplayTest, WaitListHoldsTheRunAndDoneEventCompletes) {
  const Context& ctx = SharedContext();
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine_->Record());
  auto host = Input(81);
  Tensor in = NewTensor({host.shape}, host.data);
  Tensor out = NewTensor(OutDesc());
  cl_int err = CL_SUCCESS;
  cl::UniqueEvent gate(clCreateUserEvent(ctx.context(), &err));
  ASSERT_EQ(err, CL_SUCCESS);
  Bindings b;
  b.Set("x", in);
  b.Set("y", out);
  cl_event gate_event = gate.get();
  cl::UniqueEvent done;
  RECQ_ASSERT_OK(rec.Enqueue(ctx.queue(), b, absl::MakeConstSpan(&gate_event, 1), done.out()));
  ASSERT_TRUE(done);
  ASSERT_EQ(clFlush(ctx.queue()), CL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  cl_int status = 0;
  ASSERT_EQ(clGetEventInfo(done.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                           nullptr),
            CL_SUCCESS);
  EXPECT_NE(status, CL_COMPLETE) << "the run started before its wait list completed";
  ASSERT_EQ(clSetUserEventStatus(gate.get(), CL_COMPLETE), CL_SUCCESS);
  cl_event done_event = done.get();
  ASSERT_EQ(clWaitForEvents(1, &done_event), CL_SUCCESS);
  auto cmp = reference::Compare(Download(out), Expected(host), kAtol, kRtol);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

TEST_F(ReplayTest, ProfileTimesEveryDispatchAndWritesTheOutput) {
  auto host = Input(91);
  Tensor in = NewTensor({host.shape}, host.data);
  Tensor out = NewTensor(OutDesc());
  Bindings b;
  b.Set("x", in);
  b.Set("y", out);
  RECQ_ASSERT_OK_AND_ASSIGN(std::vector<DispatchProfile> profile, engine_->Profile(b));
  ASSERT_EQ(profile.size(), engine_->stats().dispatches);
  ASSERT_FALSE(profile.empty());
  EXPECT_EQ(profile[0].start_ms, 0.0);
  for (size_t i = 0; i < profile.size(); ++i) {
    const DispatchProfile& p = profile[i];
    EXPECT_GE(p.device_ms, 0.0) << p.label;
    EXPECT_NE(p.label.find('/'), std::string::npos) << p.label;
    // One in-order queue: each dispatch starts after the one before it.
    if (i > 0) {
      EXPECT_GE(p.start_ms, profile[i - 1].start_ms) << p.label;
    }
  }
  auto cmp = reference::Compare(Download(out), Expected(host), kAtol, kRtol);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  Bindings missing;
  missing.Set("x", in);
  EXPECT_EQ(engine_->Profile(missing).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReplayChainTest, LongChainMatchesReference) {
  Graph g = testing::ChainGraph(64, 1000);
  EngineOptions no_fusion;
  no_fusion.optimize = false;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, no_fusion));
  EXPECT_EQ(engine.stats().dispatches, 64u);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record());
  for (uint64_t seed : {1u, 2u}) {
    auto host = reference::RandomTensor({1000}, seed);
    Tensor in = NewTensor({{1000}}, host.data);
    Tensor out = NewTensor({{1000}});
    Bindings b;
    b.Set("x", in);
    b.Set("y", out);
    RECQ_ASSERT_OK(rec.Run(b));
    auto cmp = reference::Compare(Download(out), testing::ReferenceOutput(g, "x", host, "y"), 1e-5f,
                                  1e-5f);
    EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  }
}

}  // namespace
}  // namespace recq
