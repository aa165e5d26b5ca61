// Convolution as an implicit GEMM, for GPUs. Per group g:
//   Y[n][g*OCg + m][p] = sum_k Wt[g][k][m] * Xcol[k][(n, p)],
// with k = (c, kh, kw) over Kg = C/groups * KH * KW and the columns (n, p)
// over N * OH * OW (the batch folds into the columns). Xcol is never
// stored: each tile of it is gathered from X as it is staged.
//
// A work-group computes TM output channels x TN columns, staging TK rows of
// Wt and Xcol at a time in local memory; each work-item accumulates RM x RN
// outputs in registers, either strided by TM/RM and TN/RN (the local reads
// of a warp are broadcasts or consecutive and the stores coalesce) or
// consecutive (float4 local reads; RECQ_IG_CONTIG).
// Dimension 2 splits K into SK slices: with SK == 1 the kernel adds the
// bias and the residual and applies the activation itself; with SK > 1
// each slice writes its partial sums to `part` ([SK][Y's elements]) and
// conv2d_igemm_reduce finishes.
//
// Build options: -DRECQ_IG_TM, _TN, _TK, _RM, _RN (tile), -DRECQ_IG_KH,
// _KW (kernel size), -DRECQ_IG_SK (slices of K). The work-group has
// (TN/RN) x (TM/RM) items, a multiple of TN, and TK*TM and TK*TN are
// multiples of it.
// RECQ_IG_MMA: the products on matrix units (common.cl's matrix-unit
// helpers; emulated without RECQ_MM_PTX), a one-dimensional work-group of
// warps each owning WM x WN of the tile as (WM/16) x (WN/8) mma tiles
// (matmul_mma.cl's fragments, with A read from the transposed Wt tile);
// RM, RN and CONTIG do not apply. Build options -DRECQ_IG_WM, _WN.
// `wt` holds the weights packed by the lowering as [groups][Kg][OCgp], OCgp
// being OCg rounded up to TM, zero past OCg, K ordered as RECQ_IG_KC says.
// RECQ_IG_STAGES (with RECQ_IG_MMA; default 1): above 1, that many stages
// of both tiles in local memory, filled STAGES - 1 steps ahead through
// common.cl's RECQ_CP_ASYNC copies (cp.async where the instructions run),
// instead of the one tile staged through registers.
// Global size: (ceil(N*OH*OW / TN) * TN/RN, groups * OCgp/TM * TM/RM, SK),
// local (TN/RN, TM/RM, 1).
#ifndef RECQ_IG_TM
#define RECQ_IG_TM 64
#endif
#ifndef RECQ_IG_TN
#define RECQ_IG_TN 64
#endif
#ifndef RECQ_IG_TK
#define RECQ_IG_TK 16
#endif
#ifndef RECQ_IG_RM
#define RECQ_IG_RM 4
#endif
#ifndef RECQ_IG_RN
#define RECQ_IG_RN 4
#endif
#ifndef RECQ_IG_KH
#define RECQ_IG_KH 3
#endif
#ifndef RECQ_IG_KW
#define RECQ_IG_KW 3
#endif
#ifndef RECQ_IG_SK
#define RECQ_IG_SK 1
#endif
// 1: each item's RM rows and RN columns are consecutive and read from local
// memory as float4s (RM and RN multiples of 4); 0: strided by TM/RM and
// TN/RN, read as scalars.
#ifndef RECQ_IG_CONTIG
#define RECQ_IG_CONTIG 0
#endif

#ifndef RECQ_IG_MMA
#define RECQ_IG_MMA 0
#endif
#ifndef RECQ_IG_STAGES
#define RECQ_IG_STAGES 1
#endif
#if RECQ_IG_STAGES > 1 && !RECQ_IG_MMA
#error "RECQ_IG_STAGES above 1 needs RECQ_IG_MMA"
#endif
// RECQ_IG_KC: K runs over the kernel's taps outermost and the channels
// innermost, k = (kh * KW + kw) * C/groups + c, with `wt` packed so. The
// lowering sets it where C/groups is a multiple of TK: then a TK step
// reads one tap of TK channels, and each item finds its column's input
// position and bounds once per step instead of per element.
#ifndef RECQ_IG_KC
#define RECQ_IG_KC 0
#endif

