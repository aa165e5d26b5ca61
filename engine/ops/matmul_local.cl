// Batched Y[b, M, N] = A[b, M, K] * B[b, K, N] for GPUs, tiled: a
// work-group computes TM rows x TN columns of one batch, staging TK columns
// of A and TK rows of B at a time in local memory; each work-item
// accumulates RM x RN outputs in registers, consecutive (float4 local
// reads; RECQ_ML_CONTIG) or strided by TM/RM and TN/RN.
// `dims` is the batch shape padded to rank 8, `sa`/`sb` the batch strides of
// A and B in elements (0 where broadcast), as for `matmul` (gemm.cl).
// Epilogue (Gemm's): Y = act(alpha * A*B + beta * C[m * c_sm + n * c_sn]
// (+ res)), C optional (NULL), C offset by batch * M * c_sm for each batch;
// MatMul passes alpha 1 and, with a bias or residual Add absorbed, that
// operand. RECQ_ML_RES=1: res, of Y's shape, is added before the activation
// (a residual Add after a bias Add or a Gemm).
// Build options: -DRECQ_ML_TM, _TN, _TK, _RM, _RN, _CONTIG, _VEC, _SK, _DB.
// The work-group has (TN/RN) x (TM/RM) items; TK*TM and TK*TN are multiples
// of four times it. RECQ_ML_CONTIG: an item's RM rows (RN columns) are
// consecutive (1), strided by TM/RM (0), or (2, RM and RN multiples of 4)
// runs of four strided by 4*TM/RM, so that the float4 local reads of a
// warp's consecutive items are consecutive (no bank conflicts).
// RECQ_ML_DB=1 double-buffers the tiles: the next TK step is read from
// global memory into registers while the current one is computed, then
// stored to the other half of local memory (one barrier per step). RECQ_ML_VEC (K and N multiples
// of 4): the tiles are read from global memory as float4. RECQ_ML_SK > 1 splits K into SK slices of
// whole TK steps, for products with too few tiles to fill the device: slice
// s of batch b writes its partial sums to part[s][b][M][N] and
// matmul_local_reduce adds them up and applies the epilogue; y is unused.
// Global size: (ceil(N/TN) * TN/RN, ceil(M/TM) * TM/RM, batch * SK), local
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
// 1: Gemm's epilogue (alpha, beta * C, the activation); 2: Y = A*B + C (a
// Linear layer's bias or a residual: alpha 1, beta 1, no activation); 0:
// MatMul's plain store (the epilogue's per-element code halved MatMul's throughput on the
// H100 even when it did nothing).
#ifndef RECQ_ML_EPILOGUE
#define RECQ_ML_EPILOGUE 0
#endif
#ifndef RECQ_ML_RES
#define RECQ_ML_RES 0
#endif
#ifndef RECQ_ML_CONTIG
#define RECQ_ML_CONTIG 1
#endif
#ifndef RECQ_ML_VEC
#define RECQ_ML_VEC 0
#endif
#ifndef RECQ_ML_SK
#define RECQ_ML_SK 1
#endif
#ifndef RECQ_ML_DB
#define RECQ_ML_DB 0
#endif

#define RECQ_ML_LX (RECQ_ML_TN / RECQ_ML_RN)
#define RECQ_ML_LY (RECQ_ML_TM / RECQ_ML_RM)
#define RECQ_ML_ITEMS (RECQ_ML_LX * RECQ_ML_LY)

