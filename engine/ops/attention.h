// The fused attention op (engine/ops/attention.cc), which the attention
// pattern (engine/patterns/attention.cc) makes out of an exported
// MatMul -> scale -> Add(mask) -> Softmax -> MatMul chain:
//
//   O[b, h, i, :] = sum_j P[b, h, i, j] * V[b, h, j, :]
//   P[b, h, i, :] = softmax_j(scale * Q[b, h, i, :] . K[b, h, j, :] + M[b, h, i, j])
//
// with keys j > i + causal_offset left out when `causal`. Every operand is a
// strided view of its input tensor (AttentionView), so that the Transposes,
// Reshapes and Gathers around attention in exported graphs fold into the
// kernel's index maps: Q may be read straight from a projection's [L, B,
// H*D] output and O written in the [B, L, H*D] order the next projection
// reads. Inputs: Q, K, V and an optional additive mask M (float32).
#ifndef RECQ_ENGINE_OPS_ATTENTION_H_
#define RECQ_ENGINE_OPS_ATTENTION_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "recq/graph.h"

namespace recq::internal {

// AttentionView maps an operand's index (b, h, r, c) (batch, head, row,
// column) to the element
//   offset + (b % batch_mod) * sb_lo + (b / batch_mod) * sb_hi + h * sh + r * sr + c * sc
// of its input tensor. batch_mod splits the batch into two strided
// dimensions (Swin's [B, windows] batch over a mask of [windows, ...]); a
// plain batch has batch_mod = batch and sb_hi = 0. A stride of 0
// broadcasts. Strides and the offset are non-negative.
struct AttentionView {
  int64_t offset = 0;
  int64_t batch_mod = 1;
  int64_t sb_lo = 0, sb_hi = 0, sh = 0, sr = 0, sc = 0;

  bool operator==(const AttentionView& o) const {
    return offset == o.offset && batch_mod == o.batch_mod && sb_lo == o.sb_lo && sb_hi == o.sb_hi &&
           sh == o.sh && sr == o.sr && sc == o.sc;
  }
  // Offset returns the element index of (b, h, r, c).
  int64_t Offset(int64_t b, int64_t h, int64_t r, int64_t c) const {
    return offset + (b % batch_mod) * sb_lo + (b / batch_mod) * sb_hi + h * sh + r * sr + c * sc;
  }
};

struct AttentionAttrs {
  int64_t batch = 1, heads = 1;
  int64_t lq = 1, lk = 1;  // query rows, keys
  int64_t dk = 1, dv = 1;  // the Q.K and the V width
  float scale = 1.0f;
  bool causal = false;
  // With causal: query row i sees keys j <= i + causal_offset (0: PyTorch's
  // is_causal; lk - lq: a query block at the end of a key cache). A row
  // that sees no key gives zeros.
  int64_t causal_offset = 0;
  // Q [.., lq, dk], K [.., lk, dk], V [.., lk, dv], the output O [.., lq,
  // dv] (a one-to-one map onto the output tensor) and the mask M [.., lq,
  // lk] (ignored without a fourth input).
  AttentionView q, k, v, o, mask;
  std::vector<int64_t> out_shape;  // the output tensor's shape
};

// DenseAttentionView is the view of a row-major [batch, heads, rows, cols]
// tensor.
inline AttentionView DenseAttentionView(int64_t batch, int64_t heads, int64_t rows, int64_t cols) {
  AttentionView v;
  v.batch_mod = batch;
  v.sc = 1;
  v.sr = cols;
  v.sh = rows * cols;
  v.sb_lo = heads * rows * cols;
  return v;
}

// DenseAttention returns attributes for row-major Q [B, H, Lq, Dk], K [B, H,
// Lk, Dk], V [B, H, Lk, Dv] and output [B, H, Lq, Dv], with scale
// 1/sqrt(Dk) and no mask view (set `mask` for a fourth input).
inline AttentionAttrs DenseAttention(int64_t b, int64_t h, int64_t lq, int64_t lk, int64_t dk,
                                     int64_t dv) {
  AttentionAttrs a;
  a.batch = b;
  a.heads = h;
  a.lq = lq;
  a.lk = lk;
  a.dk = dk;
  a.dv = dv;
  a.scale = 1.0f / std::sqrt(static_cast<float>(dk));
  a.q = DenseAttentionView(b, h, lq, dk);
  a.k = DenseAttentionView(b, h, lk, dk);
  a.v = DenseAttentionView(b, h, lk, dv);
  a.o = DenseAttentionView(b, h, lq, dv);
  a.out_shape = {b, h, lq, dv};
  return a;
}

// BroadcastMaskView is the view of a row-major mask of `shape` (rank <= 4,
// numpy-broadcastable to [B, H, Lq, Lk]) over [B, H, Lq, Lk].
inline AttentionView BroadcastMaskView(std::vector<int64_t> shape, int64_t batch) {
  while (shape.size() < 4) shape.insert(shape.begin(), 1);
  int64_t stride = 1;
  int64_t s[4];
  for (int i = 3; i >= 0; --i) {
    s[i] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  AttentionView v;
  v.batch_mod = batch;
  v.sb_lo = s[0];
  v.sh = s[1];
  v.sr = s[2];
  v.sc = s[3];
  return v;
}

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_ATTENTION_H_
