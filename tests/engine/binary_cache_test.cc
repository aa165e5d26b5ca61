// The persistent program-binary cache: a warm Context loads every program
// from disk and computes bit-identical results; corrupt, truncated, foreign
// or driver-rejected entries, and PoCL binaries that PoCL would abort on,
// are rebuilt and rewritten; an unusable or
// disabled cache only means compiling from source; concurrent writers leave
// only valid entries. Every test uses its own temporary cache directory.
#include "engine/binary_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/binary_handoff.h"
#include "engine/engine_file/pocl_binary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/log.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

namespace recq {
namespace {

namespace fs = std::filesystem;
using internal::BinaryCache;
using internal::BinaryCacheKey;
using internal::BinaryHandOff;
using internal::WriteBinaryHandOff;

// Softmax probabilities after ~30 layers of float32 sums in another order
// (as in mobilenet_test).
constexpr float kAtol = 1e-5f;
constexpr float kRtol = 1e-3f;

const Graph& Model() {
  static const Graph* graph = [] {
    models::MobileNetOptions options;
    options.resolution = 64;
    options.num_classes = 100;
    absl::StatusOr<Graph> g = models::BuildMobileNetV1(options);
    if (!g.ok()) {
      ADD_FAILURE() << g.status();
      std::abort();
    }
    return new Graph(*std::move(g));
  }();
  return *graph;
}

const reference::HostTensor& Input() {
  static const auto* input =
      new reference::HostTensor(reference::RandomTensor({1, 3, 64, 64}, /*seed=*/4242));
  return *input;
}

const std::vector<float>& Expected() {
  static const auto* expected =
      new std::vector<float>(testing::ReferenceOutput(Model(), "input", Input(), "prob"));
  return *expected;
}

// What one compile and run in a fresh Context produced.
struct RunResult {
  EngineStats stats;
  std::vector<float> output;
  size_t handed_off = 0;  // HandOffBinaryCache's count, when asked for
};

// CompileAndRun creates a Context with `cache_dir`, compiles the model,
// runs it once on Input() into a NaN-poisoned output and downloads it; then
// flushes the binary cache unless `flush` is false, or, given a
// `handoff_path`, hands the binaries off to a file there instead.
absl::StatusOr<RunResult> CompileAndRun(const std::string& cache_dir, bool flush = true,
                                        const std::string& handoff_path = "") {
  ContextOptions options;
  options.cache_dir = cache_dir;
  absl::StatusOr<Context> context = Context::Create(options);
  if (!context.ok()) return context.status();
  absl::StatusOr<Engine> engine = Engine::Compile(*context, Model());
  if (!engine.ok()) return engine.status();
  absl::StatusOr<Recording> recording = engine->Record();
  if (!recording.ok()) return recording.status();
  absl::StatusOr<Tensor> in = Tensor::Allocate(*context, {Input().shape});
  if (!in.ok()) return in.status();
  absl::StatusOr<Tensor> out = Tensor::Allocate(*context, engine->outputs()[0].desc);
  if (!out.ok()) return out.status();
  if (absl::Status s = in->Upload(Input().data); !s.ok()) return s;
  if (absl::Status s = out->Fill(NAN); !s.ok()) return s;
  Bindings bindings;
  bindings.Set("input", *in);
  bindings.Set("prob", *out);
  if (absl::Status s = recording->Run(bindings); !s.ok()) return s;
  absl::StatusOr<std::vector<float>> values = out->Download();
  if (!values.ok()) return values.status();
  // The binaries are stored once flushed: the context's destruction waits
  // for the flushed ones and, on PoCL, drops the rest.
  size_t handed_off = 0;
  if (!handoff_path.empty()) {
    absl::StatusOr<size_t> handed = context->HandOffBinaryCache(handoff_path);
    if (!handed.ok()) return handed.status();
    handed_off = *handed;
  } else if (flush) {
    context->FlushBinaryCache();
  }
  return RunResult{engine->stats(), *std::move(values), handed_off};
}

bool BitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::optional<BinaryCacheKey> KeyFromFileName(const std::string& name) {
  if (name.size() != 64) return std::nullopt;
  BinaryCacheKey key;
  for (size_t i = 0; i < 32; ++i) {
    char* end = nullptr;
    std::string byte = name.substr(2 * i, 2);
    key.digest[i] = static_cast<uint8_t>(std::strtoul(byte.c_str(), &end, 16));
    if (end != byte.c_str() + 2) return std::nullopt;
  }
  if (key.Hex() != name) return std::nullopt;
  return key;
}

std::vector<uint8_t> ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// PoCL 3.x program binaries (format version 9): a 77-byte header (magic,
// device hash, version, kernel count, flags, root-entry count, the
// program's build hash), then each root entry as a u64 size and its file
// records, then the kernels.
constexpr size_t kPoclHeader = 77;

bool IsPoclBinaryV9(const std::vector<uint8_t>& b) {
  return b.size() > kPoclHeader + 8 && std::memcmp(b.data(), "poclbin", 8) == 0 && b[16] == 9 &&
         b[17] == 0 && b[18] == 0 && b[19] == 0;
}

uint64_t ReadLe(const std::vector<uint8_t>& b, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= uint64_t{b[at + i]} << (8 * i);
  return v;
}

void WriteLe(std::vector<uint8_t>* b, size_t at, size_t bytes, uint64_t v) {
  for (size_t i = 0; i < bytes; ++i) (*b)[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// WithoutProgramBc returns `binary` as PoCL serializes it when the program's
// program.bc has left PoCL's cache directory: the first root entry empty.
std::vector<uint8_t> WithoutProgramBc(const std::vector<uint8_t>& binary) {
  const uint64_t first = ReadLe(binary, kPoclHeader, 8);
  std::vector<uint8_t> out;
  out.reserve(binary.size());
  out.insert(out.end(), binary.begin(), binary.begin() + kPoclHeader);
  out.resize(kPoclHeader + 8, 0);  // the entry's size: 0
  out.insert(out.end(), binary.begin() + kPoclHeader + 8 + first, binary.end());
  return out;
}

class BinaryCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "recq_binary_cache_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp " << pattern;
    root_ = pattern;
    dir_ = (root_ / "cache").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }

  // Entries returns the cache's entry file names, sorted.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  // ExpectOnlyValidEntries checks that there are `count` files, each named by
  // a key whose entry passes every check of BinaryCache::Load.
  void ExpectOnlyValidEntries(size_t count) const {
    std::vector<std::string> names = Entries();
    EXPECT_EQ(names.size(), count);
    BinaryCache cache(dir_);
    for (const std::string& name : names) {
      std::optional<BinaryCacheKey> key = KeyFromFileName(name);
      ASSERT_TRUE(key.has_value()) << "stray file in the cache: " << name;
      EXPECT_TRUE(cache.Load(*key).has_value()) << "invalid entry " << name;
    }
    EXPECT_EQ(cache.stats().invalid, 0u);
  }

  // ColdRun compiles with an empty cache and checks the result against the
  // CPU reference; the output is the bit-exact baseline of later runs.
  void ColdRun() {
    ASSERT_TRUE(Entries().empty());
    RECQ_ASSERT_OK_AND_ASSIGN(RunResult cold, CompileAndRun(dir_));
    ASSERT_GT(cold.stats.kernels_built, 0u);
    EXPECT_EQ(cold.stats.programs_from_disk, 0u);
    auto cmp = reference::Compare(cold.output, Expected(), kAtol, kRtol);
    ASSERT_TRUE(cmp.ok()) << cmp.ToString();
    programs_ = cold.stats.kernels_built;
    baseline_ = cold.output;
    ExpectOnlyValidEntries(programs_);
  }

  // ExpectWarmRun compiles in a fresh Context and checks where the programs
  // came from and that the output is bit-identical to the cold run.
  void ExpectWarmRun(size_t from_disk, size_t built) {
    RECQ_ASSERT_OK_AND_ASSIGN(RunResult warm, CompileAndRun(dir_));
    EXPECT_EQ(warm.stats.programs_from_disk, from_disk);
    EXPECT_EQ(warm.stats.kernels_built, built);
    EXPECT_TRUE(BitIdentical(warm.output, baseline_));
  }

  fs::path root_;
  std::string dir_;
  size_t programs_ = 0;
  std::vector<float> baseline_;
};

TEST_F(BinaryCacheTest, WarmContextLoadsEveryProgramAndMatchesBitForBit) {
  ColdRun();
  ASSERT_FALSE(HasFatalFailure());
  ExpectWarmRun(/*from_disk=*/programs_, /*built=*/0);
  ExpectOnlyValidEntries(programs_);
}

TEST_F(BinaryCacheTest, ContextDestroyedWithoutAFlushStoresOnlyWhereCheap) {
  RECQ_ASSERT_OK_AND_ASSIGN(RunResult first, CompileAndRun(dir_, /*flush=*/false));
  ASSERT_GT(first.stats.kernels_built, 0u);
  auto cmp = reference::Compare(first.output, Expected(), kAtol, kRtol);
  ASSERT_TRUE(cmp.ok()) << cmp.ToString();
  RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create());
  if (context.device_info().platform_name.find("Portable Computing Language") ==
      std::string::npos) {
    // Serializing is cheap: the destruction stored every program.
    ExpectOnlyValidEntries(first.stats.kernels_built);
    return;
  }
  // PoCL: a binary query would compile a generic work-group function per
  // kernel, so nothing is stored; the next context builds from source.
  EXPECT_TRUE(Entries().empty());
  RECQ_ASSERT_OK_AND_ASSIGN(RunResult second, CompileAndRun(dir_, /*flush=*/false));
  EXPECT_EQ(second.stats.programs_from_disk, 0u);
  EXPECT_EQ(second.stats.kernels_built, first.stats.kernels_built);
  EXPECT_TRUE(BitIdentical(second.output, first.output));
}

bool IsPocl(const Context& context) {
  return context.device_info().platform_name.find("Portable Computing Language") !=
         std::string::npos;
}

// A process about to exit hands its programs to another (recq run and recq
// store-binaries): on PoCL the file names every program built from source
// and nothing is stored until a second context stores them; elsewhere the
// hand-off stores them at once and writes no file. Either way the next
// context loads every program from the cache, bit for bit.
TEST_F(BinaryCacheTest, HandedOffProgramsAreStoredByASecondContext) {
  const std::string handoff = (root_ / "programs.pending").string();
  RECQ_ASSERT_OK_AND_ASSIGN(RunResult first, CompileAndRun(dir_, /*flush=*/false, handoff));
  ASSERT_GT(first.stats.kernels_built, 0u);
  auto cmp = reference::Compare(first.output, Expected(), kAtol, kRtol);
  ASSERT_TRUE(cmp.ok()) << cmp.ToString();
  ContextOptions options;
  options.cache_dir = dir_;
  RECQ_ASSERT_OK_AND_ASSIGN(Context storer, Context::Create(options));
  if (!IsPocl(storer)) {
    EXPECT_EQ(first.handed_off, 0u);
    EXPECT_FALSE(fs::exists(handoff));
  } else {
    EXPECT_EQ(first.handed_off, first.stats.kernels_built);
    EXPECT_TRUE(Entries().empty());
    RECQ_ASSERT_OK(storer.StoreHandedOffBinaries(handoff));
    // Storing again finds every entry there and changes nothing.
    RECQ_ASSERT_OK(storer.StoreHandedOffBinaries(handoff));
  }
  ExpectOnlyValidEntries(first.stats.kernels_built);
  baseline_ = first.output;
  ExpectWarmRun(/*from_disk=*/first.stats.kernels_built, /*built=*/0);
}

// A damaged, foreign or missing hand-off file is a clear error that stores
// nothing, and the context stays usable.
TEST_F(BinaryCacheTest, BadHandOffFilesAreClearErrors) {
  ContextOptions options;
  options.cache_dir = dir_;
  RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create(options));
  const std::string missing = (root_ / "missing.pending").string();
  EXPECT_EQ(context.StoreHandedOffBinaries(missing).code(), absl::StatusCode::kNotFound);

