// RewriteDecoder turns an imported GPT-2-style decoder step with past
// key/values into a step that keeps its state on the device (the ops of
// engine/ops/decode.h), so that one recording serves every token.
//
// The graph must have been imported with one new token and a past of
// max_length - 1 rows (LoadDecoderOnnx, recq/generator.h), so that every
// shape is static and each present.* has max_length rows. The rewrite:
//   * each past_key_values input P, reached through Identity or one-input
//     Concat nodes, must be the first operand of a Concat(P, new, axis 2)
//     whose output (present) is [1, heads, max_length, head_dim]; that
//     Concat becomes KvCacheWrite(new, state): the new row written in place
//     at the device-side position into the present, a graph output bound to
//     a persistent cache, and every reader of the present reads the cache;
//   * input_ids, position_ids and attention_mask become DecodeInputs nodes
//     reading the state (the mask hides the cache rows after the position);
//   * the sampler picks the next id from the logits (greedy: DecodeArgMax;
//     top_k, top_p: the Sample op with the position as its step counter),
//     and DecodeAdvance appends it and advances the position;
//   * the graph's inputs become one: kDecodeControlName;
//   * nodes that repeat an earlier one (the same op without attributes, the
//     same inputs, constants compared by value) are merged.
// Anything else is InvalidArgument naming what was found and what was
// expected.
#ifndef RECQ_ENGINE_DECODE_DECODER_REWRITE_H_
#define RECQ_ENGINE_DECODE_DECODER_REWRITE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "recq/graph.h"

namespace recq::internal {

inline constexpr char kDecodeControlName[] = "recq.control";
inline constexpr char kDecodeStateName[] = "recq.state";
inline constexpr char kDecodeTokenName[] = "recq.token";

// How the next id is chosen from the logits.
struct DecodeSampler {
  enum class Mode { kGreedy, kTopK, kTopP };
  Mode mode = Mode::kGreedy;
  float temperature = 1.0f;
  int64_t k = 0;
  float p = 1.0f;
  uint64_t seed = 0;
};

struct DecodeGraph {
  Graph graph;
  int64_t max_length = 0;
  int64_t vocab = 0;
  std::string logits;               // the logits output's name
  std::vector<std::string> caches;  // the present outputs, in graph input order of their past
  int64_t cache_bytes = 0;          // all caches together
};

// With rows > 1 the graph must have been imported with `rows` new tokens
// and a past of max_length - rows (LoadDecoderOnnx's seq): the result is a
// prefill step over rows prompt tokens at the device-side position, with
// the same control, state and caches as the decode step's, and no logits
// or sampler (DecodePrefillAdvance ends it; `logits` stays empty).
[[nodiscard]] absl::StatusOr<DecodeGraph> RewriteDecoder(const Graph& graph, int64_t max_length,
                                                         const DecodeSampler& sampler = {},
                                                         int64_t rows = 1);

// LoadDecoderSteps imports the decoder at `path` for the decode step (the
// first graph, as LoadDecoderOnnx(path, max_length)) and for each prefill
// size in `seqs` (as LoadDecoderOnnx(path, max_length, seq)), parsing the
// prefill model once so that its imports share the initializers.
[[nodiscard]] absl::StatusOr<std::vector<Graph>> LoadDecoderSteps(const std::string& path,
                                                                  int64_t max_length,
                                                                  const std::vector<int64_t>& seqs);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_DECODE_DECODER_REWRITE_H_
