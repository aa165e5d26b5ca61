// PNG and JPEG files decoded for `recq run --input=NAME=photo.png`: 8-bit
// RGB, rows top to bottom, pixels interleaved (NHWC of one frame), which the
// pre-processing compiled into the model (recq/preprocess.h) then converts,
// resizes and normalizes.
//
// PNG goes through libpng's simplified API (any bit depth, palette, grey,
// alpha: converted to 8-bit RGB, alpha composited on black), JPEG through
// libjpeg-turbo (grey, YCbCr, CMYK-free baseline and progressive files).
#ifndef RECQ_TOOLS_IMAGE_FILE_H_
#define RECQ_TOOLS_IMAGE_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace recq::tools {

struct DecodedImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> rgb;  // height * width * 3 bytes, R G B per pixel
  const char* format = "";   // "PNG" or "JPEG"
};

// IsImageFileName tells whether `path` ends in .png, .jpg or .jpeg (any
// case): the files `recq run --input` decodes rather than reads raw.
bool IsImageFileName(absl::string_view path);

// DecodeImageFile decodes the PNG or JPEG file at `path` (told apart by its
// signature, not its name). A file that is neither, truncated or corrupt is
// InvalidArgument naming the file and what the decoder reported; a file that
// cannot be read is NotFound / Unavailable. A build without libpng (or
// libjpeg) returns Unimplemented for a PNG (or JPEG) file, saying so.
[[nodiscard]] absl::StatusOr<DecodedImage> DecodeImageFile(const std::string& path);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_IMAGE_FILE_H_