  // A real hand-off file to damage (on PoCL; elsewhere none is written, so
  // one is written directly for a made-up program).
  const std::string good = (root_ / "good.pending").string();
  RECQ_ASSERT_OK_AND_ASSIGN(RunResult first, CompileAndRun(dir_, /*flush=*/false, good));
  if (first.handed_off == 0) {
    BinaryHandOff handoff{context.device_info().name,
                          context.device_info().driver_version,
                          {{"__kernel void k(__global float* y) { y[0] = 1.0f; }", {}, {}}}};
    RECQ_ASSERT_OK(WriteBinaryHandOff(good, handoff));
  }
  const std::vector<uint8_t> bytes = ReadBytes(good);
  ASSERT_GT(bytes.size(), 64u);
  const fs::path bad = root_ / "bad.pending";
  const size_t entries_before = Entries().size();
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
  };
  std::vector<uint8_t> flipped_version = bytes;
  flipped_version[8] ^= 0x40;
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  for (const Case& c : std::vector<Case>{
           {"truncated", std::vector<uint8_t>(bytes.begin(), bytes.begin() + bytes.size() / 2)},
           {"empty", {}},
           {"not a hand-off file", std::vector<uint8_t>(64, 'x')},
           {"another version", flipped_version},
           {"trailing bytes", longer}}) {
    WriteBytes(bad, c.bytes);
    absl::Status s = context.StoreHandedOffBinaries(bad.string());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name << ": " << s;
    EXPECT_NE(s.message().find(bad.string()), std::string::npos) << c.name << ": " << s;
  }
  // Another device's file.
  BinaryHandOff foreign{"some other device", "0.0", {}};
  RECQ_ASSERT_OK(WriteBinaryHandOff(bad.string(), foreign));
  absl::Status s = context.StoreHandedOffBinaries(bad.string());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("some other device"), std::string::npos) << s;
  EXPECT_EQ(Entries().size(), entries_before);
  // The context still compiles and runs.
  RECQ_ASSERT_OK(context.StoreHandedOffBinaries(good));
  RECQ_ASSERT_OK_AND_ASSIGN(RunResult after, CompileAndRun(dir_));
  auto cmp = reference::Compare(after.output, Expected(), kAtol, kRtol);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
}

