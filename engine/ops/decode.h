// The decode-loop ops: state that a decoder step keeps on the device between
// replays of one recording (engine/decode/decoder_rewrite.h puts them into an
// imported decoder; recq/generator.h drives it).
//
// The state is one int64 tensor of kDecodeStateHeader + length elements,
// bound to memory the Generator owns and passes to every step:
//   [0] position: the sequence position this step processes (0-based)
//   [1] stopped: 0 while running, else a DecodeStop code
//   [2] generated: tokens written after the prompt
//   [3] unused (0)
//   [4 + i] the sequence's token i (the prompt, then the generated tokens)
// The control tensor (int64 [kDecodeControlSize], a read-only input the host
// writes once per generation) holds the prompt length, the end-of-sequence id
// (-1: none) and the most tokens to generate.
#ifndef RECQ_ENGINE_OPS_DECODE_H_
#define RECQ_ENGINE_OPS_DECODE_H_

#include <cstdint>

#include "recq/graph.h"

namespace recq::internal {

inline constexpr int64_t kDecodeStateHeader = 4;
inline constexpr int64_t kDecodeControlSize = 4;

// Values of state[1].
enum class DecodeStop : int64_t { kRunning = 0, kEos = 1, kMaxNewTokens = 2, kCapacity = 3 };

// DecodeBegin(control) -> state: declares the state tensor (a graph output
// bound to the Generator's buffer); emits no dispatch.
inline constexpr OpType kDecodeBegin{"recq.DecodeBegin"};
// DecodeInputs(state) -> int64: the step's input_ids [1,rows] (which =
// kToken: token[position + i]), position_ids [1,rows] (kPosition: position
// + i), attention_mask [1, length] (kMask: 1 for j < position + rows, 0
// after) or the sampler's step counter [1] (kStep: the position). Indices
// are clamped into [0, length).
inline constexpr OpType kDecodeInputs{"recq.DecodeInputs"};
// KvCacheWrite(x [1,H,1,D] float, state) -> cache [1,H,length,D]: writes x
// as row `position` of the cache, in place, unless the state is stopped; the
// other rows keep what earlier steps wrote (the output is a graph output
// bound to the same persistent buffer at every step). With `heads` set, x
// is any float32 tensor and element (h, s, d) of the rows is x[offset + h
// * stride_h + s * stride_s + d * stride_d]: the new keys or values read
// straight from a packed QKV projection's output, without the Slice and
// Transpose copies.
inline constexpr OpType kKvCacheWrite{"recq.KvCacheWrite"};
// DecodeAdvance(ids [1,1] int64, state, control) -> token [1] int64: the end
// of a step. Unless stopped: appends the sampled id after the prompt,
// updates the stop code and advances the position, writing the state (its
// input) in place. Every reader of the state runs before it (they all feed
// the logits the sampler reads).
inline constexpr OpType kDecodeAdvance{"recq.DecodeAdvance"};

// DecodePrefillAdvance(state, control, caches...) -> [1] int64 (the new
// position): the end of a
// prefill step over `rows` prompt tokens. Unless stopped: the position
// advances by `rows`, but never past the prompt's last token (control[0] -
// 1), which the decode step processes to sample the first new id. It
// writes the state (its input) in place; the caches are inputs only to
// order it after every cache write.
inline constexpr OpType kDecodePrefillAdvance{"recq.DecodePrefillAdvance"};

// DecodeArgMax(logits [.., V], one row of V) -> ids [..] int64: greedy
// sampling, the first index of the largest logit, computed by one
// work-group (ArgMax's kernel gives a line to one work-item, which is slow
// for a 50,257-wide vocabulary on a GPU).
inline constexpr OpType kDecodeArgMax{"recq.DecodeArgMax"};

struct DecodeAttrs {
  enum class Which : int64_t { kToken = 0, kPosition = 1, kMask = 2, kStep = 3 };
  int64_t length = 0;  // max_length: cache rows and sequence capacity
  Which which = Which::kToken;
  // KvCacheWrite from a strided source (heads > 0).
  int64_t heads = 0, dim = 0, offset = 0, stride_h = 0, stride_d = 0;
  int64_t stride_s = 0;  // between the rows of a strided source
  // Tokens a step processes: DecodeInputs makes `rows` ids and positions
  // (position + i) and a mask of 1 for j < position + rows; KvCacheWrite
  // writes x [1,H,rows,D] as rows [position, position + rows).
  int64_t rows = 1;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_DECODE_H_
