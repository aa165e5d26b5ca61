// Batched Y[b, M, N] = A[b, M, K] * B[b, K, N] on matrix units: NVIDIA's
// tensor cores through inline PTX (mma.sync m16n8k8 on tf32, sm_80 and
// later) at fp32 accuracy, three tf32 products per product (common.cl's
// matrix-unit helpers say how). NVIDIA's OpenCL driver offers no other way
// to its matrix units.
//
// Tiles: a work-group of WARPS warps (32 items each, one dimension)
// computes TM x TN of one batch, staging TK columns of A and TK rows of B
// in local memory per step (RECQ_MM_DB 1: double-buffered through
// registers, as matmul_local.cl does; 2 or 3: DB + 1 stages in local
// memory filled DB steps ahead, with cp.async under RECQ_MM_PTX, so that
// a step waits on memory fetched DB steps earlier instead of on its own
// round trip); each warp owns WM x WN of the tile,
// as (WM/16) x (WN/8) mma tiles of 16x8 accumulated in registers.
// Fragments follow PTX's m16n8k8 tf32 layout: lane l is in group g = l/4
// at position t = l%4; A holds (g, t), (g+8, t), (g, t+4), (g+8, t+4), B
// (t, g), (t+4, g), and the accumulators (g, 2t), (g, 2t+1), (g+8, 2t),
// (g+8, 2t+1).
//
// Without RECQ_MM_PTX (a device without the instructions; the tests on
// PoCL) each item computes its accumulators' sums from the same local
// tiles in plain OpenCL C, with the same split: everything but the
// fragments' exchange between lanes is the same code.
//
// Arguments, epilogue (RECQ_ML_EPILOGUE, RECQ_ML_RES), split K (RECQ_ML_SK, partial
// sums to part[SK][batch][M][N] for matmul_local_reduce) and float4 tile
// loads (RECQ_ML_VEC) are matmul_local.cl's. Build options: -DRECQ_MM_TM,
// _TN, _TK (16 or 32), _WM (a multiple of 16), _WN (of 8), _DB (0 to 3;
// 2 and 3 need RECQ_ML_VEC), _PTX.
// Global size (ceil(N/TN) * ITEMS, ceil(M/TM), batch * SK), local
// (ITEMS, 1, 1), ITEMS = 32 * (TM/WM) * (TN/WN).
#ifndef RECQ_MM_TM
#define RECQ_MM_TM 64
#endif
#ifndef RECQ_MM_TN
#define RECQ_MM_TN 64
#endif
#ifndef RECQ_MM_TK
#define RECQ_MM_TK 16
#endif
#ifndef RECQ_MM_WM
#define RECQ_MM_WM 32
#endif
#ifndef RECQ_MM_WN
#define RECQ_MM_WN 32
#endif
#ifndef RECQ_MM_DB
#define RECQ_MM_DB 0
#endif
#ifndef RECQ_ML_EPILOGUE
#define RECQ_ML_EPILOGUE 0
#endif
#ifndef RECQ_ML_RES
#define RECQ_ML_RES 0
#endif
#ifndef RECQ_ML_VEC
#define RECQ_ML_VEC 0
#endif
#ifndef RECQ_ML_SK
#define RECQ_ML_SK 1
#endif

#if RECQ_MM_DB >= 2 && !RECQ_ML_VEC
#error "RECQ_MM_DB 2 and 3 stage float4 runs: they need RECQ_ML_VEC"
#endif
#if RECQ_MM_DB > 3
#error "RECQ_MM_DB: 0 to 3"
#endif

#define RECQ_MM_WARPS_N (RECQ_MM_TN / RECQ_MM_WN)
#define RECQ_MM_ITEMS (32 * (RECQ_MM_TM / RECQ_MM_WM) * RECQ_MM_WARPS_N)
#define RECQ_MM_MI (RECQ_MM_WM / 16)
#define RECQ_MM_NI (RECQ_MM_WN / 8)
// Row padding of the local tiles: A's fragment reads (8 rows by 4 columns
// per warp) and B's (4 rows by 8 columns) then fall in 32 distinct banks.
#define RECQ_MM_APAD (RECQ_MM_TK + 4)
#define RECQ_MM_BPAD (RECQ_MM_TN + 8)

