// Every binding kind of recq/preprocess.h substituted per run on every
// recording backend: buffers of each element type, NV12 in two planes and in
// one buffer with a UV offset, image2d (RGBA, BGRA, R, NV12 as R + RG;
// 8-bit unorm and float), and SVM (Bindings::SetSvm: inputs and outputs in
// SVM allocations, some at offsets in a shared pool, alternating with
// cl_mem bindings of the same slot). Outputs must be bit-identical to the
// replay list's over a sequence of frames in different memory (A, B, A, C),
// and never NaN. Runs plain, under the qcom emulation layer ("layer.", where
// SVM replays go through clEnqueueRecordingSVMQCOM) and under the
// mutable-dispatch emulation ("khr_mutable.", SVM pointers in
// arg_svm_list), like the rest of the suite.
//
// SvmBindingErrorTest: every bad SVM binding is InvalidArgument naming the
// binding, and nothing runs (the output keeps its NaN poison).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
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
  bool svm = false;  // bind frames and outputs as SVM (buffers only)
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
      {"svm_rgb_u8", C::kRGB, DataType::kUInt8, M::kBuffer, CL_RGBA, 0, true},
      {"svm_rgbx_f32", C::kRGBX, DataType::kFloat32, M::kBuffer, CL_RGBA, 0, true},
      {"svm_nv12_two_plane", C::kNv12TwoPlane, DataType::kUInt8, M::kBuffer, CL_RGBA, 0, true},
  };
}

// SvmOf returns the context's device SVM capabilities (0: none).
cl_device_svm_capabilities SvmOf(const Context& ctx) {
  cl_device_svm_capabilities caps = 0;
  if (clGetDeviceInfo(ctx.device(), CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, nullptr) !=
      CL_SUCCESS) {
    return 0;
  }
  return caps;
}

