// Program merging (engine/program_merge.h): what a kernel file defines,
// merged sources that build with every renamed kernel in them, and engines
// whose merged programs compute bit-identical results to the same engine
// with each program apart, write engine files of the library's programs,
// and fall back to building apart.
#include "engine/program_merge.h"

#include <CL/cl.h>

#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/engine_file/verifier.h"
#include "engine/kernel_library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/engine_file.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

using internal::DefinedMacros;
using internal::DefinedNames;
using internal::MergeInput;
using internal::MergePlan;
using internal::MergePrograms;
using ::testing::ElementsAre;

TEST(DefinedNamesTest, FindsWhatAFileDefinesAtFileScope) {
  const std::string body = R"(
// inline float commented_out(float x) { return x; }
/* kernel void also_commented(void) {} */
#define SCALE(x) ((x) * 2.0f)
#if RECQ_VW == 16
#define floatV float16
#endif
float declared_only(float x);
inline float helper(float x) { return SCALE(x); }
static inline float4 helper4(const __global float* p,
                             int n) {
  if (n > 0) { return vload4(0, p); }
  return (float4)(0.0f);
}
__constant float kTable[3] = {1.0f, 2.0f, 3.0f};
__constant sampler_t kSampler = CLK_NORMALIZED_COORDS_FALSE | CLK_FILTER_NEAREST;
typedef float4 vec_t;
struct Pair { float a, b; };
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void first(__global float* restrict y, const int n) {
  const char* s = "kernel void not_a_kernel(";
  y[get_global_id(0)] = helper(kTable[n % 3]);
}
kernel void second(global float* y) __attribute__((vec_type_hint(float4))) {
  y[0] = 0.0f;
}
)";
  std::optional<std::vector<std::string>> names = DefinedNames(body);
  ASSERT_TRUE(names.has_value());
  EXPECT_THAT(*names, ElementsAre("Pair", "first", "helper", "helper4", "kSampler", "kTable",
                                  "second", "vec_t"));
  EXPECT_THAT(DefinedMacros(body), ElementsAre("SCALE", "floatV"));
}

TEST(DefinedNamesTest, AFileScopeMacroInvocationHidesWhatItDefines) {
  EXPECT_FALSE(DefinedNames("#define DEF(T, N) T N(T x) { return x; }\n"
                            "DEF(float, f)\nDEF(float4, f4)\n")
                   .has_value());
  EXPECT_FALSE(DefinedNames("#define DEF(T) T f(T x) { return x; }\nDEF(float)\n").has_value());
}

// Every file of the kernel library is understood, or knowingly left alone.
TEST(DefinedNamesTest, TheLibraryFilesParse) {
  size_t understood = 0;
  for (const char* file : {"conv2d_3x3.cl", "conv2d_cpu.cl", "pool.cl", "matmul_gemv_cpu.cl",
                           "softmax.cl", "attention.cl", "reduce.cl", "gemm.cl"}) {
    std::optional<absl::string_view> body = internal::LibraryKernelFile(file);
    ASSERT_TRUE(body.has_value()) << file;
    std::optional<std::vector<std::string>> names = DefinedNames(*body);
    if (!names.has_value()) continue;
    ++understood;
    EXPECT_FALSE(names->empty()) << file;
  }
  EXPECT_GE(understood, 7u);
}

cl_device_id FirstDevice(cl_context context) {
  cl_device_id device = nullptr;
  clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof(device), &device, nullptr);
  return device;
}

