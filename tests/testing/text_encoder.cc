#include "testing/text_encoder.h"

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "engine/ops/layout_attrs.h"
#include "engine/ops/typed.h"
#include "gtest/gtest.h"
#include "recq/math_op_attrs.h"
#include "reference/reference_executor.h"

namespace recq::testing {
namespace {

constexpr int64_t kHeads = 2;
constexpr int64_t kHeadDim = kTextHidden / kHeads;
constexpr int64_t kFfn = 32;

class Builder {
 public:
  TensorRef Weight(const std::string& name, std::vector<int64_t> shape, float scale) {
    reference::HostTensor t = reference::RandomTensor(shape, ++seed_, -scale, scale);
    return g_.Constant(name, std::move(shape), std::move(t.data));
  }
  // Dense: x [..., in] * w [in, out] + b [out].
  TensorRef Dense(TensorRef x, const std::string& name, int64_t in, int64_t out) {
    TensorRef y =
        g_.AddNode(OpType::kMatMul, {x, Weight(name + ".w", {in, out}, 1.0f / std::sqrt(in))});
    return g_.Add(y, Weight(name + ".b", {out}, 0.1f));
  }
  TensorRef LayerNorm(TensorRef x, const std::string& name) {
    reference::HostTensor gamma = reference::RandomTensor({kTextHidden}, ++seed_, 0.8f, 1.2f);
    NormalizationAttrs attrs;
    attrs.epsilon = 1e-12f;
    return g_.AddNode(OpType("LayerNormalization"),
                      {x, g_.Constant(name + ".gamma", {kTextHidden}, std::move(gamma.data)),
                       Weight(name + ".beta", {kTextHidden}, 0.1f)},
                      attrs);
  }
  TensorRef Transpose(TensorRef x, std::vector<int64_t> perm) {
    return g_.AddNode(OpType::kTranspose, {x}, TransposeAttrs{std::move(perm)});
  }
  GraphBuilder& g() { return g_; }

 private:
  GraphBuilder g_;
  uint64_t seed_ = 9000;
};

}  // namespace

Graph TextEncoder() {
  constexpr int64_t B = kTextBatch, S = kTextSeq, H = kTextHidden;
  Builder b;
  GraphBuilder& g = b.g();
  TensorRef ids = g.Input("input_ids", {B, S}, DataType::kInt64);
  TensorRef mask = g.Input("attention_mask", {B, S}, DataType::kInt64);

  // Embeddings: a Gather by run-time int64 ids, plus positions.
  TensorRef words =
      g.AddNode(OpType("Gather"), {b.Weight("word_embeddings", {kTextVocab, H}, 1.0f), ids},
                internal::GatherAttrs{});
  TensorRef x = b.LayerNorm(g.Add(words, b.Weight("position_embeddings", {S, H}, 1.0f)), "emb_ln");

  // The additive mask: (1 - float(expand(mask))) * -1e4, [B, 1, S, S].
  TensorRef m4 = g.Reshape(mask, {B, 1, 1, S});
  TensorRef expanded = g.AddNode(OpType("Expand"), {m4}, internal::ExpandAttrs{{B, 1, S, S}});
  TensorRef as_float = g.AddNode(internal::kCast, {expanded}, internal::CastAttrs{});
  TensorRef inverted = g.AddNode(OpType::kSub, {g.Constant("one", {}, {1.0f}), as_float});
  TensorRef additive = g.AddNode(OpType::kMul, {inverted, g.Constant("min", {}, {-1e4f})});

  // Self-attention with kHeads heads.
  auto heads = [&](TensorRef t, std::vector<int64_t> perm) {
    return b.Transpose(g.Reshape(t, {B, S, kHeads, kHeadDim}), std::move(perm));
  };
  TensorRef q = heads(b.Dense(x, "query", H, H), {0, 2, 1, 3});  // [B, h, S, d]
  TensorRef k = heads(b.Dense(x, "key", H, H), {0, 2, 3, 1});    // [B, h, d, S]
  TensorRef v = heads(b.Dense(x, "value", H, H), {0, 2, 1, 3});  // [B, h, S, d]
  TensorRef scores = g.AddNode(OpType::kMatMul, {q, k});
  scores = g.AddNode(OpType::kMul,
                     {scores, g.Constant("scale", {}, {1.0f / std::sqrt(float(kHeadDim))})});
  TensorRef probs = g.Softmax(g.Add(scores, additive), -1);
  TensorRef context = g.AddNode(OpType::kMatMul, {probs, v});
  context = g.Reshape(b.Transpose(context, {0, 2, 1, 3}), {B, S, H});
  x = b.LayerNorm(g.Add(b.Dense(context, "attn_out", H, H), x), "attn_ln");

  // Feed-forward.
  TensorRef hidden = g.AddNode(OpType("Gelu"), {b.Dense(x, "ffn_in", H, kFfn)}, GeluAttrs{});
  x = b.LayerNorm(g.Add(b.Dense(hidden, "ffn_out", kFfn, H), x), "ffn_ln");
  g.Output(x, "hidden");
  absl::StatusOr<Graph> graph = std::move(g).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph();
}

absl::flat_hash_map<std::string, reference::HostTensor> TextEncoderInputs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  reference::HostTensor ids, mask;
  ids.shape = mask.shape = {kTextBatch, kTextSeq};
  ids.dtype = mask.dtype = DataType::kInt64;
  std::uniform_int_distribution<int64_t> token(0, kTextVocab - 1);
  std::uniform_int_distribution<int64_t> length(1, kTextSeq);
  for (int64_t row = 0; row < kTextBatch; ++row) {
    const int64_t len = length(rng);
    for (int64_t i = 0; i < kTextSeq; ++i) {
      ids.data.push_back(static_cast<float>(token(rng)));
      mask.data.push_back(i < len ? 1.0f : 0.0f);
    }
  }
  return {{"input_ids", std::move(ids)}, {"attention_mask", std::move(mask)}};
}

absl::StatusOr<Tensor> UploadHost(const Context& context, const reference::HostTensor& host) {
  absl::StatusOr<Tensor> t = Tensor::Allocate(context, TensorDesc{host.shape, host.dtype});
  if (!t.ok()) return t.status();
  const std::vector<double> values(host.data.begin(), host.data.end());
  const HostData data = HostData::FromDoubles(host.dtype, values);
  absl::Status s = t->UploadBytes(
      absl::Span<const uint8_t>(static_cast<const uint8_t*>(data.bytes()), data.byte_size()));
  if (!s.ok()) return s;
  return t;
}

}  // namespace recq::testing
