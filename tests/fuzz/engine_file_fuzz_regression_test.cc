// The engine-file fuzzer's seed corpus and findings through its entry point:
// every file is an error status or an accepted file, never a crash. Runs in
// every build, and under ASan/UBSan in scripts/sanitize.sh.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"
#include "tests/fuzz/engine_file_fuzz_target.h"

namespace recq {
namespace {

namespace fs = std::filesystem;

TEST(EngineFileFuzzRegressionTest, SeedCorpusReadsWithoutCrashing) {
  size_t files = 0, accepted = 0;
  for (const auto& entry : fs::directory_iterator(RECQ_FUZZ_DIR "/corpus/engine_file")) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    ++files;
    accepted +=
        fuzz::EngineFileFuzzOne(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  EXPECT_GE(files, 4u);
  EXPECT_GE(accepted, 2u) << "the seeds include valid files and payloads";
}

}  // namespace
}  // namespace recq
