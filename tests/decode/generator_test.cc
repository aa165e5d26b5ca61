// The decode loop (recq/generator.h) on the 2-layer decoder of
// tests/models/decoder (make_tiny_decoder.py; both PyTorch exporters):
// greedy ids against transformers' generate(), every step's logits against
// onnxruntime running the same file with its growing past, the cache
// rewrite's errors, Reset, the capacity and bad-input errors, top-k
// against the Sample op's reference, every backend bit-identical to the
// replay list, and (under the fault layer) OpenCL waits and reads per
// chunk, not per token.
#include "recq/generator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "recq/onnx.h"
#include "reference/sampling_reference.h"
#include "testing/fault_layer_client.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using ::recq::testing::SharedContext;

constexpr int64_t kMaxLength = 64;

// Found before any OpenCL call: ocl-icd splits OPENCL_LAYERS in place when
// it loads the layers.
const absl::StatusOr<testing::FaultLayerClient>& Layer() {
  static const auto* layer =
      new absl::StatusOr<testing::FaultLayerClient>(testing::FaultLayerClient::Find());
  return *layer;
}
const bool kLayerFound = Layer().ok();

std::string ModelPath() { return std::string(RECQ_DECODER_DIR) + "/tiny_decoder.onnx"; }

struct Golden {
  std::vector<int64_t> prompt;
  std::vector<int64_t> greedy;
  std::vector<std::vector<float>> logits;  // per step
  int64_t vocab = 0;
};

const Golden& LoadGolden() {
  static const Golden* golden = [] {
    auto* g = new Golden;
    std::ifstream in(std::string(RECQ_DECODER_DIR) + "/golden.txt");
    std::string line;
    int64_t rows = 0;
    while (std::getline(in, line)) {
      std::istringstream s(line);
      std::string key;
      s >> key;
      int64_t v = 0;
      if (key == "prompt") {
        while (s >> v) g->prompt.push_back(v);
      } else if (key == "greedy") {
        while (s >> v) g->greedy.push_back(v);
      } else if (key == "logit_rows") {
        std::string word;
        s >> rows >> word >> g->vocab;
      }
    }
    std::ifstream f(std::string(RECQ_DECODER_DIR) + "/golden_logits.f32", std::ios::binary);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> row(static_cast<size_t>(g->vocab));
      f.read(reinterpret_cast<char*>(row.data()), static_cast<std::streamsize>(row.size() * 4));
      g->logits.push_back(std::move(row));
    }
    return g;
  }();
  return *golden;
}

absl::StatusOr<Generator> MakeGenerator(int64_t max_length, Backend backend = Backend::kAuto) {
  absl::StatusOr<Graph> g = LoadDecoderOnnx(ModelPath(), max_length);
  if (!g.ok()) return g.status();
  GeneratorOptions o;
  o.max_length = max_length;
  o.record.backend = backend;
  o.engine.tuning = EngineOptions::Tuning::kOff;
  return Generator::Create(SharedContext(), *g, o);
}

// Tests share one generator per max_length (compiling costs more than
// generating); each Generate resets it.
Generator& Shared(int64_t max_length) {
  static std::map<int64_t, Generator>* gens = new std::map<int64_t, Generator>;
  auto it = gens->find(max_length);
  if (it == gens->end()) {
    absl::StatusOr<Generator> g = MakeGenerator(max_length);
    EXPECT_TRUE(g.ok()) << g.status();
    it = gens->emplace(max_length, std::move(g).value()).first;
  }
  return it->second;
}

double RelativeL2(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    den += double(want[i]) * want[i];
  }
  return std::sqrt(num / den);
}

TEST(GeneratorTest, GreedyMatchesTransformers) {
  const Golden& golden = LoadGolden();
  ASSERT_FALSE(golden.greedy.empty());
  Generator& gen = Shared(kMaxLength);
  GenerateOptions o;
  o.max_new_tokens = static_cast<int64_t>(golden.greedy.size());
  o.chunk = 5;
  std::vector<int64_t> streamed;
  o.on_chunk = [&](absl::Span<const int64_t> ids) {
    streamed.insert(streamed.end(), ids.begin(), ids.end());
  };
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(golden.prompt, o));
  EXPECT_EQ(r.tokens, golden.greedy);
  EXPECT_EQ(streamed, golden.greedy);
  EXPECT_EQ(r.stop, StopReason::kMaxNewTokens) << r.stop_detail;
  EXPECT_EQ(r.prompt_tokens, static_cast<int64_t>(golden.prompt.size()));
  // 8 prompt steps (the last gives the first token), then 23 steps in chunks of 5.
  EXPECT_EQ(r.chunks, 1 + (o.max_new_tokens - 1 + 4) / 5);
  EXPECT_EQ(gen.kv_cache_bytes(), 2 * 2 * 4 * kMaxLength * 16 * 4);
  // One fused attention per layer (engine/patterns/attention.cc), reading
  // the caches over every row, the mask hiding those after the position.
  // The new K and V rows are read where the QKV projection wrote them: no
  // Slice or Transpose copies are left.
  int attention = 0, copies = 0;
  for (const std::string& label : gen.engine().DispatchLabels()) {
    attention += label.find("/attention") != std::string::npos;
    copies += label.find("strided_copy") != std::string::npos;
  }
  EXPECT_EQ(attention, 2);
  EXPECT_EQ(copies, 0);
}

