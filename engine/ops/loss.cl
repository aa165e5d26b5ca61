// NegativeLogLikelihoodLoss, built per element type of the scores: KIND and
// T as TypedKind / TypedStorage (LOAD, STORE and V from common.cl), IDX_T
// the labels' type (long or int), HAS_WEIGHT 1 with a weight per class,
// HAS_II 1 with an ignore_index. x is viewed as [N, C, D] (D the product of
// the trailing dimensions) and target as [N, D].

// The loss of target element i and its weight (both 0 for an ignored
// label); labels outside [0, C) are clamped.
inline void recq_nll_term(__global const T* restrict x, __global const IDX_T* restrict target,
                          __global const T* restrict w, int i, int C, int D, long ii, V* loss,
                          V* weight) {
  const int n = i / D;
  const int d = i - n * D;
  long t = (long)target[i];
#if HAS_II
  if (t == ii) {
    *loss = (V)0;
    *weight = (V)0;
    return;
  }
#endif
  t = clamp(t, 0L, (long)(C - 1));
#if HAS_WEIGHT
  const V wt = LOAD(w, (int)t);
#else
  const V wt = (V)1;
#endif
  *loss = -LOAD(x, (n * C + (int)t) * D + d) * wt;
  *weight = wt;
}

// reduction "none": y[i] = the loss of target element i. Global size:
// (N * D).
__kernel void nll_loss_none(__global const T* restrict x, __global const IDX_T* restrict target,
                            __global const T* restrict w, __global T* restrict y, int C, int D,
                            long ii) {
  const int i = get_global_id(0);
  V loss, weight;
  recq_nll_term(x, target, w, i, C, D, ii, &loss, &weight);
  STORE(loss, y, i);
}

// reduction "sum" (NLL_MEAN 0) or "mean" (NLL_MEAN 1, the sum of the
// losses over the sum of their weights) of `total` (N * D) elements into
// y[0]. One work-group of NLL_GROUP (a power of two) work-items, each
// summing every NLL_GROUP-th element, then a tree in local memory. Built
// only with NLL_GROUP given.
#ifdef NLL_GROUP
__kernel void nll_loss_reduce(__global const T* restrict x, __global const IDX_T* restrict target,
                              __global const T* restrict w, __global T* restrict y, int C, int D,
                              long ii, int total) {
  __local V losses[NLL_GROUP];
  __local V weights[NLL_GROUP];
  const int lid = get_local_id(0);
  V l = (V)0, s = (V)0;
  for (int i = lid; i < total; i += NLL_GROUP) {
    V loss, weight;
    recq_nll_term(x, target, w, i, C, D, ii, &loss, &weight);
    l += loss;
    s += weight;
  }
  losses[lid] = l;
  weights[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = NLL_GROUP / 2; k > 0; k >>= 1) {
    if (lid < k) {
      losses[lid] += losses[lid + k];
      weights[lid] += weights[lid + k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
#if NLL_MEAN
    STORE(losses[0] / weights[0], y, 0);
#else
    STORE(losses[0], y, 0);
#endif
  }
}
#endif  // NLL_GROUP
