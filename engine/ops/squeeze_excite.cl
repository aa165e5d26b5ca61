// A squeeze-and-excitation block in two kernels (squeeze_excite.cc).
// RECQ_SE_L: items a work-group (a power of two); RECQ_SE_MAXR: the largest
// R (local memory for the squeezed vector).
// (Built only with RECQ_SE_L: the CPU form below has no work-groups to size.)
#ifdef RECQ_SE_L
#define RECQ_SE_RK (RECQ_SE_MAXR / RECQ_SE_L)

// se_squeeze: work-group (g, n) takes channels [cg * CPG, (cg + 1) * CPG)
// and elements [hp * HWS, (hp + 1) * HWS) of each, for g = cg * HS + hp, of
// batch item n, TPC items (a power of two) a channel at a time, sums each
// channel's elements over HW and adds its terms of the first product:
// partial[n][g][r] = sum over those channels c of w1t[c][r] * sum[c] / HW.
// The G slices' partials add up to the product with the channels' means.
__kernel void se_squeeze(__global const RECQ_T* restrict x, __global const RECQ_T* restrict w1t,
                         __global float* restrict partial, int C, int HW, int R, int G, int CPG,
                         int TPC, int HS, int HWS) {
  __local float red[RECQ_SE_L];
  __local float mean[RECQ_SE_L];
  const int t = get_local_id(0);
  const int g = get_group_id(0);
  const int n = get_group_id(1);
  const int cg = g / HS;
  const int h0 = (g % HS) * HWS;
  const int h1 = min(HW, h0 + HWS);
  const int lane = t % TPC;
  const int slot = t / TPC;
  const int per_pass = RECQ_SE_L / TPC;
  const int c_end = min(C, (cg + 1) * CPG);
  float acc[RECQ_SE_RK];
#pragma unroll
  for (int k = 0; k < RECQ_SE_RK; ++k) acc[k] = 0.0f;
  for (int c0 = cg * CPG; c0 < c_end; c0 += per_pass) {
    const int c = c0 + slot;
    float sum = 0.0f;
    if (c < c_end) {
      const __global RECQ_T* xc = x + ((size_t)n * C + c) * HW;
      for (int i = h0 + lane; i < h1; i += TPC) sum += RECQ_LOAD(xc, i);
    }
    red[t] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = TPC / 2; s > 0; s >>= 1) {
      if (lane < s) red[t] += red[t + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0) mean[slot] = red[t] / HW;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int count = min(per_pass, c_end - c0);
#pragma unroll
    for (int k = 0; k < RECQ_SE_RK; ++k) {
      const int r = t + k * RECQ_SE_L;
      if (r < R) {
        for (int j = 0; j < count; ++j)
          acc[k] += RECQ_LOAD(w1t, (size_t)(c0 + j) * R + r) * mean[j];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  __global float* p = partial + ((size_t)n * G + g) * R;
#pragma unroll
  for (int k = 0; k < RECQ_SE_RK; ++k) {
    const int r = t + k * RECQ_SE_L;
    if (r < R) p[r] = acc[k];
  }
}

// se_excite: work-group (h, cb, n) sums the G slices' partials of batch item
// n into h = act(... + b1), then for each of channels [cb * CPW, (cb + 1) *
// CPW) computes s = gate(w2[c] . h + b2[c]) and writes y = x * s over
// elements [h * HWC, (h + 1) * HWC) of the channel.
__kernel void se_excite(__global const RECQ_T* restrict x, __global const float* restrict partial,
                        __global const RECQ_T* restrict b1, __global const RECQ_T* restrict w2,
                        __global const RECQ_T* restrict b2, __global RECQ_T* restrict y, int C,
                        int HW, int R, int G, int CPW, int HWC, int act, float act_a, float act_b,
                        int gate, float gate_a, float gate_b) {
  __local float hid[RECQ_SE_MAXR];
  __local float red[RECQ_SE_L];
  const int t = get_local_id(0);
  const int h0 = get_group_id(0) * HWC;
  const int cb = get_group_id(1);
  const int n = get_group_id(2);
  const __global float* p = partial + (size_t)n * G * R;
  for (int r = t; r < R; r += RECQ_SE_L) {
    float h = b1 ? RECQ_LOAD(b1, r) : 0.0f;
    for (int g = 0; g < G; ++g) h += p[(size_t)g * R + r];
    hid[r] = recq_activate(h, act, act_a, act_b);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int c_end = min(C, (cb + 1) * CPW);
  const int h_end = min(HW, h0 + HWC);
  for (int c = cb * CPW; c < c_end; ++c) {
    float d = 0.0f;
    for (int r = t; r < R; r += RECQ_SE_L) d += RECQ_LOAD(w2, (size_t)c * R + r) * hid[r];
    d = recq_group_sum(red, t, RECQ_SE_L, d) + (b2 ? RECQ_LOAD(b2, c) : 0.0f);
    const float s = recq_activate(d, gate, gate_a, gate_b);
    const size_t row = ((size_t)n * C + c) * HW;
    for (int i = h0 + t; i < h_end; i += RECQ_SE_L)
      RECQ_STORE(y, row + i, RECQ_LOAD(x, row + i) * s);
  }
}
#endif  // RECQ_SE_L

// The CPU form (PoCL runs a work-group as loops between barriers, which
// the kernels above take many of): three kernels without barriers.
// scratch holds the means [N][C], then from float HOFF the hidden vectors
// [N][R].
// se_mean_rows: item (c, n) averages x[n][c] over its HW elements.
__kernel void se_mean_rows(__global const RECQ_T* restrict x, __global float* restrict mean, int C,
                           int HW) {
  const int c = get_global_id(0);
  const int n = get_global_id(1);
  if (c >= C) return;
  const __global RECQ_T* row = x + ((size_t)n * C + c) * HW;
  float16 acc = 0.0f;
  int i = 0;
  for (; i + 16 <= HW; i += 16) acc += RECQ_LOAD16(row + i, 0);
  float sum = 0.0f;
  for (; i < HW; ++i) sum += RECQ_LOAD(row, i);
  const float8 a8 = acc.lo + acc.hi;
  const float4 a4 = a8.lo + a8.hi;
  sum += a4.x + a4.y + a4.z + a4.w;
  mean[(size_t)n * C + c] = sum / HW;
}

// se_rows_dot: sum over i < n of v[i] times row i of the [n][16] block w,
// one float16 FMA a term, in four accumulators (one chain of dependent FMAs
// would wait on each one's latency).
inline float16 se_rows_dot(const __global RECQ_T* restrict w, const __global float* restrict v,
                           int n) {
  float16 a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 += RECQ_LOAD16(w, i) * v[i];
    a1 += RECQ_LOAD16(w, i + 1) * v[i + 1];
    a2 += RECQ_LOAD16(w, i + 2) * v[i + 2];
    a3 += RECQ_LOAD16(w, i + 3) * v[i + 3];
  }
  for (; i < n; ++i) a0 += RECQ_LOAD16(w, i) * v[i];
  return (a0 + a1) + (a2 + a3);
}

// se_hidden_rows: item (b, n) computes hidden[n][r] = act(b1[r] + sum_c
// w1[r][c] * mean[n][c]) for the 16 r of block b at once: w1b is w1 as
// [ceil(R / 16)][C][16] (the r past R zero), so that an item streams one
// contiguous block. (An item per r left PoCL a scalar chain of C dependent
// FMAs an item: 1.3 GFLOP/s.)
__kernel void se_hidden_rows(__global float* scratch, __global const RECQ_T* restrict w1b,
                             __global const RECQ_T* restrict b1, int C, int R, int HOFF, int act,
                             float act_a, float act_b) {
  const int b = get_global_id(0);
  const int r0 = b * 16;
  const int n = get_global_id(1);
  if (r0 >= R) return;
  float h[16];
  vstore16(se_rows_dot(w1b + (size_t)b * C * 16, scratch + (size_t)n * C, C), 0, h);
  __global float* hidden = scratch + HOFF + (size_t)n * R;
  const int count = min(16, R - r0);
  for (int j = 0; j < count; ++j) {
    const float z = h[j] + (b1 ? RECQ_LOAD(b1, r0 + j) : 0.0f);
    hidden[r0 + j] = recq_activate(z, act, act_a, act_b);
  }
}

// se_scale_rows: item (b, n) computes the gates s = gate(b2[c] + sum_r
// w2[c][r] * hidden[n][r]) of the 16 channels c of block b at once (w2b is
// w2 as [ceil(C / 16)][R][16], the c past C zero) and writes y[n][c] =
// x[n][c] * s for each of them.
__kernel void se_scale_rows(__global const RECQ_T* restrict x,
                            __global const float* restrict scratch,
                            __global const RECQ_T* restrict w2b, __global const RECQ_T* restrict b2,
                            __global RECQ_T* restrict y, int C, int HW, int R, int HOFF, int gate,
                            float gate_a, float gate_b) {
  const int b = get_global_id(0);
  const int c0 = b * 16;
  const int n = get_global_id(1);
  if (c0 >= C) return;
  float d[16];
  vstore16(se_rows_dot(w2b + (size_t)b * R * 16, scratch + HOFF + (size_t)n * R, R), 0, d);
  const int count = min(16, C - c0);
  for (int j = 0; j < count; ++j) {
    const int c = c0 + j;
    const float s = recq_activate(d[j] + (b2 ? RECQ_LOAD(b2, c) : 0.0f), gate, gate_a, gate_b);
    const size_t row = ((size_t)n * C + c) * HW;
    int i = 0;
    for (; i + 16 <= HW; i += 16) RECQ_STORE16(y + row + i, 0, RECQ_LOAD16(x + row + i, 0) * s);
    for (; i < HW; ++i) RECQ_STORE(y, row + i, RECQ_LOAD(x, row + i) * s);
  }
}