enum class Damage {
  kTruncated,
  kRandomBytes,
  kFlippedPayloadByte,
  kOtherKeysEntry,
  kBadBinary,
  kPoclBinaryWithoutProgramBc,
};

struct DamageCase {
  const char* name;
  Damage damage;
};

class DamagedEntryTest : public BinaryCacheTest,
                         public ::testing::WithParamInterface<DamageCase> {};

TEST_P(DamagedEntryTest, IsIgnoredRebuiltAndRewritten) {
  ColdRun();
  ASSERT_FALSE(HasFatalFailure());
  std::vector<std::string> names = Entries();
  ASSERT_GE(names.size(), 2u);
  const fs::path victim = fs::path(dir_) / names[0];
  std::vector<uint8_t> bytes = ReadBytes(victim);
  ASSERT_GT(bytes.size(), 100u);
  std::mt19937_64 random(7);
  switch (GetParam().damage) {
    case Damage::kTruncated:
      bytes.resize(bytes.size() / 2);
      WriteBytes(victim, bytes);
      break;
    case Damage::kRandomBytes:
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
      WriteBytes(victim, bytes);
      break;
    case Damage::kFlippedPayloadByte:
      bytes[bytes.size() - 1 - bytes.size() / 3] ^= 0x40;
      WriteBytes(victim, bytes);
      break;
    case Damage::kOtherKeysEntry:
      fs::copy_file(fs::path(dir_) / names[1], victim, fs::copy_options::overwrite_existing);
      break;
    case Damage::kBadBinary: {
      // A well-formed entry whose payload the driver must reject.
      std::vector<uint8_t> garbage(4096);
      for (uint8_t& b : garbage) b = static_cast<uint8_t>(random());
      BinaryCache cache(dir_);
      RECQ_ASSERT_OK(cache.Store(*KeyFromFileName(names[0]), garbage));
      break;
    }
    case Damage::kPoclBinaryWithoutProgramBc: {
      // A well-formed entry whose PoCL binary PoCL would abort on (an
      // assert in clCreateProgramWithBinary): stored by a process whose
      // PoCL cache directory was removed under it.
      BinaryCache cache(dir_);
      std::optional<std::vector<uint8_t>> payload = cache.Load(*KeyFromFileName(names[0]));
      ASSERT_TRUE(payload.has_value());
      if (!IsPoclBinaryV9(*payload)) GTEST_SKIP() << "the device's binaries are not PoCL 3.x's";
      RECQ_ASSERT_OK(cache.Store(*KeyFromFileName(names[0]), WithoutProgramBc(*payload)));
      break;
    }
  }
  ExpectWarmRun(/*from_disk=*/programs_ - 1, /*built=*/1);
  ExpectOnlyValidEntries(programs_);
  ExpectWarmRun(/*from_disk=*/programs_, /*built=*/0);
}

