// recq bench's parts: latency statistics, the occupancy summary, the JSON
// writer, the terminal status line, and whole bench runs on a small
// MobileNet V2 (one test device driven as two, both stream modes), checked
// through their JSON reports.
#include "tools/bench_command.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/recq.h"
#include "testing/test_env.h"
#include "tools/json_writer.h"
#include "tools/latency_stats.h"
#include "tools/models/mobilenet_onnx.h"
#include "tools/roofline.h"
#include "tools/status_line.h"

namespace recq::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LatencyStatsTest, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // any order
  LatencyStats s = Summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p95, 95);
  EXPECT_EQ(s.p99, 99);
}

TEST(LatencyStatsTest, SmallAndEmptySamples) {
  LatencyStats one = Summarize({7.5});
  EXPECT_EQ(one.count, 1u);
  EXPECT_EQ(one.p50, 7.5);
  EXPECT_EQ(one.p99, 7.5);
  LatencyStats ten = Summarize({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  EXPECT_EQ(ten.p50, 5);
  EXPECT_EQ(ten.p90, 9);
  EXPECT_EQ(ten.p95, 10);  // ceil(9.5) = rank 10
  EXPECT_EQ(ten.p99, 10);
  LatencyStats none = Summarize({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.max, 0);
}

TEST(OccupancyTest, WorkGroupsPerUnitAndIdleTimeBetweenDispatches) {
  EXPECT_DOUBLE_EQ(CoreOccupancy(1, 2), 0.5);
  EXPECT_DOUBLE_EQ(CoreOccupancy(3, 2), 0.75);
  EXPECT_DOUBLE_EQ(CoreOccupancy(4, 2), 1.0);
  EXPECT_DOUBLE_EQ(CoreOccupancy(5, 4), 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(CoreOccupancy(0, 2), 0.0);  // left to the driver
  EXPECT_DOUBLE_EQ(CoreOccupancy(7, 0), 0.0);  // units unknown

  // Three dispatches on two units: 1 ms of 1 group, 3 ms of 4 groups, then
  // 2 ms whose local size the driver chose; 0.5 ms and 0.25 ms idle between.
  std::vector<DispatchProfile> p(3);
  p[0].device_ms = 1.0;
  p[0].work_groups = 1;
  p[0].start_ms = 0.0;
  p[1].device_ms = 3.0;
  p[1].work_groups = 4;
  p[1].start_ms = 1.5;
  p[2].device_ms = 2.0;
  p[2].work_groups = 0;
  p[2].start_ms = 4.75;
  const ProfileOccupancy o = SummarizeOccupancy(p, 2);
  EXPECT_EQ(o.units, 2u);
  EXPECT_DOUBLE_EQ(o.busy_fraction, (1.0 * 0.5 + 3.0 * 1.0) / 4.0);
  EXPECT_EQ(o.below_units, 1u);
  EXPECT_DOUBLE_EQ(o.below_units_ms, 1.0);
  EXPECT_EQ(o.unknown_groups, 1u);
  EXPECT_DOUBLE_EQ(o.span_ms, 6.75);
  EXPECT_DOUBLE_EQ(o.gaps_ms, 0.75);
  EXPECT_DOUBLE_EQ(o.gap_median_ms, 0.5);  // of {0.25, 0.5}: the upper one
  EXPECT_DOUBLE_EQ(o.gap_max_ms, 0.5);

  // Overlapping timestamps (a driver's clock) count no negative idle time.
  p[1].start_ms = 0.5;
  EXPECT_DOUBLE_EQ(SummarizeOccupancy(p, 2).gaps_ms, 4.75 - 3.5);
  EXPECT_EQ(SummarizeOccupancy({}, 2).span_ms, 0.0);
}

// The roofline: measured into the context's cache directory, read back from
// there, and measured again over a file of another format.
TEST(RooflineTest, MeasuredCachedAndRemeasuredOverADamagedFile) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/roofline_", getpid());
  ContextOptions options;
  options.cache_dir = dir;
  RECQ_ASSERT_OK_AND_ASSIGN(Context context, Context::Create(options));
  RECQ_ASSERT_OK_AND_ASSIGN(Roofline measured, DeviceRoofline(context));
  EXPECT_FALSE(measured.cached);
  EXPECT_GT(measured.gflops, 0.0);
  EXPECT_GT(measured.gbps, 0.0);
  ASSERT_FALSE(measured.cache_file.empty());
  RECQ_ASSERT_OK_AND_ASSIGN(Roofline cached, DeviceRoofline(context));
  EXPECT_TRUE(cached.cached);
  EXPECT_EQ(cached.cache_file, measured.cache_file);
  EXPECT_NEAR(cached.gflops, measured.gflops, 1e-3 * measured.gflops);
  EXPECT_NEAR(cached.gbps, measured.gbps, 1e-3 * measured.gbps);
  {
    std::ofstream damaged(measured.cache_file, std::ios::trunc);
    damaged << "recq-roofline-v3 54.0 17.0\n";  // the earlier format: measured again
  }
  RECQ_ASSERT_OK_AND_ASSIGN(Roofline again, DeviceRoofline(context));
  EXPECT_FALSE(again.cached);
  EXPECT_GT(again.gflops, 0.0);
  std::filesystem::remove_all(dir);
}

TEST(JsonWriterTest, NestingCommasEscapesAndNonFiniteNumbers) {
  JsonWriter j;
  j.BeginObject();
  j.Key("name");
  j.String("a \"quoted\"\\path\n\x01");
  j.Key("list");
  j.BeginArray();
  j.Int(1);
  j.Number(2.5);
  j.Number(NAN);
  j.Bool(false);
  j.BeginObject();
  j.EndObject();
  j.EndArray();
  j.Key("inf");
  j.Number(INFINITY);
  j.EndObject();
  EXPECT_EQ(j.str(),
            "{\"name\":\"a \\\"quoted\\\"\\\\path\\n\\u0001\",\"list\":[1,2.5,null,false,{}],"
            "\"inf\":null}");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(StatusLineTest, WritesOnlyWhenEnabled) {
  for (bool enabled : {false, true}) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    {
      StatusLine line(enabled, f);
      line.Update("compiling 1/3");
      line.Update("compiling 2/3");
      line.PrintLine("recq warning: something");
    }
    std::fseek(f, 0, SEEK_SET);
    char buf[512] = {};
    size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    std::string out(buf, n);
    if (!enabled) {
      EXPECT_EQ(out, "recq warning: something\n");  // whole lines still go out
    } else {
      EXPECT_EQ(out, "\r\033[Kcompiling 1/3\r\033[Kcompiling 2/3\r\033[Krecq warning: something\n");
    }
  }
}

class BenchCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    models::MobileNetOptions options;
    options.resolution = 32;
    absl::StatusOr<std::string> bytes = models::MobileNetV2OnnxBytes(options);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    // Per process: ctest runs the tests of this suite in parallel processes.
    model_ = new std::string(::testing::TempDir() + "/bench_mobilenet_v2_32_" +
                             std::to_string(getpid()) + ".onnx");
    std::ofstream(*model_, std::ios::binary) << *bytes;
  }
  static std::string* model_;

  // The test device's selector ("cpu:0" on PoCL).
  static std::string Selector() {
    absl::StatusOr<std::vector<DeviceListing>> devices = ListDevices();
    EXPECT_TRUE(devices.ok());
    for (const DeviceListing& d : *devices) {
      if (d.device == testing::SharedContext().device()) return d.selector;
    }
    return "";
  }
};
std::string* BenchCommandTest::model_ = nullptr;

TEST_F(BenchCommandTest, IterationsOverTwoDevicesAndStreamsWithProfile) {
  for (const char* mode : {"threads", "events"}) {
    BenchOptions o;
    o.model_path = *model_;
    o.devices = Selector() + "," + Selector();
    o.streams = 2;
    o.stream_mode = mode;
    o.warmup_s = 0.05;
    o.iterations = 24;
    o.profile = true;
    o.json_path = absl::StrCat(::testing::TempDir(), "/bench_", mode, "_", getpid(), ".json");
    std::remove(o.json_path.c_str());
    RECQ_ASSERT_OK(BenchCommand(o));
    std::string json = ReadFile(o.json_path);
    EXPECT_THAT(json, HasSubstr("\"command\":\"bench\"")) << mode;
    EXPECT_THAT(json, HasSubstr(absl::StrCat("\"stream_mode\":\"", mode, "\""))) << mode;
    EXPECT_THAT(json, HasSubstr("\"streams_total\":4,\"inferences\":24,")) << mode;
    EXPECT_THAT(json, HasSubstr("\"latency_ms\":{\"count\":24,\"min\":")) << mode;
    for (const char* key : {"\"p50\":",
                            "\"p90\":",
                            "\"p95\":",
                            "\"p99\":",
                            "\"max\":",
                            "\"throughput_per_s\":",
                            "\"driver\":",
                            "\"backend\":\"",
                            "\"per_stream\":[{\"stream\":0,\"device\":0",
                            "{\"stream\":3,\"device\":1",
                            "\"profile\":[{\"device\":0,\"runs\":10",
                            "{\"device\":1,\"runs\":10",
                            "\"label\":\"",
                            "\"mean_ms\":",
                            "\"host_cpu_s\":",
                            "\"host_threads_busy\":",
                            "\"compute_units\":",
                            "\"busy_fraction\":",
                            "\"idle_between_dispatches_ms\":",
                            "\"work_groups\":"}) {
      EXPECT_THAT(json, HasSubstr(key)) << mode << ": " << key;
    }
    EXPECT_THAT(json, Not(HasSubstr("nan"))) << mode;
  }
}

TEST_F(BenchCommandTest, DurationRunsAtLeastThatLong) {
  BenchOptions o;
  o.model_path = *model_;
  o.warmup_s = 0;
  o.duration_s = 0.3;
  o.json_path = absl::StrCat(::testing::TempDir(), "/bench_duration_", getpid(), ".json");
  RECQ_ASSERT_OK(BenchCommand(o));
  std::string json = ReadFile(o.json_path);
  EXPECT_THAT(json, HasSubstr("\"duration_s\":0.3,\"iterations\":0"));
  EXPECT_THAT(json, Not(HasSubstr("\"profile\":[")));
  // wall_s >= duration: the last inference started before the deadline ends after it.
  size_t at = json.find("\"wall_s\":");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stod(json.substr(at + 9)), 0.3);
}

TEST_F(BenchCommandTest, BadOptionsAreRejectedBeforeLoading) {
  BenchOptions o;
  o.model_path = "/nonexistent.onnx";
  o.streams = 0;
  absl::Status s = BenchCommand(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--streams must be at least 1, got 0"));
  o.streams = 1;
  o.stream_mode = "fibers";
  EXPECT_THAT(BenchCommand(o).message(), HasSubstr("--stream_mode must be threads or events"));
  o.stream_mode = "threads";
  o.duration_s = 0;
  EXPECT_THAT(BenchCommand(o).message(), HasSubstr("--duration must be > 0 seconds"));
  o.duration_s = 1;
  o.model_path = *model_;
  o.devices = "0,7";
  s = BenchCommand(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(s.message(), HasSubstr("index 7 is out of range"));
}

}  // namespace
}  // namespace recq::tools
