// Y[r, n] = A[r, :] . B[:, n] for a few rows r < R (a decoder step's
// matrix-vector products: batch x one token against constant weights), on
// GPUs. A work-group of CG x KS items owns 4*CG consecutive columns: item
// (x, s) reads float4 runs of B's rows k = s, s + KS, ... at columns
// 4*(group*CG + x) .. +3 (a warp reads whole runs of a row), keeping the
// R rows' partial sums in registers; the KS partial sums of each column
// are then added in local memory and the first slice writes them.
// Epilogue as matmul_local's (RECQ_GV_EPILOGUE 0: plain, 1: Gemm's act(alpha
// * A*B + beta * C[r * c_sm + n * c_sn]), 2: + C[r * c_sm + n * c_sn]).
// Build options: -DRECQ_GV_CG, _KS (the work-group), _R (rows, <= 8),
// _EPILOGUE. Global size (ceil(N / (4*CG)) * CG, KS), local (CG, KS).
#ifndef RECQ_GV_CG
#define RECQ_GV_CG 8
#endif
#ifndef RECQ_GV_KS
#define RECQ_GV_KS 32
#endif
#ifndef RECQ_GV_R
#define RECQ_GV_R 1
#endif
#ifndef RECQ_GV_EPILOGUE
#define RECQ_GV_EPILOGUE 0
#endif

__kernel __attribute__((reqd_work_group_size(RECQ_GV_CG, RECQ_GV_KS, 1))) void matmul_gemv(
    __global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
    __global const RECQ_T* restrict c, __global RECQ_T* restrict y, int N, int K, float alpha,
    float beta, int c_sm, int c_sn, int act, float act_a, float act_b) {
  __local float4 partial[RECQ_GV_KS][RECQ_GV_CG];
  const int x = get_local_id(0);
  const int s = get_local_id(1);
  const int n = (get_group_id(0) * RECQ_GV_CG + x) * 4;
  const bool whole = n + 3 < N;
  float4 acc[RECQ_GV_R];
#pragma unroll
  for (int r = 0; r < RECQ_GV_R; ++r) acc[r] = (float4)(0.0f);
  if (n < N) {
#pragma unroll 4
    for (int k = s; k < K; k += RECQ_GV_KS) {
      const __global RECQ_T* row = b + (size_t)k * N + n;
      float4 w;
      if (whole) {
        w = RECQ_LOAD4(row, 0);
      } else {
        w.x = RECQ_LOAD(row, 0);
        w.y = n + 1 < N ? RECQ_LOAD(row, 1) : 0.0f;
        w.z = n + 2 < N ? RECQ_LOAD(row, 2) : 0.0f;
        w.w = 0.0f;
      }
#pragma unroll
      for (int r = 0; r < RECQ_GV_R; ++r)
        acc[r] = fma((float4)(RECQ_LOAD(a, (size_t)r * K + k)), w, acc[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < RECQ_GV_R; ++r) {
    partial[s][x] = acc[r];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = RECQ_GV_KS / 2; step > 0; step /= 2) {
      if (s < step) partial[s][x] += partial[s + step][x];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (s == 0 && n < N) {
      const float4 sum = partial[0][x];
      const float v[4] = {sum.x, sum.y, sum.z, sum.w};
      for (int j = 0; j < 4 && n + j < N; ++j) {
        const int col = n + j;
#if RECQ_GV_EPILOGUE == 1
        float out = alpha * v[j];
        if (c) out += beta * RECQ_LOAD(c, r * c_sm + col * c_sn);
        RECQ_STORE(y, (size_t)r * N + col, recq_activate(out, act, act_a, act_b));
#elif RECQ_GV_EPILOGUE == 2
        RECQ_STORE(y, (size_t)r * N + col, v[j] + RECQ_LOAD(c, r * c_sm + col * c_sn));
#else
        RECQ_STORE(y, (size_t)r * N + col, v[j]);
#endif
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
