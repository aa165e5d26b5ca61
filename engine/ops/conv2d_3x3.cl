// 3x3 convolutions with stride 1 or 2 and left pad 1 (any top pad; bottom
// and right pads are implied by OH/OW: input past the edge reads as zero),
// unit dilation, optional bias, fused activation. Each work-item computes VW
// consecutive outputs of one output row (RB rows in conv2d_depthwise3x3)
// with vector FMAs; the three taps of a kernel row come from one or two
// vector loads and lane shuffles.
//   conv2d_depthwise3x3: groups == C == OC, one channel per work-item.
//   conv2d_dense3x3: groups 1, 8 output channels per work-item.
// A partial last strip of a row is moved back to end at OW (strips overlap
// and write identical values); rows narrower than VW are stored lane by lane.
// Build options: -DRECQ_C3_STRIDE=1|2, -DRECQ_C3_VW=8|16 (and for
// conv2d_depthwise3x3 -DRECQ_C3_RB=1|2|4, below).
#ifndef RECQ_C3_STRIDE
#define RECQ_C3_STRIDE 1
#endif
#ifndef RECQ_C3_VW
#define RECQ_C3_VW 8
#endif

// 16 floats from p[q..q+15]; lanes at or past n read as zero.
inline float16 dw_load16(const __global RECQ_T* p, int q, int n) {
  if (q + 16 <= n) return RECQ_LOAD16(p + q, 0);
  float t[16];
  for (int i = 0; i < 16; ++i) t[i] = q + i < n ? RECQ_LOAD(p, q + i) : 0.0f;
  return vload16(0, t);
}

inline float8 dw_load8(const __global RECQ_T* p, int q, int n) {
  if (q + 8 <= n) return RECQ_LOAD8(p + q, 0);
  float t[8];
  for (int i = 0; i < 8; ++i) t[i] = q + i < n ? RECQ_LOAD(p, q + i) : 0.0f;
  return vload8(0, t);
}

#if RECQ_C3_VW == 16
#define floatV float16
#define vstoreV vstore16
#define storeV RECQ_STORE16
#define activateV recq_activate_inline16
#else
#define floatV float8
#define vstoreV vstore8
#define storeV RECQ_STORE8
#define activateV recq_activate_inline8
#endif

// The three taps of one kernel row for VW consecutive outputs whose centre
// tap of lane 0 is input column q (left pad 1): t0 = columns q-1+S*i,
// t1 = q+S*i, t2 = q+1+S*i; columns outside [0, n) read as zero.
inline void c3_taps(const __global RECQ_T* row, int q, int W, floatV* o0, floatV* o1, floatV* o2) {
  const float l = q > 0 ? RECQ_LOAD(row, q - 1) : 0.0f;
#if RECQ_C3_STRIDE == 1 && RECQ_C3_VW == 8
  const float8 m = dw_load8(row, q, W);
  const float r = q + 8 < W ? RECQ_LOAD(row, q + 8) : 0.0f;
  *o0 = (float8)(l, m.s0123, m.s456);
  *o1 = m;
  *o2 = (float8)(m.s123, m.s4567, r);
#elif RECQ_C3_STRIDE == 1 && RECQ_C3_VW == 16
  const float16 m = dw_load16(row, q, W);
  const float r = q + 16 < W ? RECQ_LOAD(row, q + 16) : 0.0f;
  *o0 = (float16)(l, m.s0123, m.s456789ab, m.scde);
  *o1 = m;
  *o2 = (float16)(m.s123, m.s456789ab, m.scdef, r);
#elif RECQ_C3_STRIDE == 2 && RECQ_C3_VW == 8
  const float16 m = dw_load16(row, q, W);
  *o0 = (float8)(l, m.s1357, m.s9bd);
  *o1 = m.even;
  *o2 = m.odd;
#elif RECQ_C3_STRIDE == 2 && RECQ_C3_VW == 16
  const float16 m0 = dw_load16(row, q, W);
  const float16 m1 = dw_load16(row, q + 16, W);
  *o0 = (float16)(l, m0.s1357, m0.s9bdf, m1.s1357, m1.s9bd);
  *o1 = (float16)(m0.even, m1.even);
  *o2 = (float16)(m0.odd, m1.odd);
#else
#error "RECQ_C3_STRIDE must be 1 or 2 and RECQ_C3_VW 8 or 16"
#endif
}

// Stores a strip's VW outputs at yp: one vector, or lane by lane where the
// row is narrower than a strip (OW < VW).
inline void c3_store(__global RECQ_T* yp, floatV v, int OW) {
  if (OW >= RECQ_C3_VW) {
    storeV(yp, 0, v);
    return;
  }
  float t[RECQ_C3_VW];
  vstoreV(v, 0, t);
  for (int i = 0; i < OW; ++i) RECQ_STORE(yp, i, t[i]);
}

