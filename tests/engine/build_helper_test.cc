// Build helpers (Context::SetBuildHelper, Context::RunBuildPlan): a compile
// on PoCL hands part of its cold programs, with their warm-up launches, to
// a helper and builds the rest itself. The helper here is a thread with a
// Context of its own (recq's CLI uses a `recq build-helper` process): the
// results must not change, a plan must round-trip every argument kind, and
// bad plans are clear errors.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/binary_handoff.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

namespace fs = std::filesystem;
using internal::BinaryHandOff;
using internal::HandedOffProgram;
using internal::WarmLaunch;

// A helper on a thread of this process, with its own Context on the same
// device and binary cache.
class ThreadBuildHelper final : public BuildHelper {
 public:
  ThreadBuildHelper(const std::string& plan, const std::string& cache_dir, absl::Status* result)
      : thread_([this, plan, cache_dir, result] {
          ContextOptions options;
          options.cache_dir = cache_dir;
          absl::StatusOr<Context> context = Context::Create(options);
          BuildPlanProgress progress;
          progress.programs_built = [this] { Set(&built_); };
          progress.launch_started = [this] { ++started_; };
          *result = context.ok() ? context->RunBuildPlan(plan, progress) : context.status();
          Set(&built_);
          Set(&done_);
        }) {}
  ~ThreadBuildHelper() override { WaitDone(); }

  void WaitProgramsBuilt() override { Wait(&built_); }
  size_t LaunchesStarted() override { return started_; }
  bool Ended() override {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  void WaitDone() override {
    Wait(&done_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Set(bool* flag) {
    std::lock_guard<std::mutex> lock(mu_);
    *flag = true;
    cv_.notify_all();
  }
  void Wait(bool* flag) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [flag] { return *flag; });
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool built_ = false;
  bool done_ = false;
  std::atomic<size_t> started_{0};
  std::thread thread_;
};

class BuildHelperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "recq_build_helper_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp " << pattern;
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Output runs `graph` compiled on a fresh context with binary cache
  // `cache_dir` (a helper started through `starter` when set) on `input`
  // into a NaN-poisoned output.
  // The binaries are stored before the context goes when `store` is set.
  std::vector<float> Output(const Graph& graph, const reference::HostTensor& input,
                            const std::string& cache_dir, BuildHelperStarter starter = nullptr,
                            bool store = false) {
    ContextOptions options;
    options.cache_dir = cache_dir;
    absl::StatusOr<Context> context = Context::Create(options);
    EXPECT_TRUE(context.ok()) << context.status();
    if (!context.ok()) return {};
    if (starter) context->SetBuildHelper(starter);
    EngineOptions engine_options;
    engine_options.tuning = EngineOptions::Tuning::kOff;
    absl::StatusOr<Engine> engine = Engine::Compile(*context, graph, engine_options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) return {};
    absl::StatusOr<Recording> recording = engine->Record();
    absl::StatusOr<Tensor> in = Tensor::Allocate(*context, {input.shape});
    absl::StatusOr<Tensor> out = Tensor::Allocate(*context, engine->outputs()[0].desc);
    EXPECT_TRUE(recording.ok() && in.ok() && out.ok());
    if (!recording.ok() || !in.ok() || !out.ok()) return {};
    EXPECT_TRUE(in->Upload(input.data).ok());
    EXPECT_TRUE(out->Fill(NAN).ok());
    Bindings bindings;
    bindings.Set(engine->inputs()[0].name, *in);
    bindings.Set(engine->outputs()[0].name, *out);
    EXPECT_TRUE(recording->Run(bindings).ok());
    absl::StatusOr<std::vector<float>> values = out->Download();
    EXPECT_TRUE(values.ok()) << values.status();
    if (store) context->FlushBinaryCache();
    return values.ok() ? *values : std::vector<float>{};
  }

  fs::path root_;
};

// MobileNet V1 at 64x64 compiled cold with a helper gives the output of a
// compile without one, bit for bit, and matches the reference; the helper
// got a plan with programs and their launches, ran it without an error,
// and the plan file is gone.
TEST_F(BuildHelperTest, ColdCompileWithAHelperGivesTheSameOutput) {
  RECQ_ASSERT_OK_AND_ASSIGN(Context probe, Context::Create({}));
  if (probe.device_info().platform_name.find("Portable Computing Language") == std::string::npos ||
      std::thread::hardware_concurrency() < 2) {
    GTEST_SKIP() << "build helpers are used on PoCL with two or more hardware threads";
  }
  models::MobileNetOptions mobilenet;
  mobilenet.resolution = 64;
  mobilenet.num_classes = 100;
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, models::BuildMobileNetV1(mobilenet));
  const uint64_t seed = testing::FreshRng()();
  const reference::HostTensor input = reference::RandomTensor({1, 3, 64, 64}, seed);
  const std::vector<float> expected = testing::ReferenceOutput(graph, "input", input, "prob");

