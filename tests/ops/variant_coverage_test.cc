// Every kernel variant of every registered op is run by some op test.
//
// kKnownGaps lists the variants that no op test ran when this check was
// written; it may only shrink. A listed variant that now runs is reported
// (remove it from the list); one that is no longer registered fails.
//
// CheckAgainstReference notes each (op, variant, kernel family) it lowered
// in engines whose runs completed (op_test_util.h). The op-test processes
// that ctest starts write their notes to $RECQ_OP_COVERAGE_DIR; this test,
// which ctest runs after them (tests/ops/CMakeLists.txt), reads the notes
// written by this very binary (files newer than it) together with its own
// process's, and fails for every variant of RegisteredOps() that none ran.
// The registry is read at run time, so a new op or variant is checked as
// soon as it is registered.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ops/op_test_util.h"
#include "recq/op_registry.h"

namespace recq::optest {
namespace {

namespace fs = std::filesystem;

// Variants that no op test ran on 2026-11-25 (ops_test, all 8 shards, PoCL
// 3.1 on the project's 2-core Xeon; 141 of 149 variants ran). Do not add to
// this list: a new variant comes with its test.
struct KnownGap {
  const char* op;
  const char* variant;
};
const std::vector<KnownGap> kKnownGaps = {
    // The op tests build no node on which these are the variant chosen (one
    // listed before fits first, or no test shape fits them): a test that
    // forces each with ForceVariant closes the gap.
    {"GroupNormalization", "norm_rows_vec"},
    {"InstanceNormalization", "norm_rows_vec"},
    {"LayerNormalization", "norm_plain"},
    {"PRelu", "binary_broadcast"},
    {"Pow", "binary_same"},
    {"Pow", "binary_broadcast"},
    // Camera-frame pre-processing: tests/engine/preprocess_test.cc checks it
    // outside the op harness.
    {"Preprocess", "preprocess"},
    // The decode loop's state ops write persistent memory in place (rows of
    // a cache, the state they read), which the op harness's poisoned,
    // compare-every-element outputs cannot express: tests/decode/
    // generator_test.cc checks them end to end against transformers and
    // onnxruntime.
    {"recq.DecodeBegin", "decode_begin"},
    {"recq.DecodeInputs", "decode_inputs"},
    {"recq.KvCacheWrite", "kv_cache_write"},
    {"recq.DecodeAdvance", "decode_advance"},
    {"recq.DecodeArgMax", "decode_argmax"},
    {"recq.DecodePrefillAdvance", "decode_prefill_advance"},
};

// The (op, variant) pairs the op tests ran, with the kernel families each
// ran in.
using Covered = std::map<std::pair<std::string, std::string>, std::set<std::string>>;

// ReadRecords adds the runs of every "*.txt" in `dir` last written after
// `binary` was; counts the files read and names the stale ones.
void ReadRecords(const fs::path& dir, fs::file_time_type binary, Covered& covered, int& files_read,
                 std::vector<std::string>& stale) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() != ".txt") continue;
    if (entry.last_write_time(error) < binary) {
      stale.push_back(entry.path().filename().string());
      continue;
    }
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> fields = absl::StrSplit(line, '\t');
      if (fields.size() != 3) {
        ADD_FAILURE() << entry.path() << ": a line that is not <op>\\t<variant>\\t<family>: '"
                      << line << "'";
        continue;
      }
      covered[{fields[0], fields[1]}].insert(fields[2]);
    }
    ++files_read;
  }
}

TEST(OpVariantCoverage, EveryRegisteredVariantRan) {
  const char* dir = std::getenv("RECQ_OP_COVERAGE_DIR");
  if (dir == nullptr || *dir == '\0') {
    GTEST_SKIP() << "RECQ_OP_COVERAGE_DIR is not set: ctest's ops_test.variant_coverage entry "
                    "sets it and runs after the op tests, which write their runs there";
  }
  Covered covered;
  for (const VariantRun& r : VariantRunsOfThisProcess()) {
    covered[{r.op, r.variant}].insert(r.family);
  }
  std::error_code error;
  const fs::file_time_type binary = fs::last_write_time("/proc/self/exe", error);
  ASSERT_FALSE(error) << "reading the test binary's time: " << error.message();
  int files_read = 0;
  std::vector<std::string> stale;
  ReadRecords(dir, binary, covered, files_read, stale);
  ASSERT_FALSE(covered.empty())
      << "no op test has run with this ops_test binary: no record in " << dir
      << " is newer than the binary"
      << (stale.empty() ? "" : absl::StrCat(" (older: ", absl::StrJoin(stale, ", "), ")"))
      << ". Run the op tests first: ctest -R '^ops_test' (this check's ctest entry pulls them "
         "in as its fixture).";

  std::set<std::pair<std::string, std::string>> gaps;
  for (const KnownGap& gap : kKnownGaps) gaps.insert({gap.op, gap.variant});
  std::vector<std::string> missing;
  size_t variants = 0, ran = 0, known_not_run = 0;
  for (const OpDef* def : RegisteredOps()) {
    for (const KernelVariant& v : def->variants) {
      ++variants;
      const std::pair<std::string, std::string> key{def->type.name(), v.name};
      const bool known_gap = gaps.erase(key) > 0;
      auto it = covered.find(key);
      if (it == covered.end()) {
        if (known_gap) {
          ++known_not_run;
          std::printf("%-24s %-32s not run (a known gap)\n", def->type.name(), v.name.c_str());
        } else {
          missing.push_back(absl::StrCat("op '", def->type.name(), "' variant '", v.name, "'"));
        }
        continue;
      }
      ++ran;
      if (known_gap) {
        std::printf("%-24s %-32s ran: remove it from kKnownGaps in %s\n", def->type.name(),
                    v.name.c_str(), __FILE__);
      } else {
        std::printf("%-24s %-32s ran (%s)\n", def->type.name(), v.name.c_str(),
                    absl::StrJoin(it->second, ", ").c_str());
      }
    }
  }
  for (const auto& [op, variant] : gaps) {
    ADD_FAILURE() << "kKnownGaps lists op '" << op << "' variant '" << variant
                  << "', which is not registered: remove it from the list";
  }
  std::printf(
      "%zu of %zu registered kernel variants ran, %zu are known gaps, %zu missing; "
      "records from %d files in %s\n",
      ran, variants, known_not_run, missing.size(), files_read, dir);
  EXPECT_TRUE(missing.empty())
      << missing.size() << " registered kernel variant(s) ran in no op test (and are not "
      << "known gaps):\n  " << absl::StrJoin(missing, "\n  ")
      << "\nFor each, add a test under tests/ops/ whose graph has a node the variant fits and "
         "that checks it with RECQ_EXPECT_MATCHES_REFERENCE (op_test_util.h); when an earlier "
         "variant of the op also fits that node, force this one with "
         "CheckOptions::choose_variant = ForceVariant(op, \"<variant>\", forced) and expect "
         "*forced > 0. A variant for GPUs only runs under CheckOptions::kernel_targets = {kGpu} "
         "(the default runs both families). See docs/adding_an_op.md.";
  if (!stale.empty()) {
    std::printf("ignored records older than the binary: %s\n", absl::StrJoin(stale, ", ").c_str());
  }
}

}  // namespace
}  // namespace recq::optest
