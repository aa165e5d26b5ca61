// Every binding kind of recq/preprocess.h substituted per run on every
// recording backend: buffers of each element type, NV12 in two planes and in
// one buffer with a UV offset, and image2d (RGBA, BGRA, R, NV12 as R + RG;
// 8-bit unorm and float). Outputs must be bit-identical to the replay list's
// over a sequence of frames in different memory (A, B, A, C), and never
// NaN. Runs plain, under the qcom emulation layer ("layer.") and under the
// mutable-dispatch emulation ("khr_mutable."), like the rest of the suite.
#include <cmath>
#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/frames.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using testing::Frame;
using testing::MakeFrame;
using testing::NewTensor;
using testing::PreprocessOf;
using testing::SharedContext;

struct Kind {
  std::string name;
  ColorFormat color;
  DataType type;
  MemoryKind memory;
  cl_channel_order order = CL_RGBA;
  int64_t uv_offset = 0;
};

void PrintTo(const Kind& kind, std::ostream* os) { *os << kind.name; }

std::vector<Kind> Kinds() {
  using C = ColorFormat;
  using M = MemoryKind;
  return {
      {"buffer_rgb_u8", C::kRGB, DataType::kUInt8, M::kBuffer},
      {"buffer_bgr_f16", C::kBGR, DataType::kFloat16, M::kBuffer},
      {"buffer_rgbx_f32", C::kRGBX, DataType::kFloat32, M::kBuffer},
      {"buffer_nv12_two_plane", C::kNv12TwoPlane, DataType::kUInt8, M::kBuffer},
      {"buffer_nv12_one_plane_uv_offset", C::kNv12SinglePlane, DataType::kUInt8, M::kBuffer,
       CL_RGBA, 24 * 32 + 96},
      {"image_rgba_unorm8", C::kRGBX, DataType::kUInt8, M::kImage2D},
      {"image_bgra_unorm8", C::kRGBX, DataType::kUInt8, M::kImage2D, CL_BGRA},
      {"image_rgba_float", C::kRGBX, DataType::kFloat32, M::kImage2D},
      {"image_r_unorm8", C::kGray, DataType::kUInt8, M::kImage2D},
      {"image_nv12_unorm8", C::kNv12TwoPlane, DataType::kUInt8, M::kImage2D},
      {"image_nv12_float", C::kNv12TwoPlane, DataType::kFloat32, M::kImage2D},
  };
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class BindingKindConformanceTest : public ::testing::TestWithParam<std::tuple<Backend, Kind>> {};

TEST_P(BindingKindConformanceTest, SubstitutesEveryRunBitIdenticalToReplay) {
  const auto& [backend, kind] = GetParam();
  const int64_t c = kind.color == ColorFormat::kGray ? 1 : 3;
  // A 24x32 frame resized to 12x14, then a 3x3 convolution and a Relu.
  GraphBuilder b;
  TensorRef x = b.Input("frame", {1, c, 12, 14});
  reference::HostTensor w = reference::RandomTensor({4, c, 3, 3}, 77, -0.4f, 0.4f);
  Conv2DAttrs pad;
  pad.pads = {1, 1, 1, 1};
  b.Output(b.Relu(b.Conv2D(x, b.Constant("w", w.shape, w.data), {}, pad)), "y");
  Graph g = std::move(b).Build().value();
  PrePostProcessing ppp;
  InputPreprocess& in = ppp.inputs["frame"];
  in.color = kind.color;
  in.element_type = kind.type;
  in.kind = kind.memory;
  in.source_height = 24;
  in.source_width = 32;
  in.uv_offset = kind.uv_offset;
  in.mean = {100.0f};
  in.scale = {50.0f};
  RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
  const internal::PreprocessAttrs attrs = *PreprocessOf(g);
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(SharedContext(), g));
  absl::StatusOr<Recording> rec = engine.Record({backend});
  if (absl::IsUnavailable(rec.status())) GTEST_SKIP() << rec.status().message();
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(rec->backend(), backend);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine.Record({Backend::kReplay}));
  std::vector<Frame> frames;
  for (uint64_t seed : {1u, 2u, 3u}) {
    RECQ_ASSERT_OK_AND_ASSIGN(Frame f,
                              MakeFrame(SharedContext().context(), attrs, seed, kind.order));
    frames.push_back(std::move(f));
  }
  const TensorDesc out_desc = engine.outputs()[0].desc;
  Tensor out_a = NewTensor(out_desc), out_b = NewTensor(out_desc), expected = NewTensor(out_desc);
  const std::vector<std::pair<int, Tensor*>> steps = {
      {0, &out_a}, {1, &out_a}, {0, &out_b}, {2, &out_b}, {1, &out_a}};
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto [f, out] = steps[i];
    RECQ_ASSERT_OK(expected.Fill(NAN));
    RECQ_ASSERT_OK(out->Fill(NAN));
    Bindings want, got;
    frames[f].Bind(want, "frame");
    want.Set("y", expected);
    frames[f].Bind(got, "frame");
    got.Set("y", *out);
    RECQ_ASSERT_OK(replay.Run(want));
    RECQ_ASSERT_OK(rec->Run(got));
    const std::vector<float> e = Download(expected), a = Download(*out);
    for (float v : e) ASSERT_FALSE(std::isnan(v)) << "step " << i;
    EXPECT_TRUE(SameBits(a, e)) << kind.name << " step " << i;
  }
  // Different frames give different outputs (the substitution is real).
  Bindings b0, b1;
  frames[0].Bind(b0, "frame");
  b0.Set("y", out_a);
  frames[1].Bind(b1, "frame");
  b1.Set("y", out_b);
  RECQ_ASSERT_OK(rec->Run(b0));
  RECQ_ASSERT_OK(rec->Run(b1));
  EXPECT_FALSE(SameBits(Download(out_a), Download(out_b)));
}

INSTANTIATE_TEST_SUITE_P(
    AllBackends, BindingKindConformanceTest,
    ::testing::Combine(::testing::Values(Backend::kReplay, Backend::kUnrecorded,
                                         Backend::kKhrCommandBuffer, Backend::kQcom),
                       ::testing::ValuesIn(Kinds())),
    [](const auto& info) {
      return std::string(BackendName(std::get<0>(info.param))) + "_" + std::get<1>(info.param).name;
    });

}  // namespace
}  // namespace recq
