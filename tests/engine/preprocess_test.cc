// ApplyPrePostProcessing (recq/preprocess.h): the graph rewrite, every
// source kind against the CPU reference (buffers, NV12 planes, image2d),
// output post-processing, bad declarations, and bad bindings at Enqueue
// (InvalidArgument naming the binding, and nothing runs).
#include "recq/preprocess.h"

#include <cmath>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "engine/ops/preprocess.h"
#include "engine/ops/typed.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/onnx.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "reference/reference_registry.h"
#include "testing/frames.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using testing::Frame;
using ::testing::HasSubstr;
using testing::MakeFrame;
using testing::NewTensor;
using testing::PreprocessOf;
using testing::SharedContext;

// A model of `c` input channels at h x w: a 1x1 convolution to 4 channels
// and a Relu, output "y".
Graph SmallModel(int64_t c, int64_t h, int64_t w, uint64_t seed = 5) {
  GraphBuilder b;
  TensorRef x = b.Input("input", {1, c, h, w});
  reference::HostTensor wt = reference::RandomTensor({4, c, 1, 1}, seed, -0.5f, 0.5f);
  TensorRef y = b.Relu(b.Conv2D(x, b.Constant("w", wt.shape, wt.data), {}, {}));
  b.Output(y, "y");
  return std::move(b).Build().value();
}

