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
#include "engine/ops/decode.h"
#include "engine/ops/sampling.h"
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

absl::StatusOr<Generator> Generator::Create(const Context& context, const Graph& decoder,
                                            const GeneratorOptions& options) {
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
  RECQ_ASSIGN_OR_RETURN(Engine engine, Engine::Compile(context, dg.graph, options.engine));
  RECQ_ASSIGN_OR_RETURN(Recording recording, engine.Record(options.record));
  auto s = std::make_unique<State>(context, engine, std::move(recording));
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
  for (const BindingInfo& b : engine.outputs()) {
    RECQ_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(context, b.desc));
    s->bindings.Set(b.name, t);
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
  while (!stopped && r.steps < max_steps) {
    int64_t steps = r.steps == 0 ? n : (options.keep_logits ? 1 : options.chunk);
    if (options.keep_logits) steps = 1;
    steps = std::min(steps, max_steps - r.steps);
    const Clock::time_point start = Clock::now();
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
