// Engine files are bit-for-bit reproducible: the same graph, options and
// device give the same bytes, from two Serialize calls, two compiles in
// fresh contexts, and a loaded engine.
//
// A process of its own that ctest runs alone (RUN_SERIAL): PoCL's program
// binaries carry what its disk cache held when they were made, so another
// test process compiling the same kernels into a shared cold cache between
// the two compiles made this test flaky under `ctest -j`. Two compiles in
// one process on a private, empty PoCL cache differ as well (noted in
// README's engine-file section): reproducibility holds for a given cache.
#include <string>

#include "gtest/gtest.h"
#include "recq/recq.h"
#include "testing/small_net.h"
#include "testing/test_env.h"

namespace recq {
namespace {

Context FreshContext() {
  ContextOptions options;
  options.cache_dir = "off";
  auto context = Context::Create(options);
  EXPECT_TRUE(context.ok()) << context.status();
  return *context;
}

TEST(EngineFileReproTest, BytesAreReproducible) {
  const Graph graph = testing::SmallNet();
  auto engine = Engine::Compile(testing::SharedContext(), graph);
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto bytes = engine->Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto again = engine->Serialize();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again == *bytes) << "two Serialize calls differ";
  std::string first;
  for (int i = 0; i < 2; ++i) {
    auto fresh = Engine::Compile(FreshContext(), graph);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    auto fresh_bytes = fresh->Serialize();
    ASSERT_TRUE(fresh_bytes.ok()) << fresh_bytes.status();
    if (i == 0) {
      first = *std::move(fresh_bytes);
    } else {
      EXPECT_TRUE(*fresh_bytes == first) << "a second compile serializes differently";
    }
  }
  // A loaded engine serializes to the file it was loaded from.
  auto loaded = LoadEngineFromBytes(FreshContext(), first);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto loaded_bytes = loaded->Serialize();
  ASSERT_TRUE(loaded_bytes.ok()) << loaded_bytes.status();
  EXPECT_TRUE(*loaded_bytes == first) << "a loaded engine serializes differently";
}

}  // namespace
}  // namespace recq