TEST(GeneratorTest, StepLogitsMatchOnnxruntime) {
  const Golden& golden = LoadGolden();
  Generator& gen = Shared(kMaxLength);
  GenerateOptions o;
  o.max_new_tokens = static_cast<int64_t>(golden.greedy.size());
  o.keep_logits = true;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(golden.prompt, o));
  ASSERT_EQ(r.logits.size(), golden.logits.size());
  for (size_t step = 0; step < golden.logits.size(); ++step) {
    EXPECT_LT(RelativeL2(r.logits[step], golden.logits[step]), 1e-4) << "step " << step;
  }
  EXPECT_EQ(r.tokens, golden.greedy);
}

// The same weights through the dynamo exporter (torch.export, opset 21):
// its own graph around the caches, the same ids and logits.
TEST(GeneratorTest, DynamoExportMatchesToo) {
  const Golden& golden = LoadGolden();
  const int64_t length = 40;
  RECQ_ASSERT_OK_AND_ASSIGN(
      Graph g,
      LoadDecoderOnnx(std::string(RECQ_DECODER_DIR) + "/tiny_decoder_dynamo.onnx", length));
  GeneratorOptions go;
  go.max_length = length;
  go.engine.tuning = EngineOptions::Tuning::kOff;
  RECQ_ASSERT_OK_AND_ASSIGN(Generator gen, Generator::Create(SharedContext(), g, go));
  GenerateOptions o;
  o.max_new_tokens = static_cast<int64_t>(golden.greedy.size());
  o.keep_logits = true;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(golden.prompt, o));
  EXPECT_EQ(r.tokens, golden.greedy);
  ASSERT_EQ(r.logits.size(), golden.logits.size());
  for (size_t step = 0; step < golden.logits.size(); ++step) {
    EXPECT_LT(RelativeL2(r.logits[step], golden.logits[step]), 1e-4) << "step " << step;
  }
}

// The model set's 2-layer decoder (bench/models/export_models.py
// gpt2_past_tiny, tests/models/decoder/make_decoder.sh) in the three
// layouts: TorchScript, dynamo and optimum-onnx. Each against its own
// reference: transformers' greedy ids and onnxruntime's logits at every
// position.
class ModelSetDecoderTest : public ::testing::TestWithParam<const char*> {};

std::vector<char> ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// One layout's reference: the prompt, `transformers`' greedy ids and
// onnxruntime's logits of every step run token by token, prompt included.
struct LayoutReference {
  std::vector<int64_t> prompt, ids;
  std::vector<char> step_logits;  // float32 rows of the vocabulary
};

LayoutReference ReadLayoutReference(const std::string& stem) {
  const std::vector<char> p = ReadBytes(stem + ".decode.prompt.i64");
  const std::vector<char> i = ReadBytes(stem + ".decode.ids.i64");
  LayoutReference ref;
  ref.prompt.resize(p.size() / 8);
  ref.ids.resize(i.size() / 8);
  std::memcpy(ref.prompt.data(), p.data(), p.size());
  std::memcpy(ref.ids.data(), i.data(), i.size());
  ref.step_logits = ReadBytes(stem + ".decode.step_logits.f32");
  return ref;
}

// ExpectStepLogits compares each generated step's logits with the
// reference's row `first + step` (relative L2 below 1e-4).
void ExpectStepLogits(const GenerateResult& r, size_t vocab, const LayoutReference& ref,
                      size_t first) {
  ASSERT_EQ((r.logits.size() + first) * vocab * sizeof(float), ref.step_logits.size());
  for (size_t step = 0; step < r.logits.size(); ++step) {
    std::vector<float> row(vocab);
    std::memcpy(row.data(), ref.step_logits.data() + (first + step) * vocab * sizeof(float),
                vocab * sizeof(float));
    EXPECT_LT(RelativeL2(r.logits[step], row), 1e-4) << "step " << step;
  }
}

