// `recq run` and `recq info` on MobileNet V2 written as ONNX, and PNG / JPEG
// inputs (tools/image_file.h) decoded into the model's pre-processing; the
// test writes its images itself with libpng and libjpeg.
#include "tools/onnx_commands.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#if defined(RECQ_HAVE_PNG) && defined(RECQ_HAVE_JPEG)
#include <jpeglib.h>
#include <png.h>
#endif

#include "testing/test_env.h"
#include "tools/image_file.h"
#include "tools/models/mobilenet_onnx.h"

namespace recq {
namespace {

class OnnxCommandsTest : public ::testing::Test {
 protected:
  // The commands compile with EngineOptions' default tuning, which reads
  // $RECQ_TUNING (fast when unset; this binary does not link
  // testing/test_env.cc, whose initializer turns it off). A test that
  // compares two compiles bit for bit needs both to pick the same kernels;
  // with the tuner on they need not: a key over the tuner's time budget
  // runs the heuristic kernel in one compile and, in the next, whatever
  // another test process wrote for it into the shared tuning cache
  // meanwhile. These tests check the commands, not the tuner
  // (tuner_test does): off, whatever the environment says.
  static void SetUpTestSuite() { setenv("RECQ_TUNING", "off", /*overwrite=*/1); }

  void SetUp() override {
    models::MobileNetOptions options;
    options.resolution = 32;
    options.num_classes = 10;
    options.width = 0.5f;
    RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, models::MobileNetV2OnnxBytes(options));
    std::ofstream(model_, std::ios::binary) << bytes;
  }
  void TearDown() override {
    std::remove(model_.c_str());
    std::remove(input_.c_str());
    std::remove(output_.c_str());
    for (const std::string* path : {&image_, &jpeg_, &raw_, &output2_}) std::remove(path->c_str());
  }
  // Per test and process: ctest runs these tests as parallel processes.
  const std::string dir_ = ::testing::TempDir() + "recq_commands_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(getpid()) + "_";
  const std::string model_ = dir_ + "mobilenet.onnx";
  const std::string input_ = dir_ + "input.f32";
  const std::string output_ = dir_ + "prob.f32";
  const std::string image_ = dir_ + "photo.png";
  const std::string jpeg_ = dir_ + "photo.jpg";
  const std::string raw_ = dir_ + "frame.rgb";
  const std::string output2_ = dir_ + "prob2.f32";
};

#if defined(RECQ_HAVE_PNG) && defined(RECQ_HAVE_JPEG)
// Random RGB pixels, height x width x 3.
std::vector<uint8_t> RandomPixels(int64_t height, int64_t width, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> rgb(static_cast<size_t>(height * width * 3));
  for (uint8_t& v : rgb) v = static_cast<uint8_t>(rng() & 0xff);
  return rgb;
}

// WritePng writes 8-bit pixels of `format` (PNG_FORMAT_RGB, _GRAY...).
bool WritePng(const std::string& path, int64_t height, int64_t width, uint32_t format,
              const std::vector<uint8_t>& pixels) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = format;
  return png_image_write_to_file(&image, path.c_str(), 0, pixels.data(), 0, nullptr) != 0;
}

bool WriteJpeg(const std::string& path, int64_t height, int64_t width,
               const std::vector<uint8_t>& rgb) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, file);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 100, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(&rgb[cinfo.next_scanline * width * 3]);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return std::fclose(file) == 0;
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
#endif  // RECQ_HAVE_PNG && RECQ_HAVE_JPEG

TEST_F(OnnxCommandsTest, InfoPrintsModel) { RECQ_ASSERT_OK(tools::InfoModelCommand(model_)); }

TEST_F(OnnxCommandsTest, RunReadsInputsAndWritesOutputs) {
  std::vector<float> input = reference::RandomTensor({1, 3, 32, 32}, 5).data;
  std::ofstream(input_, std::ios::binary)
      .write(reinterpret_cast<const char*>(input.data()), input.size() * sizeof(float));
  tools::RunModelOptions options;
  options.model_path = model_;
  options.inputs = {"input=" + input_};
  options.outputs = {"prob=" + output_};
  options.runs = 3;
  options.device = "";
  RECQ_ASSERT_OK(tools::RunModelCommand(options));
  std::ifstream out(output_, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 10 * sizeof(float));
  float sum = 0;
  for (size_t i = 0; i < 10; ++i) sum += reinterpret_cast<const float*>(bytes.data())[i];
  EXPECT_NEAR(sum, 1.0f, 1e-4f);  // softmax probabilities
}