// One clSVMAlloc allocation, freed on destruction.
class SvmAllocation {
 public:
  SvmAllocation(cl_context context, size_t bytes)
      : context_(context), bytes_(bytes), ptr_(clSVMAlloc(context, CL_MEM_READ_WRITE, bytes, 0)) {}
  SvmAllocation(const SvmAllocation&) = delete;
  SvmAllocation& operator=(const SvmAllocation&) = delete;
  ~SvmAllocation() {
    if (ptr_ != nullptr) clSVMFree(context_, ptr_);
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  cl_context context_;
  size_t bytes_;
  void* ptr_;
};

// A binding's SVM region: an allocation and an offset in it.
struct SvmRegion {
  const SvmAllocation* allocation = nullptr;
  size_t offset = 0;
  size_t bytes = 0;
  void* at() const { return static_cast<char*>(allocation->get()) + offset; }
};

// Coarse-grained SVM: the host touches the region only while it is mapped,
// and unmaps it (on the queue the runs use) before a run reads it.
absl::Status WriteSvm(cl_command_queue queue, const SvmRegion& r, const void* data) {
  cl_int err = clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE, r.at(), r.bytes, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return absl::InternalError(absl::StrCat("clEnqueueSVMMap: ", err));
  std::memcpy(r.at(), data, r.bytes);
  err = clEnqueueSVMUnmap(queue, r.at(), 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return absl::InternalError(absl::StrCat("clEnqueueSVMUnmap: ", err));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> ReadSvmFloats(cl_command_queue queue, const SvmRegion& r) {
  std::vector<float> out(r.bytes / sizeof(float));
  cl_int err = clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_READ, r.at(), r.bytes, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return absl::InternalError(absl::StrCat("clEnqueueSVMMap: ", err));
  std::memcpy(out.data(), r.at(), r.bytes);
  err = clEnqueueSVMUnmap(queue, r.at(), 0, nullptr, nullptr);
  if (err == CL_SUCCESS) err = clFinish(queue);
  if (err != CL_SUCCESS) return absl::InternalError(absl::StrCat("clEnqueueSVMUnmap: ", err));
  return out;
}

// RoundUp rounds `bytes` up to the device's base-address alignment.
size_t AlignUp(size_t bytes, size_t align) { return (bytes + align - 1) / align * align; }

// DownloadBytes reads a cl_mem buffer's bytes.
std::vector<uint8_t> BufferBytes(cl_command_queue queue, cl_mem mem) {
  size_t size = 0;
  clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
  std::vector<uint8_t> bytes(size);
  EXPECT_EQ(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, size, bytes.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  return bytes;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// RunSvmSequence runs `rec` on the frames copied into SVM: frames 0 and 1
// in one pool allocation (frame 1 at an aligned offset), frame 2 in its
// own; outputs in SVM too (A alone, B at an offset in a pool), and, at one
// step, the frame bound as its cl_mem buffer instead. Every output must be
// bit-identical to `replay` run on the cl_mem frames.
void RunSvmSequence(Recording& rec, Recording& replay, const std::vector<Frame>& frames,
                    const TensorDesc& out_desc, const std::string& name) {
  const Context& ctx = SharedContext();
  if ((SvmOf(ctx) & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) == 0) {
    GTEST_SKIP() << "the device has no SVM";
  }
  cl_command_queue queue = ctx.queue();
  const size_t align = ctx.device_info().mem_base_addr_align_bytes;
  const size_t planes = frames[0].planes.size();
  // Per frame and plane: the plane's bytes and its SVM region.
  std::vector<std::vector<std::vector<uint8_t>>> bytes(frames.size());
  size_t frame_bytes = 0;  // of all planes, each aligned
  std::vector<size_t> plane_at;
  for (size_t f = 0; f < frames.size(); ++f) {
    for (const cl::UniqueMem& plane : frames[f].planes) {
      bytes[f].push_back(BufferBytes(queue, plane.get()));
    }
  }
  for (size_t p = 0; p < planes; ++p) {
    plane_at.push_back(frame_bytes);
    frame_bytes += AlignUp(bytes[0][p].size(), align);
  }
  SvmAllocation pool(ctx.context(), 2 * frame_bytes), own(ctx.context(), frame_bytes);
  const size_t out_bytes = out_desc.ByteSize();
  SvmAllocation out_a(ctx.context(), out_bytes),
      out_pool(ctx.context(), 3 * AlignUp(out_bytes, align));
  ASSERT_NE(pool.get(), nullptr);
  ASSERT_NE(own.get(), nullptr);
  ASSERT_NE(out_a.get(), nullptr);
  ASSERT_NE(out_pool.get(), nullptr);
  std::vector<std::vector<SvmRegion>> regions(frames.size());
  for (size_t f = 0; f < frames.size(); ++f) {
    for (size_t p = 0; p < planes; ++p) {
      SvmRegion r{f == 2 ? &own : &pool, (f == 1 ? frame_bytes : 0) + plane_at[p],
                  bytes[f][p].size()};
      RECQ_ASSERT_OK(WriteSvm(queue, r, bytes[f][p].data()));
      regions[f].push_back(r);
    }
  }
  const SvmRegion outs[] = {{&out_a, 0, out_bytes},
                            {&out_pool, AlignUp(out_bytes, align), out_bytes}};
  auto bind_frame = [&](Bindings& b, size_t f) {
    const std::vector<std::string> names = planes == 2
                                               ? std::vector<std::string>{"frame/y", "frame/uv"}
                                               : std::vector<std::string>{"frame"};
    for (size_t p = 0; p < planes; ++p) {
      const SvmRegion& r = regions[f][p];
      b.SetSvm(names[p], r.allocation->get(), r.bytes, r.offset);
    }
  };
  Tensor expected = NewTensor(out_desc);
  const std::vector<float> nans(out_bytes / sizeof(float), NAN);
  struct Step {
    int frame;
    int out;
    bool frame_as_buffer;
  };
  const Step steps[] = {{0, 0, false}, {1, 0, false}, {0, 1, true},
                        {2, 1, false}, {1, 0, false}, {2, 0, true}};
  std::vector<float> first_out;
  for (size_t i = 0; i < std::size(steps); ++i) {
    const Step& step = steps[i];
    const SvmRegion& out = outs[step.out];
    RECQ_ASSERT_OK(expected.Fill(NAN));
    RECQ_ASSERT_OK(WriteSvm(queue, out, nans.data()));
    Bindings want, got;
    frames[step.frame].Bind(want, "frame");
    want.Set("y", expected);
    if (step.frame_as_buffer) {
      frames[step.frame].Bind(got, "frame");
    } else {
      bind_frame(got, step.frame);
    }
    got.SetSvm("y", out.allocation->get(), out.bytes, out.offset);
    RECQ_ASSERT_OK(replay.Run(want));
    RECQ_ASSERT_OK(rec.Run(got));
    const std::vector<float> e = Download(expected);
    RECQ_ASSERT_OK_AND_ASSIGN(std::vector<float> a, ReadSvmFloats(queue, out));
    for (float v : e) ASSERT_FALSE(std::isnan(v)) << "step " << i;
    EXPECT_TRUE(SameBits(a, e)) << name << " step " << i;
    if (i == 0) first_out = a;
    // Frames 0 and 1 differ, so their outputs do (the substitution is real).
    if (i == 1) {
      EXPECT_FALSE(SameBits(a, first_out)) << name;
    }
  }
}

// Instantiated over every registered backend; one the device cannot run is
// skipped with the registry's reason.
class BindingKindConformanceTest : public ::testing::TestWithParam<std::tuple<Backend, Kind>> {
 protected:
  void SetUp() override {
    absl::Status available = BackendAvailable(SharedContext(), std::get<0>(GetParam()));
    if (!available.ok()) GTEST_SKIP() << available.message();
  }
};

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
  if (kind.svm) {
    RunSvmSequence(*rec, replay, frames, out_desc, kind.name);
    return;
  }
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

INSTANTIATE_TEST_SUITE_P(AllBackends, BindingKindConformanceTest,
                         ::testing::Combine(::testing::ValuesIn(RegisteredBackends()),
                                            ::testing::ValuesIn(Kinds())),
                         [](const auto& info) {
                           return std::string(BackendName(std::get<0>(info.param))) + "_" +
                                  std::get<1>(info.param).name;
                         });

// An engine of one [1, 4, 16, 16] float input "x" and a Relu output "y".
Engine ReluEngine(const Context& ctx) {
  GraphBuilder b;
  b.Output(b.Relu(b.Input("x", {1, 4, 16, 16})), "y");
  return Engine::Compile(ctx, std::move(b).Build().value()).value();
}

class SvmBindingErrorTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    absl::Status available = BackendAvailable(SharedContext(), GetParam());
    if (!available.ok()) GTEST_SKIP() << available.message();
    if ((SvmOf(SharedContext()) & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) == 0) {
      GTEST_SKIP() << "the device has no SVM";
    }
  }

  // ExpectRejected runs `bindings` (plus the poisoned output when it binds
  // no "y") and expects InvalidArgument naming `binding` and containing
  // `what`, with the output still NaN: nothing ran.
  void ExpectRejected(Recording& rec, Bindings bindings, const std::string& binding,
                      const std::string& what) {
    if (bindings.Get("y") == nullptr &&
        std::none_of(bindings.entries().begin(), bindings.entries().end(),
                     [](const Bindings::Entry& e) { return e.name == "y"; })) {
      bindings.Set("y", out_);
    }
    RECQ_ASSERT_OK(out_.Fill(NAN));
    const absl::Status status = rec.Run(bindings);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
    EXPECT_NE(status.message().find("'" + binding + "'"), std::string::npos) << status;
    EXPECT_NE(status.message().find(what), std::string::npos) << status;
    for (float v : Download(out_)) ASSERT_TRUE(std::isnan(v)) << "a rejected run ran";
  }

  Tensor out_;
};

TEST_P(SvmBindingErrorTest, BadSvmBindingsAreInvalidArgumentAndNothingRuns) {
  const Context& ctx = SharedContext();
  Engine engine = ReluEngine(ctx);
  absl::StatusOr<Recording> rec = engine.Record({GetParam()});
  ASSERT_TRUE(rec.ok()) << rec.status();
  const size_t bytes = engine.inputs()[0].desc.ByteSize();
  const size_t align = ctx.device_info().mem_base_addr_align_bytes;
  out_ = NewTensor(engine.outputs()[0].desc);
  SvmAllocation svm(ctx.context(), 2 * bytes + align);
  ASSERT_NE(svm.get(), nullptr);
  const size_t svm_bytes = 2 * bytes + align;
  const std::vector<float> input(svm_bytes / sizeof(float), 1.5f);
  RECQ_ASSERT_OK(WriteSvm(ctx.queue(), {&svm, 0, svm_bytes}, input.data()));

  Bindings null_ptr;
  null_ptr.SetSvm("x", nullptr, bytes);
  ExpectRejected(*rec, null_ptr, "x", "null");

  Bindings small;
  small.SetSvm("x", svm.get(), bytes - 4);
  ExpectRejected(*rec, small, "x", "needs");

  // Host memory, aligned as an SVM allocation would be, is not one.
  std::vector<char> host(bytes + 2 * align);
  char* aligned = host.data() + (align - reinterpret_cast<uintptr_t>(host.data()) % align);
  Bindings not_svm;
  not_svm.SetSvm("x", aligned, bytes);
  ExpectRejected(*rec, not_svm, "x", "not an SVM allocation");
  Bindings unaligned;
  unaligned.SetSvm("x", aligned + 4, bytes);
  ExpectRejected(*rec, unaligned, "x", "that is not " + std::to_string(align) + "-byte aligned");

  // A pointer into an allocation is not one clSVMAlloc returned. Whether
  // CL_MEM_USES_SVM_POINTER holds for it is the driver's call: PoCL says no,
  // so it is rejected; NVIDIA's driver says yes, and the run must then read
  // the bytes there.
  Bindings interior;
  interior.SetSvm("x", static_cast<char*>(svm.get()) + align, bytes);
  interior.Set("y", out_);
  RECQ_ASSERT_OK(out_.Fill(NAN));
  const absl::Status interior_status = rec->Run(interior);
  if (interior_status.ok()) {
    for (float v : Download(out_)) ASSERT_EQ(v, 1.5f);
  } else {
    ExpectRejected(*rec, interior, "x", "not an SVM allocation");
  }

  Bindings misaligned;
  misaligned.SetSvm("x", svm.get(), bytes, 4);
  ExpectRejected(*rec, misaligned, "x", "CL_DEVICE_MEM_BASE_ADDR_ALIGN");

  // offset + bytes beyond the allocation.
  Bindings beyond;
  beyond.SetSvm("x", svm.get(), bytes + align, bytes + align);
  ExpectRejected(*rec, beyond, "x", "holding");

  Context other = Context::Create({}).value();
  SvmAllocation foreign(other.context(), bytes);
  ASSERT_NE(foreign.get(), nullptr);
  Bindings other_context;
  other_context.SetSvm("x", foreign.get(), bytes);
  ExpectRejected(*rec, other_context, "x", "not an SVM allocation");

  // An output sharing SVM bytes with the input.
  Bindings aliased;
  aliased.SetSvm("x", svm.get(), bytes);
  aliased.SetSvm("y", svm.get(), bytes);
  ExpectRejected(*rec, aliased, "y", "memory of its own");

  // The same bindings done right run.
  SvmAllocation out(ctx.context(), bytes);
  ASSERT_NE(out.get(), nullptr);
  Bindings good;
  good.SetSvm("x", svm.get(), bytes);
  good.SetSvm("y", out.get(), bytes);
  RECQ_ASSERT_OK(rec->Run(good));
  RECQ_ASSERT_OK_AND_ASSIGN(std::vector<float> y, ReadSvmFloats(ctx.queue(), {&out, 0, bytes}));
  for (float v : y) ASSERT_EQ(v, 1.5f);
}

TEST_P(SvmBindingErrorTest, SvmForAnImageBindingIsInvalidArgument) {
  const Context& ctx = SharedContext();
  GraphBuilder b;
  b.Output(b.Relu(b.Input("frame", {1, 3, 8, 8})), "y");
  Graph g = std::move(b).Build().value();
  PrePostProcessing ppp;
  ppp.inputs["frame"].color = ColorFormat::kRGBX;
  ppp.inputs["frame"].kind = MemoryKind::kImage2D;
  RECQ_ASSERT_OK(ApplyPrePostProcessing(g, ppp));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(ctx, g));
  absl::StatusOr<Recording> rec = engine.Record({GetParam()});
  ASSERT_TRUE(rec.ok()) << rec.status();
  out_ = NewTensor(engine.outputs()[0].desc);
  SvmAllocation svm(ctx.context(), 8 * 8 * 4);
  Bindings bindings;
  bindings.SetSvm("frame", svm.get(), 8 * 8 * 4);
  ExpectRejected(*rec, bindings, "frame", "image2d");
}

INSTANTIATE_TEST_SUITE_P(AllBackends, SvmBindingErrorTest,
                         ::testing::ValuesIn(RegisteredBackends()),
                         [](const auto& info) { return std::string(BackendName(info.param)); });

// Under the qcom layer with RECQ_QCOM_LAYER_NO_SVM=1 (ctest
// "qcom_no_svm.*"), the platform has no clEnqueueRecordingSVMQCOM: a qcom
// recording refuses an SVM binding with InvalidArgument naming it, nothing
// runs, and the same recording then runs cl_mem bindings correctly.
TEST(QcomWithoutSvmEntryPoint, SvmBindingIsInvalidArgumentAndTheRecordingStaysUsable) {
  const char* no_svm = std::getenv("RECQ_QCOM_LAYER_NO_SVM");
  if (no_svm == nullptr || std::string(no_svm) != "1") {
    GTEST_SKIP() << "runs under the qcom layer without its SVM entry point (qcom_no_svm. tests)";
  }
  const Context& ctx = SharedContext();
  if ((SvmOf(ctx) & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) == 0) GTEST_SKIP() << "no SVM";
  Engine engine = ReluEngine(ctx);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record({Backend::kQcom}));
  const TensorDesc in_desc = engine.inputs()[0].desc;
  const size_t bytes = in_desc.ByteSize();
  Tensor out = NewTensor(engine.outputs()[0].desc);
  SvmAllocation svm(ctx.context(), bytes);
  ASSERT_NE(svm.get(), nullptr);
  const reference::HostTensor x = reference::RandomTensor(in_desc.shape, 5, -1.0f, 1.0f);
  RECQ_ASSERT_OK(WriteSvm(ctx.queue(), {&svm, 0, bytes}, x.data.data()));
  Bindings with_svm;
  with_svm.SetSvm("x", svm.get(), bytes);
  with_svm.Set("y", out);
  RECQ_ASSERT_OK(out.Fill(NAN));
  const absl::Status status = rec.Run(with_svm);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_NE(status.message().find("'x'"), std::string::npos) << status;
  EXPECT_NE(status.message().find("clEnqueueRecordingSVMQCOM"), std::string::npos) << status;
  for (float v : Download(out)) ASSERT_TRUE(std::isnan(v)) << "a rejected run ran";

  Tensor in = NewTensor(in_desc);
  RECQ_ASSERT_OK(in.Upload(x.data));
  Bindings with_mem;
  with_mem.Set("x", in);
  with_mem.Set("y", out);
  RECQ_ASSERT_OK(rec.Run(with_mem));
  const std::vector<float> y = Download(out);
  ASSERT_EQ(y.size(), x.data.size());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], std::max(x.data[i], 0.0f)) << i;
}