#if RECQ_IG_MMA
#define RECQ_IG_WARPS_N (RECQ_IG_TN / RECQ_IG_WN)
#define RECQ_IG_ITEMS (32 * (RECQ_IG_TM / RECQ_IG_WM) * RECQ_IG_WARPS_N)
#define RECQ_IG_MI (RECQ_IG_WM / 16)
#define RECQ_IG_NI (RECQ_IG_WN / 8)
// Padded rows: a warp's fragment reads (4 rows by 8 columns of either
// tile) fall in 32 distinct banks.
#define RECQ_IG_APAD (RECQ_IG_TM + 8)
#define RECQ_IG_BPAD (RECQ_IG_TN + 8)
#define RECQ_IG_GROUP RECQ_IG_ITEMS, 1, 1
#else
#define RECQ_IG_LX (RECQ_IG_TN / RECQ_IG_RN)
#define RECQ_IG_LY (RECQ_IG_TM / RECQ_IG_RM)
#define RECQ_IG_ITEMS (RECQ_IG_LX * RECQ_IG_LY)
#define RECQ_IG_APAD RECQ_IG_TM
#define RECQ_IG_BPAD RECQ_IG_TN
#define RECQ_IG_GROUP RECQ_IG_LX, RECQ_IG_LY, 1
#endif
#define RECQ_IG_KHW (RECQ_IG_KH * RECQ_IG_KW)