  const std::vector<float> alone =
      Output(graph, input, (root_ / "alone").string(), nullptr, /*store=*/true);
  std::vector<std::string> plans;
  std::vector<BinaryHandOff> plan_contents;
  absl::Status helper_result = absl::UnknownError("the helper did not run");
  const std::string helper_cache = (root_ / "with_helper").string();
  BuildHelperStarter starter =
      [&](const std::string& plan) -> absl::StatusOr<std::unique_ptr<BuildHelper>> {
    plans.push_back(plan);
    absl::StatusOr<BinaryHandOff> contents = internal::ReadBinaryHandOff(plan);
    if (!contents.ok()) return contents.status();
    plan_contents.push_back(*contents);
    return std::unique_ptr<BuildHelper>(
        std::make_unique<ThreadBuildHelper>(plan, helper_cache, &helper_result));
  };
  const std::vector<float> helped = Output(graph, input, helper_cache, starter);

  ASSERT_EQ(plans.size(), 1u) << "one cold compile, one helper";
  EXPECT_TRUE(helper_result.ok()) << helper_result;
  EXPECT_FALSE(fs::exists(plans[0])) << "RunBuildPlan deletes the plan once read";
  ASSERT_FALSE(plan_contents[0].programs.empty());
  size_t helpers = 0, compilers = 0;
  for (const HandedOffProgram& p : plan_contents[0].programs) {
    EXPECT_FALSE(p.source.empty());
    EXPECT_FALSE(p.launches.empty()) << "each program comes with its warm-up launches";
    // The helper's programs come first, then the compiler's.
    if (compilers > 0) {
      EXPECT_TRUE(p.built_by_compiler);
    }
    ++(p.built_by_compiler ? compilers : helpers);
  }
  EXPECT_GT(helpers, 0u);
  EXPECT_GT(compilers, 0u);
  ASSERT_EQ(helped.size(), alone.size());
  EXPECT_EQ(std::memcmp(helped.data(), alone.data(), alone.size() * sizeof(float)), 0)
      << "the same kernels, built by two processes, give the same bits";
  auto cmp = reference::Compare(helped, expected, 1e-5f, 1e-3f);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString() << " (seed " << seed << ")";

  // Warm now: the same compile finds its programs in the binary cache and
  // starts no helper.
  const std::vector<float> warm = Output(graph, input, (root_ / "alone").string(), starter);
  EXPECT_EQ(plans.size(), 1u);
  EXPECT_EQ(warm.size(), alone.size());
}