struct Case {
  std::string name;
  InputPreprocess spec;
  int64_t model_c = 3;
  cl_channel_order order = CL_RGBA;  // RGBX images
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

InputPreprocess Spec(ColorFormat color, DataType type, MemoryKind kind, int64_t h, int64_t w,
                     TensorLayout layout = TensorLayout::kNHWC) {
  InputPreprocess s;
  s.color = color;
  s.element_type = type;
  s.kind = kind;
  s.source_height = h;
  s.source_width = w;
  s.layout = layout;
  s.mean = {120.0f, 110.0f, 100.0f};
  s.scale = {58.0f, 57.0f, 56.0f};
  return s;
}

std::vector<Case> AllCases() {
  using C = ColorFormat;
  using K = MemoryKind;
  const DataType u8 = DataType::kUInt8, f16 = DataType::kFloat16, f32 = DataType::kFloat32;
  std::vector<Case> cases = {
      {"rgb_u8_nhwc_resize", Spec(C::kRGB, u8, K::kBuffer, 37, 45)},
      {"bgr_f16_nchw", Spec(C::kBGR, f16, K::kBuffer, 16, 20, TensorLayout::kNCHW)},
      {"rgbx_f32_nhwc_upscale", Spec(C::kRGBX, f32, K::kBuffer, 9, 7)},
      {"bgrx_u8_nchw_resize", Spec(C::kBGRX, u8, K::kBuffer, 30, 26, TensorLayout::kNCHW)},
      {"nv12_two_plane", Spec(C::kNv12TwoPlane, u8, K::kBuffer, 36, 48)},
      {"nv12_single_plane", Spec(C::kNv12SinglePlane, u8, K::kBuffer, 24, 32)},
      {"image_rgba_unorm8", Spec(C::kRGBX, u8, K::kImage2D, 33, 41)},
      {"image_bgra_unorm8", Spec(C::kRGBX, u8, K::kImage2D, 16, 20), 3, CL_BGRA},
      {"image_rgba_float", Spec(C::kRGBX, f32, K::kImage2D, 21, 17)},
      {"image_nv12_unorm8", Spec(C::kNv12TwoPlane, u8, K::kImage2D, 40, 56)},
      {"image_nv12_float", Spec(C::kNv12TwoPlane, f32, K::kImage2D, 20, 24)},
  };
  Case gray{"gray_u8_resize", Spec(C::kGray, u8, K::kBuffer, 31, 29), 1};
  gray.spec.mean = {127.0f};
  gray.spec.scale = {64.0f};
  cases.push_back(gray);
  Case gray_image{"image_gray_unorm8", gray.spec, 1};
  gray_image.spec.kind = K::kImage2D;
  cases.push_back(gray_image);
  Case bgr_model{"nv12_to_bgr_model", Spec(C::kNv12TwoPlane, u8, K::kBuffer, 16, 20)};
  bgr_model.spec.model_color = C::kBGR;
  cases.push_back(bgr_model);
  Case offset{"nv12_single_plane_uv_offset", Spec(C::kNv12SinglePlane, u8, K::kBuffer, 16, 20)};
  offset.spec.uv_offset = 16 * 20 + 64;
  cases.push_back(offset);
  return cases;
}

class PreprocessKindTest : public ::testing::TestWithParam<std::tuple<Case, bool>> {};

// The model fed by the fused preprocessing equals the CPU reference of the
// rewritten graph, with both kernel families, recorded and unrecorded, over
// fresh frames in fresh memory.
TEST_P(PreprocessKindTest, MatchesTheCpuReference) {
  const auto& [c, gpu] = GetParam();
  Graph g = SmallModel(c.model_c, 16, 20);
  PrePostProcessing ppp;
  ppp.inputs["input"] = c.spec;
  RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
  const internal::PreprocessAttrs* attrs = PreprocessOf(g);
  ASSERT_NE(attrs, nullptr);
  EngineOptions options;
  options.kernel_target =
      gpu ? EngineOptions::KernelTarget::kGpu : EngineOptions::KernelTarget::kCpu;
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g, options));
  for (Backend backend : {Backend::kAuto, Backend::kUnrecorded}) {
    RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record({backend}));
    // The preprocessing is one fused dispatch before the convolution's.
    EXPECT_EQ(rec.dispatch_count(), 2u);
    Tensor out = NewTensor(engine.outputs()[0].desc);
    for (uint64_t seed : {11u, 12u}) {
      RECQ_ASSERT_OK_AND_ASSIGN(Frame frame,
                                MakeFrame(SharedContext().context(), *attrs, seed, c.order));
      RECQ_ASSERT_OK(out.Fill(NAN));
      Bindings b;
      frame.Bind(b, "input");
      b.Set("y", out);
      RECQ_ASSERT_OK(rec.Run(b));
      absl::flat_hash_map<std::string, reference::HostTensor> inputs;
      const std::vector<std::string> names = frame.planes.size() == 2
                                                 ? std::vector<std::string>{"input/y", "input/uv"}
                                                 : std::vector<std::string>{"input"};
      for (size_t i = 0; i < names.size(); ++i) inputs[names[i]] = frame.values[i];
      RECQ_ASSERT_OK_AND_ASSIGN(auto expected, reference::RunReference(g, inputs));
      // Float arithmetic on the u8 scale against the reference's double:
      // about 1e-5 relative before the normalization.
      const reference::CompareResult r =
          reference::Compare(Download(out), expected["y"].data, 2e-3f, 1e-3f);
      EXPECT_TRUE(r.ok()) << c.name << " " << BackendName(backend) << " seed " << seed << ": "
                          << r.ToString();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, PreprocessKindTest,
                         ::testing::Combine(::testing::ValuesIn(AllCases()), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param).name +
                                  (std::get<1>(info.param) ? "_gpu" : "_cpu");
                         });

// An engine file keeps the image bindings: the loaded engine takes the same
// NV12 images, rejects a buffer there, and computes the same bits.
TEST(PreprocessTest, EngineFilesKeepImageBindings) {
  Graph g = SmallModel(3, 16, 20);
  PrePostProcessing ppp;
  ppp.inputs["input"] =
      Spec(ColorFormat::kNv12TwoPlane, DataType::kUInt8, MemoryKind::kImage2D, 24, 32);
  RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, engine.Serialize());
  RECQ_ASSERT_OK_AND_ASSIGN(Engine loaded, LoadEngineFromBytes(SharedContext(), bytes));
  RECQ_ASSERT_OK_AND_ASSIGN(Frame frame,
                            MakeFrame(SharedContext().context(), *PreprocessOf(g), 21));
  std::vector<std::vector<float>> outs;
  for (const Engine* e : {&engine, &loaded}) {
    RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, e->Record());
    Tensor out = NewTensor(e->outputs()[0].desc);
    Bindings b;
    frame.Bind(b, "input");
    b.Set("y", out);
    RECQ_ASSERT_OK(rec.Run(b));
    outs.push_back(Download(out));
    Tensor plane = NewTensor({{1, 24, 32, 1}});
    b.Set("input/y", plane);
    absl::Status s = rec.Run(b);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("binding 'input/y' is a buffer; the engine binds an image2d"));
  }
  ASSERT_EQ(outs[0].size(), outs[1].size());
  EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(float)), 0);
}

