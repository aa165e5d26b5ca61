// GridSample (grid_sample.h), following ONNX's reference: MODE 0 nearest
// (round half to even), 1 bilinear, 2 bicubic (Keys, A = -0.75); PAD 0
// zeros, 1 border, 2 reflection; ALIGN 1 for align_corners. One work-item
// per output position (ow, oh, n), looping over channels.

// Reflects x into [lo, hi] by its nearer border until it is inside.
inline float recq_gs_reflect(float x, float lo, float hi) {
  const float range = hi - lo;
  if (range <= 0.0f) return lo;
  if (x < lo) {
    const float dx = lo - x;
    const int n = (int)(dx / range);
    const float r = dx - n * range;
    return (n & 1) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const float dx = x - hi;
    const int n = (int)(dx / range);
    const float r = dx - n * range;
    return (n & 1) == 0 ? hi - r : lo + r;
  }
  return x;
}

// The source coordinate of normalized g along a side of `len` pixels,
// brought inside by border or reflection padding.
inline float recq_gs_coordinate(float g, int len) {
#if ALIGN
  float x = (g + 1.0f) * 0.5f * (len - 1);
  const float lo = 0.0f, hi = len - 1.0f;
#else
  float x = ((g + 1.0f) * len - 1.0f) * 0.5f;
  const float lo = -0.5f, hi = len - 0.5f;
#endif
#if MODE == 0
  x = rint(x);
#endif
  if (x < lo || x > hi) {
#if PAD == 1
    x = clamp(x, 0.0f, len - 1.0f);
#elif PAD == 2
    x = recq_gs_reflect(x, lo, hi);
#endif
  }
  // With zero padding, taps this far out read zeros wherever x is.
  return clamp(x, -8.0f, len + 8.0f);
}

// The pixel index a tap at integer i reads, or -1 for a zero.
inline int recq_gs_index(int i, int len) {
#if PAD == 0
  return i >= 0 && i < len ? i : -1;
#elif PAD == 1
  return clamp(i, 0, len - 1);
#else
#if ALIGN
  const float lo = 0.0f, hi = len - 1.0f;
#else
  const float lo = -0.5f, hi = len - 0.5f;
#endif
  return clamp((int)recq_gs_reflect((float)i, lo, hi), 0, len - 1);
#endif
}

#if MODE == 2
inline void recq_gs_cubic(float t, float* w) {
  const float a = -0.75f;
  const float x = fabs(t);
  w[0] = ((a * (x + 1.0f) - 5.0f * a) * (x + 1.0f) + 8.0f * a) * (x + 1.0f) - 4.0f * a;
  w[1] = ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
  w[2] = ((a + 2.0f) * (1.0f - x) - (a + 3.0f)) * (1.0f - x) * (1.0f - x) + 1.0f;
  w[3] = ((a * (2.0f - x) - 5.0f * a) * (2.0f - x) + 8.0f * a) * (2.0f - x) - 4.0f * a;
}
#define TAPS 4
#elif MODE == 1
#define TAPS 2
#else
#define TAPS 1
#endif

// dims: (C, H, W, 0); out: (Ho, Wo, N, 0). Global size (Wo, Ho, N).
__kernel void grid_sample(__global const RECQ_T* restrict x, __global const RECQ_T* restrict grid,
                          __global RECQ_T* restrict y, int4 dims, int4 out) {
  const int ow = get_global_id(0), oh = get_global_id(1), n = get_global_id(2);
  const int C = dims.x, H = dims.y, W = dims.z, Ho = out.x, Wo = out.y;
  const int g = ((n * Ho + oh) * Wo + ow) * 2;
  const float fx = recq_gs_coordinate(RECQ_LOAD(grid, g), W);
  const float fy = recq_gs_coordinate(RECQ_LOAD(grid, g + 1), H);
  int ix[TAPS], iy[TAPS];
  float wx[TAPS], wy[TAPS];
#if MODE == 0
  ix[0] = recq_gs_index((int)fx, W);
  iy[0] = recq_gs_index((int)fy, H);
  wx[0] = 1.0f;
  wy[0] = 1.0f;
#else
  const float x0 = floor(fx), y0 = floor(fy);
#if MODE == 1
  wx[0] = 1.0f - (fx - x0);
  wx[1] = fx - x0;
  wy[0] = 1.0f - (fy - y0);
  wy[1] = fy - y0;
  const int first = 0;
#else
  recq_gs_cubic(fx - x0, wx);
  recq_gs_cubic(fy - y0, wy);
  const int first = -1;
#endif
  for (int k = 0; k < TAPS; ++k) {
    ix[k] = recq_gs_index((int)x0 + first + k, W);
    iy[k] = recq_gs_index((int)y0 + first + k, H);
  }
#endif
  for (int c = 0; c < C; ++c) {
    const int plane = (n * C + c) * H * W;
    float acc = 0.0f;
    for (int a = 0; a < TAPS; ++a) {
      if (iy[a] < 0) continue;
      float row = 0.0f;
      for (int b = 0; b < TAPS; ++b) {
        if (ix[b] >= 0) row += wx[b] * RECQ_LOAD(x, plane + iy[a] * W + ix[b]);
      }
      acc += wy[a] * row;
    }
    RECQ_STORE(y, ((n * C + c) * Ho + oh) * Wo + ow, acc);
  }
}