// Two option sets of one file and two other files: one merged program that
// builds and holds every kernel under its suffixed name; a file with an
// option that is not a -D is left out.
TEST(MergeProgramsTest, MergedSourceBuildsWithEveryRenamedKernel) {
  std::vector<MergeInput> inputs;
  for (const char* vw : {"8", "16"}) {
    inputs.push_back({"conv2d_3x3.cl",
                      {"-DRECQ_C3_STRIDE=1", absl::StrCat("-DRECQ_C3_VW=", vw)},
                      std::string(*internal::LibraryKernelFile("conv2d_3x3.cl"))});
  }
  inputs.push_back({"pool.cl", {}, std::string(*internal::LibraryKernelFile("pool.cl"))});
  inputs.push_back(
      {"softmax.cl", {"-cl-mad-enable"}, std::string(*internal::LibraryKernelFile("softmax.cl"))});
  const MergePlan plan = MergePrograms(inputs, internal::KernelPrelude(), /*max_programs=*/1);
  ASSERT_EQ(plan.programs.size(), 1u);
  const size_t merged = plan.program_of[0];
  EXPECT_EQ(merged, 0u);
  EXPECT_EQ(plan.program_of[1], merged);
  EXPECT_EQ(plan.program_of[2], merged);
  EXPECT_THAT(plan.programs[merged].inputs, ElementsAre(0, 1, 2));
  EXPECT_EQ(plan.program_of[3], MergePlan::kNotMerged);  // softmax.cl: not a -D option
  EXPECT_EQ(plan.suffix_of[3], "");

  RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create());
  const std::string& source = plan.programs[merged].source;
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context.context(), 1, &text, &length, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_device_id device = FirstDevice(context.context());
  err = clBuildProgram(program, 1, &device, "-w", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    ADD_FAILURE() << "merged program does not build: " << log;
  }
  for (size_t i : {0, 1}) {
    for (const char* kernel : {"conv2d_depthwise3x3", "conv2d_dense3x3"}) {
      const std::string name = absl::StrCat(kernel, plan.suffix_of[i]);
      cl_kernel k = clCreateKernel(program, name.c_str(), &err);
      EXPECT_EQ(err, CL_SUCCESS) << name;
      if (k != nullptr) clReleaseKernel(k);
    }
  }
  const std::string pool = absl::StrCat("global_avg_pool", plan.suffix_of[2]);
  cl_kernel k = clCreateKernel(program, pool.c_str(), &err);
  EXPECT_EQ(err, CL_SUCCESS) << pool;
  if (k != nullptr) clReleaseKernel(k);
  clReleaseProgram(program);
}

const Graph& Model() {
  static const Graph* graph = [] {
    models::MobileNetOptions options;
    options.resolution = 64;
    options.num_classes = 100;
    absl::StatusOr<Graph> g = models::BuildMobileNetV2(options);
    if (!g.ok()) {
      ADD_FAILURE() << g.status();
      std::abort();
    }
    return new Graph(*std::move(g));
  }();
  return *graph;
}

// RunOnce records `engine`, runs it once on `input` into a NaN-poisoned
// output and downloads it.
std::vector<float> RunOnce(const Context& context, const Engine& engine,
                           const reference::HostTensor& input) {
  absl::StatusOr<Recording> recording = engine.Record();
  absl::StatusOr<Tensor> in = Tensor::Allocate(context, {input.shape});
  absl::StatusOr<Tensor> out = Tensor::Allocate(context, engine.outputs()[0].desc);
  if (!recording.ok() || !in.ok() || !out.ok()) {
    ADD_FAILURE() << "record or allocate failed";
    return {};
  }
  Bindings bindings;
  bindings.Set("input", *in);
  bindings.Set("prob", *out);
  for (const absl::Status& s : {in->Upload(input.data), out->Fill(NAN), recording->Run(bindings)}) {
    if (!s.ok()) {
      ADD_FAILURE() << s;
      return {};
    }
  }
  absl::StatusOr<std::vector<float>> values = out->Download();
  if (!values.ok()) {
    ADD_FAILURE() << values.status();
    return {};
  }
  return *std::move(values);
}

struct CompiledRun {
  EngineStats stats;
  std::vector<float> output;
};

absl::StatusOr<CompiledRun> CompileAndRun(const Context& context,
                                          const reference::HostTensor& input) {
  absl::StatusOr<Engine> engine = Engine::Compile(context, Model());
  if (!engine.ok()) return engine.status();
  return CompiledRun{engine->stats(), RunOnce(context, *engine, input)};
}

bool IsPocl(const Context& context) {
  return context.device_info().platform_name.find("Portable Computing Language") !=
         std::string::npos;
}

// A fresh input; its seed is recorded in the test's XML report.
reference::HostTensor FreshInput() {
  return reference::RandomTensor({1, 3, 64, 64}, testing::FreshRng()());
}

class MergedEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "no build helper on one core";
    RECQ_ASSERT_OK_AND_ASSIGN(Context probe, Context::Create());
    if (!IsPocl(probe)) GTEST_SKIP() << "programs merge on PoCL only";
  }
  void TearDown() override { unsetenv("RECQ_MERGE_PROGRAMS"); }

  // A context with `cache_dir` whose compiles merge: programs merge where a
  // compile has a build helper (a one-shot process's); this one starts
  // none, so that every program builds in the test.
  static absl::StatusOr<Context> MergingContext(const std::string& cache_dir) {
    ContextOptions options;
    options.cache_dir = cache_dir;
    absl::StatusOr<Context> context = Context::Create(options);
    if (context.ok()) {
      context->SetBuildHelper(
          [](const std::string&) -> absl::StatusOr<std::unique_ptr<BuildHelper>> {
            return std::unique_ptr<BuildHelper>();
          });
    }
    return context;
  }
};

