// Fused attention (engine/ops/attention.h): O = softmax(scale * Q.K^T + M) V
// per (batch, head), in one pass over the keys with an online softmax
// (running maximum m and sum l per query row; the accumulated output is
// rescaled by exp(m_old - m_new) whenever the maximum grows), written once.
//
// Every operand is a strided view: an int8 (offset, batch_mod, sb_lo,
// sb_hi, sh, sr, sc, unused), element (b, h, r, c) at
//   offset + (b % batch_mod) * sb_lo + (b / batch_mod) * sb_hi + h*sh + r*sr + c*sc.
//
// Compile-time: RECQ_AT_DK, RECQ_AT_DV (head widths), RECQ_AT_MASK (a mask
// input is read), RECQ_AT_CAUSAL (keys j > i + causal_offset are skipped).

#ifndef RECQ_AT_MASK
#define RECQ_AT_MASK 0
#endif
#ifndef RECQ_AT_CAUSAL
#define RECQ_AT_CAUSAL 0
#endif

inline int recq_at_base(int8 v, int b, int h) {
  return v.s0 + (b % v.s1) * v.s2 + (b / v.s1) * v.s3 + h * v.s4;
}

// ---------------------------------------------------------------------------
// Both CPU kernels: vectors of RECQ_AT_W (1, 4, 8 or 16) along the head.
#if defined(RECQ_AT_CPU) || defined(RECQ_AT_CPU_KT)
#if RECQ_AT_W == 16
#define AT_VT float16
#define AT_LOADV(p, i) RECQ_LOAD16((p) + (i), 0)
#define AT_STOREV(p, i, v) RECQ_STORE16((p) + (i), 0, (v))
#define AT_HSUM(v) recq_sum16(v)
#elif RECQ_AT_W == 8
#define AT_VT float8
#define AT_LOADV(p, i) RECQ_LOAD8((p) + (i), 0)
#define AT_STOREV(p, i, v) RECQ_STORE8((p) + (i), 0, (v))
#define AT_HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3) + ((v).s4 + (v).s5) + ((v).s6 + (v).s7))
#elif RECQ_AT_W == 4
#define AT_VT float4
#define AT_LOADV(p, i) RECQ_LOAD4((p) + (i), 0)
#define AT_STOREV(p, i, v) RECQ_STORE4((p) + (i), 0, (v))
#define AT_HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#else
#define AT_VT float
#define AT_LOADV(p, i) RECQ_LOAD((p), (i))
#define AT_STOREV(p, i, v) RECQ_STORE((p), (i), (v))
#define AT_HSUM(v) (v)
#endif

// AT_LOAD_V_ROW: columns c * W.. of V's row at `vrow` (vectors where V's
// columns are contiguous). AT_STORE_O: the same of the output's row i.
#if RECQ_AT_W > 1
#define AT_LOAD_V_ROW(v, vv, vrow, c) AT_LOADV((v), (vrow) + (c) * RECQ_AT_W)
#define AT_STORE_O(o, ov, ob, i, c, y)                                                      \
  do {                                                                                      \
    if ((ov).s6 == 1) {                                                                     \
      AT_STOREV((o), (ob) + (i) * (ov).s5 + (c) * RECQ_AT_W, (y));                          \
    } else {                                                                                \
      const float* ys_ = (const float*)&(y);                                                \
      for (int e_ = 0; e_ < RECQ_AT_W; ++e_) {                                              \
        RECQ_STORE((o), (ob) + (i) * (ov).s5 + ((c) * RECQ_AT_W + e_) * (ov).s6, ys_[e_]);  \
      }                                                                                     \
    }                                                                                       \
  } while (0)
#else
#define AT_LOAD_V_ROW(v, vv, vrow, c) RECQ_LOAD((v), (vrow) + (c) * (vv).s6)
#define AT_STORE_O(o, ov, ob, i, c, y) RECQ_STORE((o), (ob) + (i) * (ov).s5 + (c) * (ov).s6, (y))
#endif
#endif  // RECQ_AT_CPU || RECQ_AT_CPU_KT

// ---------------------------------------------------------------------------
// CPU family (PoCL): one work-item per RECQ_AT_R query rows of one (b, h),
// vectors of RECQ_AT_W (1, 4, 8 or 16) along the head width when the
// columns of Q, K and V are contiguous (RECQ_AT_W divides DK and DV), keys
// in blocks of RECQ_AT_KB (4, 8 or 16) so that the rescale runs once a
// block and exp runs on a vector of the block's scores.
// Global size: (ceil(Lq / R), H, B).
#ifdef RECQ_AT_CPU

// The key block's probabilities as one vector (exp on all lanes at once).
#if RECQ_AT_KB == 16
#define AT_KVT float16
#define AT_KLOAD(p) vload16(0, (p))
#define AT_KSTORE(p, v) vstore16((v), 0, (p))
#define AT_KSUM(v) recq_sum16(v)
#define AT_KMAX(v) recq_max16(v)
#elif RECQ_AT_KB == 8
#define AT_KVT float8
#define AT_KLOAD(p) vload8(0, (p))
#define AT_KSTORE(p, v) vstore8((v), 0, (p))
#define AT_KSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3) + ((v).s4 + (v).s5) + ((v).s6 + (v).s7))
#define AT_KMAX(v)                                       \
  fmax(fmax(fmax((v).s0, (v).s1), fmax((v).s2, (v).s3)), \
       fmax(fmax((v).s4, (v).s5), fmax((v).s6, (v).s7)))
#else
#define AT_KVT float4
#define AT_KLOAD(p) vload4(0, (p))
#define AT_KSTORE(p, v) vstore4((v), 0, (p))
#define AT_KSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#define AT_KMAX(v) fmax(fmax((v).s0, (v).s1), fmax((v).s2, (v).s3))
#endif