INSTANTIATE_TEST_SUITE_P(
    Damages, DamagedEntryTest,
    ::testing::Values(DamageCase{"truncated", Damage::kTruncated},
                      DamageCase{"random_bytes", Damage::kRandomBytes},
                      DamageCase{"flipped_payload_byte", Damage::kFlippedPayloadByte},
                      DamageCase{"other_keys_entry", Damage::kOtherKeysEntry},
                      DamageCase{"driver_rejects_binary", Damage::kBadBinary},
                      DamageCase{"pocl_binary_without_program_bc",
                                 Damage::kPoclBinaryWithoutProgramBc}),
    [](const ::testing::TestParamInfo<DamageCase>& info) { return std::string(info.param.name); });

// CheckPoclBinary accepts every binary PoCL gave for the model's programs
// and rejects each kind of damage that PoCL's parser asserts on.
TEST_F(BinaryCacheTest, PoclBinaryLayoutIsCheckedBeforePoclReadsIt) {
  ColdRun();
  ASSERT_FALSE(HasFatalFailure());
  BinaryCache cache(dir_);
  std::vector<std::vector<uint8_t>> binaries;
  for (const std::string& name : Entries()) {
    std::optional<std::vector<uint8_t>> payload = cache.Load(*KeyFromFileName(name));
    ASSERT_TRUE(payload.has_value()) << name;
    const absl::Status checked = internal::CheckPoclBinary(*payload);
    EXPECT_TRUE(checked.ok()) << name << ": " << checked;
    if (IsPoclBinaryV9(*payload)) binaries.push_back(*std::move(payload));
  }
  if (binaries.empty()) GTEST_SKIP() << "the device's binaries are not PoCL 3.x's";
  const std::vector<uint8_t>& good = binaries[0];
  auto rejected = [](const std::vector<uint8_t>& bytes, const std::string& why) {
    absl::Status status = internal::CheckPoclBinary(bytes);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << why << ": " << status;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("PoCL program binary")) << why;
  };
  {
    absl::Status status = internal::CheckPoclBinary(WithoutProgramBc(good));
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("root entry 0 is empty"))
        << status;
  }
  std::vector<uint8_t> bytes(good.begin(), good.end() - 1);
  rejected(bytes, "one byte short");
  bytes = std::vector<uint8_t>(good.begin(), good.begin() + 40);
  rejected(bytes, "header only");
  bytes = good;
  bytes.push_back(0);
  rejected(bytes, "a trailing byte");
  bytes = good;
  WriteLe(&bytes, 20, 4, 0);
  rejected(bytes, "no kernels");
  bytes = good;
  WriteLe(&bytes, kPoclHeader, 8, ReadLe(good, kPoclHeader, 8) + 1);
  rejected(bytes, "a root entry one byte longer");
  bytes = good;
  WriteLe(&bytes, kPoclHeader + 8, 4, 0);  // the first file's name length
  rejected(bytes, "a file record without a name");
  // The first kernel's record: its size, then its name's length.
  const size_t kernel = kPoclHeader + 8 + ReadLe(good, kPoclHeader, 8);
  bytes = good;
  WriteLe(&bytes, kernel, 8, ReadLe(good, kernel, 8) + 1000000);
  rejected(bytes, "a kernel record past the end");
  bytes = good;
  WriteLe(&bytes, kernel + 20, 4, ReadLe(good, kernel + 20, 4) + 1);
  rejected(bytes, "a kernel name one byte longer");
  // Not PoCL's, or a format version the check does not know: not checked.
  const std::string ptx = "//\n// Generated by NVIDIA NVVM Compiler\n";
  EXPECT_TRUE(internal::CheckPoclBinary(std::vector<uint8_t>(ptx.begin(), ptx.end())).ok());
  bytes = WithoutProgramBc(good);
  WriteLe(&bytes, 16, 4, 10);
  EXPECT_TRUE(internal::CheckPoclBinary(bytes).ok());
}