TEST_P(ModelSetDecoderTest, GreedyIdsAndLogitsMatchTheReference) {
  const std::string stem = std::string(RECQ_DECODER_DIR) + "/" + GetParam();
  const LayoutReference ref = ReadLayoutReference(stem);
  ASSERT_FALSE(ref.prompt.empty() || ref.ids.empty() || ref.step_logits.empty()) << stem;
  const std::vector<int64_t>& prompt = ref.prompt;
  const std::vector<int64_t>& want = ref.ids;
  const int64_t length = 32;
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadDecoderOnnx(stem + ".onnx", length));
  GeneratorOptions go;
  go.max_length = length;
  go.engine.tuning = EngineOptions::Tuning::kOff;
  RECQ_ASSERT_OK_AND_ASSIGN(Generator gen, Generator::Create(SharedContext(), g, go));
  GenerateOptions o;
  o.max_new_tokens = static_cast<int64_t>(want.size());
  o.keep_logits = true;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(prompt, o));
  EXPECT_EQ(r.tokens, want);
  ExpectStepLogits(r, static_cast<size_t>(gen.vocab()), ref, /*first=*/0);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ModelSetDecoderTest,
                         ::testing::Values("gpt2_past_tiny", "gpt2_past_tiny_dynamo",
                                           "gpt2_past_tiny_optimum"),
                         [](const auto& info) { return std::string(info.param); });

TEST(GeneratorTest, EosStopsInsideAChunkAndResetRepeats) {
  const Golden& golden = LoadGolden();
  Generator& gen = Shared(kMaxLength);
  // The first id that is not also an earlier one, so that EOS stops exactly there.
  size_t at = 1;
  while (std::find(golden.greedy.begin(), golden.greedy.begin() + at, golden.greedy[at]) !=
         golden.greedy.begin() + at)
    ++at;
  GenerateOptions o;
  o.max_new_tokens = 20;
  o.eos_id = golden.greedy[at];
  o.chunk = 16;  // the stop falls inside a chunk: the steps after it change nothing
  for (int run = 0; run < 2; ++run) {
    RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(golden.prompt, o));
    EXPECT_EQ(r.stop, StopReason::kEos) << r.stop_detail;
    EXPECT_EQ(r.tokens,
              std::vector<int64_t>(golden.greedy.begin(), golden.greedy.begin() + at + 1));
  }
  // Another prompt, then the first again: Reset leaves nothing behind.
  std::vector<int64_t> other = {1, 2, 3};
  RECQ_ASSERT_OK(gen.Generate(other, o).status());
  GenerateOptions full;
  full.max_new_tokens = static_cast<int64_t>(golden.greedy.size());
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult again, gen.Generate(golden.prompt, full));
  EXPECT_EQ(again.tokens, golden.greedy);
}

TEST(GeneratorTest, CapacityStopsCleanly) {
  const Golden& golden = LoadGolden();
  const int64_t length = 16;
  Generator& gen = Shared(length);
  GenerateOptions o;
  o.max_new_tokens = 24;
  o.chunk = 3;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(golden.prompt, o));
  EXPECT_EQ(r.stop, StopReason::kCapacity);
  EXPECT_NE(r.stop_detail.find("max_length 16"), std::string::npos) << r.stop_detail;
  // A smaller cache gives the same tokens while they fit: the mask hides
  // the rows after the position.
  const size_t fit = static_cast<size_t>(length) - golden.prompt.size();
  EXPECT_EQ(r.tokens, std::vector<int64_t>(golden.greedy.begin(), golden.greedy.begin() + fit));
}

TEST(GeneratorTest, BadInputIsInvalidArgumentAndLeavesItUsable) {
  const Golden& golden = LoadGolden();
  Generator& gen = Shared(kMaxLength);
  auto expect_invalid = [&](std::vector<int64_t> prompt, GenerateOptions o, const char* what) {
    absl::StatusOr<GenerateResult> r = gen.Generate(prompt, o);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << what << ": " << r.status();
    EXPECT_FALSE(r.status().message().empty());
  };
  expect_invalid({}, {}, "empty prompt");
  expect_invalid(std::vector<int64_t>(kMaxLength, 1), {}, "prompt of max_length tokens");
  expect_invalid({1, 256, 2}, {}, "id past the vocabulary");
  expect_invalid({1, -1, 2}, {}, "negative id");
  GenerateOptions o;
  o.max_new_tokens = 0;
  expect_invalid({1}, o, "max_new_tokens 0");
  o = {};
  o.chunk = 0;
  expect_invalid({1}, o, "chunk 0");
  o = {};
  o.eos_id = 256;
  expect_invalid({1}, o, "eos past the vocabulary");
  GenerateOptions ok;
  ok.max_new_tokens = 4;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(golden.prompt, ok));
  EXPECT_EQ(r.tokens, std::vector<int64_t>(golden.greedy.begin(), golden.greedy.begin() + 4));
}