// BindingInfo says what each pre-processed input takes, for compiled and
// loaded engines and engine-file summaries (recq info) alike.
TEST(PreprocessTest, BindingInfoSaysWhatPreprocessedInputsTake) {
  struct Case {
    ColorFormat color;
    MemoryKind kind;
    std::vector<std::string> names;
    std::vector<std::string> described;
  };
  const std::vector<Case> cases = {
      {ColorFormat::kNv12TwoPlane,
       MemoryKind::kImage2D,
       {"input/y", "input/uv"},
       {"1x24x32x1 uint8, NV12 Y plane, image2d", "1x12x16x2 uint8, NV12 UV plane, image2d"}},
      {ColorFormat::kNv12TwoPlane,
       MemoryKind::kBuffer,
       {"input/y", "input/uv"},
       {"1x24x32x1 uint8, NV12 Y plane, buffer", "1x12x16x2 uint8, NV12 UV plane, buffer"}},
      {ColorFormat::kRGBX,
       MemoryKind::kImage2D,
       {"input"},
       {"1x24x32x4 uint8, rgbx frame, image2d"}},
      {ColorFormat::kBGR, MemoryKind::kBuffer, {"input"}, {"1x24x32x3 uint8, bgr frame, buffer"}},
  };
  for (const Case& c : cases) {
    Graph g = SmallModel(3, 16, 20);
    PrePostProcessing ppp;
    ppp.inputs["input"] = Spec(c.color, DataType::kUInt8, c.kind, 24, 32);
    RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
    RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
    RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, engine.Serialize());
    RECQ_ASSERT_OK_AND_ASSIGN(Engine loaded, LoadEngineFromBytes(SharedContext(), bytes));
    RECQ_ASSERT_OK_AND_ASSIGN(EngineFileSummary summary, SummarizeEngineFile(bytes));
    const std::vector<BindingInfo>* lists[] = {&engine.inputs(), &loaded.inputs(), &summary.inputs};
    for (const std::vector<BindingInfo>* inputs : lists) {
      ASSERT_EQ(inputs->size(), c.names.size());
      for (size_t i = 0; i < c.names.size(); ++i) {
        const BindingInfo& b = (*inputs)[i];
        EXPECT_EQ(b.name, c.names[i]);
        EXPECT_TRUE(b.preprocessed);
        EXPECT_EQ(b.color, c.color);
        EXPECT_EQ(b.memory, c.kind);
        EXPECT_EQ(b.Describe(), c.described[i]);
      }
    }
    EXPECT_FALSE(engine.outputs()[0].preprocessed);
    EXPECT_EQ(engine.outputs()[0].Describe(), engine.outputs()[0].desc.ToString());
  }
}

// OnnxOptions::prepost applies the same rewrite to an imported model.
TEST(PreprocessTest, LoadOnnxAppliesOnnxOptionsPrepost) {
  RECQ_ASSERT_OK_AND_ASSIGN(std::string onnx, SaveOnnxToBytes(SmallModel(3, 16, 20), "small"));
  OnnxOptions options;
  options.prepost.inputs["input"] =
      Spec(ColorFormat::kBGR, DataType::kUInt8, MemoryKind::kBuffer, 32, 40);
  options.prepost.outputs["y"] = {DataType::kFloat16, TensorLayout::kNHWC};
  RECQ_ASSERT_OK_AND_ASSIGN(Graph g, LoadOnnxFromBytes(onnx, options));
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.value(g.inputs()[0]).desc.ToString(), "1x32x40x3 uint8");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).desc.ToString(), "1x16x20x4 float16");
  options.prepost.inputs["frame"] = options.prepost.inputs["input"];
  EXPECT_THAT(LoadOnnxFromBytes(onnx, options).status().message(),
              HasSubstr("preprocessing names input 'frame'; the graph's inputs are 'input'"));
}