// Under the fault layer with RECQ_FAULT_LAYER_NO_SVM=1 (ctest
// "no_svm.SvmWithoutDeviceSupport*"), the device reports no SVM: an SVM
// binding is InvalidArgument and nothing runs. Elsewhere it checks that the
// capability recq read matches the device's.
TEST(SvmWithoutDeviceSupport, SvmBindingIsInvalidArgument) {
  const Context& ctx = SharedContext();
  const char* no_svm = std::getenv("RECQ_FAULT_LAYER_NO_SVM");
  const bool hidden = no_svm != nullptr && std::string(no_svm) == "1";
  EXPECT_EQ(ctx.device_info().svm_capabilities, SvmOf(ctx));
  if (!hidden) {
    EXPECT_EQ(SvmOf(ctx) != 0, ctx.device_info().svm_capabilities != 0);
    GTEST_SKIP() << "the device's SVM is only hidden under the fault layer (no_svm. tests)";
  }
  ASSERT_EQ(ctx.device_info().svm_capabilities, 0u);
  Engine engine = ReluEngine(ctx);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record({Backend::kReplay}));
  Tensor out = NewTensor(engine.outputs()[0].desc);
  // PoCL still allocates SVM; recq must not use it on a device that says no.
  const size_t bytes = engine.inputs()[0].desc.ByteSize();
  SvmAllocation svm(ctx.context(), bytes);
  Bindings bindings;
  bindings.SetSvm("x", svm.get(), bytes);
  bindings.Set("y", out);
  const absl::Status status = rec.Run(bindings);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_NE(status.message().find("'x'"), std::string::npos) << status;
  EXPECT_NE(status.message().find("no shared virtual memory"), std::string::npos) << status;
  for (float v : Download(out)) ASSERT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace recq
