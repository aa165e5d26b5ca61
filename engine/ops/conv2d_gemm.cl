// Convolution on CPUs as a GEMM over packed pixel panels, in two dispatches:
//   Y[n][oc][q] = act(sum_k W[oc][k] * X(n, k, q) + bias[oc] (+ R[n][oc][q])),
// q < OH*OW the output pixel, k = (c * KH + kh) * KW + kw the tap, and
// X(n, k, q) the input pixel that tap reads for that output (zero in the
// padding). Groups 1, any kernel, stride, dilation and padding.
//
// conv2d_panels copies X into panels p [N][ceil(OH*OW/VW)][K][VW]: panel t
// holds the VW output pixels t*VW .. t*VW+VW-1 (zero past OH*OW), one
// vector per tap, so that the product streams each panel contiguously.
// conv2d_gemm then multiplies the weights, packed by the lowering as
// [ceil(OC/RM)][K][RM] (zero past OC), by the panels: each work-item computes
// RM output channels of one panel with RM vector accumulators, each weight
// broadcast from memory into its FMA. The items of a work-group take
// consecutive channel blocks of one panel, so the panel is read from the
// caches after the first.
//
// With `direct` set (stride-1 1x1 convolutions, OH*OW >= VW) there are no
// panels: conv2d_gemm reads the input in place, as a [K][OH*OW] matrix. An
// argument, not a build option: both forms share one program and one
// work-group function, which PoCL compiles at the first enqueue (a cold
// start compiled two).
//
// Build options: -DRECQ_CG_VW=8|16 (pixels per panel, one vector; pixels
// per item of conv2d_gemm_oc, below) and -DRECQ_CG_RM=2..8 (output channels
// per item of conv2d_gemm).
#ifndef RECQ_CG_VW
#define RECQ_CG_VW 16
#endif
#ifndef RECQ_CG_RM
#define RECQ_CG_RM 4
#endif

#define VW RECQ_CG_VW
#define RM RECQ_CG_RM
#define CG_CAT_(a, b) a##b
#define CG_CAT(a, b) CG_CAT_(a, b)
#define floatV CG_CAT(float, VW)
#define vloadV CG_CAT(vload, VW)
#define vstoreV CG_CAT(vstore, VW)
#define loadV CG_CAT(RECQ_LOAD, VW)
#define storeV CG_CAT(RECQ_STORE, VW)
#define activateV CG_CAT(recq_activate_inline, VW)

// One work-item per (input channel c, panel t, image n): the KH*KW taps of
// channel c for the panel's VW pixels. `offs` (built by the lowering) holds,
// per panel and tap, each lane's input offset within the channel's plane,
// -1 where the lane reads padding or lies past OH*OW; then, per panel and
// tap, the offset of a run of VW consecutive inputs the lanes read, or -1:
// those taps load one vector; then, per panel and tap, the offset of a run
// of VW inputs two apart, or -1: those load two vectors and keep their
// even lanes (a stride-2 stem's taps, otherwise lane by lane).
// Global size: (C, tiles, N), rounded up to the local size.
__kernel void conv2d_panels(__global const RECQ_T* restrict x, __global const int* restrict offs,
                            __global RECQ_T* restrict p, int N, int C, int HW_IN, int tiles,
                            int taps) {
  const int c = get_global_id(0);
  const int t = get_global_id(1);
  const int n = get_global_id(2);
  if (c >= C || t >= tiles || n >= N) return;
  const __global RECQ_T* xc = x + ((size_t)n * C + c) * HW_IN;
  __global RECQ_T* dst = p + (((size_t)n * tiles + t) * C + c) * taps * VW;
  const __global int* lane = offs + (size_t)t * taps * VW;
  const __global int* run = offs + (size_t)tiles * taps * VW + (size_t)t * taps;
  const __global int* run2 = run + (size_t)tiles * taps;
  for (int k = 0; k < taps; ++k) {
    const int at = run[k];
    const int at2 = run2[k];
    if (at >= 0) {
      storeV(dst, k, loadV(xc + at, 0));
    } else if (at2 >= 0) {
      const floatV lo = loadV(xc + at2, 0);
      const floatV hi = loadV(xc + at2 + VW, 0);
      storeV(dst, k, (floatV)(lo.even, hi.even));
    } else {
      float v[VW];
#pragma unroll
      for (int i = 0; i < VW; ++i) {
        const int o = lane[k * VW + i];
        v[i] = o >= 0 ? RECQ_LOAD(xc, o) : 0.0f;
      }
      storeV(dst, k, vloadV(0, v));
    }
  }
}

// The taps of tile t of image n, for both products: returns where tap 0 of
// its VW pixels lies, and sets its first pixel *q0 and the distance *step
// from one tap's pixels to the next's. From the panels, or with `direct`
// (a stride-1 1x1 convolution) from the input in place, tap k of pixel q
// being X[n][k][q], row k of a [K][HW] matrix; there a partial last tile
// moves back to end at HW (HW >= VW) and rewrites its neighbour's values.
inline const __global RECQ_T* cg_taps(const __global RECQ_T* p, int n, int t, int K, int HW,
                                      int direct, int* q0, size_t* step) {
  if (direct) {
    *q0 = min(t * VW, HW - VW);
    *step = (size_t)HW;
    return p + (size_t)n * K * HW + *q0;
  }
  const int tiles = (HW + VW - 1) / VW;
  *q0 = t * VW;
  *step = (size_t)VW;
  return p + ((size_t)n * tiles + t) * K * VW;
}

