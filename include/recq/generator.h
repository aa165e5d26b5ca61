// Generator: autoregressive decoding of a GPT-2-style decoder step, recorded
// once and replayed once per token, with the KV cache, the position and the
// next token kept on the device.
//
//   Graph g = LoadDecoderOnnx("decoder_with_past.onnx", 256).value();
//   Generator gen = Generator::Create(ctx, g, {.max_length = 256}).value();
//   GenerateResult r = gen.Generate({464, 3290, 318}, {.max_new_tokens = 64}).value();
//   // r.tokens: the generated ids; r.stop: why it stopped
//
// Create rewrites the decoder (every shape static: one new token over a past
// of max_length - 1 rows), compiles it and records one step. With prefill
// steps (Load with GeneratorOptions::prefill_buckets, or Create with graphs
// imported at seq = S), the prompt is prefilled S tokens per replay of a
// step recorded per bucket S, bound to the same caches and state. The recording's
// bindings never change: the Generator owns one buffer per KV cache
// (max_length rows per layer, written in place at the device-side position),
// the state (position, stop flag, the sequence's tokens) and the logits.
// Each step reads its token from the state, writes its K/V rows, samples
// the next id on the device and appends it. The prompt is placed in the
// state before the first step, so prefill runs token by token through the
// same recording. Generate enqueues steps in chunks and reads the state once
// per chunk; within a chunk, steps after a stop change nothing.
//
// A Generator is not thread-safe (one generation at a time); it keeps its
// engine, recording and context alive.
#ifndef RECQ_GENERATOR_H_
#define RECQ_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/graph.h"
#include "recq/recording.h"

namespace recq {

// How the next id is chosen from the logits, on the device.
struct SamplingOptions {
  enum class Mode { kGreedy, kTopK, kTopP };
  Mode mode = Mode::kGreedy;
  float temperature = 1.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
};
// ParseSampling reads "greedy", or "top_k=K[,temperature=T][,seed=S]", or
// "top_p=P[,temperature=T][,seed=S]"; InvalidArgument naming the bad part.
[[nodiscard]] absl::StatusOr<SamplingOptions> ParseSampling(absl::string_view text);
std::string SamplingName(const SamplingOptions& sampling);

struct GeneratorOptions {
  // Cache rows per layer: the longest sequence (prompt and generated
  // tokens together). The graph must have been imported for it
  // (LoadDecoderOnnx with the same max_length).
  int64_t max_length = 128;
  SamplingOptions sampling;
  // The prefill steps Load imports: one per size S in 2..max_length-1 (say
  // 2, 4, ..., 64), each processing S prompt tokens per replay.
  std::vector<int64_t> prefill_buckets;
  // Only fp32 precision is supported.
  EngineOptions engine;
  RecordOptions record;
};

struct GenerateOptions {
  int64_t max_new_tokens = 32;
  int64_t eos_id = -1;  // -1: none
  // Steps enqueued between two reads of the state (after the prefill chunk,
  // which holds the prompt's steps).
  int64_t chunk = 16;
  // How the prompt's tokens before its last are processed: kBucketed by the
  // prefill steps (chunks of the largest bucket, then the smallest bucket
  // that holds the rest, its padding rows overwritten by later steps before
  // anything reads them), kTokens one decode step each. Without prefill
  // steps both are kTokens. The prompt's last token is always one decode
  // step: it samples the first new id.
  enum class Prefill { kBucketed, kTokens };
  Prefill prefill = Prefill::kBucketed;
  // Called after every chunk with the ids that chunk generated.
  std::function<void(absl::Span<const int64_t> ids)> on_chunk;
  // Reads the logits after every step into GenerateResult::logits (chunks
  // of one step): a validation aid, not for speed.
  bool keep_logits = false;
};

enum class StopReason { kEos, kMaxNewTokens, kCapacity };
// StopReasonName: "eos", "max_new_tokens", "capacity".
const char* StopReasonName(StopReason reason);

struct GenerateResult {
  std::vector<int64_t> tokens;  // the generated ids (an EOS included)
  StopReason stop = StopReason::kMaxNewTokens;
  // Why it stopped, in words ("the sequence reached max_length 64 (8 prompt
  // tokens, 56 generated)").
  std::string stop_detail;
  int64_t prompt_tokens = 0;
  int64_t steps = 0;  // positions processed (some after a stop do nothing)
  // Replays of prefill steps, and the prompt tokens they processed.
  int64_t prefill_replays = 0;
  int64_t prefill_batched_tokens = 0;
  int64_t chunks = 0;  // host reads of the state
  // Host wall time: the prefill chunk (the prompt's steps, which also
  // produce the first token) and the chunks after it.
  double prefill_ms = 0;
  double decode_ms = 0;
  // Per generated token after the first: its chunk's time / its steps.
  std::vector<double> token_ms;
  // keep_logits: the logits of every decode step ([steps][vocab]; with
  // bucketed prefill the first is the prompt's last token's).
  std::vector<std::vector<float>> logits;
};

class Generator {
 public:
  Generator(Generator&&) noexcept;
  Generator& operator=(Generator&&) noexcept;
  ~Generator();

