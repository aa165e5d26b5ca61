// Sample (engine/ops/sampling.h) against the CPU reference: greedy, top_k and
// top_p give the reference's exact ids (the draw is defined in integers, so
// every device and backend must agree to the id), with temperatures, ties,
// 3-D and float16 logits, NaN and infinite logits, steps and seeds wider
// than 32 bits; the same recording replayed with another step draws again.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/graph_edit.h"
#include "engine/ops/sampling.h"
#include "engine/ops/typed.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/recq.h"
#include "reference/sampling_reference.h"

namespace recq::optest {
namespace {

using internal::SampleAttrs;
using internal::SampleMode;

SampleAttrs Greedy() { return {}; }
SampleAttrs TopK(int64_t k, float temperature = 1.0f, int64_t seed = 17) {
  SampleAttrs a;
  a.mode = SampleMode::kTopK;
  a.k = k;
  a.temperature = temperature;
  a.seed = seed;
  return a;
}
SampleAttrs TopP(float p, float temperature = 1.0f, int64_t seed = 29) {
  SampleAttrs a;
  a.mode = SampleMode::kTopP;
  a.p = p;
  a.temperature = temperature;
  a.seed = seed;
  return a;
}

// The harness's checks, at float32 only: under fp16 storage the logits are
// rounded to half before the op and the float32 reference's ids are not
// the right answer (float16 logits are checked as an input type below).
CheckOptions SampleChecks() {
  CheckOptions o = Exact();
  o.precisions = {EngineOptions::Precision::kFp32};
  return o;
}

struct Case {
  std::string name;
  std::vector<int64_t> shape;
  float lo, hi;
  SampleAttrs attrs;
  DataType dtype = DataType::kFloat32;
};

class SampleTest : public ::testing::TestWithParam<Case> {};

TEST_P(SampleTest, MatchesReference) {
  const Case& c = GetParam();
  OpGraphBuilder b;
  TensorRef logits = b.Input("logits", c.shape, c.lo, c.hi, c.dtype);
  // Steps up to 2^24: a reference HostTensor holds them exactly.
  TensorRef step = b.Input("step", {1}, 0.0f, 16777216.0f, DataType::kInt64);
  TensorRef ids = internal::Sample(b.graph(), logits, step, c.attrs);
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(ids), SampleChecks());
}

// GPT-2's vocabulary for the one-pass greedy and the full radix selections;
// smaller rows for the modes' parameters.
INSTANTIATE_TEST_SUITE_P(
    Modes, SampleTest,
    ::testing::Values(Case{"greedy_gpt2_vocab", {3, 50257}, -10.0f, 10.0f, Greedy()},
                      Case{"greedy_one_row_of_7", {1, 7}, -1.0f, 1.0f, Greedy()},
                      Case{"top_k_1", {2, 1000}, -4.0f, 4.0f, TopK(1)},
                      Case{"top_k_7", {2, 1000}, -4.0f, 4.0f, TopK(7)},
                      Case{"top_k_40_gpt2_vocab", {1, 50257}, -10.0f, 10.0f, TopK(40)},
                      Case{"top_k_above_vocab", {2, 300}, -2.0f, 2.0f, TopK(5000)},
                      Case{"top_k_cold", {2, 1000}, -4.0f, 4.0f, TopK(50, 0.25f)},
                      Case{"top_k_hot", {2, 1000}, -4.0f, 4.0f, TopK(50, 4.0f)},
                      Case{"top_p_005", {2, 1000}, -4.0f, 4.0f, TopP(0.05f)},
                      Case{"top_p_05", {2, 1000}, -4.0f, 4.0f, TopP(0.5f)},
                      Case{"top_p_09_gpt2_vocab", {1, 50257}, -10.0f, 10.0f, TopP(0.9f)},
                      Case{"top_p_1", {2, 1000}, -4.0f, 4.0f, TopP(1.0f)},
                      Case{"top_p_hot", {2, 1000}, -4.0f, 4.0f, TopP(0.8f, 3.0f)},
                      // A wide range: many weights underflow to 0.
                      Case{"top_p_wide_range", {2, 2000}, -200.0f, 200.0f, TopP(0.95f)},
                      Case{"sequence_last_row", {2, 3, 500}, -4.0f, 4.0f, TopK(20)},
                      Case{"float16_top_p", {2, 700}, -4.0f, 4.0f, TopP(0.7f), DataType::kFloat16},
                      Case{"float16_greedy", {2, 700}, -4.0f, 4.0f, Greedy(), DataType::kFloat16}),
    [](const auto& info) { return info.param.name; });

// Integer logits (drawn in [0, 4), cast to float): most logits tie, so the
// lowest-index rule decides greedy, top_k's cut and top_p's cut.
class SampleTiesTest : public ::testing::TestWithParam<SampleAttrs> {};

TEST_P(SampleTiesTest, LowerIndexFirst) {
  OpGraphBuilder b;
  TensorRef ints = b.Input("ints", {3, 400}, 0.0f, 4.0f, DataType::kInt64);
  TensorRef logits =
      b.graph().AddNode(internal::kCast, {ints}, internal::CastAttrs{DataType::kFloat32});
  TensorRef step = b.Input("step", {1}, 0.0f, 1000.0f, DataType::kInt64);
  TensorRef ids = internal::Sample(b.graph(), logits, step, GetParam());
  RECQ_EXPECT_MATCHES_REFERENCE(std::move(b).Build(ids), SampleChecks());
}

INSTANTIATE_TEST_SUITE_P(Modes, SampleTiesTest,
                         ::testing::Values(Greedy(), TopK(10), TopK(150), TopP(0.1f), TopP(0.6f)),
                         [](const auto& info) {
                           return absl::StrCat(internal::SampleModeName(info.param.mode), "_",
                                               info.index);
                         });

// --- direct runs with chosen values ---

Graph SampleGraph(int64_t batch, int64_t vocab, const SampleAttrs& attrs) {
  GraphBuilder b;
  TensorRef logits = b.Input("logits", {batch, vocab});
  TensorRef step = b.Input("step", {1}, DataType::kInt64);
  b.Output(internal::Sample(b, logits, step, attrs), "ids");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : Graph();
}

// A compiled Sample graph with its tensors, run with chosen logits and
// steps through one recording.
class Sampler {
 public:
  static absl::StatusOr<Sampler> Create(int64_t batch, int64_t vocab, const SampleAttrs& attrs,
                                        Backend backend) {
    const absl::StatusOr<Context>& ctx = SharedContext();
    if (!ctx.ok()) return ctx.status();
    Sampler s;
    s.batch_ = batch;
    absl::StatusOr<Engine> engine = Engine::Compile(*ctx, SampleGraph(batch, vocab, attrs));
    if (!engine.ok()) return engine.status();
    absl::StatusOr<Recording> rec = engine->Record({backend});
    if (!rec.ok()) return rec.status();
    absl::StatusOr<Tensor> logits = Tensor::Allocate(*ctx, {{batch, vocab}});
    absl::StatusOr<Tensor> step = Tensor::Allocate(*ctx, {{1}, DataType::kInt64});
    absl::StatusOr<Tensor> ids = Tensor::Allocate(*ctx, {{batch, 1}, DataType::kInt64});
    for (const absl::Status& st : {logits.status(), step.status(), ids.status()}) {
      if (!st.ok()) return st;
    }
    s.engine_ = std::make_shared<Engine>(*std::move(engine));
    s.recording_ = std::make_shared<Recording>(*std::move(rec));
    s.logits_ = *logits;
    s.step_ = *step;
    s.ids_ = *ids;
    return s;
  }