// A plan holding a launch with every argument kind, of a program the
// compiling process builds, reads back as written and runs: the helper
// creates the program at its first launch.
TEST_F(BuildHelperTest, PlanRoundTripsEveryArgumentKind) {
  RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create({}));
  HandedOffProgram program;
  program.source =
      "__kernel void k(__global float* y, float s, __local float* tmp, __global float* none) {\n"
      "  tmp[get_local_id(0)] = s;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  y[get_global_id(0)] = tmp[0] + (none == 0 ? 1.0f : 2.0f);\n"
      "}\n";
  program.options = {"-DRECQ_BUILD_HELPER_TEST=1"};
  WarmLaunch launch;
  launch.kernel = "k";
  launch.work_dim = 1;
  launch.global = {8, 1, 1};
  launch.local = {4, 0, 0};
  float s = 3.0f;
  WarmLaunch::Arg buffer{WarmLaunch::Arg::Kind::kBuffer, 8 * sizeof(float), ""};
  WarmLaunch::Arg scalar{WarmLaunch::Arg::Kind::kScalar, 0,
                         std::string(reinterpret_cast<const char*>(&s), sizeof(s))};
  WarmLaunch::Arg local{WarmLaunch::Arg::Kind::kLocal, 4 * sizeof(float), ""};
  WarmLaunch::Arg null{WarmLaunch::Arg::Kind::kNull, 0, ""};
  launch.args = {buffer, scalar, local, null};
  program.launches = {launch, launch};
  // Built by the compiling process: the helper creates it at its first
  // launch.
  program.built_by_compiler = true;
  const BinaryHandOff plan{
      context.device_info().name, context.device_info().driver_version, {program}};
  const std::string path = (root_ / "every_kind.plan").string();
  RECQ_ASSERT_OK(internal::WriteBinaryHandOff(path, plan));
  RECQ_ASSERT_OK_AND_ASSIGN(BinaryHandOff read, internal::ReadBinaryHandOff(path));
  ASSERT_EQ(read.programs.size(), 1u);
  EXPECT_TRUE(read.programs[0].built_by_compiler);
  ASSERT_EQ(read.programs[0].launches.size(), 2u);
  const WarmLaunch& back = read.programs[0].launches[1];
  EXPECT_EQ(back.kernel, "k");
  EXPECT_EQ(back.global, launch.global);
  EXPECT_EQ(back.local, launch.local);
  ASSERT_EQ(back.args.size(), 4u);
  EXPECT_EQ(back.args[0].bytes, buffer.bytes);
  EXPECT_EQ(back.args[1].value, scalar.value);
  EXPECT_EQ(back.args[2].kind, WarmLaunch::Arg::Kind::kLocal);
  EXPECT_EQ(back.args[3].kind, WarmLaunch::Arg::Kind::kNull);
  int built = 0, started = 0;
  BuildPlanProgress progress;
  progress.programs_built = [&] { ++built; };
  progress.launch_started = [&] { ++started; };
  const absl::Status ran = context.RunBuildPlan(path, progress);
  EXPECT_TRUE(ran.ok()) << ran;
  EXPECT_EQ(built, 1);
  EXPECT_EQ(started, 2);
  EXPECT_FALSE(fs::exists(path));
}

// A missing, damaged or foreign plan is a clear error, the file is gone
// either way, and a launch that fails (an unknown kernel) is named.
TEST_F(BuildHelperTest, BadPlansAreClearErrors) {
  RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create({}));
  const std::string path = (root_ / "bad.plan").string();
  EXPECT_EQ(context.RunBuildPlan(path).code(), absl::StatusCode::kNotFound);

  std::ofstream(path, std::ios::binary) << std::string(64, 'x');
  absl::Status s = context.RunBuildPlan(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_FALSE(fs::exists(path));

  RECQ_ASSERT_OK(internal::WriteBinaryHandOff(path, {"some other device", "0.0", {}}));
  s = context.RunBuildPlan(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("some other device"));
  EXPECT_FALSE(fs::exists(path));

  HandedOffProgram program{"__kernel void k(__global float* y) { y[0] = 1.0f; }", {}, {}};
  WarmLaunch launch;
  launch.kernel = "no_such_kernel";
  program.launches = {launch};
  RECQ_ASSERT_OK(internal::WriteBinaryHandOff(
      path, {context.device_info().name, context.device_info().driver_version, {program}}));
  s = context.RunBuildPlan(path);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("clCreateKernel(no_such_kernel)"));
}

}  // namespace
}  // namespace recq
