// The auto-tuner (EngineOptions::tuning) and its tuning cache: a miss is
// measured and stored, a hit is read back, a corrupt entry is ignored and
// re-tuned, warm choices are deterministic, and tuned engines compute what
// the CPU reference does.
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/ops/attention.h"
#include "engine/tuning_cache.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"

namespace recq {
namespace {

namespace fs = std::filesystem;
using internal::TuningCache;
using internal::TuningEntry;

// A fresh directory per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "recq-tuner-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

// Three convs, two of them alike: two tuning keys (a 3x3 and a 1x1 conv).
Graph ThreeConvs(uint32_t seed) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 8, 12, 13});
  Conv2DAttrs same;
  same.pads = {1, 1, 1, 1};
  TensorRef c1 = b.Conv2D(x, b.Constant("w1", {16, 8, 3, 3}, Random(16 * 8 * 9, seed)),
                          b.Constant("b1", {16}, Random(16, seed + 1)), same);
  b.SetFusedActivation(c1, {ActivationKind::kRelu});
  TensorRef c2 = b.Conv2D(c1, b.Constant("w2", {16, 16, 1, 1}, Random(256, seed + 2)),
                          b.Constant("b2", {16}, Random(16, seed + 3)), Conv2DAttrs{});
  TensorRef c3 = b.Conv2D(c2, b.Constant("w3", {16, 16, 1, 1}, Random(256, seed + 4)),
                          b.Constant("b3", {16}, Random(16, seed + 5)), Conv2DAttrs{});
  b.Output(c3, "y");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

EngineOptions Fast() {
  EngineOptions options;
  options.kernel_target = EngineOptions::KernelTarget::kCpu;
  options.tuning = EngineOptions::Tuning::kFast;
  // Every key measured however loaded the machine is.
  options.tuning_budget_s = 1e9;
  return options;
}

std::vector<std::string> TuningFiles(const std::string& cache_dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(cache_dir) / "tuning", ec)) {
    if (e.path().extension() == ".tune") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void ExpectMatchesReference(const Engine& engine, const Graph& graph,
                            const std::vector<int64_t>& shape = {1, 8, 12, 13}) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  reference::HostTensor x{shape, Random(static_cast<size_t>(n), 99)};
  std::vector<float> expected = testing::ReferenceOutput(graph, "x", x, "y");
  // In the engine's own context (the test's cache directory).
  absl::StatusOr<Tensor> in = Tensor::Allocate(engine.context(), {x.shape});
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_TRUE(in->Upload(x.data).ok());
  absl::StatusOr<Tensor> out = Tensor::Allocate(engine.context(), engine.outputs()[0].desc);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->Fill(NAN).ok());
  Bindings bindings;
  bindings.Set("x", *in);
  bindings.Set("y", *out);
  absl::StatusOr<Recording> recording = engine.Record();
  ASSERT_TRUE(recording.ok()) << recording.status();
  absl::Status run = recording->Run(bindings);
  ASSERT_TRUE(run.ok()) << run;
  std::vector<float> actual = testing::Download(*out);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-4f + 1e-4f * std::fabs(expected[i])) << "element " << i;
  }
}

class TunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ContextOptions options;
    options.cache_dir = dir_.path();
    absl::StatusOr<Context> context = Context::Create(options);
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = std::make_unique<Context>(*std::move(context));
  }
  absl::StatusOr<Engine> Compile(const Graph& g, const EngineOptions& o) {
    return Engine::Compile(*context_, g, o);
  }

  TempDir dir_;
  std::unique_ptr<Context> context_;
};