#define AT_NK (RECQ_AT_DK / RECQ_AT_W)
#define AT_NV (RECQ_AT_DV / RECQ_AT_W)
#define AT_R RECQ_AT_R
#define AT_KB RECQ_AT_KB

__kernel void attention_cpu(__global const RECQ_T* restrict q, __global const RECQ_T* restrict k,
                            __global const RECQ_T* restrict v, __global const RECQ_T* restrict mask,
                            __global RECQ_T* restrict o, int8 qv, int8 kv, int8 vv, int8 mv,
                            int8 ov, int Lq, int Lk, float scale, int causal_offset) {
  const int i0 = get_global_id(0) * AT_R;
  const int h = get_global_id(1);
  const int b = get_global_id(2);
  if (i0 >= Lq) return;
  const int qb = recq_at_base(qv, b, h), kb = recq_at_base(kv, b, h), vb = recq_at_base(vv, b, h);
  // Q rows, scaled; rows past Lq repeat the last one (their results are
  // not written).
  AT_VT qr[AT_R][AT_NK];
  for (int r = 0; r < AT_R; ++r) {
    const int i = min(i0 + r, Lq - 1);
    for (int c = 0; c < AT_NK; ++c) {
#if RECQ_AT_W > 1
      qr[r][c] = AT_LOADV(q, qb + i * qv.s5 + c * RECQ_AT_W) * scale;
#else
      qr[r][c] = RECQ_LOAD(q, qb + i * qv.s5 + c * qv.s6) * scale;
#endif
    }
  }
  AT_VT acc[AT_R][AT_NV];
  float m[AT_R], l[AT_R];
  for (int r = 0; r < AT_R; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
    for (int c = 0; c < AT_NV; ++c) acc[r][c] = (AT_VT)(0.0f);
  }
  int jend = Lk;
#if RECQ_AT_CAUSAL
  jend = clamp(min(i0 + AT_R, Lq) - 1 + causal_offset + 1, 0, Lk);
#endif
  for (int j0 = 0; j0 < jend; j0 += AT_KB) {
    float s[AT_R][AT_KB];
    for (int jj = 0; jj < AT_KB; ++jj) {
      const int j = min(j0 + jj, Lk - 1);
      const int krow = kb + j * kv.s5;
      AT_VT kr[AT_NK];
      for (int c = 0; c < AT_NK; ++c) {
#if RECQ_AT_W > 1
        kr[c] = AT_LOADV(k, krow + c * RECQ_AT_W);
#else
        kr[c] = RECQ_LOAD(k, krow + c * kv.s6);
#endif
      }
      for (int r = 0; r < AT_R; ++r) {
        AT_VT dot = qr[r][0] * kr[0];
        for (int c = 1; c < AT_NK; ++c) dot = fma(qr[r][c], kr[c], dot);
        s[r][jj] = AT_HSUM(dot);
      }
    }
    float p[AT_R][AT_KB];
    float corr[AT_R];
    for (int r = 0; r < AT_R; ++r) {
      // Masks, causality and the keys past Lk of the last block, in place.
      if (RECQ_AT_MASK || RECQ_AT_CAUSAL || j0 + AT_KB > Lk) {
        const int i = min(i0 + r, Lq - 1);
        for (int jj = 0; jj < AT_KB; ++jj) {
          const int j = j0 + jj;
          float sv = s[r][jj];
#if RECQ_AT_MASK
          if (j < Lk) sv += RECQ_LOAD(mask, recq_at_base(mv, b, h) + i * mv.s5 + j * mv.s6);
#endif
          bool seen = j < Lk;
#if RECQ_AT_CAUSAL
          seen = seen && j <= i + causal_offset;
#endif
          s[r][jj] = seen ? sv : -INFINITY;
        }
      }
      const float mt = AT_KMAX(AT_KLOAD(s[r]));
      const float mn = fmax(m[r], mt);
      if (mn == -INFINITY) {
        corr[r] = 1.0f;
        for (int jj = 0; jj < AT_KB; ++jj) p[r][jj] = 0.0f;
      } else {
        corr[r] = exp(m[r] - mn);
        const AT_KVT e = exp(AT_KLOAD(s[r]) - mn);
        AT_KSTORE(p[r], e);
        l[r] = l[r] * corr[r] + AT_KSUM(e);
        m[r] = mn;
      }
      for (int c = 0; c < AT_NV; ++c) acc[r][c] *= corr[r];
    }
    for (int jj = 0; jj < AT_KB; ++jj) {
      const int j = min(j0 + jj, Lk - 1);
      const int vrow = vb + j * vv.s5;
      for (int c = 0; c < AT_NV; ++c) {
        const AT_VT vr = AT_LOAD_V_ROW(v, vv, vrow, c);
        for (int r = 0; r < AT_R; ++r) acc[r][c] = fma((AT_VT)(p[r][jj]), vr, acc[r][c]);
      }
    }
  }
  const int ob = recq_at_base(ov, b, h);
  for (int r = 0; r < AT_R; ++r) {
    const int i = i0 + r;
    if (i >= Lq) break;
    const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
    for (int c = 0; c < AT_NV; ++c) {
      const AT_VT y = acc[r][c] * inv;
      AT_STORE_O(o, ov, ob, i, c, y);
    }
  }
}

#endif  // RECQ_AT_CPU

// ---------------------------------------------------------------------------
// CPU family, keys in vector lanes (attention_cpu_kt): K is first copied
// transposed into scratch, kt[(b * H + h) * DK + d][LKP] (LKP: Lk rounded up
// to 16, zeros past Lk), by attention_cpu_kt_transpose, one item per key
// (global (LKP, H, B)). Then one work-item per RECQ_AT_R query rows of one
// (b, h), keys in blocks of 16: each row's 16 scores are one float16, summed
// over d from a broadcast element of Q and a vector load of kt (no
// horizontal sum per score, as attention_cpu's dot products need), the
// block's mask added as vectors where its keys are contiguous, the online
// softmax on whole vectors, then the output accumulated in vectors of
// RECQ_AT_W along the head as attention_cpu does. Global size
// (ceil(Lq / R), H, B).
#ifdef RECQ_AT_CPU_KT

