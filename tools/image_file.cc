#include "tools/image_file.h"

#include <setjmp.h>

// jpeglib.h needs FILE and size_t declared first.
#include <cstdio>
#include <cstring>

#ifdef RECQ_HAVE_PNG
#include <png.h>
#endif
#ifdef RECQ_HAVE_JPEG
#include <jpeglib.h>
#endif

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "recq/engine_file.h"

namespace recq::tools {

namespace {

bool IsPng(absl::string_view bytes) {
  static constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
  return absl::StartsWith(bytes, absl::string_view(kSignature, 8));
}

bool IsJpeg(absl::string_view bytes) { return absl::StartsWith(bytes, "\xff\xd8\xff"); }

#if !defined(RECQ_HAVE_PNG) || !defined(RECQ_HAVE_JPEG)
// BuiltWithout is the error for a file whose decoder this build lacks
// (CMakeLists.txt uses libpng and libjpeg when it finds them).
absl::Status BuiltWithout(const std::string& path, const char* format, const char* library,
                          const char* package) {
  return absl::UnimplementedError(absl::StrCat("'", path, "' is a ", format,
                                               " file, but this recq was built without ", library,
                                               ": install ", package,
                                               " and rebuild to decode it, or pass the input "
                                               "as raw elements"));
}
#endif

#ifdef RECQ_HAVE_PNG
absl::StatusOr<DecodedImage> DecodePng(const std::string& path, const std::string& bytes) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  auto failed = [&](const char* stage) {
    const std::string message = image.message;
    png_image_free(&image);
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a readable PNG (", stage, ": ", message, ")"));
  };
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    return failed("header");
  }
  image.format = PNG_FORMAT_RGB;
  DecodedImage out;
  out.format = "PNG";
  out.height = image.height;
  out.width = image.width;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  // Alpha is composited on black (background null).
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) return failed("pixels");
  png_image_free(&image);
  return out;
}
#else
absl::StatusOr<DecodedImage> DecodePng(const std::string& path, const std::string&) {
  return BuiltWithout(path, "PNG", "libpng", "libpng-dev");
}
#endif

#ifdef RECQ_HAVE_JPEG
// libjpeg reports errors through error_exit, which must not return: jump
// back to DecodeJpeg with the message.
struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

// Corrupt-data warnings (premature end of data...) are errors here: a
// truncated file must not decode into grey rows.
void JpegWarning(j_common_ptr cinfo, int level) {
  if (level < 0) JpegErrorExit(cinfo);
}

absl::StatusOr<DecodedImage> DecodeJpeg(const std::string& path, const std::string& bytes) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = JpegErrorExit;
  err.mgr.emit_message = JpegWarning;
  err.message[0] = '\0';
  // Declared before setjmp: nothing with a destructor lives across it.
  DecodedImage out;
  out.format = "JPEG";
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a readable JPEG (", err.message, ")"));
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out.height = cinfo.output_height;
  out.width = cinfo.output_width;
  const size_t row = static_cast<size_t>(out.width) * 3;
  out.rgb.resize(row * static_cast<size_t>(out.height));
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW rows[1] = {out.rgb.data() + row * cinfo.output_scanline};
    jpeg_read_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return out;
}
#else
absl::StatusOr<DecodedImage> DecodeJpeg(const std::string& path, const std::string&) {
  return BuiltWithout(path, "JPEG", "libjpeg", "libjpeg-dev");
}
#endif

}  // namespace

bool IsImageFileName(absl::string_view path) {
  const std::string lower = absl::AsciiStrToLower(path);
  return absl::EndsWith(lower, ".png") || absl::EndsWith(lower, ".jpg") ||
         absl::EndsWith(lower, ".jpeg");
}

absl::StatusOr<DecodedImage> DecodeImageFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  if (IsPng(*bytes)) return DecodePng(path, *bytes);
  if (IsJpeg(*bytes)) return DecodeJpeg(path, *bytes);
  return absl::InvalidArgumentError(absl::StrCat(
      "'", path, "' (", bytes->size(),
      " bytes) has neither a PNG nor a JPEG signature; --input decodes .png, .jpg and .jpeg "
      "files and reads others as raw elements"));
}

}  // namespace recq::tools