TEST(GeneratorTest, RewriteRejectsWhatItCannotRecognize) {
  // Not a decoder at all.
  absl::StatusOr<Generator> g = Generator::Create(SharedContext(), testing::ChainGraph(3, 8), {});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("past_key_values"), std::string::npos) << g.status();
  // Imported for another max_length.
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g32, LoadDecoderOnnx(ModelPath(), 32));
  GeneratorOptions o;
  o.max_length = 64;
  g = Generator::Create(SharedContext(), g32, o);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("attention_mask"), std::string::npos) << g.status();
  // A past that is read by something other than the Concat that appends to it.
  GraphBuilder b;
  TensorRef ids = b.Input("input_ids", {1, 1}, DataType::kInt64);
  TensorRef pos = b.Input("position_ids", {1, 1}, DataType::kInt64);
  TensorRef mask = b.Input("attention_mask", {1, 8}, DataType::kInt64);
  TensorRef past = b.Input("past_key_values.0.key", {1, 2, 7, 4});
  TensorRef row = b.Input("row", {1, 2, 1, 4});
  (void)ids, (void)pos, (void)mask;
  TensorRef doubled = b.Add(past, past);
  b.Output(doubled, "logits");
  (void)row;
  RECQ_ASSERT_OK_AND_ASSIGN(Graph bad, std::move(b).Build());
  o.max_length = 8;
  g = Generator::Create(SharedContext(), bad, o);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("Concat"), std::string::npos) << g.status();
}

TEST(GeneratorTest, NonFp32PrecisionIsRefused) {
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadDecoderOnnx(ModelPath(), 16));
  GeneratorOptions o;
  o.max_length = 16;
  o.engine.precision = EngineOptions::Precision::kFp16Storage;
  EXPECT_EQ(Generator::Create(SharedContext(), g, o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The greedy sampler over a GPT-2-sized row: the first of tied maxima, as
// ArgMax, on fresh random logits.
TEST(GeneratorTest, DecodeArgMaxTakesTheFirstLargest) {
  const int64_t vocab = 50257;
  GraphBuilder b;
  TensorRef x = b.Input("logits", {1, 1, vocab});
  b.Output(b.AddNode(OpType("recq.DecodeArgMax"), {x}), "ids");
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, std::move(b).Build());
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record());
  for (uint64_t seed : {11u, 12u, 13u}) {
    reference::HostTensor t = reference::RandomTensor({1, 1, vocab}, seed, -5.0f, 5.0f);
    const int64_t first = static_cast<int64_t>(seed * 7919 % vocab);
    const int64_t second = (first + 1 + static_cast<int64_t>(seed * 104729 % (vocab - 1))) % vocab;
    t.data[first] = t.data[second] = 9.0f;  // tied maxima
    Tensor in = testing::NewTensor({{1, 1, vocab}}, t.data);
    RECQ_ASSERT_OK_AND_ASSIGN(Tensor ids,
                              Tensor::Allocate(SharedContext(), {{1, 1}, DataType::kInt64}));
    const int64_t poison = -7;
    RECQ_ASSERT_OK(ids.FillBytes(&poison, sizeof(poison)));
    Bindings bind;
    bind.Set("logits", in);
    bind.Set("ids", ids);
    RECQ_ASSERT_OK(rec.Run(bind));
    RECQ_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> got, ids.DownloadAs<int64_t>());
    EXPECT_EQ(got[0], std::min(first, second)) << "seed " << seed;
  }
}