#define KT_LANES 16
#define KT_LKP(lk) (((lk) + KT_LANES - 1) / KT_LANES * KT_LANES)

__kernel void attention_cpu_kt_transpose(__global const RECQ_T* restrict k,
                                         __global float* restrict kt, int8 kv, int Lk, int H) {
  const int j = get_global_id(0);
  const int h = get_global_id(1);
  const int b = get_global_id(2);
  const int lkp = KT_LKP(Lk);
  __global float* dst = kt + (size_t)(b * H + h) * RECQ_AT_DK * lkp + j;
  if (j >= Lk) {
    for (int d = 0; d < RECQ_AT_DK; ++d) dst[(size_t)d * lkp] = 0.0f;
    return;
  }
  const int krow = recq_at_base(kv, b, h) + j * kv.s5;
  for (int d = 0; d < RECQ_AT_DK; ++d) dst[(size_t)d * lkp] = RECQ_LOAD(k, krow + d * kv.s6);
}

#define KT_NV (RECQ_AT_DV / RECQ_AT_W)
#define KT_R RECQ_AT_R

__kernel void attention_cpu_kt(__global const RECQ_T* restrict q, __global const float* restrict kt,
                               __global const RECQ_T* restrict v,
                               __global const RECQ_T* restrict mask, __global RECQ_T* restrict o,
                               int8 qv, int8 vv, int8 mv, int8 ov, int Lq, int Lk, int H,
                               float scale, int causal_offset) {
  const int i0 = get_global_id(0) * KT_R;
  const int h = get_global_id(1);
  const int b = get_global_id(2);
  if (i0 >= Lq) return;
  const int lkp = KT_LKP(Lk);
  const int qb = recq_at_base(qv, b, h), vb = recq_at_base(vv, b, h);
  __global const float* ktb = kt + (size_t)(b * H + h) * RECQ_AT_DK * lkp;
  // Q rows, scaled; rows past Lq repeat the last one (not written).
  float qs[KT_R][RECQ_AT_DK];
#pragma unroll
  for (int r = 0; r < KT_R; ++r) {
    const int i = min(i0 + r, Lq - 1);
    for (int d = 0; d < RECQ_AT_DK; ++d) qs[r][d] = RECQ_LOAD(q, qb + i * qv.s5 + d * qv.s6) * scale;
  }
  AT_VT acc[KT_R][KT_NV];
  float m[KT_R], l[KT_R];
#pragma unroll
  for (int r = 0; r < KT_R; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < KT_NV; ++c) acc[r][c] = (AT_VT)(0.0f);
  }
  int jend = Lk;
#if RECQ_AT_CAUSAL
  jend = clamp(min(i0 + KT_R, Lq) - 1 + causal_offset + 1, 0, Lk);
#endif
  const int16 lane = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int j0 = 0; j0 < jend; j0 += KT_LANES) {
    float16 s[KT_R];
#pragma unroll
    for (int r = 0; r < KT_R; ++r) s[r] = (float16)(0.0f);
    for (int d = 0; d < RECQ_AT_DK; ++d) {
      const float16 kd = vload16(0, ktb + (size_t)d * lkp + j0);
#pragma unroll
      for (int r = 0; r < KT_R; ++r) s[r] = fma((float16)(qs[r][d]), kd, s[r]);
    }
    const int16 j = j0 + lane;
    float p[KT_R][KT_LANES];
#pragma unroll
    for (int r = 0; r < KT_R; ++r) {
      const int i = min(i0 + r, Lq - 1);
#if RECQ_AT_MASK
      const int mrow = recq_at_base(mv, b, h) + i * mv.s5;
      if (mv.s6 == 1 && j0 + KT_LANES <= Lk) {
        s[r] += RECQ_LOAD16(mask + mrow + j0, 0);
      } else {
        float* sl = (float*)&s[r];
        for (int jj = 0; jj < KT_LANES && j0 + jj < Lk; ++jj) {
          sl[jj] += RECQ_LOAD(mask, mrow + (j0 + jj) * mv.s6);
        }
      }
#endif
      int16 seen = j < Lk;
#if RECQ_AT_CAUSAL
      seen = seen & (j <= i + causal_offset);
#endif
      s[r] = select((float16)(-INFINITY), s[r], seen);
      const float mn = fmax(m[r], recq_max16(s[r]));
      float corr = 1.0f;
      if (mn == -INFINITY) {
        vstore16((float16)(0.0f), 0, p[r]);
      } else {
        corr = exp(m[r] - mn);
        const float16 e = exp(s[r] - mn);
        vstore16(e, 0, p[r]);
        l[r] = l[r] * corr + recq_sum16(e);
        m[r] = mn;
      }
#pragma unroll
      for (int c = 0; c < KT_NV; ++c) acc[r][c] *= corr;
    }
    const int keys = min(KT_LANES, jend - j0);
    for (int jj = 0; jj < keys; ++jj) {
      const int vrow = vb + (j0 + jj) * vv.s5;
#pragma unroll
      for (int c = 0; c < KT_NV; ++c) {
        const AT_VT vr = AT_LOAD_V_ROW(v, vv, vrow, c);
#pragma unroll
        for (int r = 0; r < KT_R; ++r) acc[r][c] = fma((AT_VT)(p[r][jj]), vr, acc[r][c]);
      }
    }
  }
  const int ob = recq_at_base(ov, b, h);
#pragma unroll
  for (int r = 0; r < KT_R; ++r) {
    const int i = i0 + r;
    if (i >= Lq) break;
    const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
#pragma unroll
    for (int c = 0; c < KT_NV; ++c) {
      const AT_VT y = acc[r][c] * inv;
      AT_STORE_O(o, ov, ob, i, c, y);
    }
  }
}

