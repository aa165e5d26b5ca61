// Generator (recq/generator.h): the host side of the decode loop.
#include "recq/generator.h"

#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/opencl/cl_error.h"
#include "engine/decode/decoder_rewrite.h"
#include "engine/engine_state.h"
#include "engine/ops/decode.h"
#include "engine/ops/sampling.h"
#include "engine/weight_cache.h"
#include "recq/status_macros.h"

namespace recq {

using internal::DecodeStop;
using internal::kDecodeStateHeader;

absl::StatusOr<SamplingOptions> ParseSampling(absl::string_view text) {
  // The Sample op's grammar (engine/ops/sampling.h), one for every caller.
  RECQ_ASSIGN_OR_RETURN(internal::SampleAttrs a, internal::ParseSampling(text));
  SamplingOptions s;
  s.mode = static_cast<SamplingOptions::Mode>(a.mode);
  s.temperature = a.temperature;
  s.top_k = a.k;
  s.top_p = a.p;
  s.seed = static_cast<uint64_t>(a.seed);
  return s;
}

std::string SamplingName(const SamplingOptions& s) {
  switch (s.mode) {
    case SamplingOptions::Mode::kGreedy:
      return "greedy";
    case SamplingOptions::Mode::kTopK:
      return absl::StrCat("top_k=", s.top_k, ",temperature=", s.temperature, ",seed=", s.seed);
    case SamplingOptions::Mode::kTopP:
      return absl::StrCat("top_p=", s.top_p, ",temperature=", s.temperature, ",seed=", s.seed);
  }
  return "?";
}

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kEos:
      return "eos";
    case StopReason::kMaxNewTokens:
      return "max_new_tokens";
    case StopReason::kCapacity:
      return "capacity";
  }
  return "?";
}

// The recording is declared last so that it is destroyed first: its
// destructor waits for its runs, which use the tensors above it.
struct Generator::State {
  State(Context c, Engine e, Recording r)
      : context(std::move(c)), engine(std::move(e)), recording(std::move(r)) {}
  Context context;
  Engine engine;
  int64_t max_length = 0;
  int64_t vocab = 0;
  int64_t cache_bytes = 0;
  std::string logits_name;
  Bindings bindings;
  Tensor control;
  Tensor state;
  Tensor logits;
  std::vector<Tensor> caches;
  std::map<std::string, Tensor> others;  // bindings nobody reads, bound all the same
  // The prefill steps, by rows (increasing), with their bindings (the
  // decode step's control, state and caches).
  struct Prefill {
    int64_t rows = 0;
    std::optional<Engine> engine;
    Bindings bindings;
    std::vector<Tensor> own;  // its bindings that are not the decode step's
    std::optional<Recording> recording;
  };
  std::vector<std::unique_ptr<Prefill>> prefill;
  std::shared_ptr<internal::WeightCache> weights;  // every step's constants
  Recording recording;
};

Generator::Generator(std::unique_ptr<State> state) : state_(std::move(state)) {}
Generator::Generator(Generator&&) noexcept = default;
Generator& Generator::operator=(Generator&&) noexcept = default;
Generator::~Generator() = default;

int64_t Generator::max_length() const { return state_->max_length; }
int64_t Generator::vocab() const { return state_->vocab; }
int64_t Generator::kv_cache_bytes() const { return state_->cache_bytes; }
const Engine& Generator::engine() const { return state_->engine; }
const Recording& Generator::recording() const { return state_->recording; }
std::vector<int64_t> Generator::prefill_buckets() const {
  std::vector<int64_t> out;
  for (const auto& p : state_->prefill) out.push_back(p->rows);
  return out;
}

const Engine* Generator::prefill_engine(int64_t rows) const {
  for (const auto& p : state_->prefill) {
    if (p->rows == rows) return &*p->engine;
  }
  return nullptr;
}

const Recording* Generator::prefill_recording(int64_t rows) const {
  for (const auto& p : state_->prefill) {
    if (p->rows == rows) return &*p->recording;
  }
  return nullptr;
}

int64_t Generator::weight_bytes() const {
  return static_cast<int64_t>(state_->weights->uploaded_bytes());
}

std::vector<int64_t> PrefillBuckets(int64_t tokens, int64_t cap) {
  std::vector<int64_t> out;
  for (int64_t b = 2; b <= cap && tokens >= 2; b *= 2) {
    out.push_back(b);
    if (b >= tokens) break;
  }
  return out;
}