// Every backend this device can record gives the replay list's ids and
// logits bit for bit (under the qcom layer, qcom too).
TEST(GeneratorBackendsTest, BitIdenticalToReplay) {
  const Golden& golden = LoadGolden();
  GenerateOptions o;
  o.max_new_tokens = 12;
  o.keep_logits = true;
  const int64_t length = 24;
  RECQ_ASSERT_OK_AND_ASSIGN(Generator replay, MakeGenerator(length, Backend::kReplay));
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult want, replay.Generate(golden.prompt, o));
  int compared = 0;
  for (Backend backend : RegisteredBackends()) {
    if (backend == Backend::kReplay || !BackendAvailable(SharedContext(), backend).ok()) continue;
    SCOPED_TRACE(BackendName(backend));
    RECQ_ASSERT_OK_AND_ASSIGN(Generator gen, MakeGenerator(length, backend));
    EXPECT_EQ(gen.recording().backend(), backend);
    RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult got, gen.Generate(golden.prompt, o));
    EXPECT_EQ(got.tokens, want.tokens);
    ASSERT_EQ(got.logits.size(), want.logits.size());
    for (size_t s = 0; s < want.logits.size(); ++s) {
      EXPECT_EQ(0, std::memcmp(got.logits[s].data(), want.logits[s].data(),
                               want.logits[s].size() * sizeof(float)))
          << "step " << s;
    }
    // Chunked, without the per-step reads, on the same generator.
    GenerateOptions chunked = o;
    chunked.keep_logits = false;
    chunked.chunk = 4;
    RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult c, gen.Generate(golden.prompt, chunked));
    EXPECT_EQ(c.tokens, want.tokens);
    ++compared;
  }
  EXPECT_EQ(want.tokens, std::vector<int64_t>(golden.greedy.begin(), golden.greedy.begin() + 12));
  RecordProperty("backends_compared", compared);
}

// Top-k sampling on the device: every step's id is the Sample op's CPU
// reference applied to that step's logits at its position; a seed gives
// the same ids run to run and on every backend, another seed others.
TEST(GeneratorBackendsTest, TopKIsTheReferenceAndTheSameEverywhere) {
  const Golden& golden = LoadGolden();
  const int64_t length = 24;
  auto make = [&](Backend backend, uint64_t seed) {
    GeneratorOptions o;
    o.max_length = length;
    o.record.backend = backend;
    o.engine.tuning = EngineOptions::Tuning::kOff;
    o.sampling = ParseSampling(absl::StrCat("top_k=5,temperature=0.8,seed=", seed)).value();
    absl::StatusOr<Graph> g = LoadDecoderOnnx(ModelPath(), length);
    EXPECT_TRUE(g.ok()) << g.status();
    return Generator::Create(SharedContext(), *g, o);
  };
  GenerateOptions o;
  o.max_new_tokens = 12;
  o.keep_logits = true;
  RECQ_ASSERT_OK_AND_ASSIGN(Generator replay, make(Backend::kReplay, 3));
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult want, replay.Generate(golden.prompt, o));
  ASSERT_EQ(want.tokens.size(), 12u);
  internal::SampleAttrs attrs;
  attrs.mode = internal::SampleMode::kTopK;
  attrs.k = 5;
  attrs.temperature = 0.8f;
  attrs.seed = 3;
  const size_t n = golden.prompt.size();
  for (size_t i = 0; i < want.tokens.size(); ++i) {
    const size_t step = n - 1 + i;  // the step at position n - 1 + i sampled token i
    EXPECT_EQ(want.tokens[i],
              reference::SampleReferenceRow(want.logits[step].data(),
                                            static_cast<int64_t>(want.logits[step].size()), 0,
                                            static_cast<int64_t>(step), attrs))
        << "token " << i;
  }
  EXPECT_NE(want.tokens, std::vector<int64_t>(golden.greedy.begin(), golden.greedy.begin() + 12));
  GenerateOptions chunked = o;
  chunked.keep_logits = false;
  chunked.chunk = 5;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult again, replay.Generate(golden.prompt, chunked));
  EXPECT_EQ(again.tokens, want.tokens);
  for (Backend backend : RegisteredBackends()) {
    if (backend == Backend::kReplay || !BackendAvailable(SharedContext(), backend).ok()) continue;
    SCOPED_TRACE(BackendName(backend));
    RECQ_ASSERT_OK_AND_ASSIGN(Generator gen, make(backend, 3));
    RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult got, gen.Generate(golden.prompt, chunked));
    EXPECT_EQ(got.tokens, want.tokens);
  }
  RECQ_ASSERT_OK_AND_ASSIGN(Generator other, make(Backend::kReplay, 4));
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r4, other.Generate(golden.prompt, chunked));
  EXPECT_NE(r4.tokens, want.tokens);
}

// Bucketed prefill: prefill steps of 2 and 4 tokens (the decoder imported
// at seq 2 and 4, causal mask following the position) share the decode
// step's caches, state and weights.
absl::StatusOr<Generator> MakeBucketed(const std::string& path, int64_t max_length,
                                       std::vector<int64_t> buckets,
                                       Backend backend = Backend::kAuto) {
  GeneratorOptions o;
  o.max_length = max_length;
  o.prefill_buckets = std::move(buckets);
  o.record.backend = backend;
  o.engine.tuning = EngineOptions::Tuning::kOff;
  return Generator::Load(SharedContext(), path, o);
}

