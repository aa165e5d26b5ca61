// DFT and STFT (engine/ops/signal.cc): one work-item per output bin sums
// over the transformed points directly, O(n) per bin and O(n^2) per
// transform (no FFT). Angles are reduced exactly as (k * n) mod length
// and the sines and cosines are sinpi / cospi of 2 m / length, exact at
// the quarter turns (the imaginary parts of real inputs' bins 0 and
// length / 2 come out as exact zeros).
// Tensors are RECQ_T, read and written through RECQ_LOAD / RECQ_STORE
// (common.cl), so half storage works as for the other float kernels.

// (re, im) += (xr + i xi) * e^(SIGN i 2 pi m / len).
inline float2 recq_dft_term(float2 acc, float xr, float xi, long m, int len, float sign) {
  const float t = 2.0f * (float)m / (float)len;
  const float c = cospi(t);
  const float s = sign * sinpi(t);
  return acc + (float2)(xr * c - xi * s, xr * s + xi * c);
}

// x [outer, n_in, inner, channels] (channels 1: real, 2: complex) along
// the middle axis, y [outer, bins, inner, 2]. Global size (inner, bins,
// outer).
__kernel void dft(__global const RECQ_T* restrict x, __global RECQ_T* restrict y, int n_in,
                  int inner, int channels, int len, int bins, float sign, float scale) {
  const int i = get_global_id(0), k = get_global_id(1), o = get_global_id(2);
  const int n_end = min(n_in, len);
  float2 acc = (float2)(0.0f, 0.0f);
  for (int n = 0; n < n_end; ++n) {
    const size_t at = (((size_t)o * n_in + n) * inner + i) * channels;
    const float xi = channels == 2 ? RECQ_LOAD(x, at + 1) : 0.0f;
    acc = recq_dft_term(acc, RECQ_LOAD(x, at), xi, ((long)k * n) % len, len, sign);
  }
  const size_t out = (((size_t)o * bins + k) * inner + i) * 2;
  RECQ_STORE(y, out, acc.x * scale);
  RECQ_STORE(y, out + 1, acc.y * scale);
}

// signal [batch, length, channels], window [frame_length] (has_window 0:
// ones), y [batch, frames, bins, 2]. Global size (bins, frames, batch).
__kernel void stft(__global const RECQ_T* restrict signal, __global const RECQ_T* restrict window,
                   __global RECQ_T* restrict y, int length, int channels, int frame_step,
                   int frame_length, int frames, int bins, int has_window) {
  const int k = get_global_id(0), f = get_global_id(1), b = get_global_id(2);
  const int start = f * frame_step;
  float2 acc = (float2)(0.0f, 0.0f);
  for (int n = 0; n < frame_length && start + n < length; ++n) {
    const size_t at = ((size_t)b * length + start + n) * channels;
    const float w = has_window ? RECQ_LOAD(window, n) : 1.0f;
    const float xi = channels == 2 ? RECQ_LOAD(signal, at + 1) : 0.0f;
    acc = recq_dft_term(acc, RECQ_LOAD(signal, at) * w, xi * w, ((long)k * n) % frame_length, frame_length,
                        -1.0f);
  }
  const size_t out = (((size_t)b * frames + f) * bins + k) * 2;
  RECQ_STORE(y, out, acc.x);
  RECQ_STORE(y, out + 1, acc.y);
}

#ifdef CHECKED_CONSTANT
// y = table where the integer scalar `size` equals `expected`; every
// element NaN (NAN_BITS) otherwise. VAL_T copies an element as bits, SIZE_T
// is the size's storage type. Global size: (elements of y).
__kernel void checked_constant(__global const SIZE_T* restrict size,
                               __global const VAL_T* restrict table, __global VAL_T* restrict y,
                               long expected) {
  const int i = get_global_id(0);
  y[i] = (long)size[0] == expected ? table[i] : (VAL_T)(NAN_BITS);
}
#endif