TEST_F(TunerTest, MissIsMeasuredHitIsReadAndChoicesAreDeterministic) {
  const Graph g = ThreeConvs(1);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine cold, Compile(g, Fast()));
  const EngineStats& s = cold.stats();
  EXPECT_EQ(s.tuning_keys, 2u);
  EXPECT_EQ(s.tuning_measured, 2u);
  EXPECT_EQ(s.tuning_cache_hits, 0u);
  EXPECT_EQ(s.tuning_invalid_entries, 0u);
  EXPECT_GT(s.tuning_ms, 0.0);
  ASSERT_EQ(s.tuning_choices.size(), 2u);
  for (const TuningChoice& c : s.tuning_choices) {
    EXPECT_FALSE(c.from_cache);
    EXPECT_GE(c.candidates, 2u) << c.key;
    EXPECT_GT(c.best_ms, 0.0) << c.key;
    EXPECT_LE(c.best_ms, c.default_ms) << c.key;
  }
  EXPECT_EQ(TuningFiles(dir_.path()).size(), 2u);
  ExpectMatchesReference(cold, g);

  // Warm: every key from the cache, the same dispatches (labels carry the
  // variant and its parameters), twice.
  for (int i = 0; i < 2; ++i) {
    RECQ_ASSERT_OK_AND_ASSIGN(Engine warm, Compile(g, Fast()));
    EXPECT_EQ(warm.stats().tuning_cache_hits, 2u);
    EXPECT_EQ(warm.stats().tuning_measured, 0u);
    EXPECT_EQ(warm.DispatchLabels(), cold.DispatchLabels());
    ExpectMatchesReference(warm, g);
  }
  // Other weights, same shapes: the same keys.
  RECQ_ASSERT_OK_AND_ASSIGN(Engine other, Compile(ThreeConvs(7), Fast()));
  EXPECT_EQ(other.stats().tuning_cache_hits, 2u);
  // Every label names its parameters.
  bool any_params = false;
  for (const std::string& label : cold.DispatchLabels()) {
    any_params |= label.find('[') != std::string::npos;
  }
  EXPECT_TRUE(any_params);
}

TEST_F(TunerTest, CorruptEntriesAreIgnoredAndRetuned) {
  const Graph g = ThreeConvs(2);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine first, Compile(g, Fast()));
  std::vector<std::string> files = TuningFiles(dir_.path());
  ASSERT_EQ(files.size(), 2u);
  {
    // One entry truncated, the other with one byte of its choice changed.
    std::string text;
    {
      std::ifstream in(files[0]);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::ofstream(files[0], std::ios::trunc) << text.substr(0, text.size() / 2);
    std::ifstream in(files[1]);
    text.assign(std::istreambuf_iterator<char>(in), {});
    const size_t at = text.find("variant=") + 9;
    text[at] = text[at] == 'x' ? 'y' : 'x';
    std::ofstream(files[1], std::ios::trunc) << text;
  }
  RECQ_ASSERT_OK_AND_ASSIGN(Engine second, Compile(g, Fast()));
  EXPECT_EQ(second.stats().tuning_invalid_entries, 2u);
  EXPECT_EQ(second.stats().tuning_measured, 2u);
  EXPECT_EQ(second.stats().tuning_cache_hits, 0u);
  ExpectMatchesReference(second, g);
  // Rewritten: the next compile reads both.
  RECQ_ASSERT_OK_AND_ASSIGN(Engine third, Compile(g, Fast()));
  EXPECT_EQ(third.stats().tuning_cache_hits, 2u);
  EXPECT_EQ(third.stats().tuning_invalid_entries, 0u);
  EXPECT_EQ(third.DispatchLabels(), second.DispatchLabels());
}

TEST_F(TunerTest, OffAndForcedChoicesDoNotTune) {
  const Graph g = ThreeConvs(3);
  EngineOptions off = Fast();
  off.tuning = EngineOptions::Tuning::kOff;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine a, Compile(g, off));
  EXPECT_EQ(a.stats().tuning_keys, 0u);
  EngineOptions forced = Fast();
  forced.choose_variant = [](const Node&, const LoweringContext&, absl::Span<const size_t> f) {
    return f[0];
  };
  RECQ_ASSERT_OK_AND_ASSIGN(Engine b, Compile(g, forced));
  EXPECT_EQ(b.stats().tuning_keys, 0u);
  EXPECT_TRUE(TuningFiles(dir_.path()).empty());
  EXPECT_EQ(a.DispatchLabels(), b.DispatchLabels());
}

TEST_F(TunerTest, ZeroBudgetLeavesKeysToTheHeuristics) {
  EngineOptions options = Fast();
  options.tuning_budget_s = 0;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine e, Compile(ThreeConvs(4), options));
  EXPECT_EQ(e.stats().tuning_keys, 2u);
  EXPECT_EQ(e.stats().tuning_over_budget, 2u);
  EXPECT_EQ(e.stats().tuning_measured, 0u);
  EXPECT_TRUE(TuningFiles(dir_.path()).empty());
}