Generator& SharedBucketed() {
  static Generator* gen = [] {
    absl::StatusOr<Generator> g = MakeBucketed(ModelPath(), kMaxLength, {4, 2});
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? new Generator(std::move(g).value()) : nullptr;
  }();
  return *gen;
}

// The golden prompt (8 tokens: 7 prefilled as 4 + 4 with one padding row,
// then the last token's decode step): transformers' ids, and onnxruntime's
// logits from the prompt's last token on.
TEST(GeneratorPrefillTest, BucketedMatchesTransformersAndOnnxruntime) {
  const Golden& golden = LoadGolden();
  Generator& gen = SharedBucketed();
  EXPECT_EQ(gen.prefill_buckets(), (std::vector<int64_t>{2, 4}));
  GenerateOptions o;
  o.max_new_tokens = static_cast<int64_t>(golden.greedy.size());
  o.keep_logits = true;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(golden.prompt, o));
  EXPECT_EQ(r.tokens, golden.greedy);
  EXPECT_EQ(r.prefill_replays, 2);
  EXPECT_EQ(r.prefill_batched_tokens, 7);
  const size_t first = golden.prompt.size() - 1;
  ASSERT_EQ(r.logits.size() + first, golden.logits.size());
  for (size_t step = 0; step < r.logits.size(); ++step) {
    EXPECT_LT(RelativeL2(r.logits[step], golden.logits[first + step]), 1e-4) << "step " << step;
  }
  // The first layer's attention over the 4 new rows is one fused dispatch;
  // the last layer's attention and MLP, and the LM head, fed only the
  // logits and are gone (the last layer writes its K and V rows only).
  const Engine* four = gen.prefill_engine(4);
  ASSERT_NE(four, nullptr);
  EXPECT_EQ(gen.prefill_engine(3), nullptr);
  // The new rows are read where the QKV projection wrote them (no copies).
  int attention = 0, copies = 0;
  for (const std::string& label : four->DispatchLabels()) {
    attention += label.find("/attention") != std::string::npos;
    copies += label.find("strided_copy") != std::string::npos;
  }
  EXPECT_EQ(attention, 1);
  EXPECT_EQ(copies, 0);
  // Constants the steps use alike are uploaded once: less than the steps'
  // weights added up (the embeddings, LayerNorms and biases are shared).
  size_t separate = gen.engine().stats().weight_bytes;
  for (int64_t b : gen.prefill_buckets()) separate += gen.prefill_engine(b)->stats().weight_bytes;
  EXPECT_GE(gen.weight_bytes(), static_cast<int64_t>(gen.engine().stats().weight_bytes) / 2);
  EXPECT_LT(gen.weight_bytes(), static_cast<int64_t>(separate) * 3 / 4);
  EXPECT_EQ(four->outputs().size(), gen.engine().outputs().size() - 1);
  // Chunked (no per-step reads) gives the same ids.
  o.keep_logits = false;
  o.chunk = 7;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult c, gen.Generate(golden.prompt, o));
  EXPECT_EQ(c.tokens, golden.greedy);
}

// Prompts of 1, 4, 5, 6, 13 and 20 tokens (prefilled: none, bucket - 1,
// bucket, bucket + 1, several buckets and a padded rest): the same ids as
// token by token, and logits within 1e-4 of its.
TEST(GeneratorPrefillTest, BucketedEqualsTokenByToken) {
  const Golden& golden = LoadGolden();
  std::vector<int64_t> text = golden.prompt;
  text.insert(text.end(), golden.greedy.begin(), golden.greedy.end());
  Generator& gen = SharedBucketed();
  GenerateOptions o;
  o.max_new_tokens = 5;
  o.keep_logits = true;
  const std::map<int64_t, int64_t> replays = {{1, 0}, {4, 1}, {5, 1}, {6, 2}, {13, 3}, {20, 5}};
  for (const auto& [length, want_replays] : replays) {
    SCOPED_TRACE(absl::StrCat("prompt of ", length));
    const std::vector<int64_t> prompt(text.begin(), text.begin() + length);
    o.prefill = GenerateOptions::Prefill::kTokens;
    RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult want, gen.Generate(prompt, o));
    EXPECT_EQ(want.prefill_replays, 0);
    o.prefill = GenerateOptions::Prefill::kBucketed;
    RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult got, gen.Generate(prompt, o));
    EXPECT_EQ(got.prefill_replays, want_replays);
    EXPECT_EQ(got.prefill_batched_tokens, length - 1);
    EXPECT_EQ(got.tokens, want.tokens);
    ASSERT_EQ(got.logits.size() + static_cast<size_t>(length - 1), want.logits.size());
    for (size_t step = 0; step < got.logits.size(); ++step) {
      EXPECT_LT(RelativeL2(got.logits[step], want.logits[length - 1 + step]), 1e-4)
          << "step " << step;
    }
    if (length >= static_cast<int64_t>(golden.prompt.size())) {
      // transformers' greedy continuation of the golden prompt.
      EXPECT_EQ(got.tokens, std::vector<int64_t>(text.begin() + length, text.begin() + length + 5));
    }
  }
}

