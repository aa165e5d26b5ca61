// RecurrentSequence (recurrent.h): one time step of ONNX's RNN, GRU or
// LSTM for every (hidden unit j, batch entry b, direction d).
//
// Build options: CELL (0 RNN, 1 GRU, 2 LSTM); PHASE 0 for a whole step (a
// GRU's then has linear_before_reset), or 1 and 2 for the two halves of a
// GRU step with linear_before_reset 0 (1: z and r * h_prev; 2: the
// candidate and the new state); HAS_B, HAS_SEQ (with SEQ_T, int or long),
// HAS_P, HAS_H0, HAS_C0, INPUT_FORGET (LSTM); KSPLIT and UNITS (below).
//
// `scratch` holds five float [D, B, H] arrays: the hidden state of odd and
// even steps (step s reads (s + 1) & 1 and writes s & 1), the cell state
// (updated in place: only its own work-item reads an element), r * h_prev
// and z (GRU, between the two phases). recurrent_init fills the state that
// step 0 reads.

#ifndef CELL
#define CELL 0
#endif
#ifndef PHASE
#define PHASE 0
#endif
#ifndef SEQ_T
#define SEQ_T int
#endif

// The functions of recurrent.h's RecurrentActivationKind.
inline float recq_rec_act(int kind, float a, float b, float x) {
  switch (kind) {
    case 0:
      return fmax(x, 0.0f);
    case 1:
      return tanh(x);
    case 2:
      return 1.0f / (1.0f + exp(-x));
    case 3:
      return a * x + b;
    case 4:
      return x >= 0.0f ? x : a * x;
    case 5:
      return x > a ? x : 0.0f;
    case 6:
      return a * tanh(b * x);
    case 7:
      return clamp(a * x + b, 0.0f, 1.0f);
    case 8:
      return x >= 0.0f ? x : a * (exp(x) - 1.0f);
    case 9:
      return x / (1.0f + fabs(x));
    default:
      return x > 20.0f ? x : log1p(exp(x));
  }
}

// Global size: (D * B * H).
__kernel void recurrent_init(__global const RECQ_T* restrict h0, __global const RECQ_T* restrict c0,
                             __global float* restrict scratch, int dbh) {
  const int i = get_global_id(0);
  float h = 0.0f, c = 0.0f;
#ifdef HAS_H0
  h = RECQ_LOAD(h0, i);
#endif
#ifdef HAS_C0
  c = RECQ_LOAD(c0, i);
#endif
  scratch[dbh + i] = h;
  scratch[2 * dbh + i] = c;
}

#if CELL == 0
#define GATES 1
#define FUNCS 1
#elif CELL == 1
#define GATES 3
#define FUNCS 2
#else
#define GATES 4
#define FUNCS 3
#endif

// The recurrent products a phase needs: gates DOT_FIRST .. DOT_FIRST +
// NDOT - 1 of R times h_prev (r * h_prev in a GRU's second phase).
#if CELL == 1 && PHASE == 1
#define NDOT 2
#define DOT_FIRST 0
#elif CELL == 1 && PHASE == 2
#define NDOT 1
#define DOT_FIRST 2
#else
#define NDOT GATES
#define DOT_FIRST 0
#endif

// KSPLIT > 1 (recurrent_steps_split): a work-group of (UNITS, KSPLIT)
// work-items computes UNITS hidden units, each product split over KSPLIT
// slices of k and summed in local memory. KSPLIT 1: one work-item per
// unit.
#ifndef KSPLIT
#define KSPLIT 1
#endif
#ifndef UNITS
#define UNITS 1
#endif