__kernel __attribute__((reqd_work_group_size(RECQ_IG_GROUP))) void conv2d_igemm_gpu(
    __global const RECQ_T* restrict x, __global const RECQ_T* restrict wt,
    __global const RECQ_T* restrict bias, __global const RECQ_T* restrict r,
    __global RECQ_T* restrict y, __global float* restrict part, int N, int C, int H, int W,
    int OC, int OH, int OW, int SH, int SW, int PT, int PL, int DH, int DW, int groups, int act,
    float act_a, float act_b) {
#if RECQ_IG_STAGES > 1
  __local float as_st[RECQ_IG_STAGES][RECQ_IG_TK][RECQ_IG_APAD] __attribute__((aligned(16)));
  __local float bs_st[RECQ_IG_STAGES][RECQ_IG_TK][RECQ_IG_BPAD] __attribute__((aligned(16)));
#else
  __local float as[RECQ_IG_TK][RECQ_IG_APAD] __attribute__((aligned(16)));
  __local float bs[RECQ_IG_TK][RECQ_IG_BPAD] __attribute__((aligned(16)));
#endif
#if RECQ_IG_MMA
  const int tid = get_local_id(0);
  const int lane = tid & 31, warp = tid >> 5;
  const int lg = lane >> 2, lt = lane & 3;  // the lane's group and place in it
  const int wm0 = (warp / RECQ_IG_WARPS_N) * RECQ_IG_WM;
  const int wn0 = (warp % RECQ_IG_WARPS_N) * RECQ_IG_WN;
#else
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int tid = ty * RECQ_IG_LX + tx;
#endif
  const int cpg = C / groups;
  const int ocg = OC / groups;
  const int ocgp = (ocg + RECQ_IG_TM - 1) / RECQ_IG_TM * RECQ_IG_TM;
  const int kg = cpg * RECQ_IG_KHW;
  const int tiles_m = ocgp / RECQ_IG_TM;
  const int g = get_group_id(1) / tiles_m;
  const int m0 = (get_group_id(1) % tiles_m) * RECQ_IG_TM;
  const int n0 = get_group_id(0) * RECQ_IG_TN;
  const int ohw = OH * OW;
  const int np = N * ohw;

  // The K range of this slice, in whole TK steps.
#if RECQ_IG_SK > 1
  const int slice = get_group_id(2);
  const int chunk = ((kg + RECQ_IG_SK - 1) / RECQ_IG_SK + RECQ_IG_TK - 1) / RECQ_IG_TK * RECQ_IG_TK;
  const int kbeg = min(kg, slice * chunk);
  const int kend = min(kg, kbeg + chunk);
#else
  const int kbeg = 0;
  const int kend = kg;
#endif

  // The column this item gathers while staging Xcol, fixed for the loop.
  const int bj = tid % RECQ_IG_TN;
  const int bk0 = tid / RECQ_IG_TN;
  const int bcol = n0 + bj;
  const bool bvalid = bcol < np;
  int ih0 = 0, iw0 = 0;
  const __global RECQ_T* xg = x;
  if (bvalid) {
    const int bn = bcol / ohw;
    const int bp = bcol - bn * ohw;
    const int oh = bp / OW;
    ih0 = oh * SH - PT;
    iw0 = (bp - oh * OW) * SW - PL;
    xg = x + ((size_t)bn * C + (size_t)g * cpg) * H * W;
  }
  const __global RECQ_T* wg = wt + (size_t)g * kg * ocgp + m0;

#if RECQ_IG_MMA
  float acc[RECQ_IG_MI][RECQ_IG_NI][4];
#pragma unroll
  for (int i = 0; i < RECQ_IG_MI; ++i) {
#pragma unroll
    for (int j = 0; j < RECQ_IG_NI; ++j) {
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;
    }
  }
#else
  float acc[RECQ_IG_RM][RECQ_IG_RN];
#pragma unroll
  for (int i = 0; i < RECQ_IG_RM; ++i) {
#pragma unroll
    for (int j = 0; j < RECQ_IG_RN; ++j) acc[i][j] = 0.0f;
  }
#endif

  // RECQ_IG_GATHER_B(kf, PUT): this item's RECQ_IG_PB elements of the Xcol
  // tile of the step at kf, each handed to PUT(q, src, ok): its row in the
  // tile is bk0 + q * BSTEP, its source src where ok (else a zero: padding,
  // past K or past the columns).
#define RECQ_IG_PB (RECQ_IG_TK * RECQ_IG_TN / RECQ_IG_ITEMS)
#define RECQ_IG_BSTEP (RECQ_IG_ITEMS / RECQ_IG_TN)
#if RECQ_IG_KC
  // The step's tap and first channel, the same for every item.
#define RECQ_IG_GATHER_B(kf, PUT)                                                              \
  do {                                                                                         \
    const int tap_ = (kf) / cpg;                                                               \
    const int kh_ = tap_ / RECQ_IG_KW;                                                         \
    const int ih_ = ih0 + kh_ * DH;                                                            \
    const int iw_ = iw0 + (tap_ - kh_ * RECQ_IG_KW) * DW;                                      \
    const bool ok_ = bvalid && ih_ >= 0 && ih_ < H && iw_ >= 0 && iw_ < W;                     \
    const __global RECQ_T* src_ =                                                              \
        ok_ ? xg + ((size_t)((kf) - tap_ * cpg + bk0) * H + ih_) * W + iw_ : x;                \
    const size_t step_ = ok_ ? (size_t)RECQ_IG_BSTEP * H * W : 0;                              \
    _Pragma("unroll") for (int q = 0; q < RECQ_IG_PB; ++q) PUT(q, src_ + q * step_, ok_);      \
  } while (0)
#else
#define RECQ_IG_GATHER_B(kf, PUT)                                                              \
  do {                                                                                         \
    _Pragma("unroll") for (int q = 0; q < RECQ_IG_PB; ++q) {                                   \
      const int k_ = (kf) + bk0 + q * RECQ_IG_BSTEP;                                           \
      bool ok_ = bvalid && k_ < kend;                                                          \
      const __global RECQ_T* src_ = x;                                                         \
      if (ok_) {                                                                               \
        const int c_ = k_ / RECQ_IG_KHW;                                                       \
        const int t_ = k_ - c_ * RECQ_IG_KHW;                                                  \
        const int kh_ = t_ / RECQ_IG_KW;                                                       \
        const int ih_ = ih0 + kh_ * DH;                                                        \
        const int iw_ = iw0 + (t_ - kh_ * RECQ_IG_KW) * DW;                                    \
        ok_ = ih_ >= 0 && ih_ < H && iw_ >= 0 && iw_ < W;                                      \
        if (ok_) src_ = xg + ((size_t)c_ * H + ih_) * W + iw_;                                 \
      }                                                                                        \
      PUT(q, src_, ok_);                                                                       \
    }                                                                                          \
  } while (0)
#endif

#if RECQ_IG_STAGES > 1
  // Local stages: the first STAGES - 1 steps are requested before the loop;
  // each step waits for its own, and after the barrier (which also ends
  // every read of the stage computed last) requests the step STAGES - 1
  // ahead into that stage. Wt's rows are contiguous along the output
  // channels: float4 copies (TM and OCgp are multiples of 4).
#define RECQ_IG_A4 (RECQ_IG_TK * RECQ_IG_TM / 4)
#define RECQ_IG_FILL_B(q, src, ok) \
  RECQ_CP_ASYNC4(&bs_st[fill_st][bk0 + (q) * RECQ_IG_BSTEP][bj], (src), (ok) ? 4 : 0)
#define RECQ_IG_FILL(st, kf)                                                                   \
  do {                                                                                         \
    const int fill_st = (st);                                                                  \
    _Pragma("unroll") for (int q = 0; q < (RECQ_IG_A4 + RECQ_IG_ITEMS - 1) / RECQ_IG_ITEMS;    \
                           ++q) {                                                              \
      const int e = tid + q * RECQ_IG_ITEMS;                                                   \
      if (RECQ_IG_A4 % RECQ_IG_ITEMS != 0 && e >= RECQ_IG_A4) break;                           \
      const int row = e / (RECQ_IG_TM / 4), col = (e % (RECQ_IG_TM / 4)) * 4;                  \
      const bool ok = (kf) + row < kend;                                                       \
      RECQ_CP_ASYNC16(&as_st[fill_st][row][col], ok ? wg + (size_t)((kf) + row) * ocgp + col : wg, \
                      ok ? 16 : 0);                                                            \
    }                                                                                          \
    RECQ_IG_GATHER_B((kf), RECQ_IG_FILL_B);                                                    \
  } while (0)
#if RECQ_IG_STAGES == 2
#define RECQ_IG_WAIT() RECQ_CP_WAIT(0)
#elif RECQ_IG_STAGES == 3
#define RECQ_IG_WAIT() RECQ_CP_WAIT(1)
#else
#define RECQ_IG_WAIT() RECQ_CP_WAIT(2)
#endif
  for (int s = 0; s < RECQ_IG_STAGES - 1; ++s) {
    const int kf = kbeg + s * RECQ_IG_TK;
    if (kf < kend) RECQ_IG_FILL(s, kf);
    RECQ_CP_COMMIT();
  }
  int st = 0;
  for (int k0 = kbeg; k0 < kend; k0 += RECQ_IG_TK) {
    RECQ_IG_WAIT();
    barrier(CLK_LOCAL_MEM_FENCE);
    const int kf = k0 + (RECQ_IG_STAGES - 1) * RECQ_IG_TK;
    if (kf < kend) RECQ_IG_FILL(st == 0 ? RECQ_IG_STAGES - 1 : st - 1, kf);
    RECQ_CP_COMMIT();
    __local float(*as)[RECQ_IG_APAD] = as_st[st];
    __local float(*bs)[RECQ_IG_BPAD] = bs_st[st];
    st = st == RECQ_IG_STAGES - 1 ? 0 : st + 1;
#else
  // Staging is software-pipelined: the global loads of the next TK step
  // go to registers before the current step's products, so that their
  // latency hides behind the FMAs, and are stored to local memory after.
  // Each item stages RECQ_IG_PA elements of Wt and RECQ_IG_PB of Xcol. The
  // first pass (k0 = kbeg - TK) only fetches; the last only computes.
#define RECQ_IG_PA (RECQ_IG_TK * RECQ_IG_TM / RECQ_IG_ITEMS)
#define RECQ_IG_LOAD_B(q, src, ok) pb[q] = (ok) ? RECQ_LOAD((src), 0) : 0.0f
  float pa[RECQ_IG_PA], pb[RECQ_IG_PB];
  for (int k0 = kbeg - RECQ_IG_TK; k0 < kend; k0 += RECQ_IG_TK) {
    if (k0 >= kbeg) {
#pragma unroll
      for (int q = 0; q < RECQ_IG_PA; ++q) {
        const int e = tid + q * RECQ_IG_ITEMS;
        as[e / RECQ_IG_TM][e % RECQ_IG_TM] = pa[q];
      }
#pragma unroll
      for (int q = 0; q < RECQ_IG_PB; ++q) bs[bk0 + q * RECQ_IG_BSTEP][bj] = pb[q];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int kf = k0 + RECQ_IG_TK;  // the step to fetch
    if (kf < kend) {
#pragma unroll
      for (int q = 0; q < RECQ_IG_PA; ++q) {
        const int e = tid + q * RECQ_IG_ITEMS;
        const int k = kf + e / RECQ_IG_TM;
        pa[q] = k < kend ? RECQ_LOAD(wg, (size_t)k * ocgp + e % RECQ_IG_TM) : 0.0f;
      }
      RECQ_IG_GATHER_B(kf, RECQ_IG_LOAD_B);
    }
    if (k0 < kbeg) continue;
#endif
#if RECQ_IG_MMA && defined(RECQ_MM_PTX)
    // The step's products into a zeroed partial sum, added to the fp32
    // accumulators once per step (matmul_mma.cl's RECQ_MM_COMPUTE).
    float p_[RECQ_IG_MI][RECQ_IG_NI][4];
#pragma unroll
    for (int i = 0; i < RECQ_IG_MI; ++i) {
#pragma unroll
      for (int j = 0; j < RECQ_IG_NI; ++j) {
#pragma unroll
        for (int q = 0; q < 4; ++q) p_[i][j][q] = 0.0f;
      }
    }
#pragma unroll
    for (int kk = 0; kk < RECQ_IG_TK; kk += 8) {
      uint ah[RECQ_IG_MI][4], at[RECQ_IG_MI][4], bh[RECQ_IG_NI][2], bt[RECQ_IG_NI][2];
#pragma unroll
      for (int i = 0; i < RECQ_IG_MI; ++i) {
        const int r0 = wm0 + i * 16 + lg;
        const float a[4] = {as[kk + lt][r0], as[kk + lt][r0 + 8], as[kk + lt + 4][r0],
                            as[kk + lt + 4][r0 + 8]};
#pragma unroll
        for (int q = 0; q < 4; ++q) RECQ_TF32_SPLIT(a[q], ah[i][q], at[i][q]);
      }
#pragma unroll
      for (int j = 0; j < RECQ_IG_NI; ++j) {
        const int c0 = wn0 + j * 8 + lg;
        const float b[2] = {bs[kk + lt][c0], bs[kk + lt + 4][c0]};
#pragma unroll
        for (int q = 0; q < 2; ++q) RECQ_TF32_SPLIT(b[q], bh[j][q], bt[j][q]);
      }
#pragma unroll
      for (int i = 0; i < RECQ_IG_MI; ++i) {
#pragma unroll
        for (int j = 0; j < RECQ_IG_NI; ++j) RECQ_MMA3_UNIT(p_[i][j], ah[i], at[i], bh[j], bt[j]);
      }
    }
#pragma unroll
    for (int i = 0; i < RECQ_IG_MI; ++i) {
#pragma unroll
      for (int j = 0; j < RECQ_IG_NI; ++j) {
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] += p_[i][j][q];
      }
    }
#elif RECQ_IG_MMA
    // Emulated: each accumulator's sum from the tiles, as the unit sums it.
    for (int i = 0; i < RECQ_IG_MI; ++i) {
      for (int j = 0; j < RECQ_IG_NI; ++j) {
        for (int q = 0; q < 4; ++q) {
          const int row = wm0 + i * 16 + lg + 8 * (q >> 1);
          const int col = wn0 + j * 8 + 2 * lt + (q & 1);
          float sum = acc[i][j][q];
          for (int kk = 0; kk < RECQ_IG_TK; ++kk) sum += recq_tf32x3_product(as[kk][row], bs[kk][col]);
          acc[i][j][q] = sum;
        }
      }
    }
#else
#pragma unroll
    for (int kk = 0; kk < RECQ_IG_TK; ++kk) {
      float a[RECQ_IG_RM], b[RECQ_IG_RN];
#if RECQ_IG_CONTIG
      // Each item's rows and columns are consecutive: float4 local loads.
      const __local float4* a4 = (const __local float4*)&as[kk][ty * RECQ_IG_RM];
      const __local float4* b4 = (const __local float4*)&bs[kk][tx * RECQ_IG_RN];
#pragma unroll
      for (int q = 0; q < RECQ_IG_RM / 4; ++q) vstore4(a4[q], q, a);
#pragma unroll
      for (int q = 0; q < RECQ_IG_RN / 4; ++q) vstore4(b4[q], q, b);
#else
#pragma unroll
      for (int i = 0; i < RECQ_IG_RM; ++i) a[i] = as[kk][ty + i * RECQ_IG_LY];
#pragma unroll
      for (int j = 0; j < RECQ_IG_RN; ++j) b[j] = bs[kk][tx + j * RECQ_IG_LX];
#endif
#pragma unroll
      for (int i = 0; i < RECQ_IG_RM; ++i) {
#pragma unroll
        for (int j = 0; j < RECQ_IG_RN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
      }
    }
#endif
#if RECQ_IG_STAGES == 1
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  // The epilogue, per accumulator: its output channel m (within the group)
  // and column col.
#if RECQ_IG_MMA
#define RECQ_IG_STORE_ALL                                                 \
  RECQ_MMA_UNROLL for (int i = 0; i < RECQ_IG_MI; ++i) {                  \
    RECQ_MMA_UNROLL for (int j = 0; j < RECQ_IG_NI; ++j) {                \
      RECQ_MMA_UNROLL for (int q = 0; q < 4; ++q) {                       \
        const int m = m0 + wm0 + i * 16 + lg + 8 * (q >> 1);              \
        const int col = n0 + wn0 + j * 8 + 2 * lt + (q & 1);              \
        RECQ_IG_STORE(m, col, acc[i][j][q]);                              \
      }                                                                   \
    }                                                                     \
  }
#elif RECQ_IG_CONTIG
#define RECQ_IG_STORE_ALL                                                 \
  _Pragma("unroll") for (int i = 0; i < RECQ_IG_RM; ++i) {                \
    _Pragma("unroll") for (int j = 0; j < RECQ_IG_RN; ++j) {              \
      RECQ_IG_STORE(m0 + ty * RECQ_IG_RM + i, n0 + tx * RECQ_IG_RN + j, acc[i][j]); \
    }                                                                     \
  }
#else
#define RECQ_IG_STORE_ALL                                                 \
  _Pragma("unroll") for (int i = 0; i < RECQ_IG_RM; ++i) {                \
    _Pragma("unroll") for (int j = 0; j < RECQ_IG_RN; ++j) {              \
      RECQ_IG_STORE(m0 + ty + i * RECQ_IG_LY, n0 + tx + j * RECQ_IG_LX, acc[i][j]); \
    }                                                                     \
  }
#endif
#if RECQ_IG_SK > 1
#define RECQ_IG_FINISH(at, oc, v) part[(size_t)get_group_id(2) * N * OC * ohw + (at)] = (v)
#else
#define RECQ_IG_FINISH(at, oc, v)                                         \
  do {                                                                    \
    float o = (v) + (bias ? RECQ_LOAD(bias, (oc)) : 0.0f);                \
    if (r) o += RECQ_LOAD(r, (at));                                       \
    RECQ_STORE(y, (at), recq_activate(o, act, act_a, act_b));             \
  } while (0)
#endif
#define RECQ_IG_STORE(m, col, v)                                          \
  do {                                                                    \
    if ((m) < ocg && (col) < np) {                                        \
      const int n_ = (col) / ohw;                                         \
      const int oc_ = g * ocg + (m);                                      \
      const size_t at_ = ((size_t)n_ * OC + oc_) * ohw + ((col) - n_ * ohw); \
      RECQ_IG_FINISH(at_, oc_, v);                                        \
    }                                                                     \
  } while (0)
  RECQ_IG_STORE_ALL
}

// Finishes a split-K conv2d_igemm_gpu: Y = act(sum of the SK partial sums +
// bias (+ R)). Global size: Y's elements rounded up to the local size.
__kernel void conv2d_igemm_reduce(__global const float* restrict part,
                                  __global const RECQ_T* restrict bias,
                                  __global const RECQ_T* restrict r, __global RECQ_T* restrict y,
                                  int total, int OC, int OHW, int SK, int act, float act_a,
                                  float act_b) {
  const int i = get_global_id(0);
  if (i >= total) return;
  float v = 0.0f;
  for (int s = 0; s < SK; ++s) v += part[(size_t)s * total + i];
  if (bias) v += RECQ_LOAD(bias, (i / OHW) % OC);
  if (r) v += RECQ_LOAD(r, i);
  RECQ_STORE(y, i, recq_activate(v, act, act_a, act_b));
}
