// Signal-processing ops (engine/ops/signal.cc) for the import functions and
// tests that build them.
#ifndef RECQ_ENGINE_OPS_SIGNAL_H_
#define RECQ_ENGINE_OPS_SIGNAL_H_

#include <cstdint>

#include "recq/graph.h"

namespace recq::internal {

// DFT: the discrete Fourier transform of float32 x [..., 1 or 2] (real, or
// complex as (re, im) pairs) along `axis` (not the last dimension), with
// `length` points (x zero-padded or truncated along the axis): y[..., k,
// ..., 2] = sum_n x[n] e^(-+2 pi i k n / length), divided by length when
// `inverse` (the sign then +). `onesided` keeps the bins 0 .. length / 2
// (forward only).
inline constexpr OpType kDFT("DFT");
struct DFTAttrs {
  int64_t axis = 1;
  int64_t length = 0;
  bool inverse = false;
  bool onesided = false;
};

// STFT: the short-time Fourier transform of float32 signal [batch, length,
// 1 or 2]: frames of `frame_length` samples every `frame_step`, each
// multiplied by the window (input 1, [frame_length]; absent: ones) and
// transformed as DFT does: y [batch, frames, bins, 2] with frames = 1 +
// (length - frame_length) / frame_step and bins = frame_length / 2 + 1
// when `onesided` (real signals), else frame_length.
inline constexpr OpType kSTFT("STFT");
struct STFTAttrs {
  int64_t frame_step = 1;
  int64_t frame_length = 1;
  bool onesided = true;
};

// SizeCheckedConstant: y = the table (input 1, a floating-point constant)
// where the integer scalar input 0 equals `expected`; NaN everywhere
// otherwise. The window and mel tables of a size the model declares through
// its output shape (engine/ops/signal_tables.cc), checked against the size
// given at run time.
inline constexpr OpType kSizeCheckedConstant("SizeCheckedConstant");
struct SizeCheckedConstantAttrs {
  int64_t expected = 0;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_OPS_SIGNAL_H_