TEST_F(OnnxCommandsTest, RunRejectsWrongInputSize) {
  std::ofstream(input_, std::ios::binary) << "abc";
  tools::RunModelOptions options;
  options.model_path = model_;
  options.inputs = {"input=" + input_};
  options.runs = 1;
  absl::Status s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("has 3 bytes"));
}

#if defined(RECQ_HAVE_PNG) && defined(RECQ_HAVE_JPEG)
TEST_F(OnnxCommandsTest, DecodesPngAndJpeg) {
  const std::vector<uint8_t> rgb = RandomPixels(10, 14, 7);
  ASSERT_TRUE(WritePng(image_, 10, 14, PNG_FORMAT_RGB, rgb));
  RECQ_ASSERT_OK_AND_ASSIGN(tools::DecodedImage png, tools::DecodeImageFile(image_));
  EXPECT_EQ(png.height, 10);
  EXPECT_EQ(png.width, 14);
  EXPECT_EQ(png.rgb, rgb);  // lossless

  // Grey PNGs decode to R = G = B.
  const std::vector<uint8_t> grey = RandomPixels(6, 4, 8);  // 6 x 4 x 3 bytes; 24 used
  ASSERT_TRUE(WritePng(image_, 6, 4, PNG_FORMAT_GRAY, grey));
  RECQ_ASSERT_OK_AND_ASSIGN(tools::DecodedImage g, tools::DecodeImageFile(image_));
  ASSERT_EQ(g.rgb.size(), 6u * 4 * 3);
  for (size_t i = 0; i < 24; ++i) {
    for (int c = 0; c < 3; ++c) ASSERT_EQ(g.rgb[i * 3 + c], grey[i]) << i;
  }

  // JPEG is lossy: a smooth image at quality 100 comes back within a few
  // levels.
  std::vector<uint8_t> smooth(16 * 24 * 3);
  for (int y = 0; y < 16; ++y) {
    for (int x = 0; x < 24; ++x) {
      uint8_t* p = &smooth[(y * 24 + x) * 3];
      p[0] = static_cast<uint8_t>(40 + x * 6);
      p[1] = static_cast<uint8_t>(30 + y * 8);
      p[2] = static_cast<uint8_t>(200 - x * 3 - y * 2);
    }
  }
  ASSERT_TRUE(WriteJpeg(jpeg_, 16, 24, smooth));
  RECQ_ASSERT_OK_AND_ASSIGN(tools::DecodedImage jpg, tools::DecodeImageFile(jpeg_));
  EXPECT_STREQ(jpg.format, "JPEG");
  ASSERT_EQ(jpg.rgb.size(), smooth.size());
  double sum = 0;
  for (size_t i = 0; i < smooth.size(); ++i) {
    const int diff = std::abs(int(jpg.rgb[i]) - int(smooth[i]));
    EXPECT_LE(diff, 8) << i;
    sum += diff;
  }
  EXPECT_LT(sum / smooth.size(), 2.0);
  std::remove(jpeg_.c_str());
}