TEST_F(BinaryCacheTest, UnusableDirectoryStillCompiles) {
  // A path below a regular file cannot be created, even by root.
  const fs::path file = root_ / "not_a_directory";
  WriteBytes(file, {1, 2, 3});
  dir_ = (file / "cache").string();
  for (int round = 0; round < 2; ++round) {
    RECQ_ASSERT_OK_AND_ASSIGN(RunResult r, CompileAndRun(dir_));
    EXPECT_GT(r.stats.kernels_built, 0u);
    EXPECT_EQ(r.stats.programs_from_disk, 0u);
    auto cmp = reference::Compare(r.output, Expected(), kAtol, kRtol);
    EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  }
  if (geteuid() != 0) {  // permissions do not bind root
    dir_ = (root_ / "read_only").string();
    fs::create_directory(dir_);
    fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
    RECQ_ASSERT_OK_AND_ASSIGN(RunResult r, CompileAndRun(dir_));
    EXPECT_GT(r.stats.kernels_built, 0u);
    EXPECT_TRUE(Entries().empty());
  }
}

// Counts warnings logged through recq/log.h while alive.
class WarningCounter {
 public:
  WarningCounter() {
    SetLogSink([this](LogLevel level, absl::string_view message) {
      if (level == LogLevel::kWarning) messages_.emplace_back(message);
    });
  }
  ~WarningCounter() { SetLogSink({}); }
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
};

BinaryCacheKey TestKey(uint8_t seed) {
  BinaryCacheKey key;
  for (size_t i = 0; i < key.digest.size(); ++i) key.digest[i] = static_cast<uint8_t>(seed + i);
  return key;
}