// A float16 model input: the kernel writes halves (vstore_half).
TEST(PreprocessTest, WritesAFloat16ModelInput) {
  GraphBuilder b;
  TensorRef x = b.Input("input", {1, 3, 12, 10}, DataType::kFloat16);
  b.Output(b.Relu(b.AddNode(internal::kCast, {x}, internal::CastAttrs{DataType::kFloat32})), "y");
  Graph g = std::move(b).Build().value();
  PrePostProcessing ppp;
  ppp.inputs["input"] = Spec(ColorFormat::kRGB, DataType::kUInt8, MemoryKind::kBuffer, 23, 17);
  RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record());
  RECQ_ASSERT_OK_AND_ASSIGN(Frame frame, MakeFrame(SharedContext().context(), *PreprocessOf(g), 4));
  Tensor out = NewTensor(engine.outputs()[0].desc);
  Bindings bind;
  frame.Bind(bind, "input");
  bind.Set("y", out);
  RECQ_ASSERT_OK(rec.Run(bind));
  RECQ_ASSERT_OK_AND_ASSIGN(auto expected,
                            reference::RunReference(g, {{"input", frame.values[0]}}));
  // The reference rounds the preprocessed values to half as well; the
  // kernel's float rounding may flip one half ulp (2^-11 relative).
  const reference::CompareResult r =
      reference::Compare(Download(out), expected["y"].data, 1e-3f, 1e-3f);
  EXPECT_TRUE(r.ok()) << r.ToString();
}

TEST(PreprocessTest, RewritesTheInputsAndKeepsTheirNames) {
  Graph g = SmallModel(3, 224, 224);
  PrePostProcessing ppp;
  ppp.inputs["input"] =
      Spec(ColorFormat::kNv12TwoPlane, DataType::kUInt8, MemoryKind::kBuffer, 720, 1280);
  RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
  ASSERT_EQ(g.inputs().size(), 2u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, "input/y");
  EXPECT_EQ(g.value(g.inputs()[0]).desc.ToString(), "1x720x1280x1 uint8");
  EXPECT_EQ(g.value(g.inputs()[1]).name, "input/uv");
  EXPECT_EQ(g.value(g.inputs()[1]).desc.ToString(), "1x360x640x2 uint8");
  EXPECT_EQ(g.nodes()[0].op, internal::kPreprocess);
}

TEST(PreprocessTest, OutputsConvertToHalfAndNhwc) {
  GraphBuilder b;
  TensorRef x = b.Input("x", {1, 3, 5, 7});
  b.Output(b.Relu(x), "y");
  Graph g = std::move(b).Build().value();
  PrePostProcessing ppp;
  ppp.outputs["y"] = {DataType::kFloat16, TensorLayout::kNHWC};
  RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  ASSERT_EQ(engine.outputs()[0].name, "y");
  EXPECT_EQ(engine.outputs()[0].desc.ToString(), "1x5x7x3 float16");
  reference::HostTensor in = reference::RandomTensor({1, 3, 5, 7}, 3, -2.0f, 2.0f);
  Tensor xt = NewTensor({{1, 3, 5, 7}}, in.data);
  RECQ_ASSERT_OK_AND_ASSIGN(Tensor out,
                            Tensor::Allocate(SharedContext(), engine.outputs()[0].desc));
  const uint16_t poison = 0x7e00;
  RECQ_ASSERT_OK(out.FillBytes(&poison, 2));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record());
  Bindings bind;
  bind.Set("x", xt);
  bind.Set("y", out);
  RECQ_ASSERT_OK(rec.Run(bind));
  RECQ_ASSERT_OK_AND_ASSIGN(std::vector<uint16_t> got, out.DownloadAs<uint16_t>());
  for (int64_t h = 0; h < 5; ++h) {
    for (int64_t w = 0; w < 7; ++w) {
      for (int64_t c = 0; c < 3; ++c) {
        const float want = std::max(in.data[(c * 5 + h) * 7 + w], 0.0f);
        EXPECT_EQ(got[(h * 7 + w) * 3 + c], FloatToHalf(want)) << h << "," << w << "," << c;
      }
    }
  }
}