__kernel __attribute__((reqd_work_group_size(RECQ_MM_ITEMS, 1, 1))) void matmul_mma(
    __global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
    __global const RECQ_T* restrict c, __global const RECQ_T* restrict res,
    __global RECQ_T* restrict y, __global float* restrict part,
    int M, int N, int K, int8 dims, int8 sa, int8 sb, float alpha, float beta, int c_sm, int c_sn,
    int act, float act_a, float act_b) {
  __local float as[RECQ_MM_DB + 1][RECQ_MM_TM][RECQ_MM_APAD] __attribute__((aligned(16)));
  __local float bs[RECQ_MM_DB + 1][RECQ_MM_TK][RECQ_MM_BPAD] __attribute__((aligned(16)));
  const int tid = get_local_id(0);
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  // The warp's corner in the tile.
  const int wm0 = (warp / RECQ_MM_WARPS_N) * RECQ_MM_WM;
  const int wn0 = (warp % RECQ_MM_WARPS_N) * RECQ_MM_WN;
  const int n0 = get_group_id(0) * RECQ_MM_TN;
  const int m0 = get_group_id(1) * RECQ_MM_TM;
  const int batch = get_group_id(2) / RECQ_ML_SK;
#if RECQ_ML_SK > 1
  const int slice = get_group_id(2) % RECQ_ML_SK;
  const int chunk = ((K + RECQ_ML_SK - 1) / RECQ_ML_SK + RECQ_MM_TK - 1) / RECQ_MM_TK * RECQ_MM_TK;
  const int k_begin = slice * chunk;
  const int k_end = min(K, k_begin + chunk);
#else
  const int k_begin = 0;
  const int k_end = K;
#endif
  const __global RECQ_T* ab = a + recq_broadcast_offset(batch, dims, sa);
  const __global RECQ_T* bb = b + recq_broadcast_offset(batch, dims, sb);

  float acc[RECQ_MM_MI][RECQ_MM_NI][4];
#pragma unroll
  for (int i = 0; i < RECQ_MM_MI; ++i) {
#pragma unroll
    for (int j = 0; j < RECQ_MM_NI; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
    }
  }

  // A TK step's tiles pass through registers (NA and NB per item), read
  // from global memory along K for A and along N for B.
#if RECQ_ML_VEC
#define RECQ_MM_A_ELEMS (RECQ_MM_TK * RECQ_MM_TM / 4)
#define RECQ_MM_B_ELEMS (RECQ_MM_TK * RECQ_MM_TN / 4)
#define RECQ_MM_NA ((RECQ_MM_A_ELEMS + RECQ_MM_ITEMS - 1) / RECQ_MM_ITEMS)
#define RECQ_MM_NB ((RECQ_MM_B_ELEMS + RECQ_MM_ITEMS - 1) / RECQ_MM_ITEMS)
  float4 ra[RECQ_MM_NA], rb[RECQ_MM_NB];
#define RECQ_MM_READ(k0)                                                                    \
  do {                                                                                      \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NA; ++r) {                                \
      const int e = tid + r * RECQ_MM_ITEMS;                                                \
      if (RECQ_MM_A_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_A_ELEMS) break;              \
      const int gm = m0 + e / (RECQ_MM_TK / 4), gk = (k0) + (e % (RECQ_MM_TK / 4)) * 4;     \
      ra[r] = gm < M && gk < k_end ? RECQ_LOAD4(ab + (size_t)gm * K + gk, 0) : (float4)(0); \
    }                                                                                       \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NB; ++r) {                                \
      const int e = tid + r * RECQ_MM_ITEMS;                                                \
      if (RECQ_MM_B_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_B_ELEMS) break;              \
      const int gk = (k0) + e / (RECQ_MM_TN / 4), gn = n0 + (e % (RECQ_MM_TN / 4)) * 4;     \
      rb[r] = gk < k_end && gn < N ? RECQ_LOAD4(bb + (size_t)gk * N + gn, 0) : (float4)(0); \
    }                                                                                       \
  } while (0)
#define RECQ_MM_STORE(buf)                                                           \
  do {                                                                               \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NA; ++r) {                         \
      const int e = tid + r * RECQ_MM_ITEMS;                                         \
      if (RECQ_MM_A_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_A_ELEMS) break;       \
      vstore4(ra[r], 0, &as[buf][e / (RECQ_MM_TK / 4)][(e % (RECQ_MM_TK / 4)) * 4]); \
    }                                                                                \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NB; ++r) {                         \
      const int e = tid + r * RECQ_MM_ITEMS;                                         \
      if (RECQ_MM_B_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_B_ELEMS) break;       \
      vstore4(rb[r], 0, &bs[buf][e / (RECQ_MM_TN / 4)][(e % (RECQ_MM_TN / 4)) * 4]); \
    }                                                                                \
  } while (0)
