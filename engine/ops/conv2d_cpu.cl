// conv2d_tiled: direct NCHW convolution for any kernel size, stride,
// dilation, padding and groups, register-blocked for CPUs (PoCL).
//
// Each work-item computes a tile of VW consecutive output columns (one
// float8/float16 vector) of RB output rows for OCB output channels of one
// group. Per input channel and kernel row it loads the KW taps of each row
// once (one vector per tap) and broadcasts each packed weight into VW-wide
// FMAs: RB * OCB independent accumulators.
//   Y[n][g*OCPG+oc][oh][ow] = act(sum_{c,kh,kw} W[..] * X[n][g*CPG+c][ih][iw]
//                                 + bias (+ R))
// `wp` holds the weights packed by the lowering as
// [groups][ceil(OCPG/OCB)][CPG][KH][KW][OCB], zero past OCPG, so the OCB
// weights of one tap are consecutive. `bias` and `r` (a residual of Y's
// shape added before the activation, a fused Add) may be NULL.
//
// Tiles whose input columns all lie inside the row (the common case) load
// taps straight from global memory (unaligned vector loads; stride 2 takes
// the even lanes of two loads). Edge tiles copy the row's window into a
// zero-padded private array first. A partial last column tile (or row
// tile) is moved back to end at OW (OH): tiles overlap and write identical
// values; rows narrower than VW are stored lane by lane.
//
// Build options: -DRECQ_CT_VW=8|16, -DRECQ_CT_OCB=1..16,
// -DRECQ_CT_RB=1..4, and the kernel's width, column stride and column
// dilation -DRECQ_CT_KW, -DRECQ_CT_SW, -DRECQ_CT_DW (compile-time so the
// tap loops unroll). Global size: (ceil(OW/VW), ceil(OH/RB),
// N * groups * ceil(OCPG/OCB)), rounded up to the local size.
#ifndef RECQ_CT_VW
#define RECQ_CT_VW 16
#endif
#ifndef RECQ_CT_OCB
#define RECQ_CT_OCB 8
#endif
#ifndef RECQ_CT_RB
#define RECQ_CT_RB 1
#endif
#ifndef RECQ_CT_KW
#define RECQ_CT_KW 3
#endif
#ifndef RECQ_CT_SW
#define RECQ_CT_SW 1
#endif
#ifndef RECQ_CT_DW
#define RECQ_CT_DW 1
#endif

#define VW RECQ_CT_VW
#define OCB RECQ_CT_OCB
#define RB RECQ_CT_RB
#define KW RECQ_CT_KW
#define SW RECQ_CT_SW
#define DW RECQ_CT_DW

#define CT_CAT_(a, b) a##b
#define CT_CAT(a, b) CT_CAT_(a, b)
#define floatV CT_CAT(float, VW)
#define vloadV CT_CAT(vload, VW)
#define vstoreV CT_CAT(vstore, VW)
#define loadV CT_CAT(RECQ_LOAD, VW)
#define storeV CT_CAT(RECQ_STORE, VW)
#define activateV CT_CAT(recq_activate, VW)

// Input columns a tile reads, from its first: the window.
#define CT_WIN ((VW - 1) * SW + (KW - 1) * DW + 1)
// Columns the direct loads touch (stride 2 also reads the odd lane after
// the last even one).
#if SW == 1
#define CT_DIRECT_SPAN CT_WIN
#elif SW == 2
#define CT_DIRECT_SPAN (VW * 2 + (KW - 1) * DW)
#endif

// The KW taps of one input row for the tile whose lane 0 reads column q at
// tap 0: taps[kw] lane i = row[q + kw*DW + i*SW], zero outside [0, W).
// `wcol` and `wmask`: the window's columns clamped into the row, and an
// all-ones mask where the column lies inside it (zero where it is padding),
// computed once per tile so the edge path has no branches.
__attribute__((always_inline)) inline void ct_taps(const __global RECQ_T* row, int q, bool inside,
                                                   const int* wcol, const int* wmask,
                                                   floatV* taps) {
#ifdef CT_DIRECT_SPAN
  if (inside) {
#pragma unroll
    for (int kw = 0; kw < KW; ++kw) {
      const __global RECQ_T* p = row + q + kw * DW;
#if SW == 1
      taps[kw] = loadV(p, 0);
#elif VW == 16
      taps[kw] = (float16)(RECQ_LOAD16(p, 0).even, RECQ_LOAD16(p + 16, 0).even);
#else
      taps[kw] = RECQ_LOAD16(p, 0).even;
#endif
    }
    return;
  }
#endif
  float win[CT_WIN];
#pragma unroll
  for (int i = 0; i < CT_WIN; ++i) {
    win[i] = as_float(as_int(RECQ_LOAD(row, wcol[i])) & wmask[i]);
  }
#pragma unroll
  for (int kw = 0; kw < KW; ++kw) {
#if SW == 1
    taps[kw] = vloadV(0, win + kw * DW);
#else
    float t[VW];
#pragma unroll
    for (int i = 0; i < VW; ++i) t[i] = win[kw * DW + i * SW];
    taps[kw] = vloadV(0, t);
#endif
  }
}