#endif  // RECQ_AT_CPU_KT

// ---------------------------------------------------------------------------
// GPU family, FlashAttention style: a work-group of RECQ_AT_BQ query rows x
// RECQ_AT_TPR items per row. The group's Q rows (scaled) stay in local
// memory; K and V stream through it in tiles of RECQ_AT_BK keys. Item t of
// a row computes the scores of keys t, t + TPR, ... of the tile, the row's
// maximum and sum are read back from local memory by each of its items, and
// item t accumulates output columns t, t + TPR, ... in registers.
// Global size: (ceil(Lq / BQ) * BQ * TPR, H, B); local (BQ * TPR, 1, 1).
#ifdef RECQ_AT_GPU

#define AT_BQ RECQ_AT_BQ
#define AT_BK RECQ_AT_BK
#define AT_TPR RECQ_AT_TPR
#define AT_WG (AT_BQ * AT_TPR)
#define AT_KPAD (RECQ_AT_DK + 1)
#define AT_SPAD (AT_BK + 1)
#define AT_NV ((RECQ_AT_DV + AT_TPR - 1) / AT_TPR)
// RECQ_AT_SPLIT > 1 (decode against long caches, where B * H groups would
// leave most of the device idle): dimension 2 runs B * SPLIT, each group
// takes one slice of the keys and writes its unnormalised output, maximum
// and sum to `part` ([B, H, SPLIT, Lq] rows of DV, then the maxima, then
// the sums), and attention_combine merges the slices.
#ifndef RECQ_AT_SPLIT
#define RECQ_AT_SPLIT 1
#endif

__kernel __attribute__((reqd_work_group_size(AT_WG, 1, 1))) void attention_gpu(
    __global const RECQ_T* restrict q, __global const RECQ_T* restrict k,
    __global const RECQ_T* restrict v, __global const RECQ_T* restrict mask,
    __global RECQ_T* restrict o, int8 qv, int8 kv, int8 vv, int8 mv, int8 ov, int Lq, int Lk,
    float scale, int causal_offset, __global float* restrict part) {
  __local float ql[AT_BQ * RECQ_AT_DK];
  __local float kl[AT_BK * AT_KPAD];
  __local float vl[AT_BK * RECQ_AT_DV];
  __local float sl[AT_BQ * AT_SPAD];
  const int lid = get_local_id(0);
  const int r = lid / AT_TPR;
  const int t = lid % AT_TPR;
  const int row0 = get_group_id(0) * AT_BQ;
  const int h = get_global_id(1);
  const int b = get_global_id(2) / RECQ_AT_SPLIT;
  const int split = get_global_id(2) % RECQ_AT_SPLIT;
  const int i = row0 + r;
  const int qb = recq_at_base(qv, b, h), kb = recq_at_base(kv, b, h), vb = recq_at_base(vv, b, h);
  for (int e = lid; e < AT_BQ * RECQ_AT_DK; e += AT_WG) {
    const int rr = e / RECQ_AT_DK, c = e % RECQ_AT_DK;
    const int qi = min(row0 + rr, Lq - 1);
    ql[e] = RECQ_LOAD(q, qb + qi * qv.s5 + c * qv.s6) * scale;
  }
  float acc[AT_NV];
  for (int c = 0; c < AT_NV; ++c) acc[c] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  int jend = Lk;
#if RECQ_AT_CAUSAL
  jend = clamp(min(row0 + AT_BQ, Lq) - 1 + causal_offset + 1, 0, Lk);
#endif
  int jbeg = 0;
#if RECQ_AT_SPLIT > 1
  // Slices of whole tiles.
  const int chunk = (Lk + RECQ_AT_SPLIT * AT_BK - 1) / (RECQ_AT_SPLIT * AT_BK) * AT_BK;
  jbeg = split * chunk;
  jend = min(jend, jbeg + chunk);
#endif
  for (int j0 = jbeg; j0 < jend; j0 += AT_BK) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = lid; e < AT_BK * RECQ_AT_DK; e += AT_WG) {
      const int jj = e / RECQ_AT_DK, c = e % RECQ_AT_DK;
      const int j = min(j0 + jj, Lk - 1);
      kl[jj * AT_KPAD + c] = RECQ_LOAD(k, kb + j * kv.s5 + c * kv.s6);
    }
    for (int e = lid; e < AT_BK * RECQ_AT_DV; e += AT_WG) {
      const int jj = e / RECQ_AT_DV, c = e % RECQ_AT_DV;
      const int j = min(j0 + jj, Lk - 1);
      vl[e] = RECQ_LOAD(v, vb + j * vv.s5 + c * vv.s6);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int jj = t; jj < AT_BK; jj += AT_TPR) {
      const int j = j0 + jj;
      float s = 0.0f;
      for (int c = 0; c < RECQ_AT_DK; ++c) {
        s = fma(ql[r * RECQ_AT_DK + c], kl[jj * AT_KPAD + c], s);
      }
      bool seen = j < jend && i < Lq;
#if RECQ_AT_CAUSAL
      seen = seen && j <= i + causal_offset;
#endif
#if RECQ_AT_MASK
      if (seen) s += RECQ_LOAD(mask, recq_at_base(mv, b, h) + i * mv.s5 + j * mv.s6);
#endif
      sl[r * AT_SPAD + jj] = seen ? s : -INFINITY;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float mt = -INFINITY;
    for (int jj = 0; jj < AT_BK; ++jj) mt = fmax(mt, sl[r * AT_SPAD + jj]);
    const float mn = fmax(m, mt);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int jj = t; jj < AT_BK; jj += AT_TPR) {
      sl[r * AT_SPAD + jj] = mn == -INFINITY ? 0.0f : exp(sl[r * AT_SPAD + jj] - mn);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mn != -INFINITY) {
      const float corr = exp(m - mn);
      float sum = 0.0f;
      for (int c = 0; c < AT_NV; ++c) acc[c] *= corr;
      for (int jj = 0; jj < AT_BK; ++jj) {
        const float p = sl[r * AT_SPAD + jj];
        sum += p;
        for (int c = 0; c < AT_NV; ++c) {
          const int col = t + c * AT_TPR;
          if (col < RECQ_AT_DV) acc[c] = fma(p, vl[jj * RECQ_AT_DV + col], acc[c]);
        }
      }
      l = l * corr + sum;
      m = mn;
    }
  }
  if (i >= Lq) return;