// A padded rest whose rows would pass the cache's end is not padded: with
// one bucket of 8 and 12 rows, a 11-token prompt takes 8 tokens in one
// replay and its other 2 one decode step each.
TEST(GeneratorPrefillTest, PaddingNeverPassesTheCache) {
  const Golden& golden = LoadGolden();
  std::vector<int64_t> text = golden.prompt;
  text.insert(text.end(), golden.greedy.begin(), golden.greedy.end());
  const std::vector<int64_t> prompt(text.begin(), text.begin() + 11);
  RECQ_ASSERT_OK_AND_ASSIGN(Generator gen, MakeBucketed(ModelPath(), 12, {8}));
  GenerateOptions o;
  o.max_new_tokens = 4;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(prompt, o));
  EXPECT_EQ(r.prefill_replays, 1);
  EXPECT_EQ(r.prefill_batched_tokens, 8);
  EXPECT_EQ(r.stop, StopReason::kCapacity) << r.stop_detail;
  EXPECT_EQ(r.tokens, std::vector<int64_t>(text.begin() + 11, text.begin() + 12));
}

// The dynamo and optimum-onnx layouts prefill bucketed too: their
// references' ids and logits.
TEST_P(ModelSetDecoderTest, BucketedPrefillMatchesTheReference) {
  const std::string stem = std::string(RECQ_DECODER_DIR) + "/" + GetParam();
  const LayoutReference ref = ReadLayoutReference(stem);
  ASSERT_FALSE(ref.prompt.empty() || ref.ids.empty() || ref.step_logits.empty()) << stem;
  const std::vector<int64_t>& prompt = ref.prompt;
  const std::vector<int64_t>& want = ref.ids;
  RECQ_ASSERT_OK_AND_ASSIGN(Generator gen, MakeBucketed(stem + ".onnx", 32, {4}));
  GenerateOptions o;
  o.max_new_tokens = static_cast<int64_t>(want.size());
  o.keep_logits = true;
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(prompt, o));
  EXPECT_EQ(r.tokens, want);
  EXPECT_EQ(r.prefill_batched_tokens, static_cast<int64_t>(prompt.size()) - 1);
  ExpectStepLogits(r, static_cast<size_t>(gen.vocab()), ref, /*first=*/prompt.size() - 1);
}

// Every backend replays the prefill steps bit for bit as the replay list.
TEST(GeneratorBackendsTest, BucketedPrefillBitIdenticalToReplay) {
  const Golden& golden = LoadGolden();
  std::vector<int64_t> prompt = golden.prompt;
  prompt.insert(prompt.end(), golden.greedy.begin(), golden.greedy.begin() + 4);
  GenerateOptions o;
  o.max_new_tokens = 4;
  o.keep_logits = true;
  const int64_t length = 24;
  RECQ_ASSERT_OK_AND_ASSIGN(Generator replay,
                            MakeBucketed(ModelPath(), length, {4, 2}, Backend::kReplay));
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult want, replay.Generate(prompt, o));
  EXPECT_EQ(want.prefill_replays, 3);  // 11 tokens: 4 + 4 + 4 (one padding row)
  int compared = 0;
  for (Backend backend : RegisteredBackends()) {
    if (backend == Backend::kReplay || !BackendAvailable(SharedContext(), backend).ok()) continue;
    SCOPED_TRACE(BackendName(backend));
    RECQ_ASSERT_OK_AND_ASSIGN(Generator gen, MakeBucketed(ModelPath(), length, {4, 2}, backend));
    RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult got, gen.Generate(prompt, o));
    EXPECT_EQ(got.tokens, want.tokens);
    ASSERT_EQ(got.logits.size(), want.logits.size());
    for (size_t s = 0; s < want.logits.size(); ++s) {
      EXPECT_EQ(0, std::memcmp(got.logits[s].data(), want.logits[s].data(),
                               want.logits[s].size() * sizeof(float)))
          << "step " << s;
    }
    ++compared;
  }
  RecordProperty("backends_compared", compared);
}

