// Preprocess (engine/ops/preprocess.cc): one kernel reads a camera frame
// (u8/f16/f32 buffer in NHWC or NCHW, NV12 in one or two planes, or an
// image2d), converts its colour to RGB, resizes bilinearly (half-pixel
// centres) to the model's size, normalizes and writes the model's NCHW
// input. Global size: (W, H, N) of the model input, rounded up.
//
// Build options: COLOR (PP_RGB...), SRC_IMAGE (0/1), SRC_T (uchar, float,
// half) for buffers, SRC_C (channels of an RGB-family buffer), NHWC (0/1),
// RESIZE (0/1), MODEL_C (1 or 3), MODEL_BGR (0/1), OUT_HALF (0/1),
// UNORM (0/1: an image's read_imagef value is multiplied by 255).
#define PP_RGB 0
#define PP_BGR 1
#define PP_RGBX 2
#define PP_BGRX 3
#define PP_NV12_2 4
#define PP_NV12_1 5
#define PP_GRAY 6

#define IS_NV12 (COLOR == PP_NV12_2 || COLOR == PP_NV12_1)
#define TWO_INPUTS (COLOR == PP_NV12_2)

#if SRC_IMAGE
#define SRC_DECL __read_only image2d_t
#if UNORM
#define IMG_SCALE 255.0f
#else
#define IMG_SCALE 1.0f
#endif
#else
#if SRC_IS_HALF
#define SRC_DECL __global const half*
#define LOAD(p, i) vload_half((i), (p))
#else
#define SRC_DECL __global const SRC_T*
#define LOAD(p, i) ((float)(p)[(i)])
#endif
#endif

#if IS_NV12
float3 yuv_to_rgb(float y, float u, float v) {
  const float c = 1.164f * (y - 16.0f);
  const float d = u - 128.0f;
  const float e = v - 128.0f;
  float3 rgb = (float3)(c + 1.596f * e, c - 0.391f * d - 0.813f * e, c + 2.018f * d);
  return clamp(rgb, 0.0f, 255.0f);
}
#endif

#if SRC_IMAGE
__constant sampler_t kSampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |
                                CLK_FILTER_NEAREST;
#endif

// pixel returns the source pixel (x, y) of frame n as RGB on the u8 scale.
#if TWO_INPUTS
float3 pixel(SRC_DECL src, SRC_DECL uv, int n, int x, int y, int hs, int ws, int uv_offset) {
#else
float3 pixel(SRC_DECL src, int n, int x, int y, int hs, int ws, int uv_offset) {
#endif
#if SRC_IMAGE
#if COLOR == PP_NV12_2
  const float yy = read_imagef(src, kSampler, (int2)(x, y)).x * IMG_SCALE;
  // The UV plane is CL_RG (W/2 x H/2), or CL_RGBA packing two UV pairs
  // per texel (W/4 x H/2) where a device lists no CL_RG format (PoCL).
  const int cx = x / 2;
  float2 c;
  if (get_image_channel_order(uv) == CLK_RG) {
    c = read_imagef(uv, kSampler, (int2)(cx, y / 2)).xy;
  } else {
    const float4 t = read_imagef(uv, kSampler, (int2)(cx / 2, y / 2));
    c = (cx & 1) ? t.zw : t.xy;
  }
  c *= IMG_SCALE;
  return yuv_to_rgb(yy, c.x, c.y);
#elif COLOR == PP_GRAY
  const float g = read_imagef(src, kSampler, (int2)(x, y)).x * IMG_SCALE;
  return (float3)(g, g, g);
#else
  const float4 p = read_imagef(src, kSampler, (int2)(x, y)) * IMG_SCALE;
#if COLOR == PP_BGRX
  return p.zyx;
#else
  return p.xyz;
#endif
#endif
#else  // buffers
#if COLOR == PP_NV12_2
  const float yy = LOAD(src, ((size_t)n * hs + y) * ws + x);
  const size_t c = (((size_t)n * (hs / 2) + y / 2) * (ws / 2) + x / 2) * 2;
  return yuv_to_rgb(yy, LOAD(uv, c), LOAD(uv, c + 1));
#elif COLOR == PP_NV12_1
  const size_t frame = (size_t)n * (uv_offset + (size_t)hs * ws / 2);
  const float yy = LOAD(src, frame + (size_t)y * ws + x);
  const size_t c = frame + uv_offset + (size_t)(y / 2) * ws + (x / 2) * 2;
  return yuv_to_rgb(yy, LOAD(src, c), LOAD(src, c + 1));
#else
#if NHWC
  const size_t at = (((size_t)n * hs + y) * ws + x) * SRC_C;
  const size_t step = 1;
#else
  const size_t at = ((size_t)n * SRC_C * hs + y) * ws + x;
  const size_t step = (size_t)hs * ws;
#endif
#if COLOR == PP_GRAY
  const float g = LOAD(src, at);
  return (float3)(g, g, g);
#else
  const float3 p = (float3)(LOAD(src, at), LOAD(src, at + step), LOAD(src, at + 2 * step));
#if COLOR == PP_BGR || COLOR == PP_BGRX
  return p.zyx;
#else
  return p;
#endif
#endif
#endif
#endif
}

#if TWO_INPUTS
#define PIXEL(x, y) pixel(src, uv, n, (x), (y), hs, ws, uv_offset)
#else
#define PIXEL(x, y) pixel(src, n, (x), (y), hs, ws, uv_offset)
#endif

__kernel void preprocess(SRC_DECL src,
#if TWO_INPUTS
                         SRC_DECL uv,
#endif
#if OUT_HALF
                         __global half* restrict out,
#else
                         __global float* restrict out,
#endif
                         int hs, int ws, int h, int w, int batch, int uv_offset, float4 mean,
                         float4 scale) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  const int n = get_global_id(2);
  if (x >= w || y >= h || n >= batch) return;
#if RESIZE
  // Half-pixel centres; the taps are clamped to the frame.
  const float fx = max((x + 0.5f) * ((float)ws / (float)w) - 0.5f, 0.0f);
  const float fy = max((y + 0.5f) * ((float)hs / (float)h) - 0.5f, 0.0f);
  const int x0 = min((int)fx, ws - 1);
  const int y0 = min((int)fy, hs - 1);
  const int x1 = min(x0 + 1, ws - 1);
  const int y1 = min(y0 + 1, hs - 1);
  const float ax = fx - (float)x0;
  const float ay = fy - (float)y0;
  const float3 top = PIXEL(x0, y0) * (1.0f - ax) + PIXEL(x1, y0) * ax;
  const float3 bottom = PIXEL(x0, y1) * (1.0f - ax) + PIXEL(x1, y1) * ax;
  const float3 v = top * (1.0f - ay) + bottom * ay;
#else
  const float3 v = PIXEL(x, y);
#endif
#if MODEL_BGR
  const float4 m = ((float4)(v.zyx, 0.0f) - mean) / scale;
#else
  const float4 m = ((float4)(v, 0.0f) - mean) / scale;
#endif
  const size_t plane = (size_t)h * w;
  const size_t at = (size_t)n * MODEL_C * plane + (size_t)y * w + x;
#if OUT_HALF
  vstore_half(m.x, at, out);
#if MODEL_C == 3
  vstore_half(m.y, at + plane, out);
  vstore_half(m.z, at + 2 * plane, out);
#endif
#else
  out[at] = m.x;
#if MODEL_C == 3
  out[at + plane] = m.y;
  out[at + 2 * plane] = m.z;
#endif
#endif
}
