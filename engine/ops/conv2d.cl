// Direct NCHW convolution with groups, dilation, padding, optional bias and
// a fused activation. One work-item per output element.
// Global size: (OW, OH, N * OC).
__kernel void conv2d(__global const RECQ_T* restrict x, __global const RECQ_T* restrict w,
                     __global const RECQ_T* restrict bias, __global RECQ_T* restrict y,
                     int C, int H, int W, int OC, int OH, int OW, int KH, int KW, int SH, int SW,
                     int PT, int PL, int DH, int DW, int groups, int act, float act_a,
                     float act_b) {
  const int ow = get_global_id(0);
  const int oh = get_global_id(1);
  const int noc = get_global_id(2);
  if (ow >= OW || oh >= OH) return;
  const int n = noc / OC;
  const int oc = noc % OC;
  const int cpg = C / groups;
  const int g = oc / (OC / groups);
  float acc = bias ? RECQ_LOAD(bias, oc) : 0.0f;
  const int ih0 = oh * SH - PT;
  const int iw0 = ow * SW - PL;
  for (int ic = 0; ic < cpg; ++ic) {
    const __global RECQ_T* xc = x + ((size_t)(n * C + g * cpg + ic)) * H * W;
    const __global RECQ_T* wc = w + ((size_t)(oc * cpg + ic)) * KH * KW;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = ih0 + kh * DH;
      if (ih < 0 || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int iw = iw0 + kw * DW;
        if (iw < 0 || iw >= W) continue;
        acc = fma(RECQ_LOAD(xc, ih * W + iw), RECQ_LOAD(wc, kh * KW + kw), acc);
      }
    }
  }
  RECQ_STORE(y, ((size_t)noc * OH + oh) * OW + ow, recq_activate(acc, act, act_a, act_b));
}
