// MatMul and Gemm on CPUs (PoCL) with constant weights, register-blocked:
//   Y[m][n] = act(alpha * sum_k A[m][k] * B[k][n] + beta * C[m * c_sm + n * c_sn]
//                 + R[m][n]),
// A [M, K] row-major (the activations), C optional (NULL: none; a bias
// [N] or a residual [M, N]), R optional (NULL: none; a residual [M, N]
// added after the bias C: a Linear layer's bias and the block's residual
// Add, or the residual Add after a Gemm).
// `bp` holds B packed by the lowering as [ceil(N/VW)][K][VW], zero past N,
// so an item's panel of B is one contiguous stream. Each work-item computes
// RM rows by VW columns with RM vector accumulators, KS steps of K at a
// time. Build options: -DRECQ_MP_VW=8|16 (columns per item, one vector),
// -DRECQ_MP_RM=1|4|8 (rows per item) and -DRECQ_MP_KS=1|4 (steps of K per
// iteration: 1, each element of A broadcast from memory into its FMA, the
// heuristic's; or 4, one vload4 per row of A feeding 4 x RM FMAs, which
// holds four vectors of B in registers instead of one).
// Global size: (ceil(M/RM), ceil(N/VW)): items of a work-group share the
// panel of B and walk down the rows. Rows past M read row M-1 and are not
// written; columns past N are zeros and are not written.
#ifndef RECQ_MP_VW
#define RECQ_MP_VW 16
#endif
#ifndef RECQ_MP_RM
#define RECQ_MP_RM 8
#endif
#ifndef RECQ_MP_KS
#define RECQ_MP_KS 4
#endif

#define MP_CAT_(a, b) a##b
#define MP_CAT(a, b) MP_CAT_(a, b)
#define floatV MP_CAT(float, RECQ_MP_VW)
#define loadV MP_CAT(RECQ_LOAD, RECQ_MP_VW)
#define storeV MP_CAT(RECQ_STORE, RECQ_MP_VW)
#define activateV MP_CAT(recq_activate, RECQ_MP_VW)
#define geluV MP_CAT(recq_gelu, RECQ_MP_VW)

__kernel void matmul_packed(__global const RECQ_T* restrict a, __global const RECQ_T* restrict bp,
                            __global const RECQ_T* restrict c, __global const RECQ_T* restrict r,
                            __global RECQ_T* restrict y, int M,
                            int N, int K, float alpha, float beta, int c_sm, int c_sn, int act,
                            float act_a, float act_b) {
  const int m0 = get_global_id(0) * RECQ_MP_RM;
  const int panel = get_global_id(1);
  const int n0 = panel * RECQ_MP_VW;
  if (m0 >= M || n0 >= N) return;
  const __global RECQ_T* bq = bp + (size_t)panel * K * RECQ_MP_VW;
  const __global RECQ_T* ar[RECQ_MP_RM];
#pragma unroll
  for (int i = 0; i < RECQ_MP_RM; ++i) ar[i] = a + (size_t)min(m0 + i, M - 1) * K;
  floatV acc[RECQ_MP_RM];
#pragma unroll
  for (int i = 0; i < RECQ_MP_RM; ++i) acc[i] = (floatV)(0.0f);
  int k = 0;
#if RECQ_MP_KS == 4
  for (; k + 4 <= K; k += 4) {
    const __global RECQ_T* bk = bq + (size_t)k * RECQ_MP_VW;
    const floatV b0 = loadV(bk, 0), b1 = loadV(bk, 1), b2 = loadV(bk, 2), b3 = loadV(bk, 3);
#pragma unroll
    for (int i = 0; i < RECQ_MP_RM; ++i) {
      const float4 av = RECQ_LOAD4(ar[i] + k, 0);
      acc[i] = fma((floatV)(av.x), b0, acc[i]);
      acc[i] = fma((floatV)(av.y), b1, acc[i]);
      acc[i] = fma((floatV)(av.z), b2, acc[i]);
      acc[i] = fma((floatV)(av.w), b3, acc[i]);
    }
  }
#endif
  for (; k < K; ++k) {
    const floatV bv = loadV(bq + (size_t)k * RECQ_MP_VW, 0);
#pragma unroll
    for (int i = 0; i < RECQ_MP_RM; ++i) acc[i] = fma((floatV)(RECQ_LOAD(ar[i], k)), bv, acc[i]);
  }
  const bool full = n0 + RECQ_MP_VW <= N;
  // Rows past M read row M-1's addends and are not written.
  floatV out[RECQ_MP_RM];
#pragma unroll
  for (int i = 0; i < RECQ_MP_RM; ++i) {
    const int m = min(m0 + i, M - 1);
    floatV v = alpha * acc[i];
    if (c) {
      if (full && c_sn == 1) {
        v += beta * loadV(c + (size_t)m * c_sm + n0, 0);
      } else {
        float* lanes = (float*)&v;
        for (int j = 0; j < RECQ_MP_VW && n0 + j < N; ++j) {
          lanes[j] += beta * RECQ_LOAD(c, (size_t)m * c_sm + (size_t)(n0 + j) * c_sn);
        }
      }
    }
    if (r) {
      if (full) {
        v += loadV(r + (size_t)m * N + n0, 0);
      } else {
        float* lanes = (float*)&v;
        for (int j = 0; n0 + j < N; ++j) lanes[j] += RECQ_LOAD(r, (size_t)m * N + n0 + j);
      }
    }
    out[i] = v;
  }
  // GELU (transformers' MLPs) inline over all rows at once; the other
  // activations through the switch.
  if (act == RECQ_ACT_GELU) {
#pragma unroll
    for (int i = 0; i < RECQ_MP_RM; ++i) out[i] = geluV(out[i]);
  } else if (act != RECQ_ACT_NONE) {
#pragma unroll
    for (int i = 0; i < RECQ_MP_RM; ++i) out[i] = activateV(out[i], act, act_a, act_b);
  }
#pragma unroll
  for (int i = 0; i < RECQ_MP_RM; ++i) {
    const int m = m0 + i;
    if (m >= M) break;
    __global RECQ_T* yr = y + (size_t)m * N + n0;
    if (full) {
      storeV(yr, 0, out[i]);
    } else {
      const float* lanes = (const float*)&out[i];
      for (int j = 0; n0 + j < N; ++j) RECQ_STORE(yr, j, lanes[j]);
    }
  }
}