void SetMtime(const std::string& path, int64_t seconds_ago) {
  struct timespec times[2];
  times[0].tv_sec = time(nullptr) - seconds_ago;
  times[0].tv_nsec = 0;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST_F(BinaryCacheTest, SizeCapEvictsTheLeastRecentlyUsedEntries) {
  const std::vector<uint8_t> payload(1000, 7);
  const uint64_t entry_bytes = 1000 + 84;  // payload + header
  BinaryCache cache(dir_, 3 * entry_bytes);
  for (uint8_t k = 1; k <= 3; ++k) {
    RECQ_ASSERT_OK(cache.Store(TestKey(k), payload));
    SetMtime(cache.PathFor(TestKey(k)), 100 - k);  // 1 oldest, 3 newest
  }
  EXPECT_EQ(cache.stats().evicted, 0u);
  ASSERT_TRUE(cache.Load(TestKey(1)).has_value());  // 1 becomes the newest
  RECQ_ASSERT_OK(cache.Store(TestKey(4), payload));
  EXPECT_EQ(cache.stats().evicted, 1u);
  EXPECT_TRUE(cache.Load(TestKey(1)).has_value());
  EXPECT_FALSE(cache.Load(TestKey(2)).has_value()) << "the least recently used entry stayed";
  EXPECT_TRUE(cache.Load(TestKey(3)).has_value());
  EXPECT_TRUE(cache.Load(TestKey(4)).has_value());
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_)) total += fs::file_size(e.path());
  EXPECT_LE(total, cache.max_bytes());
}

TEST_F(BinaryCacheTest, CapSmallerThanOneEntryKeepsTheNewest) {
  BinaryCache cache(dir_, 10);
  const std::vector<uint8_t> payload(500, 3);
  RECQ_ASSERT_OK(cache.Store(TestKey(1), payload));
  RECQ_ASSERT_OK(cache.Store(TestKey(2), payload));
  EXPECT_FALSE(cache.Load(TestKey(1)).has_value());
  EXPECT_TRUE(cache.Load(TestKey(2)).has_value());
}

TEST_F(BinaryCacheTest, StaleTempFilesOfCrashedWritersAreDeleted) {
  fs::create_directories(dir_);
  // A pid that is certainly gone: a child that exited and was reaped.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  const std::string hex = TestKey(9).Hex();
  const std::string dead = absl::StrCat(dir_, "/", hex, ".tmp.", child, ".1a2b");
  const std::string live = absl::StrCat(dir_, "/", hex, ".tmp.", getpid(), ".3c4d");
  const std::string old = absl::StrCat(dir_, "/", hex, ".tmp.", getpid(), ".5e6f");
  const std::string foreign = absl::StrCat(dir_, "/notes.tmp.1.txt");
  for (const std::string& path : {dead, live, old, foreign}) WriteBytes(path, {1, 2, 3});
  SetMtime(old, 2 * 3600);
  SetMtime(foreign, 2 * 3600);
  BinaryCache cache(dir_);
  EXPECT_FALSE(cache.Load(TestKey(9)).has_value());  // the first use tidies
  EXPECT_EQ(cache.stats().stale_temps, 2u);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::exists(live)) << "a running writer's temporary file was deleted";
  EXPECT_TRUE(fs::exists(foreign)) << "a file that is not recq's was deleted";
}

TEST_F(BinaryCacheTest, DirectoryThatIsAFileWarnsOnceAndCompiles) {
  const fs::path file = root_ / "a_file";
  WriteBytes(file, {1, 2, 3});
  WarningCounter warnings;
  RECQ_ASSERT_OK_AND_ASSIGN(RunResult r, CompileAndRun(file.string()));
  EXPECT_GT(r.stats.kernels_built, 1u);
  auto cmp = reference::Compare(r.output, Expected(), kAtol, kRtol);
  EXPECT_TRUE(cmp.ok()) << cmp.ToString();
  ASSERT_EQ(warnings.messages().size(), 1u);
  EXPECT_THAT(warnings.messages()[0], ::testing::HasSubstr(file.string()));
  EXPECT_THAT(warnings.messages()[0], ::testing::HasSubstr("compiling from source"));
  EXPECT_EQ(ReadBytes(file), (std::vector<uint8_t>{1, 2, 3}));
}