TEST(PreprocessTest, BadDeclarationsNameTheInput) {
  auto error = [](InputPreprocess spec, int64_t c = 3, const std::string& name = "input") {
    Graph g = SmallModel(c, 16, 20);
    PrePostProcessing ppp;
    ppp.inputs[name] = spec;
    absl::Status s = ApplyPrePostProcessing(g, ppp);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_EQ(g.nodes().size(), 2u) << "the graph is unchanged on error";
    return std::string(s.message());
  };
  using C = ColorFormat;
  const DataType u8 = DataType::kUInt8;
  EXPECT_THAT(error(Spec(C::kRGB, u8, MemoryKind::kBuffer, 16, 20), 3, "frame"),
              HasSubstr("'input'"));
  EXPECT_THAT(error(Spec(C::kNv12TwoPlane, u8, MemoryKind::kBuffer, 15, 20)),
              HasSubstr("must be even"));
  EXPECT_THAT(error(Spec(C::kRGB, u8, MemoryKind::kImage2D, 16, 20)), HasSubstr("image2d form"));
  EXPECT_THAT(error(Spec(C::kRGBX, DataType::kFloat16, MemoryKind::kImage2D, 16, 20)),
              HasSubstr("not float16"));
  EXPECT_THAT(error(Spec(C::kRGB, DataType::kInt32, MemoryKind::kBuffer, 16, 20)),
              HasSubstr("element type int32"));
  EXPECT_THAT(error(Spec(C::kRGB, u8, MemoryKind::kBuffer, 16, 20), 1),
              HasSubstr("needs a gray source"));
  InputPreprocess bad_mean = Spec(C::kRGB, u8, MemoryKind::kBuffer, 16, 20);
  bad_mean.mean = {1, 2};
  EXPECT_THAT(error(bad_mean), HasSubstr("mean has 2 values"));
  InputPreprocess zero_scale = Spec(C::kRGB, u8, MemoryKind::kBuffer, 16, 20);
  zero_scale.scale = {1, 0, 1};
  EXPECT_THAT(error(zero_scale), HasSubstr("zero"));
  InputPreprocess inside = Spec(C::kNv12SinglePlane, u8, MemoryKind::kBuffer, 16, 20);
  inside.uv_offset = 100;
  EXPECT_THAT(error(inside), HasSubstr("inside the Y plane"));
  // A batch of 2 cannot come from one image.
  GraphBuilder b;
  b.Output(b.Relu(b.Input("input", {2, 3, 8, 8})), "y");
  Graph g2 = std::move(b).Build().value();
  PrePostProcessing ppp;
  ppp.inputs["input"] = Spec(C::kRGBX, u8, MemoryKind::kImage2D, 8, 8);
  EXPECT_THAT(ApplyPrePostProcessing(g2, ppp).message(), HasSubstr("batch is 2"));
}