// Each work-item computes RB output rows (-DRECQ_C3_RB=1|2|4) of one strip:
// each input row they read is loaded once and feeds every output row whose
// window covers it ((RB-1)*S+3 rows loaded for RB outputs, not 3*RB).
// Global size: (ceil(OW/VW), ceil(OH/RB), N*C), rounded up to the local size.
#ifndef RECQ_C3_RB
#define RECQ_C3_RB 1
#endif
__kernel void conv2d_depthwise3x3(__global const RECQ_T* restrict x, __global const RECQ_T* restrict w,
                                  __global const RECQ_T* restrict bias, __global RECQ_T* restrict y,
                                  int N, int C, int H, int W, int OH, int OW, int PT, int act,
                                  float act_a, float act_b) {
  int ow0 = get_global_id(0) * RECQ_C3_VW;
  const int oh0 = get_global_id(1) * RECQ_C3_RB;
  const int nc = get_global_id(2);
  if (ow0 >= OW || oh0 >= OH || nc >= N * C) return;
  if (OW >= RECQ_C3_VW) ow0 = min(ow0, OW - RECQ_C3_VW);
  const int c = nc % C;
  const __global RECQ_T* xc = x + (size_t)nc * H * W;
  const __global RECQ_T* wc = w + c * 9;
  floatV acc[RECQ_C3_RB];
  const float b = bias ? RECQ_LOAD(bias, c) : 0.0f;
#pragma unroll
  for (int j = 0; j < RECQ_C3_RB; ++j) acc[j] = (floatV)(b);
  const int q = ow0 * RECQ_C3_STRIDE;  // input column of the centre tap of lane 0
#pragma unroll
  for (int r = 0; r < (RECQ_C3_RB - 1) * RECQ_C3_STRIDE + 3; ++r) {
    const int ih = oh0 * RECQ_C3_STRIDE - PT + r;
    if (ih < 0 || ih >= H) continue;
    const __global RECQ_T* row = xc + (size_t)ih * W;
    floatV t0, t1, t2;
    c3_taps(row, q, W, &t0, &t1, &t2);
    // Output row oh0 + j reads this row as its kernel row r - j*S.
#pragma unroll
    for (int j = 0; j < RECQ_C3_RB; ++j) {
      const int kh = r - j * RECQ_C3_STRIDE;
      if (kh < 0 || kh > 2) continue;
      acc[j] = fma((floatV)(RECQ_LOAD(wc, kh * 3 + 0)), t0, acc[j]);
      acc[j] = fma((floatV)(RECQ_LOAD(wc, kh * 3 + 1)), t1, acc[j]);
      acc[j] = fma((floatV)(RECQ_LOAD(wc, kh * 3 + 2)), t2, acc[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < RECQ_C3_RB; ++j) {
    if (oh0 + j >= OH) break;
    c3_store(y + ((size_t)nc * OH + oh0 + j) * OW + ow0, activateV(acc[j], act, act_a, act_b), OW);
  }
}

// Y[n][oc][oh][ow] for 8 output channels; `wp` holds the weights packed by
// the lowering as [ceil(OC/8)][C][3][3][8], zero past OC.
// Global size: (ceil(OW/VW), OH, N*ceil(OC/8)), rounded up to the local size.
__kernel void conv2d_dense3x3(__global const RECQ_T* restrict x, __global const RECQ_T* restrict wp,
                              __global const RECQ_T* restrict bias, __global RECQ_T* restrict y,
                              int N, int C, int H, int W, int OC, int OH, int OW, int PT,
                              int act, float act_a, float act_b) {
  int ow0 = get_global_id(0) * RECQ_C3_VW;
  const int oh = get_global_id(1);
  const int ocbs = (OC + 7) / 8;
  const int n = get_global_id(2) / ocbs;
  const int ocb = get_global_id(2) % ocbs;
  if (ow0 >= OW || oh >= OH || n >= N) return;
  if (OW >= RECQ_C3_VW) ow0 = min(ow0, OW - RECQ_C3_VW);
  const int oc0 = ocb * 8;
  floatV acc[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) acc[j] = (floatV)(0.0f);
  const int q = ow0 * RECQ_C3_STRIDE;
  for (int c = 0; c < C; ++c) {
    const __global RECQ_T* xc = x + ((size_t)n * C + c) * H * W;
    const __global RECQ_T* wc = wp + ((size_t)ocb * C + c) * 72;
    for (int kh = 0; kh < 3; ++kh) {
      const int ih = oh * RECQ_C3_STRIDE - PT + kh;
      if (ih < 0 || ih >= H) continue;
      floatV t0, t1, t2;
      c3_taps(xc + (size_t)ih * W, q, W, &t0, &t1, &t2);
      const float8 w0 = RECQ_LOAD8(wc + kh * 24, 0);
      const float8 w1 = RECQ_LOAD8(wc + kh * 24 + 8, 0);
      const float8 w2 = RECQ_LOAD8(wc + kh * 24 + 16, 0);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        acc[j] = fma((floatV)(w0[j]), t0, acc[j]);
        acc[j] = fma((floatV)(w1[j]), t1, acc[j]);
        acc[j] = fma((floatV)(w2[j]), t2, acc[j]);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    if (oc0 + j >= OC) break;
    const floatV v = activateV(acc[j] + (bias ? RECQ_LOAD(bias, oc0 + j) : 0.0f), act, act_a, act_b);
    c3_store(y + (((size_t)n * OC + oc0 + j) * OH + oh) * OW + ow0, v, OW);
  }
}