#if RECQ_AT_SPLIT > 1
  const int rows = get_global_size(2) * get_global_size(1) * Lq;  // B * SPLIT * H * Lq
  const int row = ((b * get_global_size(1) + h) * RECQ_AT_SPLIT + split) * Lq + i;
  for (int c = 0; c < AT_NV; ++c) {
    const int col = t + c * AT_TPR;
    if (col < RECQ_AT_DV) part[row * RECQ_AT_DV + col] = acc[c];
  }
  if (t == 0) {
    part[rows * RECQ_AT_DV + row] = m;
    part[rows * (RECQ_AT_DV + 1) + row] = l;
  }
  return;
#endif
  const int ob = recq_at_base(ov, b, h) + i * ov.s5;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  for (int c = 0; c < AT_NV; ++c) {
    const int col = t + c * AT_TPR;
    if (col < RECQ_AT_DV) RECQ_STORE(o, ob + col * ov.s6, acc[c] * inv);
  }
}

// Merges the RECQ_AT_SPLIT key slices of attention_gpu: each slice's output
// and sum scaled by exp(its maximum - the overall maximum). Global size
// (DV, Lq, B * H).
__kernel void attention_combine(__global const float* restrict part, __global RECQ_T* restrict o,
                                int8 ov, int Lq, int H) {
  const int col = get_global_id(0);
  const int i = get_global_id(1);
  const int bh = get_global_id(2);
  if (col >= RECQ_AT_DV || i >= Lq) return;
  const int rows = get_global_size(2) * RECQ_AT_SPLIT * Lq;
  const int row0 = bh * RECQ_AT_SPLIT * Lq + i;
  float mx = -INFINITY;
  for (int s = 0; s < RECQ_AT_SPLIT; ++s) mx = fmax(mx, part[rows * RECQ_AT_DV + row0 + s * Lq]);
  float sum = 0.0f, acc = 0.0f;
  if (mx != -INFINITY) {
    for (int s = 0; s < RECQ_AT_SPLIT; ++s) {
      const int row = row0 + s * Lq;
      const float ms = part[rows * RECQ_AT_DV + row];
      if (ms == -INFINITY) continue;
      const float w = exp(ms - mx);
      sum += part[rows * (RECQ_AT_DV + 1) + row] * w;
      acc += part[row * RECQ_AT_DV + col] * w;
    }
  }
  const int b = bh / H, h = bh % H;
  RECQ_STORE(o, recq_at_base(ov, b, h) + i * ov.s5 + col * ov.s6, sum > 0.0f ? acc / sum : 0.0f);
}

#endif  // RECQ_AT_GPU

// ---------------------------------------------------------------------------
// GPU family on matrix units (common.cl's three tf32 products at fp32
// accuracy), FlashAttention-2 style: a work-group of RECQ_AT_WARPS warps
// on 16 query rows, the keys split between the warps (tile w, w + WARPS,
// ... of RECQ_AT_BK keys to warp w), each warp's maxima, sums and output
// merged at the end as attention_combine merges slices. The rows' Q
// (scaled) stays in local memory; each warp streams its K tile and then
// its V tile through one local buffer of its own.
//
// A warp computes its 16 x BK scores as BK/8 mma tiles of 16x8 (lane 4g+t
// holds rows g and g+8 at columns 2t and 2t+1 of each, PTX's accumulator
// layout), reduces their maxima over the four lanes of a row, and feeds
// the probabilities to the P.V product straight from those registers:
// read as an A operand, a lane's columns 2t and 2t+1 are K positions t
// and t+4, so V's rows are read in the same order (key 2t at position t,
// 2t+1 at t+4) and no value moves between lanes. Each lane keeps its part
// of the rows' sums; the four parts are added at the end. O is rescaled
// by exp(m_old - m_new) per tile in the fp32 units and the tile's P.V
// added to it from a zeroed partial (common.cl's RECQ_MMA3_UNIT says why).
// Scores are kept in base 2 (Q's scale and the mask times log2(e)), so
// that the exponentials are exp2.
//
// Without RECQ_MM_PTX (the tests on PoCL) each item computes the same
// elements from the local tiles in plain OpenCL C, the probabilities pass
// through local memory, and the four lanes of a row meet there too.
// RECQ_AT_VEC4: Q, K and V are read 4 columns at a time (contiguous
// columns, every offset and stride a multiple of 4).
// Global size (ceil(Lq / 16) * 32 WARPS, H, B); local (32 WARPS, 1, 1).
#ifdef RECQ_AT_MMA

#define AM_W RECQ_AT_WARPS
#define AM_BK RECQ_AT_BK
#define AM_ITEMS (32 * AM_W)
#define AM_D (RECQ_AT_DK > RECQ_AT_DV ? RECQ_AT_DK : RECQ_AT_DV)
// Row pitches: a fragment read (8 rows by 4 columns of Q or K, 4 pairs of
// V's rows by 8 columns) then falls in 32 distinct banks.
#define AM_QPAD (RECQ_AT_DK + 4)
#define AM_VPAD (RECQ_AT_DV + 4)
#define AM_TILE (AM_BK * (AM_D + 4))
#define AM_NS (AM_BK / 8)
#define AM_NO (RECQ_AT_DV / 8)
#ifndef RECQ_AT_VEC4
#define RECQ_AT_VEC4 0
#endif