absl::StatusOr<Generator> Generator::Load(const Context& context, const std::string& path,
                                          const GeneratorOptions& options) {
  RECQ_ASSIGN_OR_RETURN(
      std::vector<Graph> steps,
      internal::LoadDecoderSteps(path, options.max_length, options.prefill_buckets));
  const Graph decoder = std::move(steps[0]);
  steps.erase(steps.begin());
  return Create(context, decoder, options, steps);
}

absl::StatusOr<Generator> Generator::Create(const Context& context, const Graph& decoder,
                                            const GeneratorOptions& options,
                                            const std::vector<Graph>& prefill) {
  if (options.engine.precision != EngineOptions::Precision::kFp32) {
    return absl::InvalidArgumentError(
        absl::StrCat("Generator: precision ", PrecisionName(options.engine.precision),
                     " is not supported; the KV caches are float32 (use fp32)"));
  }
  internal::DecodeSampler sampler;
  sampler.mode = static_cast<internal::DecodeSampler::Mode>(options.sampling.mode);
  sampler.temperature = options.sampling.temperature;
  sampler.k = options.sampling.top_k;
  sampler.p = options.sampling.top_p;
  sampler.seed = options.sampling.seed;
  RECQ_ASSIGN_OR_RETURN(internal::DecodeGraph dg,
                        internal::RewriteDecoder(decoder, options.max_length, sampler));
  // Every step's engine takes its weights from one cache: each constant is
  // on the device once.
  auto weights = std::make_shared<internal::WeightCache>();
  RECQ_ASSIGN_OR_RETURN(std::shared_ptr<internal::EngineState> es,
                        internal::CompileEngineState(context, dg.graph, options.engine, weights));
  Engine engine(std::move(es));
  RECQ_ASSIGN_OR_RETURN(Recording recording, engine.Record(options.record));
  auto s = std::make_unique<State>(context, engine, std::move(recording));
  s->weights = weights;
  s->max_length = dg.max_length;
  s->vocab = dg.vocab;
  s->cache_bytes = dg.cache_bytes;
  s->logits_name = dg.logits;
  for (const BindingInfo& b : engine.inputs()) {
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, b.desc));
    if (b.name == internal::kDecodeControlName) s->control = t;
    s->bindings.Set(b.name, t);
    s->others[b.name] = t;
  }
  std::map<std::string, Tensor> shared;  // the decode step's control, state and caches
  for (const BindingInfo& b : engine.outputs()) {
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, b.desc));
    s->bindings.Set(b.name, t);
    if (b.name == internal::kDecodeStateName ||
        std::find(dg.caches.begin(), dg.caches.end(), b.name) != dg.caches.end()) {
      shared[b.name] = t;
    }
    if (b.name == internal::kDecodeStateName) {
      s->state = t;
    } else if (b.name == dg.logits) {
      s->logits = t;
    } else if (std::find(dg.caches.begin(), dg.caches.end(), b.name) != dg.caches.end()) {
      s->caches.push_back(t);
    } else {
      s->others[b.name] = t;
    }
  }
  if (!s->control.valid() || !s->state.valid() || !s->logits.valid()) {
    return absl::InternalError(
        "Generator: the rewritten decoder lacks its control, state or logits");
  }
  shared[internal::kDecodeControlName] = s->control;
  for (const Graph& g : prefill) {
    const ValueId ids = [&] {
      for (ValueId id : g.inputs()) {
        if (g.values()[id].name == "input_ids") return id;
      }
      return kNoValue;
    }();
    if (ids == kNoValue || g.values()[ids].desc.shape.size() != 2) {
      return absl::InvalidArgumentError(
          "Generator: a prefill graph has no input_ids [1, S]; expected the decoder imported by "
          "LoadDecoderOnnx(path, max_length, S)");
    }
    const int64_t rows = g.values()[ids].desc.shape[1];
    if (rows < 2) {
      return absl::InvalidArgumentError(absl::StrCat("Generator: a prefill graph of ", rows,
                                                     " token(s); expected 2 or more (one token is "
                                                     "the decode step)"));
    }
    for (const auto& p : s->prefill) {
      if (p->rows == rows) {
        return absl::InvalidArgumentError(
            absl::StrCat("Generator: two prefill graphs of ", rows, " tokens"));
      }
    }
    RECQ_ASSIGN_OR_RETURN(internal::DecodeGraph pg,
                          internal::RewriteDecoder(g, options.max_length, sampler, rows));
    if (pg.caches != dg.caches) {
      return absl::InvalidArgumentError(absl::StrCat("Generator: the prefill graph of ", rows,
                                                     " tokens has other caches than the decoder"));
    }
    RECQ_ASSIGN_OR_RETURN(std::shared_ptr<internal::EngineState> ps,
                          internal::CompileEngineState(context, pg.graph, options.engine, weights));
    auto p = std::make_unique<State::Prefill>();
    p->rows = rows;
    p->engine.emplace(Engine(std::move(ps)));
    for (const std::vector<BindingInfo>* list : {&p->engine->inputs(), &p->engine->outputs()}) {
      for (const BindingInfo& b : *list) {
        auto it = shared.find(b.name);
        if (it != shared.end()) {
          if (it->second.desc() != b.desc) {
            return absl::InternalError(absl::StrCat("Generator: prefill binding '", b.name, "' is ",
                                                    b.desc.ToString(), ", not ",
                                                    it->second.desc().ToString()));
          }
          p->bindings.Set(b.name, it->second);
        } else {
          RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, b.desc));
          p->bindings.Set(b.name, t);
          p->own.push_back(std::move(t));
        }
      }
    }
    RECQ_ASSIGN_OR_RETURN(Recording r, p->engine->Record(options.record));
    p->recording.emplace(std::move(r));
    s->prefill.push_back(std::move(p));
  }
  std::sort(s->prefill.begin(), s->prefill.end(),
            [](const auto& a, const auto& b) { return a->rows < b->rows; });
  Generator g(std::move(s));
  RECQ_RETURN_IF_ERROR(g.Reset());
  return g;
}

