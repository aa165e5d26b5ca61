// An engine file's program binaries hold the work-group functions of its own
// launch shapes even when the engine's programs came from the on-disk binary
// cache. PoCL answers a binary query on a program it created from a binary
// with that binary, which lacks the work-group functions compiled since (the
// warm-up's); such a file made every load compile them again (2.3 s of
// ResNet-50's load instead of 7 ms).
//
// Its own main gives the process a fresh, empty PoCL cache, so that the
// binaries stored by the first context cannot hold the functions already
// (PoCL serializes a program's whole cache directory, which other test
// processes fill).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/engine_file/verifier.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "testing/small_net.h"

namespace recq {
namespace {

TEST(EngineFileBinariesTest, HoldTheWarmUpsWorkGroupFunctionsWhenProgramsComeFromTheDiskCache) {
  const Graph graph = testing::SmallNet();
  const std::string dir = ::testing::TempDir() + "/recq_engine_file_binaries_" +
                          std::to_string(static_cast<long long>(getpid()));
  std::filesystem::remove_all(dir);
  ContextOptions context_options;
  context_options.cache_dir = dir;
  EngineOptions options;
  options.tuning = EngineOptions::Tuning::kOff;  // no candidates' work-group functions
  {
    // Binaries stored before any warm-up: generic work-group functions only.
    auto context = Context::Create(context_options);
    ASSERT_TRUE(context.ok()) << context.status();
    if (context->device_info().platform_name.find("Portable Computing Language") ==
        std::string::npos) {
      GTEST_SKIP() << "PoCL's binary layout and lazy work-group functions; device "
                   << context->device_info().name;
    }
    EngineOptions no_warm_up = options;
    no_warm_up.warm_up = false;
    auto engine = Engine::Compile(*context, graph, no_warm_up);
    ASSERT_TRUE(engine.ok()) << engine.status();
    context->FlushBinaryCache();
  }
  auto context = Context::Create(context_options);
  ASSERT_TRUE(context.ok()) << context.status();
  auto engine = Engine::Compile(*context, graph, options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_GT(engine->stats().programs_from_disk, 0u) << "the programs should come from disk";
  ASSERT_GT(engine->stats().warmup_dispatches, 0u);
  auto bytes = engine->Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto file = internal::ParseEngineFile(*bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  int checked = 0;
  for (const engine_file::Dispatch& d : file->dispatches()) {
    if (d.local_size() == 0) continue;  // the runtime picks the local size
    const engine_file::Kernel& k = file->kernels(static_cast<int>(d.kernel()));
    const std::string& binary = file->programs(static_cast<int>(k.program())).binary();
    // PoCL names a work-group function's directory "<kernel>/<l0>-<l1>-<l2>...".
    std::string shape = absl::StrCat("/", k.entry_point(), "/", d.local(0));
    for (int i = 1; i < 3; ++i) absl::StrAppend(&shape, "-", i < d.local_size() ? d.local(i) : 1);
    EXPECT_NE(binary.find(absl::StrCat(shape, "-goffs0")), std::string::npos)
        << d.label() << ": no work-group function " << shape << " in its program's binary";
    ++checked;
  }
  EXPECT_GT(checked, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace recq

int main(int argc, char** argv) {
  // Before the first OpenCL call: PoCL reads POCL_CACHE_DIR when it starts.
  char pocl_cache[] = "/tmp/recq_pocl_cache_XXXXXX";
  const bool fresh = mkdtemp(pocl_cache) != nullptr;
  if (fresh) setenv("POCL_CACHE_DIR", pocl_cache, 1);
  ::testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  if (fresh) std::filesystem::remove_all(pocl_cache);
  return result;
}
