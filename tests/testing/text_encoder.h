// A BERT-style text encoder built with the graph API, for the suites that
// must cover a sequence model with integer inputs (the backend conformance
// suite, the fault-injection sweep): int64 `input_ids` [2, 8] and int64
// `attention_mask` [2, 8] in, float `hidden` [2, 8, 16] out.
//
// One encoder layer with seeded random weights, as transformers exports it:
// a run-time Gather of the word embeddings by input_ids, position
// embeddings, LayerNorm; the additive mask chain (mask [2, 8] reshaped to
// [2, 1, 1, 8], Expand to [2, 1, 8, 8] in int64, Cast to float,
// (1 - m) * -1e4); two-head self-attention (MatMul, Transpose, scaled
// scores + mask, Softmax); the output projection with residual and
// LayerNorm; a GELU feed-forward block with residual and LayerNorm.
#ifndef RECQ_TESTS_TESTING_TEXT_ENCODER_H_
#define RECQ_TESTS_TESTING_TEXT_ENCODER_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "recq/recq.h"
#include "reference/reference_ops.h"

namespace recq::testing {

inline constexpr int64_t kTextBatch = 2;
inline constexpr int64_t kTextSeq = 8;
inline constexpr int64_t kTextHidden = 16;
inline constexpr int64_t kTextVocab = 30;

// TextEncoder returns the encoder graph (inputs "input_ids" and
// "attention_mask", output "hidden").
Graph TextEncoder();

// TextEncoderInputs returns inputs drawn from `seed`: token ids uniform in
// [0, kTextVocab) and, per row, a mask of a different number (1 to
// kTextSeq) of leading ones followed by zeros (padding), as a tokenizer
// gives for a batch of sentences of different lengths. Integer values are
// held as floats (reference::HostTensor's convention) with dtype kInt64.
absl::flat_hash_map<std::string, reference::HostTensor> TextEncoderInputs(uint64_t seed);

// UploadHost allocates a device tensor of `host`'s shape and element type
// in `context` and uploads its values (integers converted from the floats).
absl::StatusOr<Tensor> UploadHost(const Context& context, const reference::HostTensor& host);

}  // namespace recq::testing

#endif  // RECQ_TESTS_TESTING_TEXT_ENCODER_H_
