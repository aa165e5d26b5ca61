// Batched Y[b, M, N] = A[b, M, K] * B[b, K, N] for GPUs, tiled: a
// work-group computes TM rows x TN columns of one batch, staging TK columns
// of A and TK rows of B at a time in local memory; each work-item
// accumulates RM x RN outputs in registers, consecutive (float4 local
// reads; RECQ_ML_CONTIG) or strided by TM/RM and TN/RN.
// `dims` is the batch shape padded to rank 8, `sa`/`sb` the batch strides of
// A and B in elements (0 where broadcast), as for `matmul` (gemm.cl).
// Epilogue (Gemm's): Y = act(alpha * A*B + beta * C[m * c_sm + n * c_sn]),
// C optional (NULL); MatMul passes alpha 1 and no C.
// Build options: -DRECQ_ML_TM, _TN, _TK, _RM, _RN, _CONTIG. The work-group
// has (TN/RN) x (TM/RM) items; TK*TM and TK*TN are multiples of it.
// Global size: (ceil(N/TN) * TN/RN, ceil(M/TM) * TM/RM, batch), local
// (TN/RN, TM/RM, 1).
#ifndef RECQ_ML_TM
#define RECQ_ML_TM 64
#endif
#ifndef RECQ_ML_TN
#define RECQ_ML_TN 64
#endif
#ifndef RECQ_ML_TK
#define RECQ_ML_TK 16
#endif
#ifndef RECQ_ML_RM
#define RECQ_ML_RM 4
#endif
#ifndef RECQ_ML_RN
#define RECQ_ML_RN 4
#endif
// 1: Gemm's epilogue (alpha, beta * C, the activation); 0: MatMul's plain
// store (the epilogue's per-element code halved MatMul's throughput on the
// H100 even when it did nothing).
#ifndef RECQ_ML_EPILOGUE
#define RECQ_ML_EPILOGUE 0
#endif
#ifndef RECQ_ML_CONTIG
#define RECQ_ML_CONTIG 1
#endif

#define RECQ_ML_LX (RECQ_ML_TN / RECQ_ML_RN)
#define RECQ_ML_LY (RECQ_ML_TM / RECQ_ML_RM)
#define RECQ_ML_ITEMS (RECQ_ML_LX * RECQ_ML_LY)

__kernel __attribute__((reqd_work_group_size(RECQ_ML_LX, RECQ_ML_LY, 1))) void matmul_local(
    __global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
    __global const RECQ_T* restrict c, __global RECQ_T* restrict y, int M, int N, int K,
    int8 dims, int8 sa, int8 sb, float alpha, float beta, int c_sm, int c_sn, int act,
    float act_a, float act_b) {
  // A's tile is written along K by consecutive items: its rows are padded
  // by 4 so that they fall in different local-memory banks.
  __local float as[RECQ_ML_TK][RECQ_ML_TM + 4] __attribute__((aligned(16)));
  __local float bs[RECQ_ML_TK][RECQ_ML_TN] __attribute__((aligned(16)));
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int tid = ty * RECQ_ML_LX + tx;
  const int n0 = get_group_id(0) * RECQ_ML_TN;
  const int m0 = get_group_id(1) * RECQ_ML_TM;
  const int batch = get_group_id(2);
  const __global RECQ_T* ab = a + recq_broadcast_offset(batch, dims, sa);
  const __global RECQ_T* bb = b + recq_broadcast_offset(batch, dims, sb);

  float acc[RECQ_ML_RM][RECQ_ML_RN];
#pragma unroll
  for (int i = 0; i < RECQ_ML_RM; ++i) {
#pragma unroll
    for (int j = 0; j < RECQ_ML_RN; ++j) acc[i][j] = 0.0f;
  }

  for (int k0 = 0; k0 < K; k0 += RECQ_ML_TK) {
    // A's tile, read along K (consecutive items, consecutive k).
    for (int e = tid; e < RECQ_ML_TK * RECQ_ML_TM; e += RECQ_ML_ITEMS) {
      const int m = e / RECQ_ML_TK;
      const int kk = e % RECQ_ML_TK;
      const int gm = m0 + m, gk = k0 + kk;
      as[kk][m] = gm < M && gk < K ? RECQ_LOAD(ab, (size_t)gm * K + gk) : 0.0f;
    }
    // B's tile, read along N.
    for (int e = tid; e < RECQ_ML_TK * RECQ_ML_TN; e += RECQ_ML_ITEMS) {
      const int kk = e / RECQ_ML_TN;
      const int n = e % RECQ_ML_TN;
      const int gk = k0 + kk, gn = n0 + n;
      bs[kk][n] = gk < K && gn < N ? RECQ_LOAD(bb, (size_t)gk * N + gn) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int kk = 0; kk < RECQ_ML_TK; ++kk) {
      float av[RECQ_ML_RM], bv[RECQ_ML_RN];
#if RECQ_ML_CONTIG
      const __local float4* a4 = (const __local float4*)&as[kk][ty * RECQ_ML_RM];
      const __local float4* b4 = (const __local float4*)&bs[kk][tx * RECQ_ML_RN];
#pragma unroll
      for (int q = 0; q < RECQ_ML_RM / 4; ++q) vstore4(a4[q], q, av);
#pragma unroll
      for (int q = 0; q < RECQ_ML_RN / 4; ++q) vstore4(b4[q], q, bv);
#else
#pragma unroll
      for (int i = 0; i < RECQ_ML_RM; ++i) av[i] = as[kk][ty + i * RECQ_ML_LY];
#pragma unroll
      for (int j = 0; j < RECQ_ML_RN; ++j) bv[j] = bs[kk][tx + j * RECQ_ML_LX];
#endif
#pragma unroll
      for (int i = 0; i < RECQ_ML_RM; ++i) {
#pragma unroll
        for (int j = 0; j < RECQ_ML_RN; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  __global RECQ_T* yb = y + (size_t)batch * M * N;
#pragma unroll
  for (int i = 0; i < RECQ_ML_RM; ++i) {
#if RECQ_ML_CONTIG
    const int m = m0 + ty * RECQ_ML_RM + i;
#else
    const int m = m0 + ty + i * RECQ_ML_LY;
#endif
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < RECQ_ML_RN; ++j) {
#if RECQ_ML_CONTIG
      const int n = n0 + tx * RECQ_ML_RN + j;
#else
      const int n = n0 + tx + j * RECQ_ML_LX;
#endif
      if (n >= N) continue;
#if RECQ_ML_EPILOGUE
      float v = alpha * acc[i][j];
      if (c) v += beta * RECQ_LOAD(c, m * c_sm + n * c_sn);
      RECQ_STORE(yb, (size_t)m * N + n, recq_activate(v, act, act_a, act_b));
#else
      RECQ_STORE(yb, (size_t)m * N + n, acc[i][j]);
#endif
    }
  }
}