  // Create rewrites `decoder` (see engine/decode/decoder_rewrite.h for the
  // pattern it needs; anything else is InvalidArgument saying what was
  // expected), compiles it, records one step and allocates the state.
  // `prefill`: the same decoder imported at seq = S (LoadDecoderOnnx) for
  // each prefill bucket S; they share the decode step's weights on the
  // device. options.prefill_buckets is ignored here.
  [[nodiscard]] static absl::StatusOr<Generator> Create(const Context& context,
                                                        const Graph& decoder,
                                                        const GeneratorOptions& options = {},
                                                        const std::vector<Graph>& prefill = {});
  // Load imports `path` for the decode step and every prefill bucket of
  // options.prefill_buckets, then Creates.
  [[nodiscard]] static absl::StatusOr<Generator> Load(const Context& context,
                                                      const std::string& path,
                                                      const GeneratorOptions& options = {});

  // Generate resets the state, places the prompt and decodes. Errors before
  // anything is enqueued: InvalidArgument for an empty prompt, one of
  // max_length tokens or more, an id outside [0, vocab), max_new_tokens or
  // chunk below 1, an eos_id outside [-1, vocab). Running out of rows stops
  // with StopReason::kCapacity (not an error). OpenCL failures are statuses
  // naming the call; the Generator stays usable.
  [[nodiscard]] absl::StatusOr<GenerateResult> Generate(absl::Span<const int64_t> prompt,
                                                        const GenerateOptions& options = {});

  // Reset zeroes the caches and the state (Generate does it first).
  [[nodiscard]] absl::Status Reset();

  // ProfileStep runs one step op by op on a profiling queue
  // (Engine::Profile) with the Generator's bindings and returns each
  // dispatch's device time. Run after a generation, the state is stopped, so
  // the step reads the last sequence's cache and changes nothing.
  [[nodiscard]] absl::StatusOr<std::vector<DispatchProfile>> ProfileStep() const;

  int64_t max_length() const;
  int64_t vocab() const;
  int64_t kv_cache_bytes() const;
  // The weights on the device, for the decode and prefill steps together
  // (each constant once).
  int64_t weight_bytes() const;
  // The prefill steps' sizes, increasing (empty: token by token only).
  std::vector<int64_t> prefill_buckets() const;
  // The prefill step of `rows` tokens and its recording; null when there is
  // none of that size.
  const Engine* prefill_engine(int64_t rows) const;
  const Recording* prefill_recording(int64_t rows) const;
  const Engine& engine() const;
  const Recording& recording() const;

 private:
  struct State;
  explicit Generator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// LoadDecoderOnnx imports a decoder exported with past key/values for
// Generator: batch 1, `seq` new tokens, a past of max_length - seq rows
// (every symbolic dimension of input_ids, position_ids, attention_mask and
// the past_key_values inputs is set from the input's role). With seq > 1
// (a prefill step) the causal mask must be transformers' one
// LessOrEqual(kv_idx, q_idx); it is made to follow position_ids, since the
// step writes its rows at the device-side position.
[[nodiscard]] absl::StatusOr<Graph> LoadDecoderOnnx(const std::string& path, int64_t max_length,
                                                    int64_t seq = 1);
// PrefillBuckets: powers of two from 2 up to the first one >= tokens,
// capped at `cap` (tokens 15, cap 64: 2, 4, 8, 16); empty when tokens < 2.
std::vector<int64_t> PrefillBuckets(int64_t tokens, int64_t cap = 64);

}  // namespace recq

#endif  // RECQ_GENERATOR_H_