TEST_F(BinaryCacheTest, FullDiskFailsTheStoreCleanlyWithOneWarning) {
  // A file size limit makes write() fail as on a full disk (EFBIG).
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &previous), 0);
  struct rlimit old_limit {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 512;
  WarningCounter warnings;
  BinaryCache cache(dir_);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status first = cache.Store(TestKey(1), std::vector<uint8_t>(4096, 1));
  const absl::Status second = cache.Store(TestKey(2), std::vector<uint8_t>(4096, 2));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ASSERT_EQ(sigaction(SIGXFSZ, &previous, nullptr), 0);
  EXPECT_TRUE(absl::IsUnavailable(first)) << first;
  EXPECT_THAT(std::string(first.message()), ::testing::HasSubstr("write"));
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(cache.stats().store_failed, 2u);
  EXPECT_EQ(warnings.messages().size(), 1u);
  EXPECT_TRUE(Entries().empty()) << "a partial or temporary file was left behind";
  EXPECT_FALSE(cache.Load(TestKey(1)).has_value());
}

TEST_F(BinaryCacheTest, DirectoryFullOfGarbageOnlyMeansBuildingFromSource) {
  ColdRun();
  ASSERT_FALSE(HasFatalFailure());
  std::mt19937 rng(5);
  // Every entry overwritten with random bytes, plus files that are not
  // entries at all.
  for (const std::string& name : Entries()) {
    std::vector<uint8_t> junk(1 + rng() % 300);
    for (uint8_t& b : junk) b = static_cast<uint8_t>(rng());
    WriteBytes(fs::path(dir_) / name, junk);
  }
  for (int i = 0; i < 5; ++i) WriteBytes(fs::path(dir_) / absl::StrCat("junk", i), {9, 9});
  WarningCounter warnings;
  ExpectWarmRun(/*from_disk=*/0, /*built=*/programs_);
  EXPECT_TRUE(warnings.messages().empty()) << warnings.messages()[0];
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(fs::exists(fs::path(dir_) / absl::StrCat("junk", i)));
  ExpectWarmRun(/*from_disk=*/programs_, /*built=*/0);  // rewritten entries load again
}

TEST_F(BinaryCacheTest, OffDisablesTheCache) {
  RECQ_ASSERT_OK_AND_ASSIGN(RunResult r, CompileAndRun("off"));
  EXPECT_GT(r.stats.kernels_built, 0u);
  EXPECT_EQ(r.stats.programs_from_disk, 0u);
  EXPECT_FALSE(internal::ResolveBinaryCacheDir("off").has_value());
}

// Context::cache_dir names the directory the context's cache uses, the one
// entries are written to, and is empty with caching off.
TEST_F(BinaryCacheTest, ContextCacheDirIsTheDirectoryInUse) {
  ContextOptions options;
  options.cache_dir = dir_;
  RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create(options));
  EXPECT_EQ(context.cache_dir(), dir_);
  options.cache_dir = "off";
  RECQ_ASSERT_OK_AND_ASSIGN(Context off, Context::Create(options));
  EXPECT_EQ(off.cache_dir(), "");
}

TEST_F(BinaryCacheTest, ConcurrentContextsLeaveOnlyValidEntries) {
  constexpr int kThreads = 4;
  // PoCL 3.1 crashes (in clGetDeviceInfo) when several threads make a
  // process's first OpenCL calls at once, so initialize it on this thread;
  // the compiles below still race on the cache.
  ContextOptions off;
  off.cache_dir = "off";
  RECQ_ASSERT_OK(Context::Create(off).status());
  ASSERT_FALSE(Expected().empty());
  for (int round = 0; round < 2; ++round) {  // cold: all store; warm: all load
    std::vector<absl::StatusOr<RunResult>> results(kThreads, absl::UnknownError("not run"));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { results[t] = CompileAndRun(dir_); });
    }
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_TRUE(results[t].ok()) << results[t].status();
      auto cmp = reference::Compare(results[t]->output, Expected(), kAtol, kRtol);
      EXPECT_TRUE(cmp.ok()) << "thread " << t << ": " << cmp.ToString();
      EXPECT_TRUE(BitIdentical(results[t]->output, results[0]->output));
      size_t programs = results[t]->stats.kernels_built + results[t]->stats.programs_from_disk;
      if (round == 1) {
        EXPECT_EQ(results[t]->stats.programs_from_disk, programs);
      }
      programs_ = programs;
    }
    ExpectOnlyValidEntries(programs_);
  }
}