__kernel void conv2d_tiled(__global const RECQ_T* restrict x, __global const RECQ_T* restrict wp,
                           __global const RECQ_T* restrict bias, __global const RECQ_T* restrict r,
                           __global RECQ_T* restrict y, int N, int C, int H, int W, int OC, int OH,
                           int OW, int KH, int SH, int DH, int PT, int PL, int groups, int act,
                           float act_a, float act_b) {
  const int cpg = C / groups;
  const int ocpg = OC / groups;
  const int blocks = (ocpg + OCB - 1) / OCB;
  int ow0 = get_global_id(0) * VW;
  int oh0 = get_global_id(1) * RB;
  const int z = get_global_id(2);
  if (ow0 >= OW || oh0 >= OH || z >= N * groups * blocks) return;
  const int b = z % blocks;
  const int g = (z / blocks) % groups;
  const int n = z / (blocks * groups);
  if (OW >= VW) ow0 = min(ow0, OW - VW);
  if (OH >= RB) oh0 = min(oh0, OH - RB);
  const int q = ow0 * SW - PL;
#ifdef CT_DIRECT_SPAN
  const bool inside = q >= 0 && q + CT_DIRECT_SPAN <= W;
#else
  const bool inside = false;
#endif
  const __global RECQ_T* xg = x + ((size_t)n * C + (size_t)g * cpg) * H * W;
  const __global RECQ_T* wg = wp + ((size_t)g * blocks + b) * cpg * KH * KW * OCB;
  int wcol[CT_WIN], wmask[CT_WIN];
#pragma unroll
  for (int i = 0; i < CT_WIN; ++i) {
    wcol[i] = clamp(q + i, 0, W - 1);
    wmask[i] = (q + i >= 0 && q + i < W) ? -1 : 0;
  }
  floatV acc[RB][OCB];
#pragma unroll
  for (int rr = 0; rr < RB; ++rr) {
#pragma unroll
    for (int j = 0; j < OCB; ++j) acc[rr][j] = (floatV)(0.0f);
  }
  for (int c = 0; c < cpg; ++c) {
    const __global RECQ_T* xc = xg + (size_t)c * H * W;
    for (int kh = 0; kh < KH; ++kh) {
      const __global RECQ_T* wk = wg + ((size_t)c * KH + kh) * (KW * OCB);
#pragma unroll
      for (int rr = 0; rr < RB; ++rr) {
        const int ih = (oh0 + rr) * SH - PT + kh * DH;
        if (ih < 0 || ih >= H || oh0 + rr >= OH) continue;
        floatV taps[KW];
        ct_taps(xc + (size_t)ih * W, q, inside, wcol, wmask, taps);
#pragma unroll
        for (int kw = 0; kw < KW; ++kw) {
#pragma unroll
          for (int j = 0; j < OCB; ++j) {
            acc[rr][j] = fma((floatV)(RECQ_LOAD(wk, kw * OCB + j)), taps[kw], acc[rr][j]);
          }
        }
      }
    }
  }
  const bool full = OW >= VW;
#pragma unroll
  for (int rr = 0; rr < RB; ++rr) {
    const int oh = oh0 + rr;
    if (oh >= OH) break;
#pragma unroll
    for (int j = 0; j < OCB; ++j) {
      const int oc = b * OCB + j;
      if (oc >= ocpg) break;
      const int o = g * ocpg + oc;
      floatV s = acc[rr][j] + (bias ? RECQ_LOAD(bias, o) : 0.0f);
      const size_t at = (((size_t)n * OC + o) * OH + oh) * OW + ow0;
      if (r) {
        if (full) {
          s += loadV(r + at, 0);
        } else {
          float t[VW];
#pragma unroll
          for (int i = 0; i < VW; ++i) t[i] = i < OW ? RECQ_LOAD(r, at + i) : 0.0f;
          s += vloadV(0, t);
        }
      }
      const floatV v = activateV(s, act, act_a, act_b);
      if (full) {
        storeV(y + at, 0, v);
      } else {
        float t[VW];
        vstoreV(v, 0, t);
        for (int i = 0; i < OW; ++i) RECQ_STORE(y, at + i, t[i]);
      }
    }
  }
}

// conv2d_pad_columns: conv2d_tiled_padded's first dispatch. Copies each row
// of x [N*C][H][W] to column PL of a zero-filled row of Wp columns in `xp`
// [N*C][H][Wp], so that conv2d_tiled (run with PL 0 on xp) loads every tile
// of the row directly instead of through its edge window. Global size:
// (H, N*C), rounded up to the local size.
__kernel void conv2d_pad_columns(__global const RECQ_T* restrict x, __global RECQ_T* restrict xp,
                                 int NC, int H, int W, int Wp, int PL) {
  const int h = get_global_id(0);
  const int nc = get_global_id(1);
  if (h >= H || nc >= NC) return;
  const __global RECQ_T* src = x + ((size_t)nc * H + h) * W;
  __global RECQ_T* dst = xp + ((size_t)nc * H + h) * Wp;
  for (int i = 0; i < PL; ++i) RECQ_STORE(dst, i, 0.0f);
  for (int i = 0; i < W; ++i) RECQ_STORE(dst, PL + i, RECQ_LOAD(src, i));
  for (int i = PL + W; i < Wp; ++i) RECQ_STORE(dst, i, 0.0f);
}