// One work-item per (channel block b, panel t, image n). Global size:
// (ceil(OC/RM), tiles, N), rounded up to the local size.
__kernel void conv2d_gemm(__global const RECQ_T* restrict p, __global const RECQ_T* restrict wp,
                          __global const RECQ_T* restrict bias, __global const RECQ_T* restrict r,
                          __global RECQ_T* restrict y, int N, int K, int HW, int OC, int direct,
                          int act, float act_a, float act_b) {
  const int b = get_global_id(0);
  const int t = get_global_id(1);
  const int n = get_global_id(2);
  const int tiles = (HW + VW - 1) / VW;
  const int oc0 = b * RM;
  if (oc0 >= OC || t >= tiles || n >= N) return;
  int q0;
  size_t step;
  const __global RECQ_T* pq = cg_taps(p, n, t, K, HW, direct, &q0, &step);
  const __global RECQ_T* w = wp + (size_t)b * K * RM;
  floatV acc[RM];
#pragma unroll
  for (int j = 0; j < RM; ++j) acc[j] = (floatV)(0.0f);
  for (int k = 0; k < K; ++k) {
    const floatV xv = loadV(pq + (size_t)k * step, 0);
    const __global RECQ_T* wk = w + k * RM;
#pragma unroll
    for (int j = 0; j < RM; ++j) acc[j] = fma((floatV)(RECQ_LOAD(wk, j)), xv, acc[j]);
  }
  const bool full = q0 + VW <= HW;
  const size_t at = ((size_t)n * OC + oc0) * HW + q0;
#pragma unroll
  for (int j = 0; j < RM; ++j) {
    if (oc0 + j >= OC) break;
    floatV s = acc[j] + (bias ? RECQ_LOAD(bias, oc0 + j) : 0.0f);
    const size_t row = at + (size_t)j * HW;
    if (full) {
      if (r) s += loadV(r + row, 0);
      storeV(y + row, 0, activateV(s, act, act_a, act_b));
    } else {
      float v[VW];
      vstoreV(s, 0, v);
      for (int i = 0; q0 + i < HW; ++i) {
        const float e = v[i] + (r ? RECQ_LOAD(r, row + i) : 0.0f);
        RECQ_STORE(y, row + i, recq_activate(e, act, act_a, act_b));
      }
    }
  }
}

// conv2d_gemm_oc: the same product with the roles turned, for small maps
// (7x7) where a panel of 16 pixels leaves lanes idle (49 pixels fill 49 of
// 64): each work-item computes VW pixels (one panel, or VW pixels read
// in place when `direct`) by 16 output channels, with VW accumulators of 16
// channels each; per tap one vector of 16 weights (packed by the lowering as
// [ceil(OC/16)][K][16], zero past OC) feeds VW FMAs, each pixel's value
// broadcast from memory. The epilogue writes each channel's VW pixels as one
// vector. Global size: (ceil(OC/16), tiles, N), rounded up to the local
// size.
__kernel void conv2d_gemm_oc(__global const RECQ_T* restrict p, __global const RECQ_T* restrict wp,
                             __global const RECQ_T* restrict bias,
                             __global const RECQ_T* restrict r, __global RECQ_T* restrict y,
                             int N, int K, int HW, int OC, int direct, int act, float act_a,
                             float act_b) {
  const int b = get_global_id(0);
  const int t = get_global_id(1);
  const int n = get_global_id(2);
  const int tiles = (HW + VW - 1) / VW;
  const int oc0 = b * 16;
  if (oc0 >= OC || t >= tiles || n >= N) return;
  int q0;
  size_t step;
  const __global RECQ_T* pq = cg_taps(p, n, t, K, HW, direct, &q0, &step);
  const __global RECQ_T* w = wp + (size_t)b * K * 16;
  float16 acc[VW];
#pragma unroll
  for (int i = 0; i < VW; ++i) acc[i] = (float16)(0.0f);
  for (int k = 0; k < K; ++k) {
    const float16 wv = RECQ_LOAD16(w + (size_t)k * 16, 0);
    const __global RECQ_T* pk = pq + (size_t)k * step;
#pragma unroll
    for (int i = 0; i < VW; ++i) acc[i] = fma((float16)(RECQ_LOAD(pk, i)), wv, acc[i]);
  }
  // Channel j's VW pixels are lane j of each accumulator.
  float lanes[VW][16];
#pragma unroll
  for (int i = 0; i < VW; ++i) vstore16(acc[i], 0, lanes[i]);
  const bool full = q0 + VW <= HW;
  for (int j = 0; j < 16 && oc0 + j < OC; ++j) {
    float v[VW];
#pragma unroll
    for (int i = 0; i < VW; ++i) v[i] = lanes[i][j];
    const float bj = bias ? RECQ_LOAD(bias, oc0 + j) : 0.0f;
    const size_t row = ((size_t)n * OC + oc0 + j) * HW + q0;
    if (full) {
      floatV s = vloadV(0, v) + bj;
      if (r) s += loadV(r + row, 0);
      storeV(y + row, 0, activateV(s, act, act_a, act_b));
    } else {
      for (int i = 0; q0 + i < HW; ++i) {
        const float e = v[i] + bj + (r ? RECQ_LOAD(r, row + i) : 0.0f);
        RECQ_STORE(y, row + i, recq_activate(e, act, act_a, act_b));
      }
    }
  }
}