#ifdef RECQ_MM_PTX
// x combined over the four lanes of a row (lanes 4g .. 4g+3).
inline float am_quad_max(float x) {
  float y;
  asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x));
  x = fmax(x, y);
  asm volatile("shfl.sync.bfly.b32 %0, %1, 2, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x));
  return fmax(x, y);
}
inline float am_quad_sum(float x) {
  float y;
  asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x));
  x += y;
  asm volatile("shfl.sync.bfly.b32 %0, %1, 2, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x));
  return x + y;
}
#define AM_QUAD_MAX(x) am_quad_max(x)
#define AM_QUAD_SUM(x) am_quad_sum(x)
#else
// The same through local memory; every item of the group calls it.
inline float am_quad_local(__local float* red, float x, int is_max) {
  const int lid = get_local_id(0), q = lid & ~3;
  barrier(CLK_LOCAL_MEM_FENCE);
  red[lid] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  return is_max ? fmax(fmax(red[q], red[q + 1]), fmax(red[q + 2], red[q + 3]))
                : (red[q] + red[q + 1]) + (red[q + 2] + red[q + 3]);
}
#define AM_QUAD_MAX(x) am_quad_local(red, (x), 1)
#define AM_QUAD_SUM(x) am_quad_local(red, (x), 0)
#endif

// Rows [r0, r0 + rows) of a (b, h) view, `width` columns, into local rows
// of `pitch` (scaled), rows past `last` read as row `last`; `lid` and
// `items` split the elements.
inline void am_stage(__local float* dst, int pitch, __global const RECQ_T* src, int base, int sr,
                     int sc, int r0, int rows, int last, int width, float scale, int lid,
                     int items) {
#if RECQ_AT_VEC4
  for (int e = lid; e < rows * width / 4; e += items) {
    const int rr = e / (width / 4), c = (e % (width / 4)) * 4;
    const float4 x = RECQ_LOAD4(src + base + min(r0 + rr, last) * sr + c, 0);
    vstore4(x * scale, 0, dst + rr * pitch + c);
  }
#else
  for (int e = lid; e < rows * width; e += items) {
    const int rr = e / width, c = e % width;
    dst[rr * pitch + c] = RECQ_LOAD(src, base + min(r0 + rr, last) * sr + c * sc) * scale;
  }
#endif
}

__kernel __attribute__((reqd_work_group_size(AM_ITEMS, 1, 1))) void attention_mma(
    __global const RECQ_T* restrict q, __global const RECQ_T* restrict k,
    __global const RECQ_T* restrict v, __global const RECQ_T* restrict mask,
    __global RECQ_T* restrict o, int8 qv, int8 kv, int8 vv, int8 mv, int8 ov, int Lq, int Lk,
    float scale, int causal_offset, __global float* restrict part) {
  __local float ql[16 * AM_QPAD] __attribute__((aligned(16)));
  __local float tiles[AM_W * AM_TILE] __attribute__((aligned(16)));
#ifndef RECQ_MM_PTX
  __local float pl[AM_W * 16 * (AM_BK + 1)];
  __local float red[AM_ITEMS];
#endif
  const int lid = get_local_id(0);
  const int lane = lid & 31, w = lid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int row0 = get_group_id(0) * 16;
  const int h = get_global_id(1);
  const int b = get_global_id(2);
  const int kb = recq_at_base(kv, b, h), vb = recq_at_base(vv, b, h);
#if RECQ_AT_MASK
  const int mb = recq_at_base(mv, b, h);
#endif
  __local float* tl = tiles + w * AM_TILE;
  am_stage(ql, AM_QPAD, q, recq_at_base(qv, b, h), qv.s5, qv.s6, row0, 16, Lq - 1, RECQ_AT_DK,
           scale * M_LOG2E_F, lid, AM_ITEMS);
  // This lane's rows: g and g + 8.
  const int i0 = row0 + g, i1 = i0 + 8;
  float acc[AM_NO][4];
  RECQ_MMA_UNROLL for (int c = 0; c < AM_NO; ++c) {
    RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) acc[c][r] = 0.0f;
  }
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
  int jend = Lk;
#if RECQ_AT_CAUSAL
  jend = clamp(min(row0 + 16, Lq) - 1 + causal_offset + 1, 0, Lk);
#endif
  // Every warp runs as many steps (the barriers); a warp past the keys
  // skips the work, or in the emulation runs it on keys all masked.
  const int steps = (jend + AM_BK * AM_W - 1) / (AM_BK * AM_W);
  for (int step = 0; step < steps; ++step) {
    const int j0 = (step * AM_W + w) * AM_BK;
#ifdef RECQ_MM_PTX
    const bool active = j0 < jend;
#else
    const bool active = true;
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
      am_stage(tl, AM_QPAD, k, kb, kv.s5, kv.s6, j0, AM_BK, Lk - 1, RECQ_AT_DK, 1.0f, lane, 32);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Scores S = Q K^T: s[j] is keys j0 + 8j .. 8j + 7.
    float s[AM_NS][4];
    RECQ_MMA_UNROLL for (int j = 0; j < AM_NS; ++j) {
      RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) s[j][r] = 0.0f;
    }
#ifdef RECQ_MM_PTX
    if (active) {
      RECQ_MMA_UNROLL for (int kk = 0; kk < RECQ_AT_DK; kk += 8) {
        uint ah[4], at[4];
        const __local float* qr = ql + g * AM_QPAD + kk + t;
        const float x[4] = {qr[0], qr[8 * AM_QPAD], qr[4], qr[8 * AM_QPAD + 4]};
        RECQ_MMA_UNROLL for (int e = 0; e < 4; ++e) RECQ_TF32_SPLIT(x[e], ah[e], at[e]);
        RECQ_MMA_UNROLL for (int j = 0; j < AM_NS; ++j) {
          uint bh[2], bt[2];
          const __local float* kr = tl + (j * 8 + g) * AM_QPAD + kk + t;
          const float y[2] = {kr[0], kr[4]};
          RECQ_MMA_UNROLL for (int e = 0; e < 2; ++e) RECQ_TF32_SPLIT(y[e], bh[e], bt[e]);
          RECQ_MMA3_UNIT(s[j], ah, at, bh, bt);
        }
      }
    }
