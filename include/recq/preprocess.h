// Pre- and post-processing compiled into the model, in the spirit of
// OpenVINO's PrePostProcessor: say how each input arrives (a camera's u8
// NHWC frame, an NV12 video surface, an image2d) and how each output should
// leave, and ApplyPrePostProcessing rewrites the Graph so that Compile lowers
// the conversion into kernels at the head (and tail) of the dispatch list. A
// recording then replays camera frames as they are, with no float copy.
//
//   PrePostProcessing ppp;
//   InputPreprocess& in = ppp.inputs["input"];
//   in.color = ColorFormat::kNv12TwoPlane;        // binds "input/y" and "input/uv"
//   in.source_height = 720; in.source_width = 1280;
//   in.mean = {123.675f, 116.28f, 103.53f};  in.scale = {58.395f, 57.12f, 57.375f};
//   RECQ_RETURN_IF_ERROR(ApplyPrePostProcessing(graph, ppp));   // or OnnxOptions::prepost
//
// One fused kernel per input reads the source (u8, f16 or f32; NCHW or NHWC;
// a buffer or an image2d), converts the colour to the model's, resizes
// bilinearly to the model's height and width, normalizes ((v - mean[c]) /
// scale[c], per model channel) and writes the model's input tensor (NCHW,
// float32 or float16).
//
// Colour conversion: NV12 is BT.601 limited range, the conversion OpenVINO's
// NV12 preprocessing uses:
//   r = 1.164 (y - 16) + 1.596 (v - 128)
//   g = 1.164 (y - 16) - 0.391 (u - 128) - 0.813 (v - 128)
//   b = 1.164 (y - 16) + 2.018 (u - 128)
// each clamped to [0, 255]; the chroma of pixel (x, y) is the UV sample at
// (x / 2, y / 2). GRAY is copied into every model channel; RGBX/BGRX drop X.
// Values are on the scale of u8 (0..255) for every source: an 8-bit unorm
// image's read_imagef value is multiplied by 255, a float image or buffer is
// taken as is.
//
// Resize: bilinear with half-pixel centres (ONNX Resize linear, half_pixel;
// PyTorch align_corners=False, no antialiasing) from the source size to the
// model's; each of the four taps is colour-converted before it is weighted.
//
// What each input binds (N is the model's batch):
//   kind     colour            binding(s) and their shape / format
//   buffer   RGB, BGR          NAME: [N, H, W, 3] (NHWC) or [N, 3, H, W] (NCHW)
//   buffer   RGBX, BGRX        NAME: [N, H, W, 4] or [N, 4, H, W]
//   buffer   GRAY              NAME: [N, H, W, 1] or [N, 1, H, W]
//   buffer   NV12 two-plane    NAME/y: [N, H, W, 1] u8, NAME/uv: [N, H/2, W/2, 2] u8
//   buffer   NV12 single-plane NAME: [N, uv_offset + H*W/2] u8; Y rows at byte 0,
//                              interleaved UV rows at byte uv_offset of each frame
//   image2d  RGBX              NAME: CL_RGBA or CL_BGRA image W x H (N = 1; the
//                              runtime orders the channels, so both read as RGBA)
//   image2d  GRAY              NAME: CL_R image W x H
//   image2d  NV12 two-plane    NAME/y: CL_R image W x H, NAME/uv: CL_RG image W/2 x H/2,
//                              or CL_RGBA W/4 x H/2 holding two UV pairs a texel
//                              (for devices without CL_RG, such as PoCL)
// where H x W is the source size. An image's channel type is CL_UNORM_INT8
// for element type u8 and CL_FLOAT for f32. Bindings::SetNv12 binds both
// planes. Recording::Enqueue checks every binding against this table (kind,
// format, size, context) and returns InvalidArgument naming the binding.
#ifndef RECQ_PREPROCESS_H_
#define RECQ_PREPROCESS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recq/data_type.h"
#include "recq/graph.h"

namespace recq {

enum class TensorLayout { kNCHW, kNHWC };
enum class ColorFormat { kRGB, kBGR, kRGBX, kBGRX, kNv12TwoPlane, kNv12SinglePlane, kGray };
enum class MemoryKind { kBuffer, kImage2D };

// How one model input arrives.
struct InputPreprocess {
  DataType element_type = DataType::kUInt8;   // u8, f16 or f32 (images: u8 or f32)
  TensorLayout layout = TensorLayout::kNHWC;  // buffers of RGB, BGR, RGBX, BGRX, GRAY
  ColorFormat color = ColorFormat::kRGB;
  // The colour order of the model's input: kRGB or kBGR for 3 channels
  // (kGray for a 1-channel model, which needs a GRAY source).
  ColorFormat model_color = ColorFormat::kRGB;
  // Source height and width; 0 takes the model's (no resize). NV12 sizes
  // are even.
  int64_t source_height = 0;
  int64_t source_width = 0;
  // Per model channel (one value applies to every channel); empty: 0 / 1.
  std::vector<float> mean;
  std::vector<float> scale;
  MemoryKind kind = MemoryKind::kBuffer;
  // NV12 single-plane: byte offset of the UV rows in each frame; 0 means
  // source_height * source_width (right after Y). At least that.
  int64_t uv_offset = 0;
};

// How one model output should leave: its element type and, for a 4-D NCHW
// output, its layout.
struct OutputPostprocess {
  DataType element_type = DataType::kFloat32;  // f32 or f16
  TensorLayout layout = TensorLayout::kNCHW;
};

// By graph input / output name.
struct PrePostProcessing {
  std::map<std::string, InputPreprocess> inputs;
  std::map<std::string, OutputPostprocess> outputs;
  bool empty() const { return inputs.empty() && outputs.empty(); }
};

// ApplyPrePostProcessing rewrites `graph`: each named input is replaced by
// its source binding(s) (table above) feeding one Preprocess node that
// produces the model's input; each named output gets a Cast and/or a
// Transpose to the requested type and layout and keeps its name.
// InvalidArgument names the input or output and what does not fit (an
// unknown name, a model input that is not [N, C, H, W] float with C 1 or 3, an
// odd NV12 size, an image of a batch above 1, a mean or scale of the wrong
// length, a zero scale...). The graph is unchanged on error.
[[nodiscard]] absl::Status ApplyPrePostProcessing(Graph& graph, const PrePostProcessing& ppp);

// ParseInputFormat reads the CLI's --input-format value into `pre`:
//   COLOR[:WxH][,key=value...]  with COLOR one of rgb, bgr, rgbx, bgrx,
//   gray, nv12 (two planes), nv12_1plane; keys: type=u8|f16|f32,
//   layout=nhwc|nchw, mean=a/b/c, scale=a/b/c, model=rgb|bgr, kind=buffer|image,
//   uv_offset=BYTES. "nv12:1280x720,mean=123.7/116.3/103.5".
[[nodiscard]] absl::StatusOr<InputPreprocess> ParseInputFormat(absl::string_view text);

// ColorFormatName renders "rgb", "bgr", "rgbx", "bgrx", "nv12", "nv12_1plane"
// or "gray".
const char* ColorFormatName(ColorFormat color);

}  // namespace recq

#endif  // RECQ_PREPROCESS_H_
