// 2-D ConvTranspose in gather form. Global size: (OW, OH, N * OC), rounded
// up. Weights are [C, OCG, KH, KW] with OCG = OC / groups.
__kernel void conv_transpose_2d(__global const RECQ_T* restrict x, __global const RECQ_T* restrict w,
                                __global const RECQ_T* restrict bias, __global RECQ_T* restrict y,
                                int c, int h, int wd, int oc, int oh, int ow, int planes, int ocg,
                                int kh, int kw, int sh, int sw, int dh, int dw, int pt, int pl,
                                int act, float act_a, float act_b) {
  const int ox = get_global_id(0);
  const int oy = get_global_id(1);
  const int p = get_global_id(2);
  if (ox >= ow || oy >= oh || p >= planes) return;
  const int n = p / oc;
  const int o = p % oc;
  const int g = o / ocg;
  const int og = o % ocg;
  const int cg = c / (oc / ocg);  // input channels per group
  __global const RECQ_T* xg = x + ((size_t)n * c + (size_t)g * cg) * h * wd;
  __global const RECQ_T* wg = w + ((size_t)g * cg * ocg + og) * kh * kw;
  const int wstride = ocg * kh * kw;
  float acc = 0.0f;
  for (int ky = 0; ky < kh; ++ky) {
    const int ty = oy + pt - ky * dh;
    if (ty < 0 || ty % sh != 0) continue;
    const int iy = ty / sh;
    if (iy >= h) continue;
    for (int kx = 0; kx < kw; ++kx) {
      const int tx = ox + pl - kx * dw;
      if (tx < 0 || tx % sw != 0) continue;
      const int ix = tx / sw;
      if (ix >= wd) continue;
      __global const RECQ_T* xp = xg + iy * wd + ix;
      __global const RECQ_T* wp = wg + ky * kw + kx;
      for (int ic = 0; ic < cg; ++ic) acc += RECQ_LOAD(xp, (size_t)ic * h * wd) * RECQ_LOAD(wp, ic * wstride);
    }
  }
#if HAS_BIAS
  acc += RECQ_LOAD(bias, o);
#endif
  RECQ_STORE(y, ((size_t)p * oh + oy) * ow + ox, recq_activate(acc, act, act_a, act_b));
}
