// MatMul and Gemm on CPUs (PoCL) for a few rows with constant weights (a
// decoder step's Linear layers and LM head: one token's row against the
// weights), a memory-bound matrix-vector product:
//   Y[r][n] = act(alpha * sum_k A[r][k] * B[k][n] + beta * C[r * c_sm + n * c_sn]),
// A [R, K] row-major, C optional (NULL: none). `bp` holds B packed by the
// lowering as [ceil(N/VW)][K][VW] (matmul_packed's layout), zero past N, so
// each panel of B is one contiguous stream. Each work-item owns PP
// consecutive panels and walks K once, keeping R x PP vector accumulators:
// PP streams of B in flight per item, each weight read once for all R rows.
// Work-groups are kept small by the lowering so that the cores of the
// device share even numbers of them.
// Build options: -DRECQ_GC_VW=8|16 (columns per panel, one vector),
// -DRECQ_GC_R=1..4 (rows: exactly the product's M), -DRECQ_GC_PP=1|2|4
// (panels per item).
// Global size: ceil(ceil(N/VW) / PP) rounded up to the work-group. A panel
// past the last reads the last one and is not written; columns past N are
// zeros and are not written.
#ifndef RECQ_GC_VW
#define RECQ_GC_VW 16
#endif
#ifndef RECQ_GC_R
#define RECQ_GC_R 1
#endif
#ifndef RECQ_GC_PP
#define RECQ_GC_PP 1
#endif

#define GC_CAT_(a, b) a##b
#define GC_CAT(a, b) GC_CAT_(a, b)
#define floatV GC_CAT(float, RECQ_GC_VW)
#define loadV GC_CAT(RECQ_LOAD, RECQ_GC_VW)
#define storeV GC_CAT(RECQ_STORE, RECQ_GC_VW)
#define activateV GC_CAT(recq_activate, RECQ_GC_VW)

__kernel void matmul_gemv_cpu(__global const RECQ_T* restrict a, __global const RECQ_T* restrict bp,
                              __global const RECQ_T* restrict c, __global RECQ_T* restrict y, int N,
                              int K, float alpha, float beta, int c_sm, int c_sn, int act,
                              float act_a, float act_b) {
  const int panels = (N + RECQ_GC_VW - 1) / RECQ_GC_VW;
  const int p0 = get_global_id(0) * RECQ_GC_PP;
  if (p0 >= panels) return;
  const __global RECQ_T* bq[RECQ_GC_PP];
#pragma unroll
  for (int p = 0; p < RECQ_GC_PP; ++p) {
    bq[p] = bp + (size_t)min(p0 + p, panels - 1) * K * RECQ_GC_VW;
  }
  floatV acc[RECQ_GC_R][RECQ_GC_PP];
#pragma unroll
  for (int r = 0; r < RECQ_GC_R; ++r) {
#pragma unroll
    for (int p = 0; p < RECQ_GC_PP; ++p) acc[r][p] = (floatV)(0.0f);
  }
  int k = 0;
  for (; k + 4 <= K; k += 4) {
    float4 av[RECQ_GC_R];
#pragma unroll
    for (int r = 0; r < RECQ_GC_R; ++r) av[r] = RECQ_LOAD4(a + (size_t)r * K + k, 0);
#pragma unroll
    for (int p = 0; p < RECQ_GC_PP; ++p) {
      const __global RECQ_T* bk = bq[p] + (size_t)k * RECQ_GC_VW;
      const floatV b0 = loadV(bk, 0), b1 = loadV(bk, 1), b2 = loadV(bk, 2), b3 = loadV(bk, 3);
#pragma unroll
      for (int r = 0; r < RECQ_GC_R; ++r) {
        acc[r][p] = fma((floatV)(av[r].x), b0, acc[r][p]);
        acc[r][p] = fma((floatV)(av[r].y), b1, acc[r][p]);
        acc[r][p] = fma((floatV)(av[r].z), b2, acc[r][p]);
        acc[r][p] = fma((floatV)(av[r].w), b3, acc[r][p]);
      }
    }
  }
  for (; k < K; ++k) {
#pragma unroll
    for (int p = 0; p < RECQ_GC_PP; ++p) {
      const floatV bv = loadV(bq[p] + (size_t)k * RECQ_GC_VW, 0);
#pragma unroll
      for (int r = 0; r < RECQ_GC_R; ++r) {
        acc[r][p] = fma((floatV)(RECQ_LOAD(a, (size_t)r * K + k)), bv, acc[r][p]);
      }
    }
  }
#pragma unroll
  for (int p = 0; p < RECQ_GC_PP; ++p) {
    const int n0 = (p0 + p) * RECQ_GC_VW;
    if (n0 >= N) break;
    const bool full = n0 + RECQ_GC_VW <= N;
#pragma unroll
    for (int r = 0; r < RECQ_GC_R; ++r) {
      floatV v = alpha * acc[r][p];
      if (c) {
        float* lanes = (float*)&v;
        for (int j = 0; j < RECQ_GC_VW && n0 + j < N; ++j) {
          lanes[j] += beta * RECQ_LOAD(c, (size_t)r * c_sm + (size_t)(n0 + j) * c_sn);
        }
      }
      v = activateV(v, act, act_a, act_b);
      __global RECQ_T* yr = y + (size_t)r * N + n0;
      if (full) {
        storeV(yr, 0, v);
      } else {
        const float* lanes = (const float*)&v;
        for (int j = 0; n0 + j < N; ++j) RECQ_STORE(yr, j, lanes[j]);
      }
    }
  }
}