// Bad prefill graphs and sizes are InvalidArgument saying what was expected.
TEST(GeneratorPrefillTest, BadPrefillIsInvalidArgument) {
  EXPECT_EQ(LoadDecoderOnnx(ModelPath(), 8, 8).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeBucketed(ModelPath(), 8, {1}).status().code(), absl::StatusCode::kInvalidArgument);
  // A graph imported for 4 tokens rewritten for a cache of another length.
  RECQ_ASSERT_OK_AND_ASSIGN(Graph step, LoadDecoderOnnx(ModelPath(), 16));
  RECQ_ASSERT_OK_AND_ASSIGN(Graph four, LoadDecoderOnnx(ModelPath(), 20, 4));
  GeneratorOptions go;
  go.max_length = 16;
  go.engine.tuning = EngineOptions::Tuning::kOff;
  absl::StatusOr<Generator> g = Generator::Create(SharedContext(), step, go, {four});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("past"), std::string::npos) << g.status();
}

// Under the fault layer: the OpenCL calls that wait for the device or read
// from it come once per chunk, not once per token.
TEST(GeneratorCallCountTest, WaitsAndReadsPerChunk) {
  const absl::StatusOr<testing::FaultLayerClient>& layer = Layer();
  if (!layer.ok()) GTEST_SKIP() << layer.status().message();
  const Golden& golden = LoadGolden();
  Generator& gen = Shared(kMaxLength);
  GenerateOptions o;
  o.max_new_tokens = 48;
  o.chunk = 16;
  // Count the generation's calls after its resets and uploads: run it once
  // to warm, then count a second run.
  RECQ_ASSERT_OK(gen.Generate(golden.prompt, o).status());
  layer->ResetCounts();
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(golden.prompt, o));
  ASSERT_EQ(r.tokens.size(), 48u);
  const int64_t steps = r.steps;
  uint64_t waits = 0, reads = 0, enqueues = 0;
  std::string all;
  for (const auto& [name, count] : layer->CallCounts()) {
    if (count == 0) continue;
    absl::StrAppend(&all, name, "=", count, " ");
    if (name == "clFinish" || name == "clWaitForEvents") waits += count;
    if (name == "clEnqueueReadBuffer" || name == "clEnqueueMapBuffer") reads += count;
    if (name == "clEnqueueNDRangeKernel" || name == "clEnqueueRecordingQCOM") enqueues += count;
  }
  // Reset's fills and the two uploads wait (5 caches/state/control fills,
  // 2 writes: at most 8 waits), then one blocking read per chunk.
  RecordProperty("calls", all);
  EXPECT_EQ(reads, static_cast<uint64_t>(r.chunks)) << all;
  EXPECT_LE(waits, 8u) << all;
  EXPECT_LT(r.chunks * 8, steps) << all;
  EXPECT_GE(enqueues, static_cast<uint64_t>(steps)) << all;
}

// Bucketed prefill adds no wait and no read: a 20-token prompt (5 prefill
// replays, then the decode steps) reads the state once per chunk.
TEST(GeneratorCallCountTest, BucketedPrefillWaitsAndReadsPerChunk) {
  const absl::StatusOr<testing::FaultLayerClient>& layer = Layer();
  if (!layer.ok()) GTEST_SKIP() << layer.status().message();
  const Golden& golden = LoadGolden();
  std::vector<int64_t> prompt = golden.prompt;
  prompt.insert(prompt.end(), golden.greedy.begin(), golden.greedy.begin() + 12);
  Generator& gen = SharedBucketed();
  GenerateOptions o;
  o.max_new_tokens = 20;
  o.chunk = 8;
  RECQ_ASSERT_OK(gen.Generate(prompt, o).status());
  layer->ResetCounts();
  RECQ_ASSERT_OK_AND_ASSIGN(GenerateResult r, gen.Generate(prompt, o));
  ASSERT_EQ(r.tokens.size(), 20u);
  EXPECT_EQ(r.prefill_replays, 5);
  uint64_t waits = 0, reads = 0;
  std::string all;
  for (const auto& [name, count] : layer->CallCounts()) {
    if (count == 0) continue;
    absl::StrAppend(&all, name, "=", count, " ");
    if (name == "clFinish" || name == "clWaitForEvents") waits += count;
    if (name == "clEnqueueReadBuffer" || name == "clEnqueueMapBuffer") reads += count;
  }
  RecordProperty("calls", all);
  EXPECT_EQ(reads, static_cast<uint64_t>(r.chunks)) << all;
  EXPECT_EQ(r.chunks, 1 + (20 - 1 + 7) / 8) << all;
  EXPECT_LE(waits, 8u) << all;
}

}  // namespace
}  // namespace recq