#else
#define RECQ_MM_A_ELEMS (RECQ_MM_TK * RECQ_MM_TM)
#define RECQ_MM_B_ELEMS (RECQ_MM_TK * RECQ_MM_TN)
#define RECQ_MM_NA ((RECQ_MM_A_ELEMS + RECQ_MM_ITEMS - 1) / RECQ_MM_ITEMS)
#define RECQ_MM_NB ((RECQ_MM_B_ELEMS + RECQ_MM_ITEMS - 1) / RECQ_MM_ITEMS)
  float ra[RECQ_MM_NA], rb[RECQ_MM_NB];
#define RECQ_MM_READ(k0)                                                        \
  do {                                                                          \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NA; ++r) {                    \
      const int e = tid + r * RECQ_MM_ITEMS;                                    \
      if (RECQ_MM_A_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_A_ELEMS) break;  \
      const int gm = m0 + e / RECQ_MM_TK, gk = (k0) + e % RECQ_MM_TK;           \
      ra[r] = gm < M && gk < k_end ? RECQ_LOAD(ab, (size_t)gm * K + gk) : 0.0f; \
    }                                                                           \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NB; ++r) {                    \
      const int e = tid + r * RECQ_MM_ITEMS;                                    \
      if (RECQ_MM_B_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_B_ELEMS) break;  \
      const int gk = (k0) + e / RECQ_MM_TN, gn = n0 + e % RECQ_MM_TN;           \
      rb[r] = gk < k_end && gn < N ? RECQ_LOAD(bb, (size_t)gk * N + gn) : 0.0f; \
    }                                                                           \
  } while (0)
#define RECQ_MM_STORE(buf)                                                     \
  do {                                                                         \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NA; ++r) {                   \
      const int e = tid + r * RECQ_MM_ITEMS;                                   \
      if (RECQ_MM_A_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_A_ELEMS) break; \
      as[buf][e / RECQ_MM_TK][e % RECQ_MM_TK] = ra[r];                         \
    }                                                                          \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NB; ++r) {                   \
      const int e = tid + r * RECQ_MM_ITEMS;                                   \
      if (RECQ_MM_B_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_B_ELEMS) break; \
      bs[buf][e / RECQ_MM_TN][e % RECQ_MM_TN] = rb[r];                         \
    }                                                                          \
  } while (0)
#endif

#if RECQ_MM_DB >= 2
  // RECQ_MM_FILL(st, k0): stage st's tiles of the step at k0, float4 by
  // float4, straight from global to local memory (common.cl's
  // RECQ_CP_ASYNC16: cp.async where the instructions run, zeros past the
  // edges). Every item commits one group per step (empty past K), so that
  // waiting until at most DB - 1 are pending completes the current step's.
#if RECQ_MM_DB == 2
#define RECQ_MM_WAIT() RECQ_CP_WAIT(1)
#else
#define RECQ_MM_WAIT() RECQ_CP_WAIT(2)
#endif
#define RECQ_MM_COPY4(dst, src, ok) RECQ_CP_ASYNC16((dst), (ok) ? (src) : ab, (ok) ? 16 : 0)
#define RECQ_MM_FILL(st, k0)                                                                   \
  do {                                                                                         \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NA; ++r) {                                   \
      const int e = tid + r * RECQ_MM_ITEMS;                                                   \
      if (RECQ_MM_A_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_A_ELEMS) break;                 \
      const int row = e / (RECQ_MM_TK / 4), col = (e % (RECQ_MM_TK / 4)) * 4;                  \
      const int gm = m0 + row, gk = (k0) + col;                                                \
      RECQ_MM_COPY4(&as[st][row][col], ab + (size_t)gm * K + gk, gm < M && gk < k_end);        \
    }                                                                                          \
    _Pragma("unroll") for (int r = 0; r < RECQ_MM_NB; ++r) {                                   \
      const int e = tid + r * RECQ_MM_ITEMS;                                                   \
      if (RECQ_MM_B_ELEMS % RECQ_MM_ITEMS != 0 && e >= RECQ_MM_B_ELEMS) break;                 \
      const int row = e / (RECQ_MM_TN / 4), col = (e % (RECQ_MM_TN / 4)) * 4;                  \
      const int gk = (k0) + row, gn = n0 + col;                                                \
      RECQ_MM_COPY4(&bs[st][row][col], bb + (size_t)gk * N + gn, gk < k_end && gn < N);        \
    }                                                                                          \
  } while (0)
