// The backend registry: every backend folder registers one entry named after
// it, names and enum values round-trip, `auto` picks an available backend
// and says why, and a backend the device cannot run is refused by
// Engine::Record with the registry's reason.
#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "reference/reference_executor.h"
#include "testing/test_env.h"

namespace recq {
namespace {

using testing::Download;
using ::testing::HasSubstr;
using testing::NewTensor;
using testing::SharedContext;

TEST(BackendRegistry, EveryBackendFolderRegistersOneEntryNamedAfterIt) {
  std::set<std::string> registered;
  for (Backend b : RegisteredBackends()) {
    EXPECT_NE(b, Backend::kAuto);
    EXPECT_TRUE(registered.insert(BackendName(b)).second) << BackendName(b) << " twice";
  }
  std::set<std::string> folders;
  for (const auto& dir :
       std::filesystem::directory_iterator(std::filesystem::path(RECQ_SOURCE_DIR) / "backends")) {
    // backends/opencl/ is the layer over the OpenCL API, not a backend.
    if (dir.is_directory() && dir.path().filename() != "opencl") {
      folders.insert(dir.path().filename().string());
    }
  }
  EXPECT_FALSE(folders.empty());
  EXPECT_EQ(registered, folders);
}

TEST(BackendRegistry, NamesAndValuesRoundTrip) {
  for (Backend b : RegisteredBackends()) {
    absl::StatusOr<Backend> parsed = ParseBackend(BackendName(b));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, b) << BackendName(b);
  }
  absl::StatusOr<Backend> automatic = ParseBackend("auto");
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_EQ(*automatic, Backend::kAuto);
  EXPECT_STREQ(BackendName(Backend::kAuto), "auto");
}

TEST(BackendRegistry, UnknownNameListsTheRegisteredOnes) {
  absl::StatusOr<Backend> parsed = ParseBackend("vulkan");
  ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << parsed.status();
  EXPECT_THAT(parsed.status().message(), HasSubstr("unknown backend 'vulkan'"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("auto"));
  for (Backend b : RegisteredBackends()) {
    EXPECT_THAT(parsed.status().message(), HasSubstr(BackendName(b)));
  }
}

// The replay list (the reference) and the unrecorded path run on any device.
TEST(BackendRegistry, ReplayAndUnrecordedAreAvailableEverywhere) {
  RECQ_ASSERT_OK(BackendAvailable(SharedContext(), Backend::kReplay));
  RECQ_ASSERT_OK(BackendAvailable(SharedContext(), Backend::kUnrecorded));
  RECQ_ASSERT_OK(BackendAvailable(SharedContext(), Backend::kAuto));
}

TEST(BackendRegistry, RecordGivesTheRegistrysReasonOrRunsCorrectly) {
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine,
                            Engine::Compile(SharedContext(), testing::ChainGraph(6, 64)));
  const TensorDesc desc = engine.inputs()[0].desc;
  const reference::HostTensor x = reference::RandomTensor(desc.shape, 31);
  Tensor in = NewTensor(desc, x.data);
  Tensor out = NewTensor(engine.outputs()[0].desc);
  RECQ_ASSERT_OK_AND_ASSIGN(Recording replay, engine.Record({Backend::kReplay}));
  Bindings bindings;
  bindings.Set("x", in);
  bindings.Set("y", out);
  RECQ_ASSERT_OK(out.Fill(NAN));
  RECQ_ASSERT_OK(replay.Run(bindings));
  const std::vector<float> expected = Download(out);
  for (float v : expected) ASSERT_FALSE(std::isnan(v));
  for (Backend b : RegisteredBackends()) {
    SCOPED_TRACE(BackendName(b));
    const absl::Status available = BackendAvailable(SharedContext(), b);
    absl::StatusOr<Recording> rec = engine.Record({b});
    if (!available.ok()) {
      EXPECT_EQ(available.code(), absl::StatusCode::kUnavailable) << available;
      EXPECT_EQ(rec.status().code(), absl::StatusCode::kUnavailable) << rec.status();
      EXPECT_THAT(rec.status().message(), HasSubstr(std::string(available.message())));
      EXPECT_THAT(rec.status().message(),
                  HasSubstr(absl::StrCat("backend '", BackendName(b), "' is unavailable")));
      continue;
    }
    ASSERT_TRUE(rec.ok()) << rec.status();
    EXPECT_EQ(rec->backend(), b);
    EXPECT_THAT(rec->backend_reason(), ::testing::StartsWith("requested"));
    RECQ_ASSERT_OK(out.Fill(NAN));
    RECQ_ASSERT_OK(rec->Run(bindings));
    EXPECT_EQ(Download(out), expected);
  }
}

// `auto` records with an available backend and its reason names it first.
TEST(BackendRegistry, AutoPicksAnAvailableBackendAndSaysWhy) {
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine,
                            Engine::Compile(SharedContext(), testing::ChainGraph(4, 32)));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, engine.Record({Backend::kAuto}));
  EXPECT_NE(rec.backend(), Backend::kAuto);
  EXPECT_NE(rec.backend(), Backend::kUnrecorded);  // never `auto`'s pick
  const absl::Status available = BackendAvailable(SharedContext(), rec.backend());
  EXPECT_TRUE(available.ok()) << available;
  EXPECT_THAT(rec.backend_reason(),
              ::testing::StartsWith(absl::StrCat("auto: ", BackendName(rec.backend()))));
}

}  // namespace
}  // namespace recq