#else
    for (int j = 0; j < AM_NS; ++j) {
      for (int r = 0; r < 4; ++r) {
        const int row = g + 8 * (r >> 1), key = j * 8 + 2 * t + (r & 1);
        for (int c = 0; c < RECQ_AT_DK; ++c) {
          s[j][r] += recq_tf32x3_product(ql[row * AM_QPAD + c], tl[key * AM_QPAD + c]);
        }
      }
    }
#endif
    // Masks, and the tile's maxima of rows g (r 0, 1) and g + 8 (r 2, 3).
    float mx0 = -INFINITY, mx1 = -INFINITY;
    RECQ_MMA_UNROLL for (int j = 0; j < AM_NS; ++j) {
      RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) {
        const int i = r < 2 ? i0 : i1, key = j0 + j * 8 + 2 * t + (r & 1);
        bool seen = key < jend && i < Lq;
#if RECQ_AT_CAUSAL
        seen = seen && key <= i + causal_offset;
#endif
#if RECQ_AT_MASK
        if (seen) s[j][r] += RECQ_LOAD(mask, mb + i * mv.s5 + key * mv.s6) * M_LOG2E_F;
#endif
        s[j][r] = seen ? s[j][r] : -INFINITY;
        if (r < 2) {
          mx0 = fmax(mx0, s[j][r]);
        } else {
          mx1 = fmax(mx1, s[j][r]);
        }
      }
    }
    mx0 = AM_QUAD_MAX(mx0);
    mx1 = AM_QUAD_MAX(mx1);
    const float mn0 = fmax(m0, mx0), mn1 = fmax(m1, mx1);
    const float corr0 = mn0 == -INFINITY ? 1.0f : exp2(m0 - mn0);
    const float corr1 = mn1 == -INFINITY ? 1.0f : exp2(m1 - mn1);
    float sum0 = 0.0f, sum1 = 0.0f;
    RECQ_MMA_UNROLL for (int j = 0; j < AM_NS; ++j) {
      RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) {
        const float mn = r < 2 ? mn0 : mn1;
        const float p = mn == -INFINITY ? 0.0f : exp2(s[j][r] - mn);
        s[j][r] = p;
        if (r < 2) {
          sum0 += p;
        } else {
          sum1 += p;
        }
      }
    }
    l0 = l0 * corr0 + sum0;
    l1 = l1 * corr1 + sum1;
    m0 = mn0;
    m1 = mn1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
      am_stage(tl, AM_VPAD, v, vb, vv.s5, vv.s6, j0, AM_BK, Lk - 1, RECQ_AT_DV, 1.0f, lane, 32);
    }
#ifndef RECQ_MM_PTX
    __local float* pw = pl + w * 16 * (AM_BK + 1);
    for (int j = 0; j < AM_NS; ++j) {
      for (int r = 0; r < 4; ++r) pw[(g + 8 * (r >> 1)) * (AM_BK + 1) + j * 8 + 2 * t + (r & 1)] = s[j][r];
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    // O = O * corr + P V.
    float pv[AM_NO][4];
    RECQ_MMA_UNROLL for (int c = 0; c < AM_NO; ++c) {
      RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) pv[c][r] = 0.0f;
    }
#ifdef RECQ_MM_PTX
    if (active) {
      RECQ_MMA_UNROLL for (int j = 0; j < AM_NS; ++j) {
        uint ah[4], at[4];
        const float x[4] = {s[j][0], s[j][2], s[j][1], s[j][3]};
        RECQ_MMA_UNROLL for (int e = 0; e < 4; ++e) RECQ_TF32_SPLIT(x[e], ah[e], at[e]);
        const __local float* vr = tl + (j * 8 + 2 * t) * AM_VPAD + g;
        RECQ_MMA_UNROLL for (int c = 0; c < AM_NO; ++c) {
          uint bh[2], bt[2];
          const float y[2] = {vr[c * 8], vr[AM_VPAD + c * 8]};
          RECQ_MMA_UNROLL for (int e = 0; e < 2; ++e) RECQ_TF32_SPLIT(y[e], bh[e], bt[e]);
          RECQ_MMA3_UNIT(pv[c], ah, at, bh, bt);
        }
      }
    }
#else
    for (int c = 0; c < AM_NO; ++c) {
      for (int r = 0; r < 4; ++r) {
        const int row = g + 8 * (r >> 1), col = c * 8 + 2 * t + (r & 1);
        for (int jj = 0; jj < AM_BK; ++jj) {
          pv[c][r] += recq_tf32x3_product(pw[row * (AM_BK + 1) + jj], tl[jj * AM_VPAD + col]);
        }
      }
    }
#endif
    RECQ_MMA_UNROLL for (int c = 0; c < AM_NO; ++c) {
      RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) {
        acc[c][r] = acc[c][r] * (r < 2 ? corr0 : corr1) + pv[c][r];
      }
    }
  }
  l0 = AM_QUAD_SUM(l0);
  l1 = AM_QUAD_SUM(l1);