TEST(PreprocessTest, ParsesTheCliFormat) {
  RECQ_ASSERT_OK_AND_ASSIGN(
      InputPreprocess in,
      ParseInputFormat("nv12:1280x720,mean=123.675/116.28/103.53,scale=58.4/57.1/57.4"));
  EXPECT_EQ(in.color, ColorFormat::kNv12TwoPlane);
  EXPECT_EQ(in.source_width, 1280);
  EXPECT_EQ(in.source_height, 720);
  ASSERT_EQ(in.mean.size(), 3u);
  EXPECT_FLOAT_EQ(in.mean[1], 116.28f);
  RECQ_ASSERT_OK_AND_ASSIGN(InputPreprocess rgb,
                            ParseInputFormat("bgr:64x48,type=f32,layout=nchw,model=bgr"));
  EXPECT_EQ(rgb.color, ColorFormat::kBGR);
  EXPECT_EQ(rgb.element_type, DataType::kFloat32);
  EXPECT_EQ(rgb.layout, TensorLayout::kNCHW);
  EXPECT_EQ(rgb.model_color, ColorFormat::kBGR);
  EXPECT_THAT(ParseInputFormat("yuv420").status().message(), HasSubstr("unknown colour"));
  EXPECT_THAT(ParseInputFormat("nv12:1280").status().message(), HasSubstr("WIDTHxHEIGHT"));
  EXPECT_THAT(ParseInputFormat("rgb,gamma=2").status().message(), HasSubstr("'gamma=2'"));
}

// --- bad bindings at Enqueue ---

class BadBindingTest : public ::testing::Test {
 protected:
  // Compiles SmallModel with `spec` and records it.
  void Prepare(const InputPreprocess& spec, int64_t c = 3) {
    Graph g = SmallModel(c, 16, 20);
    PrePostProcessing ppp;
    ppp.inputs["input"] = spec;
    RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
    attrs_ = *PreprocessOf(g);
    RECQ_ASSERT_OK_AND_ASSIGN(Engine e, Engine::Compile(SharedContext(), g));
    engine_ = std::make_unique<Engine>(std::move(e));
    RECQ_ASSERT_OK_AND_ASSIGN(Recording r, engine_->Record());
    rec_ = std::make_unique<Recording>(std::move(r));
    out_ = NewTensor(engine_->outputs()[0].desc);
  }

  cl::UniqueMem Image(cl_channel_order order, cl_channel_type type, size_t w, size_t h,
                      cl_mem_flags flags = CL_MEM_READ_ONLY) {
    cl_image_format format = {order, type};
    cl_image_desc desc = {};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w;
    desc.image_height = h;
    cl_int err = CL_SUCCESS;
    cl::UniqueMem mem(
        clCreateImage(SharedContext().context(), flags, &format, &desc, nullptr, &err));
    EXPECT_EQ(err, CL_SUCCESS);
    return mem;
  }

  // U8Tensor allocates a uint8 tensor of ones.
  Tensor U8Tensor(std::vector<int64_t> shape) {
    absl::StatusOr<Tensor> t = Tensor::Allocate(SharedContext(), {shape, DataType::kUInt8});
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) return {};
    const uint8_t one = 1;
    EXPECT_TRUE(t->FillBytes(&one, 1).ok());
    return *t;
  }

  // ExpectRejected enqueues with `b` (plus the output) and expects an
  // InvalidArgument naming `binding` and containing `what`; the output
  // stays poisoned.
  void ExpectRejected(Bindings b, const std::string& binding, const std::string& what) {
    RECQ_ASSERT_OK(out_.Fill(NAN));
    b.Set("y", out_);
    absl::Status s = rec_->Run(b);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_THAT(s.message(), HasSubstr("'" + binding + "'"));
    EXPECT_THAT(s.message(), HasSubstr(what));
    for (float v : Download(out_)) ASSERT_TRUE(std::isnan(v)) << "something ran";
  }

  internal::PreprocessAttrs attrs_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Recording> rec_;
  Tensor out_;
};

