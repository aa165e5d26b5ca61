// A squeeze-and-excitation block in two kernels (squeeze_excite.cc).
// RECQ_SE_L: items a work-group (a power of two); RECQ_SE_MAXR: the largest
// R (local memory for the squeezed vector).
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
        for (int j = 0; j < count; ++j) acc[k] += RECQ_LOAD(w1t, (size_t)(c0 + j) * R + r) * mean[j];
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
    for (int i = h0 + t; i < h_end; i += RECQ_SE_L) RECQ_STORE(y, row + i, RECQ_LOAD(x, row + i) * s);
  }
}
