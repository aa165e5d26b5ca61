// Binding validation: every bad binding is a clear status naming the binding,
// and the recording keeps working afterwards.
#include <cmath>

#include "backends/opencl/cl_handle.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using ::testing::HasSubstr;
using testing::NewTensor;
using testing::SharedContext;

class BindingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GraphBuilder b;
    TensorRef x = b.Input("input", {2, 3, 4, 5});
    b.Output(b.Relu(x), "prob");
    graph_ = *std::move(b).Build();
    auto engine = Engine::Compile(SharedContext(), graph_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::make_unique<Engine>(*std::move(engine));
    auto rec = engine_->Record();
    ASSERT_TRUE(rec.ok()) << rec.status();
    rec_ = std::make_unique<Recording>(*std::move(rec));
    host_ = reference::RandomTensor({2, 3, 4, 5}, 5);
    in_ = NewTensor({host_.shape}, host_.data);
    out_ = NewTensor({{2, 3, 4, 5}});
  }

  // ExpectStillWorks runs a good binding set and checks every element.
  void ExpectStillWorks() {
    RECQ_ASSERT_OK(out_.Fill(NAN));
    Bindings b;
    b.Set("input", in_);
    b.Set("prob", out_);
    RECQ_ASSERT_OK(rec_->Run(b));
    std::vector<float> got = Download(out_);
    ASSERT_EQ(got.size(), host_.data.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], std::max(host_.data[i], 0.0f)) << i;
  }

  Graph graph_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Recording> rec_;
  reference::HostTensor host_;
  Tensor in_, out_;
};

TEST_F(BindingsTest, GoodBindingsRun) { ExpectStillWorks(); }

// A temporary Tensor bound by Set stays alive with the bindings.
TEST_F(BindingsTest, TemporaryTensorsStayAliveWhileBound) {
  Bindings b;
  b.Set("input", NewTensor({host_.shape}, host_.data));
  {
    Tensor out = NewTensor({{2, 3, 4, 5}});
    RECQ_ASSERT_OK(out.Fill(NAN));
    b.Set("prob", out);
  }
  RECQ_ASSERT_OK(rec_->Run(b));
  Tensor out;
  for (const Bindings::Entry& e : b.entries()) {
    if (e.name == "prob") out = e.tensor;
  }
  ASSERT_EQ(out.mem(), b.Get("prob"));
  std::vector<float> got = Download(out);
  ASSERT_EQ(got.size(), host_.data.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], std::max(host_.data[i], 0.0f)) << i;
  ExpectStillWorks();
}

TEST_F(BindingsTest, UnknownName) {
  Bindings b;
  b.Set("input", in_);
  b.Set("prob", out_);
  b.Set("logits", out_);
  absl::Status s = rec_->Run(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("unknown binding 'logits'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'input'"));
  ExpectStillWorks();
}

TEST_F(BindingsTest, MissingBinding) {
  Bindings b;
  b.Set("input", in_);
  absl::Status s = rec_->Run(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("missing binding 'prob'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("480 bytes"));
  ExpectStillWorks();
}

TEST_F(BindingsTest, BufferTooSmallNamesBothSizes) {
  Tensor small = NewTensor({{2, 3, 4, 4}});
  Bindings b;
  b.Set("input", small);
  b.Set("prob", out_);
  absl::Status s = rec_->Run(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("binding 'input' has 384 bytes"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("needs 480"));
  ExpectStillWorks();
}

TEST_F(BindingsTest, LargerBufferIsAccepted) {
  Tensor big = NewTensor({{1000}});
  Bindings b;
  b.Set("input", in_);
  b.Set("prob", big);
  RECQ_ASSERT_OK(rec_->Run(b));
  std::vector<float> got = Download(big);
  for (size_t i = 0; i < host_.data.size(); ++i) ASSERT_EQ(got[i], std::max(host_.data[i], 0.0f));
  for (size_t i = host_.data.size(); i < got.size(); ++i) ASSERT_TRUE(std::isnan(got[i]));
}

TEST_F(BindingsTest, BufferFromAnotherContext) {
  auto other = Context::Create();
  ASSERT_TRUE(other.ok()) << other.status();
  auto foreign = Tensor::Allocate(*other, {{2, 3, 4, 5}});
  ASSERT_TRUE(foreign.ok());
  Bindings b;
  b.Set("input", *foreign);
  b.Set("prob", out_);
  absl::Status s = rec_->Run(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("binding 'input' belongs to another OpenCL context"));
  ExpectStillWorks();
}

TEST_F(BindingsTest, OutputAliasingAnotherBinding) {
  Bindings b;
  b.Set("input", in_);
  b.Set("prob", in_);
  absl::Status s = rec_->Run(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("binding 'prob' is the same cl_mem as binding 'input'"));
  ExpectStillWorks();
}

TEST_F(BindingsTest, NullMemory) {
  Bindings b;
  b.Set("input", static_cast<cl_mem>(nullptr));
  b.Set("prob", out_);
  absl::Status s = rec_->Run(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'input'"));
  ExpectStillWorks();
}

TEST_F(BindingsTest, QueueFromAnotherContextOrNull) {
  auto other = Context::Create();
  ASSERT_TRUE(other.ok());
  Bindings b;
  b.Set("input", in_);
  b.Set("prob", out_);
  absl::Status s = rec_->Enqueue(other->queue(), b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("another OpenCL context"));
  EXPECT_EQ(rec_->Enqueue(nullptr, b).code(), absl::StatusCode::kInvalidArgument);
  ExpectStillWorks();
}

TEST_F(BindingsTest, OutOfOrderQueueIsRejected) {
  const Context& ctx = SharedContext();
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_int err = CL_SUCCESS;
  cl::UniqueQueue q(clCreateCommandQueueWithProperties(ctx.context(), ctx.device(), props, &err));
  if (err != CL_SUCCESS) GTEST_SKIP() << "device has no out-of-order queues";
  Bindings b;
  b.Set("input", in_);
  b.Set("prob", out_);
  absl::Status s = rec_->Enqueue(q.get(), b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("out-of-order"));
  ExpectStillWorks();
}

TEST_F(BindingsTest, MovedFromRecording) {
  Recording moved = std::move(*rec_);
  Bindings b;
  b.Set("input", in_);
  b.Set("prob", out_);
  absl::Status s = rec_->Run(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("moved-from"));
  RECQ_ASSERT_OK(moved.Run(b));
}

TEST_F(BindingsTest, ForcingAnUnavailableBackendIsAClearError) {
  for (Backend backend : {Backend::kQcom, Backend::kKhrCommandBuffer}) {
    absl::StatusOr<Recording> r = engine_->Record({backend});
    if (r.ok()) continue;  // available on this device
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(BackendName(backend)));
  }
  ExpectStillWorks();
}

TEST(BackendNameTest, RoundTrips) {
  for (Backend b : {Backend::kAuto, Backend::kReplay, Backend::kKhrCommandBuffer, Backend::kQcom,
                    Backend::kUnrecorded}) {
    auto parsed = ParseBackend(BackendName(b));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, b);
  }
  EXPECT_EQ(ParseBackend("cuda").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace recq