TEST_F(BadBindingTest, RgbaImage) {
  Prepare(Spec(ColorFormat::kRGBX, DataType::kUInt8, MemoryKind::kImage2D, 16, 20));
  RECQ_ASSERT_OK_AND_ASSIGN(Frame good, MakeFrame(SharedContext().context(), attrs_, 1));
  Bindings b;
  b.Set("input", good.planes[0].get());
  b.Set("y", out_);
  RECQ_ASSERT_OK(rec_->Run(b));  // the good one runs
  cl::UniqueMem wrong_type = Image(CL_RGBA, CL_FLOAT, 20, 16);
  cl::UniqueMem wrong_order = Image(CL_R, CL_UNORM_INT8, 20, 16);
  cl::UniqueMem wrong_size = Image(CL_RGBA, CL_UNORM_INT8, 16, 20);
  cl::UniqueMem write_only = Image(CL_RGBA, CL_UNORM_INT8, 20, 16, CL_MEM_WRITE_ONLY);
  Tensor buffer = U8Tensor({1, 16, 20, 4});
  Bindings b1;
  b1.Set("input", wrong_type.get());
  ExpectRejected(b1, "input", "CL_RGBA / CL_FLOAT");
  b1.Set("input", wrong_order.get());
  ExpectRejected(b1, "input", "CL_R / CL_UNORM_INT8");
  b1.Set("input", wrong_size.get());
  ExpectRejected(b1, "input", "image 16x20");
  b1.Set("input", write_only.get());
  ExpectRejected(b1, "input", "write-only");
  b1.Set("input", buffer.mem());
  ExpectRejected(b1, "input", "is a buffer; the engine binds an image2d 20x16");
}

TEST_F(BadBindingTest, Nv12Planes) {
  Prepare(Spec(ColorFormat::kNv12TwoPlane, DataType::kUInt8, MemoryKind::kImage2D, 16, 20));
  cl::UniqueMem y = Image(CL_R, CL_UNORM_INT8, 20, 16);
  const bool rg = testing::HasRgImages(SharedContext().context(), CL_UNORM_INT8);
  cl::UniqueMem uv = rg ? Image(CL_RG, CL_UNORM_INT8, 10, 8) : Image(CL_RGBA, CL_UNORM_INT8, 5, 8);
  cl::UniqueMem full_uv =
      rg ? Image(CL_RG, CL_UNORM_INT8, 20, 16) : Image(CL_RGBA, CL_UNORM_INT8, 10, 16);
  Bindings good;
  good.SetNv12("input", y.get(), uv.get());
  good.Set("y", out_);
  RECQ_ASSERT_OK(rec_->Run(good));
  Bindings b;
  b.SetNv12("input", uv.get(), y.get());  // planes swapped
  ExpectRejected(b, "input/y", "the engine binds an image2d 20x16 of CL_R");
  b.SetNv12("input", y.get(), full_uv.get());
  ExpectRejected(b, "input/uv", rg ? "image 20x16" : "image 10x16");
  Bindings missing;
  missing.Set("input/y", y.get());
  ExpectRejected(missing, "input/uv", "missing binding");
  Bindings whole;
  whole.Set("input", y.get());
  ExpectRejected(whole, "input", "unknown binding");
}

TEST_F(BadBindingTest, ImageOfAnotherContext) {
  InputPreprocess gray = Spec(ColorFormat::kGray, DataType::kUInt8, MemoryKind::kImage2D, 16, 20);
  gray.mean = {127.0f};
  gray.scale = {64.0f};
  Prepare(gray, 1);
  cl_device_id device = SharedContext().device();
  cl_int err = CL_SUCCESS;
  cl_context other = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_image_format format = {CL_R, CL_UNORM_INT8};
  cl_image_desc desc = {};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 20;
  desc.image_height = 16;
  cl::UniqueMem image(clCreateImage(other, CL_MEM_READ_ONLY, &format, &desc, nullptr, &err));
  ASSERT_EQ(err, CL_SUCCESS);
  Bindings b;
  b.Set("input", image.get());
  ExpectRejected(b, "input", "another OpenCL context");
  image.reset();
  clReleaseContext(other);
}

TEST_F(BadBindingTest, BufferWhereTheDeclarationSaysBuffer) {
  Prepare(Spec(ColorFormat::kNv12SinglePlane, DataType::kUInt8, MemoryKind::kBuffer, 16, 20));
  cl::UniqueMem image = Image(CL_R, CL_UNORM_INT8, 20, 24);
  Tensor small = U8Tensor({1, 400});
  Bindings b;
  b.Set("input", image.get());
  ExpectRejected(b, "input", "is an image2d; the engine binds a buffer");
  b.Set("input", small.mem());
  ExpectRejected(b, "input", "has 400 bytes");
}

}  // namespace
}  // namespace recq