// The same model compiled with merged programs and with each program
// apart: fewer programs, bit-identical outputs, both at the CPU reference.
TEST_F(MergedEngineTest, ComputesWhatTheProgramsApartCompute) {
  const reference::HostTensor input = FreshInput();
  RECQ_ASSERT_OK_AND_ASSIGN(Context merged_context, MergingContext("off"));
  RECQ_ASSERT_OK_AND_ASSIGN(CompiledRun merged, CompileAndRun(merged_context, input));
  setenv("RECQ_MERGE_PROGRAMS", "off", 1);
  RECQ_ASSERT_OK_AND_ASSIGN(Context apart_context, MergingContext("off"));
  RECQ_ASSERT_OK_AND_ASSIGN(CompiledRun apart, CompileAndRun(apart_context, input));
  EXPECT_GE(apart.stats.kernels_built, 3u);
  EXPECT_LE(merged.stats.kernels_built, 2u);
  ASSERT_EQ(merged.output.size(), apart.output.size());
  EXPECT_EQ(
      std::memcmp(merged.output.data(), apart.output.data(), merged.output.size() * sizeof(float)),
      0);
  const std::vector<float> expected = testing::ReferenceOutput(Model(), "input", input, "prob");
  auto cmp = reference::Compare(merged.output, expected, 1e-5f, 1e-3f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

// An engine file of a merged engine holds the library's programs apart,
// each with its own kernels' names, and loads to the same results.
TEST_F(MergedEngineTest, EngineFilesHoldTheProgramsApart) {
  RECQ_ASSERT_OK_AND_ASSIGN(Context context, MergingContext("off"));
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(context, Model()));
  ASSERT_LE(engine.stats().kernels_built, 2u);
  RECQ_ASSERT_OK_AND_ASSIGN(std::string bytes, engine.Serialize());
  RECQ_ASSERT_OK_AND_ASSIGN(auto file, internal::ParseEngineFile(bytes));
  EXPECT_GE(file.programs_size(), 3);
  for (const auto& kernel : file.kernels()) {
    EXPECT_EQ(kernel.entry_point().find("__p"), std::string::npos) << kernel.entry_point();
  }
  RECQ_ASSERT_OK_AND_ASSIGN(Engine loaded, LoadEngineFromBytes(context, bytes));
  EXPECT_EQ(loaded.stats().kernels_built, 0u);
  const reference::HostTensor input = FreshInput();
  const std::vector<float> a = RunOnce(context, engine, input);
  const std::vector<float> b = RunOnce(context, loaded, input);
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

// A merged compile stores the programs merged into it, each apart, through
// a hand-off (as `recq run` leaves them to `recq store-binaries`); a later
// compile loads them all, does not merge, and computes the same bits.
TEST_F(MergedEngineTest, StoresTheProgramsApartForLaterCompiles) {
  const std::string dir = ::testing::TempDir() + "/recq_program_merge_" +
                          std::to_string(static_cast<long long>(getpid()));
  std::filesystem::remove_all(dir);
  const reference::HostTensor input = FreshInput();
  CompiledRun first;
  {
    RECQ_ASSERT_OK_AND_ASSIGN(Context context, MergingContext(dir));
    RECQ_ASSERT_OK_AND_ASSIGN(first, CompileAndRun(context, input));
    ASSERT_LE(first.stats.kernels_built, 2u);
    const std::string handoff = dir + "/programs.pending";
    RECQ_ASSERT_OK_AND_ASSIGN(size_t handed, context.HandOffBinaryCache(handoff));
    EXPECT_GE(handed, 3u);  // the parts, not the merged programs
    RECQ_ASSERT_OK_AND_ASSIGN(Context storer, MergingContext(dir));
    RECQ_ASSERT_OK(storer.StoreHandedOffBinaries(handoff));
  }
  RECQ_ASSERT_OK_AND_ASSIGN(Context context, MergingContext(dir));
  RECQ_ASSERT_OK_AND_ASSIGN(CompiledRun warm, CompileAndRun(context, input));
  EXPECT_EQ(warm.stats.kernels_built, 0u);
  EXPECT_GE(warm.stats.programs_from_disk, 3u);
  ASSERT_EQ(warm.output.size(), first.output.size());
  EXPECT_EQ(std::memcmp(warm.output.data(), first.output.data(), first.output.size() * 4), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace recq