// Global size: (H, 1, B * D) with KSPLIT 1; (H rounded up to UNITS, KSPLIT,
// B * D) with local size (UNITS, KSPLIT, 1) otherwise. `s` is the step;
// `dims` is (T, B, H, D), `mode` (layout of xw, reverse mask: bit d set
// when direction d walks backwards, state rows of y); the functions of
// direction d are entries d * FUNCS ... of kinds, alphas and betas; clip > 0
// clamps the gates' inputs.
__kernel void recurrent_step(__global const RECQ_T* restrict xw, __global const RECQ_T* restrict rt,
                             __global const RECQ_T* restrict bias,
                             __global const SEQ_T* restrict seq,
                             __global const RECQ_T* restrict peep, __global RECQ_T* restrict y,
                             __global float* restrict scratch, int s, int4 dims, int4 mode,
                             int8 kinds8, float8 alphas8, float8 betas8, float clip) {
  const int j = get_global_id(0), ks = get_local_id(1);
  const int T = dims.x, B = dims.y, H = dims.z, D = dims.w;
  const int b = get_global_id(2) % B, d = get_global_id(2) / B;
  const int layout = mode.x, reverse_mask = mode.y, state_rows = mode.z;
  const int dbh = D * B * H;
  const int unit = (d * B + b) * H;
  __global const float* h_prev = scratch + ((s + 1) & 1) * dbh + unit;
  __global float* h_next = scratch + (s & 1) * dbh + unit;
  __global float* cs = scratch + 2 * dbh + unit;
  __global float* rh = scratch + 3 * dbh + unit;
  __global float* zs = scratch + 4 * dbh + unit;
  int len = T;
#ifdef HAS_SEQ
  len = clamp((int)seq[b], 0, T);
#endif
  // len is the same for the whole work-group (one (b, d) each), so this
  // return leaves no work-item waiting at the barrier below.
  if (s >= len) {
    // Past this entry's sequence: the state stays, Y is zero.
#if PHASE == 1
    return;
#else
    if (ks != 0 || j >= H) return;
    RECQ_STORE(y, ((s * D + d) * B + b) * H + j, 0.0f);
    const float h = h_prev[j];
    h_next[j] = h;
    if (s == T - 1) {
      if (state_rows >= 1) RECQ_STORE(y, ((T * D + d) * B + b) * H + j, h);
      if (state_rows >= 2) RECQ_STORE(y, (((T + 1) * D + d) * B + b) * H + j, cs[j]);
    }
    return;
#endif
  }
  const int gh = GATES * H;
  float acc[NDOT];
  for (int g = 0; g < NDOT; ++g) acc[g] = 0.0f;
  if (j < H) {
#if CELL == 1 && PHASE == 2
    __global const float* v = rh;
#else
    __global const float* v = h_prev;
#endif
    __global const RECQ_T* r = rt + (long)d * H * gh + DOT_FIRST * H + j;
    for (int k = ks; k < H; k += KSPLIT) {
      const float vk = v[k];
      for (int g = 0; g < NDOT; ++g) acc[g] += vk * RECQ_LOAD(r, k * gh + g * H);
    }
  }
#if KSPLIT > 1
  __local float part[KSPLIT][NDOT][UNITS];
  const int lj = get_local_id(0);
  for (int g = 0; g < NDOT; ++g) part[ks][g][lj] = acc[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (ks != 0 || j >= H) return;
  for (int g = 0; g < NDOT; ++g) {
    float sum = 0.0f;
    for (int q = 0; q < KSPLIT; ++q) sum += part[q][g][lj];
    acc[g] = sum;
  }
#else
  if (j >= H) return;
#endif

  const int t = ((reverse_mask >> d) & 1) ? len - 1 - s : s;
  __global const RECQ_T* x =
      xw + (long)(layout == 0 ? t * B + b : b * T + t) * (D * gh) + d * gh + j;
  float wb[GATES], rb[GATES];
  for (int g = 0; g < GATES; ++g) {
#ifdef HAS_B
    wb[g] = RECQ_LOAD(bias, d * 2 * gh + g * H + j);
    rb[g] = RECQ_LOAD(bias, d * 2 * gh + gh + g * H + j);
#else
    wb[g] = 0.0f;
    rb[g] = 0.0f;
#endif
  }
  int kinds[8];
  float alphas[8], betas[8];
  vstore8(kinds8, 0, kinds);
  vstore8(alphas8, 0, alphas);
  vstore8(betas8, 0, betas);
  const int fi = d * FUNCS;
#define CLIP(v) (clip > 0.0f ? clamp((v), -clip, clip) : (v))
#define ACT(f, v) recq_rec_act(kinds[fi + (f)], alphas[fi + (f)], betas[fi + (f)], CLIP(v))
  float h;
#if CELL == 0
  h = ACT(0, RECQ_LOAD(x, 0) + acc[0] + wb[0] + rb[0]);
#elif CELL == 1 && PHASE == 0
  const float z = ACT(0, RECQ_LOAD(x, 0) + acc[0] + wb[0] + rb[0]);
  const float rr = ACT(0, RECQ_LOAD(x, H) + acc[1] + wb[1] + rb[1]);
  const float cand = ACT(1, RECQ_LOAD(x, 2 * H) + rr * (acc[2] + rb[2]) + wb[2]);
  h = (1.0f - z) * cand + z * h_prev[j];
#elif CELL == 1 && PHASE == 1
  zs[j] = ACT(0, RECQ_LOAD(x, 0) + acc[0] + wb[0] + rb[0]);
  rh[j] = ACT(0, RECQ_LOAD(x, H) + acc[1] + wb[1] + rb[1]) * h_prev[j];
  return;
#elif CELL == 1 && PHASE == 2
  const float cand = ACT(1, RECQ_LOAD(x, 2 * H) + acc[0] + wb[2] + rb[2]);
  const float z = zs[j];
  h = (1.0f - z) * cand + z * h_prev[j];
#else
  const float c_prev = cs[j];
  float pi = 0.0f, po = 0.0f, pf = 0.0f;
#ifdef HAS_P
  pi = RECQ_LOAD(peep, d * 3 * H + j);
  po = RECQ_LOAD(peep, d * 3 * H + H + j);
  pf = RECQ_LOAD(peep, d * 3 * H + 2 * H + j);
#endif
  const float gi = ACT(0, RECQ_LOAD(x, 0) + acc[0] + wb[0] + rb[0] + pi * c_prev);
#ifdef INPUT_FORGET
  const float gf = 1.0f - gi;
#else
  const float gf = ACT(0, RECQ_LOAD(x, 2 * H) + acc[2] + wb[2] + rb[2] + pf * c_prev);
#endif
  const float gc = ACT(1, RECQ_LOAD(x, 3 * H) + acc[3] + wb[3] + rb[3]);
  const float c_new = gf * c_prev + gi * gc;
  const float go = ACT(0, RECQ_LOAD(x, H) + acc[1] + wb[1] + rb[1] + po * c_new);
  h = go * recq_rec_act(kinds[fi + 2], alphas[fi + 2], betas[fi + 2], c_new);
  cs[j] = c_new;
#endif
#undef ACT
#undef CLIP
#if PHASE != 1
  RECQ_STORE(y, ((t * D + d) * B + b) * H + j, h);
  h_next[j] = h;
  if (s == T - 1) {
    if (state_rows >= 1) RECQ_STORE(y, ((T * D + d) * B + b) * H + j, h);
    if (state_rows >= 2) RECQ_STORE(y, (((T + 1) * D + d) * B + b) * H + j, cs[j]);
  }
#endif
}
