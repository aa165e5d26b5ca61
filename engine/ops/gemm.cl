// Y[M,N] = act(alpha * op(A) * op(B) + beta * C), C read through strides
// (0 on broadcast dimensions; C may be NULL). Global size: (N, M).
__kernel void gemm(__global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
                   __global const RECQ_T* restrict c, __global RECQ_T* restrict y, int M, int N,
                   int K, int trans_a, int trans_b, float alpha, float beta, int c_stride_m,
                   int c_stride_n, int act, float act_a, float act_b) {
  const int n = get_global_id(0);
  const int m = get_global_id(1);
  if (n >= N || m >= M) return;
  const int a_sm = trans_a ? 1 : K;
  const int a_sk = trans_a ? M : 1;
  const int b_sk = trans_b ? 1 : N;
  const int b_sn = trans_b ? K : 1;
  float acc = 0.0f;
  int k = 0;
  if (!trans_a && trans_b) {
    // Both operands contiguous along K (the fully connected layer): float16
    // vectors, four independent accumulators; the scalar loop below takes
    // the remaining K % 64.
    const __global RECQ_T* ar = a + (size_t)m * K;
    const __global RECQ_T* br = b + (size_t)n * K;
    float16 s0 = (float16)(0.0f), s1 = s0, s2 = s0, s3 = s0;
    for (; k + 64 <= K; k += 64) {
      s0 = fma(RECQ_LOAD16(ar + k, 0), RECQ_LOAD16(br + k, 0), s0);
      s1 = fma(RECQ_LOAD16(ar + k + 16, 0), RECQ_LOAD16(br + k + 16, 0), s1);
      s2 = fma(RECQ_LOAD16(ar + k + 32, 0), RECQ_LOAD16(br + k + 32, 0), s2);
      s3 = fma(RECQ_LOAD16(ar + k + 48, 0), RECQ_LOAD16(br + k + 48, 0), s3);
    }
    acc = recq_sum16((s0 + s1) + (s2 + s3));
  }
  for (; k < K; ++k) acc = fma(RECQ_LOAD(a, m * a_sm + k * a_sk), RECQ_LOAD(b, k * b_sk + n * b_sn), acc);
  float v = alpha * acc;
  if (c) v += beta * RECQ_LOAD(c, m * c_stride_m + n * c_stride_n);
  RECQ_STORE(y, m * N + n, recq_activate(v, act, act_a, act_b));
}

// Batched Y[b, M, N] = A[b, M, K] * B[b, K, N] with broadcast batches:
// `dims` is the batch shape padded to rank 8, `sa`/`sb` the batch strides of
// A and B in elements (0 where broadcast). Global size: (N, M, batch).
__kernel void matmul(__global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
                     __global RECQ_T* restrict y, int M, int N, int K, int8 dims, int8 sa,
                     int8 sb) {
  const int n = get_global_id(0);
  const int m = get_global_id(1);
  const int batch = get_global_id(2);
  if (n >= N || m >= M) return;
  const __global RECQ_T* ab = a + recq_broadcast_offset(batch, dims, sa);
  const __global RECQ_T* bb = b + recq_broadcast_offset(batch, dims, sb);
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fma(RECQ_LOAD(ab, m * K + k), RECQ_LOAD(bb, k * N + n), acc);
  RECQ_STORE(y, ((size_t)batch * M + m) * N + n, acc);
}

// gemm's contract for !trans_a && trans_b (the fully connected layer: both
// operands contiguous along K), one work-group of RECQ_GEMM_LOCAL (a power of
// two) work-items per output: each work-item sums a strided share of K, the
// shares are reduced in local memory. For GPUs, where gemm's one item per
// output gives too few work-items when M is small.
// Global size: (N * RECQ_GEMM_LOCAL, M); local (RECQ_GEMM_LOCAL, 1).
#ifndef RECQ_GEMM_LOCAL
#define RECQ_GEMM_LOCAL 64
#endif
__kernel void gemm_rowdot(__global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
                          __global const RECQ_T* restrict c, __global RECQ_T* restrict y, int M,
                          int N, int K, float alpha, float beta, int c_stride_m, int c_stride_n,
                          int act, float act_a, float act_b) {
  __local float red[RECQ_GEMM_LOCAL];
  const int lid = get_local_id(0);
  const int n = get_group_id(0);
  const int m = get_global_id(1);
  const __global RECQ_T* ar = a + (size_t)m * K;
  const __global RECQ_T* br = b + (size_t)n * K;
  float acc = 0.0f;
  const int k4 = K / 4;
  for (int k = lid; k < k4; k += RECQ_GEMM_LOCAL) {
    acc += dot(RECQ_LOAD4(ar, k), RECQ_LOAD4(br, k));
  }
  for (int k = k4 * 4 + lid; k < K; k += RECQ_GEMM_LOCAL) acc = fma(RECQ_LOAD(ar, k), RECQ_LOAD(br, k), acc);
  red[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = RECQ_GEMM_LOCAL / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid != 0) return;
  float v = alpha * red[0];
  if (c) v += beta * RECQ_LOAD(c, m * c_stride_m + n * c_stride_n);
  RECQ_STORE(y, m * N + n, recq_activate(v, act, act_a, act_b));
}
