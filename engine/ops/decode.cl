// The decode-loop kernels (decode.cc): the state layout is engine/ops/decode.h's.
// Positions are clamped into [0, length) so that no index leaves its buffer
// whatever the state holds.

#define POS(state, length) clamp((long)(state)[0], 0L, (long)(length)-1)

// ids[i] = token[position + i]; global size rows.
__kernel void decode_token(__global const long* restrict state, __global long* restrict ids,
                           int length, int rows) {
  const int i = get_global_id(0);
  if (i < rows) ids[i] = state[4 + min(POS(state, length) + i, (long)length - 1)];
}

// out[i] = position + i; global size rows (1 for the step counter).
__kernel void decode_position(__global const long* restrict state, __global long* restrict out,
                              int length, int rows) {
  const int i = get_global_id(0);
  if (i < rows) out[i] = min(POS(state, length) + i, (long)length - 1);
}

// mask[j] = j < position + rows; global size length.
__kernel void decode_mask(__global const long* restrict state, __global long* restrict mask,
                          int length, int rows) {
  const int j = get_global_id(0);
  if (j < length) mask[j] = j < POS(state, length) + rows ? 1 : 0;
}

// cache[h, position + s, d] = x[offset + h * stride_h + s * stride_s + d *
// stride_d] for s < rows (rows [position, position + rows) clamped into the
// cache); global size heads * rows * dim.
__kernel void kv_cache_write(__global const float* restrict x, __global const long* restrict state,
                             __global float* restrict cache, int heads, int length, int dim,
                             int offset, int stride_h, int stride_d, int rows, int stride_s) {
  const int i = get_global_id(0);
  if (i >= heads * rows * dim || state[1] != 0) return;
  const int h = i / (rows * dim);
  const int rest = i - h * rows * dim;
  const int s = rest / dim;
  const int d = rest - s * dim;
  const long row = min(POS(state, length) + s, (long)length - 1);
  cache[((long)h * length + row) * dim + d] =
      x[offset + h * stride_h + s * stride_s + d * stride_d];
}

// The end of a prefill step over `rows` tokens; one work-item. The position
// advances by rows, never past the prompt's last token (control[0] - 1).
// out[0] = the new position.
__kernel void decode_prefill_advance(__global long* state, __global const long* restrict control,
                                     __global long* restrict out, int length, int rows) {
  const long p = POS(state, length);
  if (state[1] != 0) {
    out[0] = p;
    return;
  }
  const long last = clamp(control[0] - 1, 0L, (long)length - 1);
  const long next = max(p, min(p + rows, last));
  state[0] = next;
  out[0] = next;
}

// The end of a step; one work-item. control: prompt length, eos (-1 none),
// max new tokens.
__kernel void decode_advance(__global const long* restrict ids, __global long* state,
                             __global const long* restrict control, __global long* restrict token,
                             int length) {
  const long id = ids[0];
  token[0] = id;
  if (state[1] != 0) return;
  const long p = POS(state, length);
  if (p + 1 >= length) {  // no room for the token: the host never lets it come to this
    state[1] = 3;
    return;
  }
  if (p + 1 >= control[0]) {
    state[4 + p + 1] = id;
    const long generated = ++state[2];
    if (id == control[1]) {
      state[1] = 1;
    } else if (generated >= control[2]) {
      state[1] = 2;
    } else if (p + 2 >= length) {
      state[1] = 3;
    }
  }
  state[0] = p + 1;
}

#ifdef GROUP
// ids[0] = the index of the largest of x's `len` elements, the first such
// (ArgMax's choice); one work-group of GROUP (a power of two) work-items,
// each scanning a strided share, then a tree in local memory.
__kernel void decode_argmax(__global const float* restrict x, __global long* restrict ids,
                            int len) {
  __local float best_v[GROUP];
  __local int best_i[GROUP];
  const int t = get_local_id(0);
  float bv = -INFINITY;
  int bi = INT_MAX;
  if (t < len) {
    bv = x[t];
    bi = t;
  }
  for (int j = t + GROUP; j < len; j += GROUP) {
    const float v = x[j];
    if (v > bv) {
      bv = v;
      bi = j;
    }
  }
  best_v[t] = bv;
  best_i[t] = bi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = GROUP / 2; s > 0; s >>= 1) {
    if (t < s) {
      const float v = best_v[t + s];
      const int i = best_i[t + s];
      if (v > best_v[t] || (v == best_v[t] && i < best_i[t])) {
        best_v[t] = v;
        best_i[t] = i;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) ids[0] = best_i[0] == INT_MAX ? 0 : best_i[0];
}
#endif  // GROUP