#endif

  // One TK step's products from local-memory half `buf`, 8 columns of K at
  // a time: each operand split into head and tail as it is read.
#ifdef RECQ_MM_PTX
  // The three products of the step's columns, 8 at a time, go to a zeroed
  // partial sum, added to the fp32 accumulators once per step (common.cl's
  // RECQ_MMA3_UNIT says why): a partial per 8 columns measured 3-7 %
  // slower on an H100 (bench/gpu/gemm.sh, 2026-11-26).
#define RECQ_MM_COMPUTE(buf)                                                                       \
  do {                                                                                             \
    float p_[RECQ_MM_MI][RECQ_MM_NI][4];                                                           \
    _Pragma("unroll") for (int i = 0; i < RECQ_MM_MI; ++i) {                                       \
      _Pragma("unroll") for (int j = 0; j < RECQ_MM_NI; ++j) {                                     \
        _Pragma("unroll") for (int q = 0; q < 4; ++q) p_[i][j][q] = 0.0f;                          \
      }                                                                                            \
    }                                                                                              \
    _Pragma("unroll") for (int kk = 0; kk < RECQ_MM_TK; kk += 8) {                                 \
      uint ah[RECQ_MM_MI][4], at[RECQ_MM_MI][4], bh[RECQ_MM_NI][2], bt[RECQ_MM_NI][2];             \
      _Pragma("unroll") for (int i = 0; i < RECQ_MM_MI; ++i) {                                     \
        const int r0 = wm0 + i * 16 + g;                                                           \
        const float x[4] = {as[buf][r0][kk + t], as[buf][r0 + 8][kk + t], as[buf][r0][kk + t + 4], \
                            as[buf][r0 + 8][kk + t + 4]};                                          \
        _Pragma("unroll") for (int q = 0; q < 4; ++q) RECQ_TF32_SPLIT(x[q], ah[i][q], at[i][q]);   \
      }                                                                                            \
      _Pragma("unroll") for (int j = 0; j < RECQ_MM_NI; ++j) {                                     \
        const int c0 = wn0 + j * 8 + g;                                                            \
        const float x[2] = {bs[buf][kk + t][c0], bs[buf][kk + t + 4][c0]};                         \
        _Pragma("unroll") for (int q = 0; q < 2; ++q) RECQ_TF32_SPLIT(x[q], bh[j][q], bt[j][q]);   \
      }                                                                                            \
      _Pragma("unroll") for (int i = 0; i < RECQ_MM_MI; ++i) {                                     \
        _Pragma("unroll") for (int j = 0; j < RECQ_MM_NI; ++j) {                                   \
          RECQ_MMA3_UNIT(p_[i][j], ah[i], at[i], bh[j], bt[j]);                                    \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    _Pragma("unroll") for (int i = 0; i < RECQ_MM_MI; ++i) {                                       \
      _Pragma("unroll") for (int j = 0; j < RECQ_MM_NI; ++j) {                                     \
        _Pragma("unroll") for (int q = 0; q < 4; ++q) acc[i][j][q] += p_[i][j][q];                 \
      }                                                                                            \
    }                                                                                              \
  } while (0)
#else
#define RECQ_MM_COMPUTE(buf)                                              \
  do {                                                                    \
    for (int i = 0; i < RECQ_MM_MI; ++i) {                                \
      for (int j = 0; j < RECQ_MM_NI; ++j) {                              \
        for (int r = 0; r < 4; ++r) {                                     \
          const int row = wm0 + i * 16 + g + 8 * (r >> 1);                \
          const int col = wn0 + j * 8 + 2 * t + (r & 1);                  \
          float sum = acc[i][j][r];                                       \
          for (int k = 0; k < RECQ_MM_TK; ++k)                            \
            sum += recq_tf32x3_product(as[buf][row][k], bs[buf][k][col]); \
          acc[i][j][r] = sum;                                             \
        }                                                                 \
      }                                                                   \
    }                                                                     \
  } while (0)
#endif

#if RECQ_MM_DB >= 2
  // DB + 1 stages: the first DB steps' tiles are requested before the loop;
  // each step waits for its own (requested DB steps earlier), and after
  // the barrier, which also ends every read of the stage computed last,
  // requests the step DB ahead into that stage.
  for (int s = 0; s < RECQ_MM_DB; ++s) {
    const int k0 = k_begin + s * RECQ_MM_TK;
    if (k0 < k_end) RECQ_MM_FILL(s, k0);
    RECQ_CP_COMMIT();
  }
  int st = 0;
  for (int k0 = k_begin; k0 < k_end; k0 += RECQ_MM_TK) {
    RECQ_MM_WAIT();
    barrier(CLK_LOCAL_MEM_FENCE);
    const int k_ahead = k0 + RECQ_MM_DB * RECQ_MM_TK;
    if (k_ahead < k_end) RECQ_MM_FILL(st == 0 ? RECQ_MM_DB : st - 1, k_ahead);
    RECQ_CP_COMMIT();
    RECQ_MM_COMPUTE(st);
    st = st == RECQ_MM_DB ? 0 : st + 1;
  }
#elif RECQ_MM_DB
  // Double-buffered: the next step's tiles travel from global memory to
  // registers while this one is computed, then to the other half; the
  // barrier after the store also ends every read of the half it overwrote.
  if (k_begin < k_end) {
    RECQ_MM_READ(k_begin);
    RECQ_MM_STORE(0);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int buf = 0;
  for (int k0 = k_begin; k0 < k_end; k0 += RECQ_MM_TK) {
    const bool more = k0 + RECQ_MM_TK < k_end;
    if (more) RECQ_MM_READ(k0 + RECQ_MM_TK);
    if (buf == 0) {
      RECQ_MM_COMPUTE(0);
      if (more) RECQ_MM_STORE(1);
    } else {
      RECQ_MM_COMPUTE(1);
      if (more) RECQ_MM_STORE(0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    buf ^= 1;
  }
#else
  for (int k0 = k_begin; k0 < k_end; k0 += RECQ_MM_TK) {
    RECQ_MM_READ(k0);
    RECQ_MM_STORE(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    RECQ_MM_COMPUTE(0);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

#if RECQ_ML_SK > 1
  __global float* pb = part + ((size_t)slice * get_global_size(2) / RECQ_ML_SK + batch) * M * N;
#else
  __global RECQ_T* yb = y + (size_t)batch * M * N;
  const __global RECQ_T* cb = c + (size_t)batch * M * c_sm;
  const __global RECQ_T* resb = res + (size_t)batch * M * N;
#endif
  RECQ_MMA_UNROLL for (int i = 0; i < RECQ_MM_MI; ++i) {
    RECQ_MMA_UNROLL for (int j = 0; j < RECQ_MM_NI; ++j) {
      RECQ_MMA_UNROLL for (int r = 0; r < 4; ++r) {
        const int m = m0 + wm0 + i * 16 + g + 8 * (r >> 1);
        const int n = n0 + wn0 + j * 8 + 2 * t + (r & 1);
        if (m >= M || n >= N) continue;
        const float v = acc[i][j][r];
#if RECQ_ML_EPILOGUE == 1 && RECQ_ML_SK == 1
        float e = alpha * v;
        if (c) e += beta * RECQ_LOAD(cb, m * c_sm + n * c_sn);
#if RECQ_ML_RES
        e += RECQ_LOAD(resb, (size_t)m * N + n);
#endif
        RECQ_STORE(yb, (size_t)m * N + n, recq_activate(e, act, act_a, act_b));
#elif RECQ_ML_EPILOGUE == 2 && RECQ_ML_SK == 1
        float e = v + RECQ_LOAD(cb, m * c_sm + n * c_sn);
#if RECQ_ML_RES
        e += RECQ_LOAD(resb, (size_t)m * N + n);
#endif
        RECQ_STORE(yb, (size_t)m * N + n, e);
#elif RECQ_ML_SK > 1
        pb[(size_t)m * N + n] = v;
#else
        RECQ_STORE(yb, (size_t)m * N + n, v);
#endif
      }
    }
  }
}