#if AM_W > 1
  // The warps' maxima, sums and outputs meet in the tiles' memory: per
  // warp 16 rows of DV outputs, then 16 maxima and 16 sums.
  barrier(CLK_LOCAL_MEM_FENCE);
  RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) {
    RECQ_MMA_UNROLL for (int c = 0; c < AM_NO; ++c) {
      tl[(g + 8 * (r >> 1)) * RECQ_AT_DV + c * 8 + 2 * t + (r & 1)] = acc[c][r];
    }
  }
  if (t == 0) {
    tl[16 * RECQ_AT_DV + g] = m0;
    tl[16 * RECQ_AT_DV + g + 8] = m1;
    tl[16 * RECQ_AT_DV + 16 + g] = l0;
    tl[16 * RECQ_AT_DV + 16 + g + 8] = l1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int e = lid; e < 16 * RECQ_AT_DV; e += AM_ITEMS) {
    const int rr = e / RECQ_AT_DV, col = e % RECQ_AT_DV, i = row0 + rr;
    if (i >= Lq) continue;
    float mx = -INFINITY;
    for (int ww = 0; ww < AM_W; ++ww) mx = fmax(mx, tiles[ww * AM_TILE + 16 * RECQ_AT_DV + rr]);
    float sum = 0.0f, out = 0.0f;
    if (mx != -INFINITY) {
      for (int ww = 0; ww < AM_W; ++ww) {
        const __local float* part_w = tiles + ww * AM_TILE;
        const float mw = part_w[16 * RECQ_AT_DV + rr];
        if (mw == -INFINITY) continue;
        const float f = exp2(mw - mx);
        sum += part_w[16 * RECQ_AT_DV + 16 + rr] * f;
        out += part_w[e] * f;
      }
    }
    RECQ_STORE(o, recq_at_base(ov, b, h) + i * ov.s5 + col * ov.s6, sum > 0.0f ? out / sum : 0.0f);
  }
#else
  const float inv0 = l0 > 0.0f ? 1.0f / l0 : 0.0f, inv1 = l1 > 0.0f ? 1.0f / l1 : 0.0f;
  RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) {
    const int i = r < 2 ? i0 : i1;
    if (i >= Lq) continue;
    const int ob = recq_at_base(ov, b, h) + i * ov.s5;
    RECQ_MMA_UNROLL for (int c = 0; c < AM_NO; ++c) {
      const int col = c * 8 + 2 * t + (r & 1);
      RECQ_STORE(o, ob + col * ov.s6, acc[c][r] * (r < 2 ? inv0 : inv1));
    }
  }
#endif
}

#endif  // RECQ_AT_MMA

// ---------------------------------------------------------------------------
// GPU family, one query row (a decoder step against its cache): a
// work-group of RECQ_AT_WG items per (b, h). Item t scores keys t, t + WG,
// ... (the scores stay in local memory, RECQ_AT_LK of them at most), the
// group reduces their maximum and, after exp, their sum; then the items,
// as WG / DV groups of DV columns, add up the probabilities times V's rows
// (group g takes rows g, g + WG/DV, ...), and the groups' sums are added in
// local memory. Global size (WG, H, B); local (WG, 1, 1).
#ifdef RECQ_AT_DECODE

#define AD_WG RECQ_AT_WG
#define AD_GROUPS (AD_WG / RECQ_AT_DV)

__kernel __attribute__((reqd_work_group_size(AD_WG, 1, 1))) void attention_decode(
    __global const RECQ_T* restrict q, __global const RECQ_T* restrict k,
    __global const RECQ_T* restrict v, __global const RECQ_T* restrict mask,
    __global RECQ_T* restrict o, int8 qv, int8 kv, int8 vv, int8 mv, int8 ov, int Lq, int Lk,
    float scale, int causal_offset, __global float* restrict part) {
  __local float qs[RECQ_AT_DK];
  __local float sc[RECQ_AT_LK];
  __local float red[AD_WG];
  const int t = get_local_id(0);
  const int h = get_global_id(1);
  const int b = get_global_id(2);
  const int qb = recq_at_base(qv, b, h), kb = recq_at_base(kv, b, h), vb = recq_at_base(vv, b, h);
  for (int c = t; c < RECQ_AT_DK; c += AD_WG) qs[c] = RECQ_LOAD(q, qb + c * qv.s6) * scale;
  barrier(CLK_LOCAL_MEM_FENCE);
  int jend = Lk;
#if RECQ_AT_CAUSAL
  jend = clamp(causal_offset + 1, 0, Lk);
#endif
  float mx = -INFINITY;
  for (int j = t; j < Lk; j += AD_WG) {
    float s = -INFINITY;
    if (j < jend) {
      const int kr = kb + j * kv.s5;
      float dot = 0.0f;
      for (int c = 0; c < RECQ_AT_DK; ++c) dot = fma(qs[c], RECQ_LOAD(k, kr + c * kv.s6), dot);
#if RECQ_AT_MASK
      dot += RECQ_LOAD(mask, recq_at_base(mv, b, h) + j * mv.s6);
#endif
      s = dot;
    }
    sc[j] = s;
    mx = fmax(mx, s);
  }
  red[t] = mx;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = AD_WG / 2; step > 0; step /= 2) {
    if (t < step) red[t] = fmax(red[t], red[t + step]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  mx = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  float sum = 0.0f;
  for (int j = t; j < Lk; j += AD_WG) {
    const float p = mx == -INFINITY || sc[j] == -INFINITY ? 0.0f : exp(sc[j] - mx);
    sc[j] = p;
    sum += p;
  }
  red[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = AD_WG / 2; step > 0; step /= 2) {
    if (t < step) red[t] += red[t + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  const int col = t % RECQ_AT_DV;
  const int g = t / RECQ_AT_DV;
  float acc = 0.0f;
  if (g < AD_GROUPS) {
    for (int j = g; j < jend; j += AD_GROUPS) {
      acc = fma(sc[j], RECQ_LOAD(v, vb + j * vv.s5 + col * vv.s6), acc);
    }
  }
  red[t] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t < RECQ_AT_DV) {
    float out = 0.0f;
    for (int gg = 0; gg < AD_GROUPS; ++gg) out += red[gg * RECQ_AT_DV + t];
    RECQ_STORE(o, recq_at_base(ov, b, h) + t * ov.s6, total > 0.0f ? out / total : 0.0f);
  }
}

#endif  // RECQ_AT_DECODE
