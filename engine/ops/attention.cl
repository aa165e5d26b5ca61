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
// CPU family (PoCL): one work-item per RECQ_AT_R query rows of one (b, h),
// vectors of RECQ_AT_W (1, 4, 8 or 16) along the head width when the
// columns of Q, K and V are contiguous (RECQ_AT_W divides DK and DV), keys
// in blocks of RECQ_AT_KB (4, 8 or 16) so that the rescale runs once a
// block and exp runs on a vector of the block's scores.
// Global size: (ceil(Lq / R), H, B).
#ifdef RECQ_AT_CPU

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
#if RECQ_AT_W > 1
        const AT_VT vr = AT_LOADV(v, vrow + c * RECQ_AT_W);
#else
        const AT_VT vr = RECQ_LOAD(v, vrow + c * vv.s6);
#endif
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
#if RECQ_AT_W > 1
      if (ov.s6 == 1) {
        AT_STOREV(o, ob + i * ov.s5 + c * RECQ_AT_W, y);
        continue;
      }
      const float* ys = (const float*)&y;
      for (int e = 0; e < RECQ_AT_W; ++e) {
        RECQ_STORE(o, ob + i * ov.s5 + (c * RECQ_AT_W + e) * ov.s6, ys[e]);
      }
#else
      RECQ_STORE(o, ob + i * ov.s5 + c * ov.s6, y);
#endif
    }
  }
}

#endif  // RECQ_AT_CPU

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
