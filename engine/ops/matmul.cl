// Batched Y[b, M, N] = A[b, M, K] * B[b, K, N] with broadcast batches
// (`dims` the batch shape padded to rank 8, `sa`/`sb` the batch strides of A
// and B in elements, 0 where broadcast), register-tiled: each work-item
// computes rows m0..m0+3 and columns n0..n0+7 of one batch with four float8
// accumulators. Rows past M read row M-1 and are not written; columns past
// N read 0 and are not written. Global size: (ceil(N/8), ceil(M/4), batch).
__kernel void matmul_tiled(__global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
                           __global RECQ_T* restrict y, int M, int N, int K, int8 dims, int8 sa,
                           int8 sb) {
  const int n0 = get_global_id(0) * 8;
  const int m0 = get_global_id(1) * 4;
  const int batch = get_global_id(2);
  const __global RECQ_T* ab = a + recq_broadcast_offset(batch, dims, sa);
  const __global RECQ_T* bb = b + recq_broadcast_offset(batch, dims, sb) + n0;
  const __global RECQ_T* a0 = ab + (size_t)min(m0, M - 1) * K;
  const __global RECQ_T* a1 = ab + (size_t)min(m0 + 1, M - 1) * K;
  const __global RECQ_T* a2 = ab + (size_t)min(m0 + 2, M - 1) * K;
  const __global RECQ_T* a3 = ab + (size_t)min(m0 + 3, M - 1) * K;
  float8 c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f;
  if (n0 + 8 <= N) {
    for (int k = 0; k < K; ++k) {
      const float8 bv = RECQ_LOAD8(bb + (size_t)k * N, 0);
      c0 = fma((float8)(RECQ_LOAD(a0, k)), bv, c0);
      c1 = fma((float8)(RECQ_LOAD(a1, k)), bv, c1);
      c2 = fma((float8)(RECQ_LOAD(a2, k)), bv, c2);
      c3 = fma((float8)(RECQ_LOAD(a3, k)), bv, c3);
    }
  } else {
    // The last column tile: lanes past N read column N-1 (kept finite) and
    // are dropped at the store.
    const int last = N - 1 - n0;
    for (int k = 0; k < K; ++k) {
      const __global RECQ_T* row = bb + (size_t)k * N;
      const float8 bv = (float8)(RECQ_LOAD(row, 0), RECQ_LOAD(row, min(1, last)), RECQ_LOAD(row, min(2, last)), RECQ_LOAD(row, min(3, last)),
                                 RECQ_LOAD(row, min(4, last)), RECQ_LOAD(row, min(5, last)), RECQ_LOAD(row, min(6, last)),
                                 RECQ_LOAD(row, min(7, last)));
      c0 = fma((float8)(RECQ_LOAD(a0, k)), bv, c0);
      c1 = fma((float8)(RECQ_LOAD(a1, k)), bv, c1);
      c2 = fma((float8)(RECQ_LOAD(a2, k)), bv, c2);
      c3 = fma((float8)(RECQ_LOAD(a3, k)), bv, c3);
    }
  }
  __global RECQ_T* yb = y + ((size_t)batch * M + m0) * N + n0;
  const float8 c[4] = {c0, c1, c2, c3};
  for (int i = 0; i < 4 && m0 + i < M; ++i) {
    __global RECQ_T* yr = yb + (size_t)i * N;
    if (n0 + 8 <= N) {
      RECQ_STORE8(yr, 0, c[i]);
    } else {
      const float* lanes = (const float*)&c[i];
      for (int j = 0; n0 + j < N; ++j) RECQ_STORE(yr, j, lanes[j]);
    }
  }
}
