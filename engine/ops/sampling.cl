// Sample (sampling.cc, defined in sampling.h and docs/op_semantics.md):
// one work-group of SAMPLE_LOCAL items per row of logits. SAMPLE_KIND 0 reads
// float, 1 half.
//
// 1. The greedy id: each item keeps the largest key (lowest index on ties)
//    of a strided share of the row; a tree in local memory reduces them.
// 2. top_k / top_p: the threshold key by radix selection, 8 bits a pass
//    from the top, over 256-bucket histograms in local memory (counts for
//    top_k; weight sums for top_p, each weight split into two 15-bit
//    halves so that 32-bit atomics sum them exactly). After 4 passes the
//    threshold key is exact, with the number of its ties (top_k) or the
//    weight still needed from them (top_p).
// 3. The draw: each item takes a contiguous chunk of the row; prefix sums
//    over the items (tie counts, then candidate weights) give each chunk
//    its place in index order, and the one item whose range holds r walks
//    its chunk to the id.
// Every sum is an integer sum, so the result does not depend on the order
// in which the items or the atomics run.

#if SAMPLE_KIND == 1
#define LOAD(p, i) vload_half((i), (__global const half*)(p))
#define T ushort
#else
#define LOAD(p, i) (p)[(i)]
#define T float
#endif

#define SL SAMPLE_LOCAL

// The order-preserving key: NaN 0, +-0 one key, negatives below positives.
uint sample_key(float x) {
  if (isnan(x)) return 0u;
  if (x == 0.0f) return 0x80000000u;
  const uint b = as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// The float of a key (key 0, NaN's, gives a NaN).
float sample_value(uint key) { return as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key); }

// SampleWeight of sampling.h.
ulong sample_weight(float x, float x_max, float scale, __global const long* table) {
  const float u = (x_max - x) * scale;
  if (!(u < 536870912.0f)) return 0;
  const ulong t = (uint)u;
  const ulong n = t >> 24;
  const ulong j = (t >> 16) & 255;
  const ulong l = t & 65535;
  const ulong a = (l * 2977044472ul) >> 24;
  const ulong m = ((ulong)1 << 32) - a + ((a * a) >> 33);
  return ((ulong)table[j] * m) >> (32 + n);
}

// Philox4x32-10 of counter (c0, c1, c2, c3) and key (k0, k1): the first two
// output words, the first high.
ulong sample_philox(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint hi0 = mul_hi(0xD2511F53u, c0);
    const uint lo0 = 0xD2511F53u * c0;
    const uint hi1 = mul_hi(0xCD9E8D57u, c2);
    const uint lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  return ((ulong)c0 << 32) | c1;
}