__kernel __attribute__((reqd_work_group_size(RECQ_ML_LX, RECQ_ML_LY, 1))) void matmul_local(
    __global const RECQ_T* restrict a, __global const RECQ_T* restrict b,
    __global const RECQ_T* restrict c, __global const RECQ_T* restrict res,
    __global RECQ_T* restrict y, __global float* restrict part,
    int M, int N, int K, int8 dims, int8 sa, int8 sb, float alpha, float beta, int c_sm, int c_sn,
    int act, float act_a, float act_b) {
  // A's tile is written along K by consecutive items: its rows are padded
  // by 4 so that they fall in different local-memory banks.
  __local float as[RECQ_ML_DB + 1][RECQ_ML_TK][RECQ_ML_TM + 4] __attribute__((aligned(16)));
  __local float bs[RECQ_ML_DB + 1][RECQ_ML_TK][RECQ_ML_TN] __attribute__((aligned(16)));
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int tid = ty * RECQ_ML_LX + tx;
  const int n0 = get_group_id(0) * RECQ_ML_TN;
  const int m0 = get_group_id(1) * RECQ_ML_TM;
  const int batch = get_group_id(2) / RECQ_ML_SK;
#if RECQ_ML_SK > 1
  const int slice = get_group_id(2) % RECQ_ML_SK;
  const int chunk = ((K + RECQ_ML_SK - 1) / RECQ_ML_SK + RECQ_ML_TK - 1) / RECQ_ML_TK * RECQ_ML_TK;
  const int k_begin = slice * chunk;
  const int k_end = min(K, k_begin + chunk);
#else
  const int k_begin = 0;
  const int k_end = K;
#endif
  const __global RECQ_T* ab = a + recq_broadcast_offset(batch, dims, sa);
  const __global RECQ_T* bb = b + recq_broadcast_offset(batch, dims, sb);

  float acc[RECQ_ML_RM][RECQ_ML_RN];
#pragma unroll
  for (int i = 0; i < RECQ_ML_RM; ++i) {
#pragma unroll
    for (int j = 0; j < RECQ_ML_RN; ++j) acc[i][j] = 0.0f;
  }

  // A TK step's tiles pass through registers: each item reads NA (NB) of
  // the A_ELEMS (B_ELEMS) elements of A (B) from global memory, then stores
  // them to local memory.
#if RECQ_ML_VEC
#define RECQ_ML_A_ELEMS (RECQ_ML_TK * RECQ_ML_TM / 4)
#define RECQ_ML_B_ELEMS (RECQ_ML_TK * RECQ_ML_TN / 4)
#define RECQ_ML_NA ((RECQ_ML_A_ELEMS + RECQ_ML_ITEMS - 1) / RECQ_ML_ITEMS)
#define RECQ_ML_NB ((RECQ_ML_B_ELEMS + RECQ_ML_ITEMS - 1) / RECQ_ML_ITEMS)
  float4 ra[RECQ_ML_NA], rb[RECQ_ML_NB];
  // A as float4 along K (transposed into as[k][m] when stored), B as
  // float4 along N.
#define RECQ_ML_READ(k0)                                                                    \
  do {                                                                                      \
    _Pragma("unroll") for (int r = 0; r < RECQ_ML_NA; ++r) {                                \
      const int e = tid + r * RECQ_ML_ITEMS;                                                \
      if (RECQ_ML_A_ELEMS % RECQ_ML_ITEMS != 0 && e >= RECQ_ML_A_ELEMS) break;              \
      const int gm = m0 + e / (RECQ_ML_TK / 4), gk = (k0) + (e % (RECQ_ML_TK / 4)) * 4;     \
      ra[r] = gm < M && gk < k_end ? RECQ_LOAD4(ab + (size_t)gm * K + gk, 0) : (float4)(0); \
    }                                                                                       \
    _Pragma("unroll") for (int r = 0; r < RECQ_ML_NB; ++r) {                                \
      const int e = tid + r * RECQ_ML_ITEMS;                                                \
      if (RECQ_ML_B_ELEMS % RECQ_ML_ITEMS != 0 && e >= RECQ_ML_B_ELEMS) break;              \
      const int gk = (k0) + e / (RECQ_ML_TN / 4), gn = n0 + (e % (RECQ_ML_TN / 4)) * 4;     \
      rb[r] = gk < k_end && gn < N ? RECQ_LOAD4(bb + (size_t)gk * N + gn, 0) : (float4)(0); \
    }                                                                                       \
  } while (0)
#define RECQ_ML_STORE(buf)                                                           \
  do {                                                                               \
    _Pragma("unroll") for (int r = 0; r < RECQ_ML_NA; ++r) {                         \
      const int e = tid + r * RECQ_ML_ITEMS;                                         \
      if (RECQ_ML_A_ELEMS % RECQ_ML_ITEMS != 0 && e >= RECQ_ML_A_ELEMS) break;       \
      const int m = e / (RECQ_ML_TK / 4), kq = (e % (RECQ_ML_TK / 4)) * 4;           \
      as[buf][kq][m] = ra[r].x;                                                      \
      as[buf][kq + 1][m] = ra[r].y;                                                  \
      as[buf][kq + 2][m] = ra[r].z;                                                  \
      as[buf][kq + 3][m] = ra[r].w;                                                  \
    }                                                                                \
    _Pragma("unroll") for (int r = 0; r < RECQ_ML_NB; ++r) {                         \
      const int e = tid + r * RECQ_ML_ITEMS;                                         \
      if (RECQ_ML_B_ELEMS % RECQ_ML_ITEMS != 0 && e >= RECQ_ML_B_ELEMS) break;       \
      vstore4(rb[r], 0, &bs[buf][e / (RECQ_ML_TN / 4)][(e % (RECQ_ML_TN / 4)) * 4]); \
    }                                                                                \
  } while (0)
#else
#define RECQ_ML_A_ELEMS (RECQ_ML_TK * RECQ_ML_TM)
#define RECQ_ML_B_ELEMS (RECQ_ML_TK * RECQ_ML_TN)
#define RECQ_ML_NA ((RECQ_ML_A_ELEMS + RECQ_ML_ITEMS - 1) / RECQ_ML_ITEMS)
#define RECQ_ML_NB ((RECQ_ML_B_ELEMS + RECQ_ML_ITEMS - 1) / RECQ_ML_ITEMS)
  float ra[RECQ_ML_NA], rb[RECQ_ML_NB];
  // A read along K (consecutive items, consecutive k), B along N.
#define RECQ_ML_READ(k0)                                                        \
  do {                                                                          \
    _Pragma("unroll") for (int r = 0; r < RECQ_ML_NA; ++r) {                    \
      const int e = tid + r * RECQ_ML_ITEMS;                                    \
      if (RECQ_ML_A_ELEMS % RECQ_ML_ITEMS != 0 && e >= RECQ_ML_A_ELEMS) break;  \
      const int gm = m0 + e / RECQ_ML_TK, gk = (k0) + e % RECQ_ML_TK;           \
      ra[r] = gm < M && gk < k_end ? RECQ_LOAD(ab, (size_t)gm * K + gk) : 0.0f; \
    }                                                                           \
    _Pragma("unroll") for (int r = 0; r < RECQ_ML_NB; ++r) {                    \
      const int e = tid + r * RECQ_ML_ITEMS;                                    \
      if (RECQ_ML_B_ELEMS % RECQ_ML_ITEMS != 0 && e >= RECQ_ML_B_ELEMS) break;  \
      const int gk = (k0) + e / RECQ_ML_TN, gn = n0 + e % RECQ_ML_TN;           \
      rb[r] = gk < k_end && gn < N ? RECQ_LOAD(bb, (size_t)gk * N + gn) : 0.0f; \
    }                                                                           \
  } while (0)
#define RECQ_ML_STORE(buf)                                                     \
  do {                                                                         \
    _Pragma("unroll") for (int r = 0; r < RECQ_ML_NA; ++r) {                   \
      const int e = tid + r * RECQ_ML_ITEMS;                                   \
      if (RECQ_ML_A_ELEMS % RECQ_ML_ITEMS != 0 && e >= RECQ_ML_A_ELEMS) break; \
      as[buf][e % RECQ_ML_TK][e / RECQ_ML_TK] = ra[r];                         \
    }                                                                          \
    _Pragma("unroll") for (int r = 0; r < RECQ_ML_NB; ++r) {                   \
      const int e = tid + r * RECQ_ML_ITEMS;                                   \
      if (RECQ_ML_B_ELEMS % RECQ_ML_ITEMS != 0 && e >= RECQ_ML_B_ELEMS) break; \
      bs[buf][e / RECQ_ML_TN][e % RECQ_ML_TN] = rb[r];                         \
    }                                                                          \
  } while (0)
#endif

  // The row (column) of an item's i-th accumulator row (column) in the tile.
#if RECQ_ML_CONTIG == 2
#define RECQ_ML_ROW(i) (((i) / 4 * RECQ_ML_LY + ty) * 4 + (i) % 4)
#define RECQ_ML_COL(j) (((j) / 4 * RECQ_ML_LX + tx) * 4 + (j) % 4)
#elif RECQ_ML_CONTIG
#define RECQ_ML_ROW(i) (ty * RECQ_ML_RM + (i))
#define RECQ_ML_COL(j) (tx * RECQ_ML_RN + (j))
#else
#define RECQ_ML_ROW(i) (ty + (i)*RECQ_ML_LY)
#define RECQ_ML_COL(j) (tx + (j)*RECQ_ML_LX)
#endif

  // One TK step's products from local-memory half `buf`.
#if RECQ_ML_CONTIG
#define RECQ_ML_LOAD_AB(buf, kk)                                                \
  _Pragma("unroll") for (int q = 0; q < RECQ_ML_RM / 4; ++q)                    \
      vstore4(*(const __local float4*)&as[buf][kk][RECQ_ML_ROW(4 * q)], q, av); \
  _Pragma("unroll") for (int q = 0; q < RECQ_ML_RN / 4; ++q)                    \
      vstore4(*(const __local float4*)&bs[buf][kk][RECQ_ML_COL(4 * q)], q, bv)
#else
#define RECQ_ML_LOAD_AB(buf, kk)                                                              \
  _Pragma("unroll") for (int i = 0; i < RECQ_ML_RM; ++i) av[i] = as[buf][kk][RECQ_ML_ROW(i)]; \
  _Pragma("unroll") for (int j = 0; j < RECQ_ML_RN; ++j) bv[j] = bs[buf][kk][RECQ_ML_COL(j)]
#endif
#define RECQ_ML_COMPUTE(buf)                                               \
  do {                                                                     \
    _Pragma("unroll") for (int kk = 0; kk < RECQ_ML_TK; ++kk) {            \
      float av[RECQ_ML_RM], bv[RECQ_ML_RN];                                \
      RECQ_ML_LOAD_AB(buf, kk);                                            \
      _Pragma("unroll") for (int i = 0; i < RECQ_ML_RM; ++i) {             \
        _Pragma("unroll") for (int j = 0; j < RECQ_ML_RN; ++j) acc[i][j] = \
            fma(av[i], bv[j], acc[i][j]);                                  \
      }                                                                    \
    }                                                                      \
  } while (0)

#if RECQ_ML_DB
  // Double-buffered: step t computes from half t % 2 while the next step's
  // tiles travel from global memory to registers, then to the other half.
  // The barrier after the store also ends every item's reads of the half
  // that the next step overwrites.
  if (k_begin < k_end) {
    RECQ_ML_READ(k_begin);
    RECQ_ML_STORE(0);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int buf = 0;
  for (int k0 = k_begin; k0 < k_end; k0 += RECQ_ML_TK) {
    const bool more = k0 + RECQ_ML_TK < k_end;
    if (more) RECQ_ML_READ(k0 + RECQ_ML_TK);
    if (buf == 0) {
      RECQ_ML_COMPUTE(0);
      if (more) RECQ_ML_STORE(1);
    } else {
      RECQ_ML_COMPUTE(1);
      if (more) RECQ_ML_STORE(0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    buf ^= 1;
  }
#else
  for (int k0 = k_begin; k0 < k_end; k0 += RECQ_ML_TK) {
    RECQ_ML_READ(k0);
    RECQ_ML_STORE(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    RECQ_ML_COMPUTE(0);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

#if RECQ_ML_SK > 1
  // The slice's partial sums, in float whatever the storage.
  __global float* pb = part + ((size_t)slice * get_global_size(2) / RECQ_ML_SK + batch) * M * N;
#else
  __global RECQ_T* yb = y + (size_t)batch * M * N;
  // C of this batch: a full-shape residual moves with it, a bias does not.
  const __global RECQ_T* cb = c + (size_t)batch * M * c_sm;
  const __global RECQ_T* resb = res + (size_t)batch * M * N;
#endif
#pragma unroll
  for (int i = 0; i < RECQ_ML_RM; ++i) {
    const int m = m0 + RECQ_ML_ROW(i);
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < RECQ_ML_RN; ++j) {
      const int n = n0 + RECQ_ML_COL(j);
      if (n >= N) continue;
#if RECQ_ML_EPILOGUE == 1 && RECQ_ML_SK == 1
      float v = alpha * acc[i][j];
      if (c) v += beta * RECQ_LOAD(cb, m * c_sm + n * c_sn);
#if RECQ_ML_RES
      v += RECQ_LOAD(resb, (size_t)m * N + n);
#endif
      RECQ_STORE(yb, (size_t)m * N + n, recq_activate(v, act, act_a, act_b));
#elif RECQ_ML_EPILOGUE == 2 && RECQ_ML_SK == 1
      float v = acc[i][j] + RECQ_LOAD(cb, m * c_sm + n * c_sn);
#if RECQ_ML_RES
      v += RECQ_LOAD(resb, (size_t)m * N + n);
#endif
      RECQ_STORE(yb, (size_t)m * N + n, v);
#elif RECQ_ML_SK > 1
      pb[(size_t)m * N + n] = acc[i][j];
#else
      RECQ_STORE(yb, (size_t)m * N + n, acc[i][j]);
#endif
    }
  }
}

// Finishes a split-K matmul_local: y[i] = the sum of the SK slices' partial
// sums (part [SK][total]), with Gemm's epilogue when `epilogue` is set: y =
// act(alpha * sum + beta * C[m * c_sm + n * c_sn] + res[i]) (C and res
// optional), over `total` = batch * M * N elements of rows of N.
inline float recq_ml_finish(__global const float* restrict part, __global const RECQ_T* restrict c,
                            __global const RECQ_T* restrict res, int i, int total, int N, int SK,
                            int epilogue, float alpha, float beta, int c_sm, int c_sn, int act,
                            float act_a, float act_b) {
  float v = 0.0f;
  for (int s = 0; s < SK; ++s) v += part[(size_t)s * total + i];
  if (epilogue) {
    v *= alpha;
    if (c) v += beta * RECQ_LOAD(c, (i / N) * c_sm + (i % N) * c_sn);
    if (res) v += RECQ_LOAD(res, i);
    v = recq_activate(v, act, act_a, act_b);
  }
  return v;
}

__kernel void matmul_local_reduce(__global const float* restrict part,
                                  __global const RECQ_T* restrict c,
                                  __global const RECQ_T* restrict res, __global RECQ_T* restrict y,
                                  int total, int N, int SK, int epilogue, float alpha, float beta,
                                  int c_sm, int c_sn, int act, float act_a, float act_b) {
  const int i = get_global_id(0);
  if (i >= total) return;
  RECQ_STORE(y, i, recq_ml_finish(part, c, res, i, total, N, SK, epilogue, alpha, beta, c_sm, c_sn,
                                  act, act_a, act_b));
}

#ifndef RECQ_ML_NORM_LOCAL
#define RECQ_ML_NORM_LOCAL 256
#endif

// matmul_local_reduce and the LayerNormalization over the rows of y that
// reads y right after (LoweringContext::NormAfter): a work-group of
// RECQ_ML_NORM_LOCAL items per row finishes the row into y as
// matmul_local_reduce does, then writes z = (y - mean) * rsqrt(var +
// epsilon) * scale + bias (bias optional) with normalization.cl's two
// passes over the values y holds (rounded to y's storage), each item
// keeping its RECQ_ML_NORM_PER elements in registers.
// Global size (total / N * RECQ_ML_NORM_LOCAL); local (RECQ_ML_NORM_LOCAL).
#ifndef RECQ_ML_NORM_PER
#define RECQ_ML_NORM_PER 1
#endif
__kernel void matmul_local_reduce_norm(
    __global const float* restrict part, __global const RECQ_T* restrict c,
    __global const RECQ_T* restrict res, __global RECQ_T* restrict y, int total, int N, int SK,
    int epilogue, float alpha, float beta, int c_sm, int c_sn, int act, float act_a, float act_b,
    __global const RECQ_T* restrict scale, __global const RECQ_T* restrict bias,
    __global RECQ_T* restrict z, float epsilon) {
  __local float red[RECQ_ML_NORM_LOCAL];
  const int lid = get_local_id(0);
  const int row = get_group_id(0) * N;
  float v[RECQ_ML_NORM_PER];
  float sum = 0.0f;
#pragma unroll
  for (int q = 0; q < RECQ_ML_NORM_PER; ++q) {
    const int j = lid + q * RECQ_ML_NORM_LOCAL;
    v[q] = 0.0f;
    if (j >= N) continue;
    RECQ_STORE(y, row + j, recq_ml_finish(part, c, res, row + j, total, N, SK, epilogue, alpha,
                                          beta, c_sm, c_sn, act, act_a, act_b));
    v[q] = RECQ_LOAD(y, row + j);
    sum += v[q];
  }
  const float mean = recq_group_sum(red, lid, RECQ_ML_NORM_LOCAL, sum) / (float)N;
  float sq = 0.0f;
#pragma unroll
  for (int q = 0; q < RECQ_ML_NORM_PER; ++q) {
    const float d = v[q] - mean;
    if (lid + q * RECQ_ML_NORM_LOCAL < N) sq += d * d;
  }
  const float inv = rsqrt(recq_group_sum(red, lid, RECQ_ML_NORM_LOCAL, sq) / (float)N + epsilon);
#pragma unroll
  for (int q = 0; q < RECQ_ML_NORM_PER; ++q) {
    const int j = lid + q * RECQ_ML_NORM_LOCAL;
    if (j >= N) continue;
    const float n = (v[q] - mean) * inv * RECQ_LOAD(scale, j);
    RECQ_STORE(z, row + j, bias ? n + RECQ_LOAD(bias, j) : n);
  }
}