  absl::Status SetLogits(const std::vector<float>& values) { return logits_.Upload(values); }

  // Run poisons the ids, runs the recording at `step` and returns the ids.
  absl::StatusOr<std::vector<int64_t>> Run(int64_t step) {
    const std::vector<int64_t> poison(batch_, -7);
    if (absl::Status s = ids_.Upload(poison); !s.ok()) return s;
    const std::vector<int64_t> steps = {step};
    if (absl::Status s = step_.Upload(steps); !s.ok()) return s;
    Bindings b;
    b.Set("logits", logits_);
    b.Set("step", step_);
    b.Set("ids", ids_);
    if (absl::Status s = recording_->Run(b); !s.ok()) return s;
    return ids_.DownloadAs<int64_t>();
  }

 private:
  int64_t batch_ = 0;
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<Recording> recording_;
  Tensor logits_, step_, ids_;
};

std::vector<float> RandomLogits(size_t n, float lo, float hi) {
  std::mt19937_64 rng(NextSeed());
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<int64_t> ReferenceIds(const std::vector<float>& logits, int64_t batch, int64_t step,
                                  const SampleAttrs& attrs) {
  const int64_t vocab = static_cast<int64_t>(logits.size()) / batch;
  std::vector<int64_t> ids(batch);
  for (int64_t b = 0; b < batch; ++b) {
    ids[b] = reference::SampleReferenceRow(logits.data() + b * vocab, vocab, b, step, attrs);
  }
  return ids;
}

// Every backend this device records with (and the unrecorded path) gives
// the reference's ids, run after run.
TEST(SampleBackendsTest, EveryBackendGivesTheSameIds) {
  const absl::StatusOr<Context>& ctx = SharedContext();
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  constexpr int64_t kBatch = 3, kVocab = 2000;
  const std::vector<float> logits = RandomLogits(kBatch * kVocab, -3.0f, 3.0f);
  int backends = 0;
  for (const SampleAttrs& attrs : {TopK(64, 0.8f), TopP(0.9f, 1.2f)}) {
    for (Backend backend : RegisteredBackends()) {
      if (!BackendAvailable(*ctx, backend).ok()) continue;
      SCOPED_TRACE(BackendName(backend));
      absl::StatusOr<Sampler> s = Sampler::Create(kBatch, kVocab, attrs, backend);
      ASSERT_TRUE(s.ok()) << s.status();
      ASSERT_TRUE(s->SetLogits(logits).ok());
      for (int64_t step : {int64_t{3}, int64_t{3}, int64_t{11}}) {
        absl::StatusOr<std::vector<int64_t>> ids = s->Run(step);
        ASSERT_TRUE(ids.ok()) << ids.status();
        EXPECT_EQ(*ids, ReferenceIds(logits, kBatch, step, attrs)) << "step " << step;
      }
      ++backends;
    }
  }
  EXPECT_GE(backends, 4);  // two modes on replay and unrecorded at least
}

// One recording replayed with the step advanced draws anew each time, and
// each draw is the reference's: the kernel reads the step when it runs.
TEST(SampleBackendsTest, ReplayWithAnotherStepDrawsAgain) {
  constexpr int64_t kBatch = 2, kVocab = 500;
  const SampleAttrs attrs = TopP(1.0f);
  absl::StatusOr<Sampler> s = Sampler::Create(kBatch, kVocab, attrs, Backend::kReplay);
  ASSERT_TRUE(s.ok()) << s.status();
  // Flat logits: 500 nearly equally likely ids.
  const std::vector<float> logits = RandomLogits(kBatch * kVocab, -0.1f, 0.1f);
  ASSERT_TRUE(s->SetLogits(logits).ok());
  std::set<int64_t> seen;
  for (int64_t step = 0; step < 12; ++step) {
    absl::StatusOr<std::vector<int64_t>> ids = s->Run(step);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(*ids, ReferenceIds(logits, kBatch, step, attrs)) << "step " << step;
    seen.insert((*ids)[0]);
  }
  // 12 draws of one of ~500 ids all equal has probability below 1e-30.
  EXPECT_GT(seen.size(), 1u);
}

// Steps and seeds wider than 32 bits reach the counter and the key whole.
TEST(SampleBackendsTest, WideStepsAndSeeds) {
  constexpr int64_t kBatch = 4, kVocab = 300;
  const std::vector<float> logits = RandomLogits(kBatch * kVocab, -1.0f, 1.0f);
  for (int64_t seed : {int64_t{-5}, int64_t{1} << 40, int64_t{12345}}) {
    const SampleAttrs attrs = TopK(kVocab, 1.0f, seed);
    absl::StatusOr<Sampler> s = Sampler::Create(kBatch, kVocab, attrs, Backend::kReplay);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_TRUE(s->SetLogits(logits).ok());
    for (int64_t step : {(int64_t{1} << 32) + 3, int64_t{3}, std::numeric_limits<int64_t>::max()}) {
      absl::StatusOr<std::vector<int64_t>> ids = s->Run(step);
      ASSERT_TRUE(ids.ok()) << ids.status();
      EXPECT_EQ(*ids, ReferenceIds(logits, kBatch, step, attrs))
          << "seed " << seed << " step " << step;
    }
  }
}

// NaN ranks below every number and weighs nothing; an infinite largest
// logit leaves every weight 0, and the draw falls back to greedy's id.
TEST(SampleBackendsTest, NanAndInfiniteLogits) {
  constexpr int64_t kVocab = 6;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {
      nan,   nan,  nan,   nan,   nan,  nan,    // all NaN: id 0
      nan,   -inf, 0.5f,  nan,   2.0f, -0.0f,  // NaN and -inf never drawn
      1.0f,  inf,  3.0f,  inf,   nan,  -inf,   // the first +inf
      -0.0f, 0.0f, -0.0f, -1.0f, -inf, nan,    // +-0 tie: the lowest index
  };
  const int64_t batch = static_cast<int64_t>(logits.size()) / kVocab;
  for (const SampleAttrs& attrs : {Greedy(), TopK(3), TopP(0.99f)}) {
    SCOPED_TRACE(internal::SampleModeName(attrs.mode));
    absl::StatusOr<Sampler> s = Sampler::Create(batch, kVocab, attrs, Backend::kReplay);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_TRUE(s->SetLogits(logits).ok());
    for (int64_t step = 0; step < 4; ++step) {
      absl::StatusOr<std::vector<int64_t>> ids = s->Run(step);
      ASSERT_TRUE(ids.ok()) << ids.status();
      const std::vector<int64_t> want = ReferenceIds(logits, batch, step, attrs);
      EXPECT_EQ(*ids, want) << "step " << step;
      EXPECT_EQ(want[0], 0);
      EXPECT_TRUE(want[1] == 2 || want[1] == 4 || want[1] == 5) << want[1];
      EXPECT_EQ(want[2], 1);
      if (attrs.mode == SampleMode::kGreedy) {
        EXPECT_EQ(want[3], 0);
      }
    }
  }
}

// --- the definition ---

// Philox4x32-10's known-answer vectors (Salmon et al., Random123's kat_vectors).
TEST(SampleDefinitionTest, PhiloxKnownAnswers) {
  using A4 = std::array<uint32_t, 4>;
  EXPECT_EQ(reference::SampleReferencePhilox({0, 0, 0, 0}, {0, 0}),
            (A4{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(reference::SampleReferencePhilox({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                             {0xffffffffu, 0xffffffffu}),
            (A4{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(reference::SampleReferencePhilox({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                                             {0xa4093822u, 0x299f31d0u}),
            (A4{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

// The weights follow exp((x - max) / temperature) to about 1e-7 of the
// largest, and are 0 under 2^-30 of it.
TEST(SampleDefinitionTest, WeightsFollowTheSoftmax) {
  const float scale = internal::SampleScale(0.7f);
  for (float d = 0.0f; d < 16.0f; d += 0.01953125f) {
    const double want = std::ldexp(std::exp(-static_cast<double>(d) / 0.7), 30);
    const double got = static_cast<double>(internal::SampleWeight(-d, 0.0f, scale));
    EXPECT_NEAR(got, want, 2.0 + want * 2e-6) << "x_max - x = " << d;
  }
  EXPECT_EQ(internal::SampleWeight(0.0f, 0.0f, scale), int64_t{1} << 30);
  EXPECT_EQ(internal::SampleWeight(-30.0f, 0.0f, internal::SampleScale(1.0f)), 0);
  const float ln2 = static_cast<float>(std::log(2.0));
  EXPECT_EQ(internal::SampleWeight(-31.0f * ln2, 0.0f, internal::SampleScale(1.0f)), 0);
  EXPECT_EQ(internal::SampleWeight(-29.0f * ln2, 0.0f, internal::SampleScale(1.0f)), 2);
}

// Drawn over many steps, ids follow the candidates' softmax: the draw
// itself is fair (20000 draws: 6 standard deviations is 0.021).
TEST(SampleDefinitionTest, DrawsFollowTheDistribution) {
  const std::vector<double> probs = {0.1, 0.2, 0.3, 0.4};
  std::vector<float> logits;
  for (double p : probs) logits.push_back(static_cast<float>(std::log(p)));
  struct Want {
    SampleAttrs attrs;
    std::vector<double> freq;
  };
  // top_p 0.5: 0.4 and 0.3 reach it; top_k 2 keeps the same two.
  for (const Want& w : {Want{TopP(1.0f), probs}, Want{TopK(2), {0, 0, 3 / 7.0, 4 / 7.0}},
                        Want{TopP(0.5f), {0, 0, 3 / 7.0, 4 / 7.0}}}) {
    std::vector<int> count(4, 0);
    constexpr int kDraws = 20000;
    for (int step = 0; step < kDraws; ++step) {
      ++count[reference::SampleReferenceRow(logits.data(), 4, 0, step, w.attrs)];
    }
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(count[i] / double(kDraws), w.freq[i], 0.021)
          << internal::SampleModeName(w.attrs.mode) << " id " << i;
    }
  }
}

// --- attributes, parsing, graph edits ---

TEST(SampleAttrsTest, BadAttributesAndInputsAreInvalidArgument) {
  SampleAttrs zero_k = TopK(0);
  SampleAttrs cold = TopK(5, 0.0f);
  SampleAttrs nan_p = TopP(std::nanf(""));
  SampleAttrs big_p = TopP(1.5f);
  for (const SampleAttrs& a : {zero_k, cold, nan_p, big_p}) {
    GraphBuilder b;
    TensorRef x = b.Input("x", {1, 10});
    TensorRef step = b.Input("step", {1}, DataType::kInt64);
    b.Output(internal::Sample(b, x, step, a), "ids");
    EXPECT_TRUE(absl::IsInvalidArgument(std::move(b).Build().status()));
  }
  {
    GraphBuilder b;  // a float step
    TensorRef x = b.Input("x", {1, 10});
    TensorRef step = b.Input("step", {1});
    b.Output(internal::Sample(b, x, step, Greedy()), "ids");
    absl::Status s = std::move(b).Build().status();
    EXPECT_TRUE(absl::IsInvalidArgument(s));
    EXPECT_NE(s.message().find("expected int64 [1]"), std::string::npos) << s;
  }
  {
    GraphBuilder b;  // top_p over a vocabulary past its counters
    TensorRef x = b.Input("x", {1, internal::kSampleTopPMaxVocab + 1});
    TensorRef step = b.Input("step", {1}, DataType::kInt64);
    b.Output(internal::Sample(b, x, step, TopP(0.5f)), "ids");
    EXPECT_TRUE(absl::IsInvalidArgument(std::move(b).Build().status()));
  }
}

TEST(SampleAttrsTest, ParseSampling) {
  absl::StatusOr<SampleAttrs> a = internal::ParseSampling("greedy");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->mode, SampleMode::kGreedy);
  a = internal::ParseSampling("top_k=40,temperature=0.7,seed=9");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->mode, SampleMode::kTopK);
  EXPECT_EQ(a->k, 40);
  EXPECT_FLOAT_EQ(a->temperature, 0.7f);
  EXPECT_EQ(a->seed, 9);
  a = internal::ParseSampling("seed=-3,top_p=0.9");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->mode, SampleMode::kTopP);
  EXPECT_FLOAT_EQ(a->p, 0.9f);
  EXPECT_EQ(a->seed, -3);
  for (const char* bad : {"", "top_k", "top_k=x", "top_p=2", "greedy,top_k=3", "greedy=1",
                          "temperature=1", "top_k=3,temperature=0", "beam=4"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(internal::ParseSampling(bad).status())) << bad;
  }
}

TEST(SampleAttrsTest, AddSampleAppendsToAnEditedGraph) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {2, 3, 11});
  TensorRef step = b.Input("step", {1}, DataType::kInt64);
  b.Output(b.Relu(x), "y");
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  internal::Editable e(*g);
  const ValueId relu_out = g->outputs()[0];
  absl::StatusOr<ValueId> ids = internal::AddSample(e, relu_out, step.id, TopK(4), "sampler");
  ASSERT_TRUE(ids.ok()) << ids.status();
  e.outputs.push_back(*ids);
  absl::StatusOr<Graph> edited = e.Build();
  ASSERT_TRUE(edited.ok()) << edited.status();
  EXPECT_EQ(edited->value(*ids).desc, (TensorDesc{{2, 1}, DataType::kInt64}));
  EXPECT_EQ(edited->value(*ids).name, "sampler.ids");
  EXPECT_TRUE(absl::IsInvalidArgument(
      internal::AddSample(e, step.id, relu_out, Greedy(), "swapped").status()));
}

}  // namespace
}  // namespace recq::optest