TEST_F(BinaryCacheTest, ConcurrentStoresAndLoadsSeeWholeEntries) {
  BinaryCache cache(dir_);
  BinaryCacheKey key;
  key.digest.fill(0xab);
  // Payloads of different sizes, each byte the payload's index.
  auto payload = [](int i) { return std::vector<uint8_t>(1000 + 7919 * i, uint8_t(i)); };
  std::atomic<bool> bad{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        if (t % 2 == 0) {
          if (!cache.Store(key, payload((t * 50 + i) % 8)).ok()) bad = true;
        } else if (std::optional<std::vector<uint8_t>> got = cache.Load(key)) {
          if (got->empty() || *got != payload((*got)[0])) bad = true;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(bad);
  EXPECT_EQ(cache.stats().invalid, 0u);
  EXPECT_EQ(cache.stats().store_failed, 0u);
  EXPECT_EQ(Entries(), std::vector<std::string>{key.Hex()});  // no temporary files left
}

TEST(BinaryCacheKeyTest, CoversEveryInputAndIgnoresOptionOrder) {
  DeviceInfo device;
  device.name = "dev";
  device.driver_version = "1.0";
  device.version = "OpenCL 3.0";
  device.platform_name = "plat";
  device.platform_version = "OpenCL 3.0 plat";
  std::vector<std::string> options = {"-DA=1", "-DB=2"};
  RECQ_ASSERT_OK_AND_ASSIGN(BinaryCacheKey base,
                            internal::MakeBinaryCacheKey("kernel", options, device));
  EXPECT_EQ(base.Hex().size(), 64u);
  std::vector<std::string> reversed = {"-DB=2", "-DA=1"};
  RECQ_ASSERT_OK_AND_ASSIGN(BinaryCacheKey same,
                            internal::MakeBinaryCacheKey("kernel", reversed, device));
  EXPECT_EQ(base, same);

  std::vector<BinaryCacheKey> others;
  auto add = [&](absl::string_view source, std::vector<std::string> opts, const DeviceInfo& d) {
    absl::StatusOr<BinaryCacheKey> k = internal::MakeBinaryCacheKey(source, opts, d);
    ASSERT_TRUE(k.ok()) << k.status();
    others.push_back(*k);
  };
  add("kernel ", options, device);
  add("kernel", {"-DA=1"}, device);
  add("kernel", {"-DA=1 -DB=2"}, device);
  for (std::string DeviceInfo::*field :
       {&DeviceInfo::name, &DeviceInfo::driver_version, &DeviceInfo::version,
        &DeviceInfo::platform_name, &DeviceInfo::platform_version}) {
    DeviceInfo changed = device;
    changed.*field += "x";
    add("kernel", options, changed);
  }
  for (size_t i = 0; i < others.size(); ++i) {
    EXPECT_FALSE(others[i] == base) << "variant " << i;
    for (size_t j = 0; j < i; ++j) EXPECT_FALSE(others[i] == others[j]) << i << " vs " << j;
  }
}

TEST(ResolveBinaryCacheDirTest, OverrideThenEnvironmentThenXdgThenHome) {
  struct SavedEnv {
    std::string name;
    std::optional<std::string> value;
  };
  std::vector<SavedEnv> saved;
  for (const char* name : {"RECQ_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
    const char* v = std::getenv(name);
    saved.push_back({name, v ? std::optional<std::string>(v) : std::nullopt});
  }
  setenv("RECQ_CACHE_DIR", "/env/dir", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(internal::ResolveBinaryCacheDir("/opt/dir"), "/opt/dir");
  EXPECT_EQ(internal::ResolveBinaryCacheDir(""), "/env/dir");
  setenv("RECQ_CACHE_DIR", "off", 1);
  EXPECT_EQ(internal::ResolveBinaryCacheDir(""), std::nullopt);
  EXPECT_EQ(internal::ResolveBinaryCacheDir("/opt/dir"), "/opt/dir");
  setenv("RECQ_CACHE_DIR", "", 1);
  EXPECT_EQ(internal::ResolveBinaryCacheDir(""), "/xdg/recq");
  unsetenv("RECQ_CACHE_DIR");
  EXPECT_EQ(internal::ResolveBinaryCacheDir(""), "/xdg/recq");
  setenv("XDG_CACHE_HOME", "relative", 1);
  EXPECT_EQ(internal::ResolveBinaryCacheDir(""), "/home/u/.cache/recq");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(internal::ResolveBinaryCacheDir(""), "/home/u/.cache/recq");
  unsetenv("HOME");
  EXPECT_EQ(internal::ResolveBinaryCacheDir(""), std::nullopt);
  for (const SavedEnv& s : saved) {
    if (s.value.has_value()) {
      setenv(s.name.c_str(), s.value->c_str(), 1);
    } else {
      unsetenv(s.name.c_str());
    }
  }
}

}  // namespace
}  // namespace recq