// logits: [B, S, V] (S = 1 for [B, V]); the row of batch b is its last S
// row. SAMPLE_MODE: 0 greedy, 1 top_k, 2 top_p. scale: SampleScale(
// temperature). Global size B * SL, local SL. No work-item returns early:
// the id goes through local memory and item 0 writes it at the end (PoCL
// loses the writes of kernels whose items leave between barriers).
__kernel __attribute__((reqd_work_group_size(SL, 1, 1))) void sample(
    __global const T* restrict logits, __global const long* restrict step,
    __global long* restrict ids, __global const long* restrict table, int V, int S, int k, uint p16,
    float scale, uint seed_lo, uint seed_hi) {
  __local uint l_key[SL];
  __local int l_idx[SL];
  __local int s_result;

  const int b = get_group_id(0);
  const int lid = get_local_id(0);
  __global const T* row = logits + ((long)b * S + (S - 1)) * V;

  // 1. The greedy id.
  uint best_key = 0;
  int best = 0x7fffffff;
  for (int i = lid; i < V; i += SL) {
    const uint key = sample_key(LOAD(row, i));
    if (key > best_key || (key == best_key && i < best)) {
      best_key = key;
      best = i;
    }
  }
  l_key[lid] = best_key;
  l_idx[lid] = best;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = SL / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const uint k2 = l_key[lid + s];
      const int i2 = l_idx[lid + s];
      if (k2 > l_key[lid] || (k2 == l_key[lid] && i2 < l_idx[lid])) {
        l_key[lid] = k2;
        l_idx[lid] = i2;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const int greedy = l_idx[0];
  if (lid == 0) s_result = greedy;

#if SAMPLE_MODE != 0
  __local uint h_count[256];
  __local uint h_hi[256];
  __local uint h_lo[256];
  __local uint l_cnt[SL];
  __local ulong l_sum[SL];
  __local uint s_prefix;
  __local ulong s_rem;
  __local int s_fallback;
  const float x_max = LOAD(row, greedy);
  const int top_k = SAMPLE_MODE == 1;

  // 2. The threshold key. `active` is the same in every item (read from
  // local memory after a barrier); the barriers run in every item.
  if (lid == 0) {
    s_rem = (ulong)min(k, V);
    s_fallback = 0;
  }
  uint prefix = 0;
  uint mask = 0;
  int active = 1;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int j = lid; j < 256; j += SL) {
      h_count[j] = 0;
      h_hi[j] = 0;
      h_lo[j] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; active && i < V; i += SL) {
      const float x = LOAD(row, i);
      const uint key = sample_key(x);
      if ((key & mask) != prefix) continue;
      const uint bucket = (key >> shift) & 255u;
      if (top_k) {
        atomic_inc(&h_count[bucket]);
      } else {
        const ulong w = sample_weight(x, x_max, scale, table);
        if (w != 0) {
          atomic_add(&h_hi[bucket], (uint)(w >> 15));
          atomic_add(&h_lo[bucket], (uint)(w & 0x7fff));
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0 && active) {
      ulong rem = s_rem;
      if (!top_k && shift == 24) {
        ulong total = 0;
        for (int j = 0; j < 256; ++j) total += ((ulong)h_hi[j] << 15) + h_lo[j];
        rem = (total * p16 + 65535) >> 16;
        if (rem == 0) rem = 1;
      }
      ulong cum = 0;
      int found = -1;
      for (int j = 255; j >= 0; --j) {
        const ulong c = top_k ? (ulong)h_count[j] : ((ulong)h_hi[j] << 15) + h_lo[j];
        if (cum + c >= rem) {
          found = j;
          break;
        }
        cum += c;
      }
      if (found < 0) {
        s_fallback = 1;  // every weight is 0: greedy's id stays
      } else {
        s_prefix = prefix | ((uint)found << shift);
        s_rem = rem - cum;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    active = !s_fallback;
    prefix = s_prefix;
    mask |= 255u << shift;
  }
  const uint tau = prefix;
  ulong take = s_rem;  // top_k: ties of tau taken, lowest indices first
  if (!top_k && active) {
    const ulong w_tau = sample_weight(sample_value(tau), x_max, scale, table);
    take = w_tau != 0 ? (take + w_tau - 1) / w_tau : 1;
  }

  // 3. The draw, over contiguous chunks in index order.
  const int chunk = (V + SL - 1) / SL;
  const int begin = active ? min(V, lid * chunk) : 0;
  const int end = active ? min(V, begin + chunk) : 0;
  uint ties = 0;
  for (int i = begin; i < end; ++i) ties += sample_key(LOAD(row, i)) == tau;
  l_cnt[lid] = ties;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = 1; off < SL; off <<= 1) {
    const uint v = lid >= off ? l_cnt[lid - off] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    l_cnt[lid] += v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const uint ties_before = l_cnt[lid] - ties;

  ulong weight = 0;
  uint rank = ties_before;
  for (int i = begin; i < end; ++i) {
    const float x = LOAD(row, i);
    const uint key = sample_key(x);
    int candidate = key > tau;
    if (key == tau) candidate = rank++ < take;
    if (candidate) weight += sample_weight(x, x_max, scale, table);
  }
  l_sum[lid] = weight;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = 1; off < SL; off <<= 1) {
    const ulong v = lid >= off ? l_sum[lid - off] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    l_sum[lid] += v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ulong total = l_sum[SL - 1];
  const ulong before = l_sum[lid] - weight;
  if (total != 0 && weight != 0) {
    const ulong s = (ulong)step[0];
    const ulong r = sample_philox((uint)s, (uint)(s >> 32), (uint)b, 0u, seed_lo, seed_hi) % total;
    if (r >= before && r < before + weight) {
      ulong acc = before;
      rank = ties_before;
      int found = -1;
      for (int i = begin; i < end && found < 0; ++i) {
        const float x = LOAD(row, i);
        const uint key = sample_key(x);
        int candidate = key > tau;
        if (key == tau) candidate = rank++ < take;
        if (candidate) {
          acc += sample_weight(x, x_max, scale, table);
          if (acc > r) found = i;
        }
      }
      s_result = found;
    }
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) ids[b] = s_result;
}