// Ops without an ONNX form, made by the passes, have keys of their own
// (OpDef::tuning_attrs): the fused Attention op and a FusedElementwise node
// (its float4 and scalar variants).
TEST_F(TunerTest, AttentionAndFusedElementwiseAreTuned) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 2, 9, 16});
  TensorRef att = b.AddNode(OpType("Attention"), {x, x, x},
                            internal::DenseAttention(1, 2, 9, 9, 16, 16), "attention");
  TensorRef scaled = b.AddNode(OpType::kMul, {att, b.Constant("s", {1}, Random(1, 5))});
  b.Output(b.AddNode(OpType("Tanh"), {scaled}), "y");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, std::move(b).Build());
  RECQ_ASSERT_OK_AND_ASSIGN(Engine cold, Compile(g, Fast()));
  EXPECT_EQ(cold.stats().tuning_keys, 2u);
  EXPECT_EQ(cold.stats().tuning_measured, 2u);
  std::vector<std::string> ops;
  for (const TuningChoice& c : cold.stats().tuning_choices) {
    ops.push_back(c.key.substr(0, c.key.find(' ')));
    EXPECT_GE(c.candidates, 2u) << c.key;
  }
  std::sort(ops.begin(), ops.end());
  EXPECT_EQ(ops, (std::vector<std::string>{"Attention", "FusedElementwise"}));
  EXPECT_EQ(TuningFiles(dir_.path()).size(), 2u);
  ExpectMatchesReference(cold, g, {1, 2, 9, 16});
  RECQ_ASSERT_OK_AND_ASSIGN(Engine warm, Compile(g, Fast()));
  EXPECT_EQ(warm.stats().tuning_cache_hits, 2u);
  EXPECT_EQ(warm.stats().tuning_measured, 0u);
  EXPECT_EQ(warm.DispatchLabels(), cold.DispatchLabels());
}

TEST(TuningCacheTest, StoreLoadAndChecks) {
  TempDir dir;
  TuningCache cache(dir.path() + "/tuning");
  bool corrupt = true;
  EXPECT_FALSE(cache.Load("k1", &corrupt).has_value());
  EXPECT_FALSE(corrupt);
  TuningEntry e{"conv2d_tiled", {{"vw", 16}, {"rb", 2}}, 1.25};
  ASSERT_TRUE(cache.Store("k1", e).ok());
  std::optional<TuningEntry> back = cache.Load("k1", &corrupt);
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(corrupt);
  EXPECT_EQ(back->variant, e.variant);
  EXPECT_EQ(back->params, e.params);
  EXPECT_DOUBLE_EQ(back->ms, e.ms);
  // The entry of another key copied over this one's file: foreign.
  ASSERT_TRUE(cache.Store("k2", e).ok());
  fs::copy_file(cache.PathFor("k2"), cache.PathFor("k1"), fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache.Load("k1", &corrupt).has_value());
  EXPECT_TRUE(corrupt);
  // Garbage.
  std::ofstream(cache.PathFor("k2"), std::ios::trunc) << "recq-tuning 1\nsha256=0\n";
  EXPECT_FALSE(cache.Load("k2", &corrupt).has_value());
  EXPECT_TRUE(corrupt);
}

TEST(KernelParamsTest, StringRoundTripAndErrors) {
  KernelParams p{{"vw", 16}, {"ocb", 8}, {"rb", -1}};
  EXPECT_EQ(KernelParamsString(p), "ocb=8,rb=-1,vw=16");
  absl::StatusOr<KernelParams> back = ParseKernelParams(KernelParamsString(p));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, p);
  EXPECT_TRUE(ParseKernelParams("")->empty());
  EXPECT_FALSE(ParseKernelParams("vw=").ok());
  EXPECT_FALSE(ParseKernelParams("vw=1,vw=2").ok());
  EXPECT_FALSE(ParseKernelParams("=3").ok());
}

}  // namespace
}  // namespace recq