absl::Status Generator::Reset() {
  const float zero = 0.0f;
  for (Tensor& t : state_->caches) RECQ_RETURN_IF_ERROR(t.FillBytes(&zero, sizeof(zero)));
  const int64_t zero64 = 0;
  RECQ_RETURN_IF_ERROR(state_->state.FillBytes(&zero64, sizeof(zero64)));
  return state_->control.FillBytes(&zero64, sizeof(zero64));
}

absl::StatusOr<std::vector<DispatchProfile>> Generator::ProfileStep() const {
  return state_->engine.Profile(state_->bindings);
}

namespace {

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

absl::StatusOr<GenerateResult> Generator::Generate(absl::Span<const int64_t> prompt,
                                                   const GenerateOptions& options) {
  State& s = *state_;
  const int64_t L = s.max_length;
  const int64_t n = static_cast<int64_t>(prompt.size());
  if (n == 0) return absl::InvalidArgumentError("Generate: the prompt is empty");
  if (n >= L) {
    return absl::InvalidArgumentError(absl::StrCat("Generate: the prompt has ", n,
                                                   " tokens; max_length ", L,
                                                   " leaves room for at most ", L - 1));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (prompt[i] < 0 || prompt[i] >= s.vocab) {
      return absl::InvalidArgumentError(absl::StrCat("Generate: prompt token ", i, " is ",
                                                     prompt[i], "; expected an id in [0, ", s.vocab,
                                                     ")"));
    }
  }
  if (options.max_new_tokens < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Generate: max_new_tokens is ", options.max_new_tokens, "; expected >= 1"));
  }
  if (options.chunk < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Generate: chunk is ", options.chunk, "; expected >= 1"));
  }
  if (options.eos_id < -1 || options.eos_id >= s.vocab) {
    return absl::InvalidArgumentError(absl::StrCat("Generate: eos_id is ", options.eos_id,
                                                   "; expected -1 (none) or an id in [0, ", s.vocab,
                                                   ")"));
  }

  RECQ_RETURN_IF_ERROR(Reset());
  std::vector<int64_t> host_state(static_cast<size_t>(kDecodeStateHeader + L), 0);
  std::copy(prompt.begin(), prompt.end(), host_state.begin() + kDecodeStateHeader);
  RECQ_RETURN_IF_ERROR(s.state.Upload(absl::MakeConstSpan(host_state)));
  const std::vector<int64_t> control = {n, options.eos_id, options.max_new_tokens, 0};
  RECQ_RETURN_IF_ERROR(s.control.Upload(absl::MakeConstSpan(control)));

  GenerateResult r;
  r.prompt_tokens = n;
  // The last step that can write a token processes position L - 2; the
  // device stops earlier on EOS or max_new_tokens.
  const int64_t max_steps = std::min(n + options.max_new_tokens - 1, L - 1);
  const cl_command_queue queue = s.context.queue();
  int64_t generated = 0;
  bool stopped = false;
  const bool bucketed =
      options.prefill == GenerateOptions::Prefill::kBucketed && !s.prefill.empty() && n >= 2;
  while (!stopped && r.steps < max_steps) {
    int64_t steps = r.steps == 0 ? n : (options.keep_logits ? 1 : options.chunk);
    if (options.keep_logits) steps = 1;
    steps = std::min(steps, max_steps - r.steps);
    const Clock::time_point start = Clock::now();
    if (r.steps == 0 && bucketed) {
      // The prompt's tokens before its last: the largest bucket while it
      // fits whole, then the smallest that holds the rest (padded) if its
      // rows fit in the cache, else the largest that the rest fills; a
      // token that no bucket takes is one decode step. The prefill step's
      // DecodePrefillAdvance stops the position at the last token.
      int64_t pos = 0;
      while (pos < n - 1) {
        const int64_t rest = n - 1 - pos;
        State::Prefill* pick = nullptr;  // the largest bucket that rest fills
        for (const auto& p : s.prefill) {
          if (p->rows <= rest) pick = p.get();
        }
        if (rest < s.prefill.back()->rows) {
          for (const auto& p : s.prefill) {  // the smallest that holds rest
            if (p->rows >= rest && pos + p->rows <= L) {
              pick = p.get();
              break;
            }
          }
        }
        if (pick == nullptr) {
          RECQ_RETURN_IF_ERROR(s.recording.Enqueue(queue, s.bindings));
          ++pos;
          continue;
        }
        RECQ_RETURN_IF_ERROR(pick->recording->Enqueue(queue, pick->bindings));
        ++r.prefill_replays;
        const int64_t took = std::min(pick->rows, rest);
        r.prefill_batched_tokens += took;
        pos += took;
      }
      r.steps = n - 1;
      steps = 1;
    }
    for (int64_t i = 0; i < steps; ++i) {
      RECQ_RETURN_IF_ERROR(s.recording.Enqueue(queue, s.bindings));
      if (options.keep_logits) {
        RECQ_ASSIGN_OR_RETURN(std::vector<float> row, s.logits.Download());
        r.logits.push_back(std::vector<float>(row.end() - s.vocab, row.end()));
      }
    }
    r.steps += steps;
    // One blocking read of the header and the tokens this chunk may have
    // written: the chunk's only wait.
    const size_t first = static_cast<size_t>(kDecodeStateHeader + n + generated);
    const size_t last = static_cast<size_t>(
        std::min<int64_t>(kDecodeStateHeader + r.steps + 1, kDecodeStateHeader + L));
    RECQ_RETURN_IF_ERROR(
        cl::CheckCl(clEnqueueReadBuffer(queue, s.state.mem(), CL_TRUE, 0, last * sizeof(int64_t),
                                        host_state.data(), 0, nullptr, nullptr),
                    "clEnqueueReadBuffer"));
    const double ms = MsSince(start);
    ++r.chunks;
    const int64_t now_generated = host_state[2];
    std::vector<int64_t> fresh(host_state.begin() + first,
                               host_state.begin() + kDecodeStateHeader + n + now_generated);
    if (r.chunks == 1) {
      r.prefill_ms = ms;
    } else {
      r.decode_ms += ms;
      for (size_t i = 0; i < fresh.size(); ++i) r.token_ms.push_back(ms / double(steps));
    }
    generated = now_generated;
    r.tokens.insert(r.tokens.end(), fresh.begin(), fresh.end());
    if (options.on_chunk && !fresh.empty()) options.on_chunk(fresh);
    stopped = host_state[1] != static_cast<int64_t>(DecodeStop::kRunning);
  }
  const int64_t code = host_state[1];
  if (code == static_cast<int64_t>(DecodeStop::kEos)) {
    r.stop = StopReason::kEos;
    r.stop_detail =
        absl::StrCat("end-of-sequence id ", options.eos_id, " after ", generated, " tokens");
  } else if (code == static_cast<int64_t>(DecodeStop::kCapacity) ||
             (code == 0 && generated < options.max_new_tokens)) {
    r.stop = StopReason::kCapacity;
    r.stop_detail =
        absl::StrCat("the sequence reached max_length ", L, " (", n, " prompt tokens, ", generated,
                     " generated of the ", options.max_new_tokens, " asked for)");
  } else {
    r.stop = StopReason::kMaxNewTokens;
    r.stop_detail = absl::StrCat("max_new_tokens ", options.max_new_tokens, " generated");
  }
  return r;
}

}  // namespace recq