// A PNG of 48x40 through --input-format's mean / scale and the resize to
// the model's 32x32 gives bit for bit what the same pixels give as a raw
// u8 RGB frame file (whose path cli_test.sh checks against host
// normalization).
TEST_F(OnnxCommandsTest, RunFeedsPngThroughPreprocessing) {
  const std::vector<uint8_t> rgb = RandomPixels(40, 48, 9);
  ASSERT_TRUE(WritePng(image_, 40, 48, PNG_FORMAT_RGB, rgb));
  std::ofstream(raw_, std::ios::binary)
      .write(reinterpret_cast<const char*>(rgb.data()), static_cast<std::streamsize>(rgb.size()));
  tools::RunModelOptions options;
  options.model_path = model_;
  options.runs = 1;
  options.inputs = {"input=" + image_};
  options.outputs = {"prob=" + output_};
  options.input_format = "rgb,mean=120/110/100,scale=60/50/40";
  RECQ_ASSERT_OK(tools::RunModelCommand(options));
  options.inputs = {"input=" + raw_};
  options.outputs = {"prob=" + output2_};
  options.input_format = "rgb:48x40,mean=120/110/100,scale=60/50/40";
  RECQ_ASSERT_OK(tools::RunModelCommand(options));
  const std::string a = FileBytes(output_), b = FileBytes(output2_);
  ASSERT_EQ(a.size(), 10 * sizeof(float));
  EXPECT_EQ(a, b);
  float sum = 0;
  for (size_t i = 0; i < 10; ++i) sum += reinterpret_cast<const float*>(a.data())[i];
  EXPECT_NEAR(sum, 1.0f, 1e-4f);
  // A different photo gives different probabilities.
  ASSERT_TRUE(WritePng(image_, 40, 48, PNG_FORMAT_RGB, RandomPixels(40, 48, 10)));
  options.inputs = {"input=" + image_};
  options.input_format = "rgb,mean=120/110/100,scale=60/50/40";
  RECQ_ASSERT_OK(tools::RunModelCommand(options));
  EXPECT_NE(FileBytes(output2_), a);
  std::remove(raw_.c_str());
  std::remove(output2_.c_str());
}

TEST_F(OnnxCommandsTest, RunRejectsCorruptAndMismatchedImages) {
  tools::RunModelOptions options;
  options.model_path = model_;
  options.runs = 1;
  options.inputs = {"input=" + image_};
  // Not an image at all.
  std::ofstream(image_, std::ios::binary) << "this is not a PNG file";
  absl::Status s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("neither a PNG nor a JPEG signature"));
  EXPECT_THAT(s.message(), ::testing::HasSubstr(image_));
  // A PNG cut in half.
  ASSERT_TRUE(WritePng(image_, 40, 48, PNG_FORMAT_RGB, RandomPixels(40, 48, 11)));
  std::string png = FileBytes(image_);
  std::ofstream(image_, std::ios::binary | std::ios::trunc) << png.substr(0, png.size() / 2);
  s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("is not a readable PNG"));
  // A JPEG cut short.
  std::vector<uint8_t> smooth(32 * 32 * 3, 100);
  ASSERT_TRUE(WriteJpeg(jpeg_, 32, 32, smooth));
  std::string jpg = FileBytes(jpeg_);
  std::ofstream(jpeg_, std::ios::binary | std::ios::trunc) << jpg.substr(0, jpg.size() / 3);
  options.inputs = {"input=" + jpeg_};
  s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("is not a readable JPEG"));
  std::remove(jpeg_.c_str());
  // A good PNG with an --input-format that is not an RGB buffer.
  ASSERT_TRUE(WritePng(image_, 40, 48, PNG_FORMAT_RGB, RandomPixels(40, 48, 12)));
  options.inputs = {"input=" + image_};
  options.input_format = "nv12:48x40";
  s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("decodes to a u8 RGB NHWC buffer frame"));
  options.input_format = "rgb:64x64";
  s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("of 48x40"));
}
#endif  // RECQ_HAVE_PNG && RECQ_HAVE_JPEG

#if !defined(RECQ_HAVE_PNG) || !defined(RECQ_HAVE_JPEG)
// A build without libpng or libjpeg refuses a file it cannot decode with an
// error that names the missing library.
TEST_F(OnnxCommandsTest, RunOnAnImageSaysWhichDecoderTheBuildLacks) {
  tools::RunModelOptions options;
  options.model_path = model_;
  options.runs = 1;
  absl::Status s;
#ifndef RECQ_HAVE_PNG
  std::ofstream(image_, std::ios::binary) << std::string("\x89PNG\r\n\x1a\n", 8) << "pixels";
  options.inputs = {"input=" + image_};
  s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("built without libpng"));
#endif
#ifndef RECQ_HAVE_JPEG
  std::ofstream(jpeg_, std::ios::binary) << std::string("\xff\xd8\xff\xe0", 4) << "pixels";
  options.inputs = {"input=" + jpeg_};
  s = tools::RunModelCommand(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("built without libjpeg"));
#endif
}
#endif

}  // namespace
}  // namespace recq
