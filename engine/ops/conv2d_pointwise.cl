// Pointwise (1x1, stride 1, no padding, groups 1) convolution as a
// register-blocked GEMM per image:
//   Y[n][oc][p] = act(sum_c W[oc][c] * X[n][c][p] + bias[oc] (+ R[n][oc][p])),
//   p < HW.
// Build options: -DRECQ_PW_VW=8|16 (pixels per work-item, one vector) and
// -DRECQ_PW_OCB=4|8 (output channels per work-item).
// `wp` holds the weights packed by the lowering as [ceil(OC/OCB)][C][OCB],
// zero-padded past OC: an input channel's OCB weights are adjacent, and each
// is broadcast from memory into its FMA. Loading them as one vector and
// broadcasting its lanes cost a shuffle per FMA: MobileNet V2's pointwise
// layers took 1.3x as long that way (AVX2, PoCL 3.1, RECQ_TUNING=off).
// `r`, when not NULL, is a residual of Y's shape added after the bias and
// before the activation (a fused Add, as in conv2d_pointwise_gpu).
// Global size: (ceil(HW/VW), ceil(OC/OCB), N), rounded up to the local size.
// A partial last pixel tile is moved back to end at HW (tiles overlap and
// write identical values); HW below VW takes a lane-by-lane path.
#ifndef RECQ_PW_VW
#define RECQ_PW_VW 16
#endif
#ifndef RECQ_PW_OCB
#define RECQ_PW_OCB 8
#endif

#define PW_CAT_(a, b) a##b
#define PW_CAT(a, b) PW_CAT_(a, b)
#define floatV PW_CAT(float, RECQ_PW_VW)
#define vloadV PW_CAT(vload, RECQ_PW_VW)
#define vstoreV PW_CAT(vstore, RECQ_PW_VW)
#define loadV PW_CAT(RECQ_LOAD, RECQ_PW_VW)
#define storeV PW_CAT(RECQ_STORE, RECQ_PW_VW)
#define activateV PW_CAT(recq_activate, RECQ_PW_VW)

__kernel void conv2d_pointwise(__global const RECQ_T* restrict x, __global const RECQ_T* restrict wp,
                               __global const RECQ_T* restrict bias,
                               __global const RECQ_T* restrict r, __global RECQ_T* restrict y, int N,
                               int C, int HW, int OC, int act, float act_a, float act_b) {
  const int ocb = get_global_id(1);
  const int n = get_global_id(2);
  const int oc0 = ocb * RECQ_PW_OCB;
  int p0 = get_global_id(0) * RECQ_PW_VW;
  if (p0 >= HW || oc0 >= OC || n >= N) return;
  // The last tile, when partial, moves back to end at HW: it recomputes some
  // pixels of its neighbour (same values) and stays a full vector.
  const bool full = HW >= RECQ_PW_VW;
  if (full) p0 = min(p0, HW - RECQ_PW_VW);
  const __global RECQ_T* xp = x + (size_t)n * C * HW + p0;
  const __global RECQ_T* w = wp + (size_t)ocb * C * RECQ_PW_OCB;
  floatV acc[RECQ_PW_OCB];
#pragma unroll
  for (int j = 0; j < RECQ_PW_OCB; ++j) acc[j] = (floatV)(0.0f);
  if (full) {
    for (int c = 0; c < C; ++c) {
      const floatV xv = loadV(xp + (size_t)c * HW, 0);
      const __global RECQ_T* wc = w + c * RECQ_PW_OCB;
#pragma unroll
      for (int j = 0; j < RECQ_PW_OCB; ++j) acc[j] = fma((floatV)(RECQ_LOAD(wc, j)), xv, acc[j]);
    }
  } else {
    // HW below one vector: lanes past HW read the last pixel again and are
    // not stored.
    for (int c = 0; c < C; ++c) {
      float t[RECQ_PW_VW];
#pragma unroll
      for (int i = 0; i < RECQ_PW_VW; ++i) t[i] = RECQ_LOAD(xp, (size_t)c * HW + min(i, HW - 1));
      const floatV xv = vloadV(0, t);
      const __global RECQ_T* wc = w + c * RECQ_PW_OCB;
#pragma unroll
      for (int j = 0; j < RECQ_PW_OCB; ++j) acc[j] = fma((floatV)(RECQ_LOAD(wc, j)), xv, acc[j]);
    }
  }
  const size_t at = ((size_t)n * OC + oc0) * HW + p0;
  __global RECQ_T* yp = y + at;
#pragma unroll
  for (int j = 0; j < RECQ_PW_OCB; ++j) {
    if (oc0 + j >= OC) break;
    const float b = bias ? RECQ_LOAD(bias, oc0 + j) : 0.0f;
    floatV s = acc[j] + b;
    if (r) {
      const __global RECQ_T* rp = r + at + (size_t)j * HW;
      if (full) {
        s += loadV(rp, 0);
      } else {
        float t[RECQ_PW_VW];
#pragma unroll
        for (int i = 0; i < RECQ_PW_VW; ++i) t[i] = RECQ_LOAD(rp, min(i, HW - 1));
        s += vloadV(0, t);
      }
    }
    const floatV v = activateV(s, act, act_a, act_b);
    if (full) {
      storeV(yp + (size_t)j * HW, 0, v);
    } else {
      float t[RECQ_PW_VW];
      vstoreV(v, 0, t);
      for (int i = 0; i < HW; ++i) RECQ_STORE(yp, (size_t)j * HW + i, t[i]);
    }
  }
}

// conv2d_subsample: a strided pointwise convolution's first dispatch. Copies
// the pixels the convolution reads, x [N*C][H][W] at rows oy*SH and columns
// ox*SW, into xs [N*C][OH][OW], which conv2d_pointwise then reads as a stride-1
// input. Global size: (OH, N*C), rounded up to the local size.
__kernel void conv2d_subsample(__global const RECQ_T* restrict x, __global RECQ_T* restrict xs,
                               int NC, int H, int W, int OH, int OW, int SH, int SW) {
  const int oy = get_global_id(0);
  const int nc = get_global_id(1);
  if (oy >= OH || nc >= NC) return;
  const __global RECQ_T* src = x + ((size_t)nc * H + (size_t)oy * SH) * W;
  __global RECQ_T* dst = xs + ((size_t)nc * OH + oy) * OW;
  for (int i = 0; i < OW; ++i) RECQ_STORE(dst, i, RECQ_LOAD(src, (size_t)i * SW));
}
