// RecurrentSequence: the recurrence of ONNX's RNN, GRU and LSTM, after the
// input projection. The ONNX import (recurrent.cc) computes X * W^T of all
// time steps and both directions as one MatMul and hands this op the
// result; the op runs the time steps, one dispatch (two for a GRU whose
// linear_before_reset is 0) per step. Shared by the op file and its CPU
// reference (tests/reference/ops/recurrent.cc).
//
// Inputs (optional ones may be kNoValue):
//   0 xw    [T, B, D*G*H] (layout 0) or [B, T, D*G*H] (layout 1): X * W^T,
//           direction-major, then gate, then hidden unit
//   1 rt    [D, H, G*H]: R transposed (rt[d][k][g*H + j] = R[d][g*H + j][k])
//   2 bias  [D, 2*G*H], optional: Wb then Rb, as ONNX's B
//   3 seq   [B] int32 or int64, optional: sequence_lens (clamped to [0, T])
//   4 h0    [D, B, H], optional: initial_h (zeros when absent)
//   5 c0    [D, B, H], optional (LSTM): initial_c
//   6 p     [D, 3*H], optional (LSTM): peepholes i, o, f
// Output [T + state_rows, D, B, H]: rows 0..T-1 hold Y (layout 0; zeros at
// steps past a batch entry's sequence length), row T the last hidden state
// (Y_h) when state_rows >= 1, row T + 1 the last cell state (Y_c) when
// state_rows == 2. G is 1 (RNN: gate i), 3 (GRU: z, r, h) or 4 (LSTM: i, o,
// f, c), as in ONNX's weight layout.
#ifndef RECQ_ENGINE_OPS_RECURRENT_H_
#define RECQ_ENGINE_OPS_RECURRENT_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "recq/graph.h"

namespace recq::internal {

inline constexpr OpType kRecurrentSequence("RecurrentSequence");

enum class RecurrentCell { kRnn = 0, kGru = 1, kLstm = 2 };

// The activation functions ONNX's recurrent ops accept (the codes of
// recurrent.cl).
enum class RecurrentActivationKind {
  kRelu = 0,
  kTanh = 1,
  kSigmoid = 2,
  kAffine = 3,           // alpha * x + beta
  kLeakyRelu = 4,        // x >= 0 ? x : alpha * x
  kThresholdedRelu = 5,  // x > alpha ? x : 0
  kScaledTanh = 6,       // alpha * tanh(beta * x)
  kHardSigmoid = 7,      // clamp(alpha * x + beta, 0, 1)
  kElu = 8,              // x >= 0 ? x : alpha * (exp(x) - 1)
  kSoftsign = 9,         // x / (1 + |x|)
  kSoftplus = 10,        // log(1 + exp(x))
};

struct RecurrentActivation {
  RecurrentActivationKind kind = RecurrentActivationKind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;
};

struct RecurrentAttrs {
  RecurrentCell cell = RecurrentCell::kRnn;
  int64_t hidden_size = 1;
  int64_t directions = 1;            // 1 or 2 (bidirectional)
  bool reverse = false;              // with one direction: ONNX's direction "reverse"
  int64_t layout = 0;                // of xw: 0 [T, B, ...], 1 [B, T, ...]
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM: f = 1 - i
  float clip = 0.0f;                 // > 0: gate inputs clamped to [-clip, clip]
  // Per direction, the cell's functions in ONNX's order (RNN f; GRU f, g;
  // LSTM f, g, h): directions * FunctionsOf(cell) entries.
  std::vector<RecurrentActivation> activations;
  int64_t state_rows = 0;  // 0, 1 (Y_h) or 2 (Y_h, Y_c: LSTM only)
};

// GatesOf returns G: the gate count of a cell.
inline int64_t GatesOf(RecurrentCell cell) {
  return cell == RecurrentCell::kRnn ? 1 : cell == RecurrentCell::kGru ? 3 : 4;
}
// FunctionsOf returns how many activation functions a cell takes.
inline int64_t FunctionsOf(RecurrentCell cell) {
  return cell == RecurrentCell::kRnn ? 1 : cell == RecurrentCell::kGru ? 2 : 3;
}
// IsReverse tells whether direction `d` of a node walks backwards in time.
inline bool IsReverse(const RecurrentAttrs& a, int64_t d) {
  return a.directions == 2 ? d == 1 : a.reverse;
}

// ApplyRecurrentActivation is the host form of the functions (references,
// tests), in double.
inline double ApplyRecurrentActivation(const RecurrentActivation& f, double x) {
  switch (f.kind) {
    case RecurrentActivationKind::kRelu:
      return x > 0 ? x : 0;
    case RecurrentActivationKind::kTanh:
      return std::tanh(x);
    case RecurrentActivationKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case RecurrentActivationKind::kAffine:
      return f.alpha * x + f.beta;
    case RecurrentActivationKind::kLeakyRelu:
      return x >= 0 ? x : f.alpha * x;
    case RecurrentActivationKind::kThresholdedRelu:
      return x > f.alpha ? x : 0;
    case RecurrentActivationKind::kScaledTanh:
      return f.alpha * std::tanh(f.beta * x);
    case RecurrentActivationKind::kHardSigmoid: {
      const double v = f.alpha * x + f.beta;
      return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case RecurrentActivationKind::kElu:
      return x >= 0 ? x : f.alpha * (std::exp(x) - 1);
    case RecurrentActivationKind::kSoftsign:
      return x / (1 + std::abs(x));
    case RecurrentActivationKind::kSoftplus:
      return std::log1p(std::exp(x));
  }
  return x;
}

// The most time steps a RecurrentSequence node runs: each is a dispatch.
inline constexpr int64_t kMaxRecurrentSteps = 4096;

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_RECURRENT_H_
