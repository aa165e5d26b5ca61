// Device specs (ContextOptions::device, RECQ_DEVICE): parsing, matching
// against hand-made device tables (two identical GPUs, a CPU), and selection
// on the real platform.
#include "backends/opencl/device.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recq/context.h"
#include "testing/test_env.h"

namespace recq::cl {
namespace {

using ::testing::HasSubstr;

DeviceSpec Parse(const std::string& text) {
  absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : DeviceSpec{};
}

TEST(ParseDeviceSpecTest, TypeIndices) {
  DeviceSpec gpu1 = Parse("gpu:1");
  EXPECT_EQ(gpu1.kind, DeviceSpec::Kind::kTypeIndex);
  EXPECT_EQ(gpu1.type, cl_device_type{CL_DEVICE_TYPE_GPU});
  EXPECT_EQ(gpu1.index, 1u);
  DeviceSpec cpu0 = Parse(" CPU:0 ");
  EXPECT_EQ(cpu0.kind, DeviceSpec::Kind::kTypeIndex);
  EXPECT_EQ(cpu0.type, cl_device_type{CL_DEVICE_TYPE_CPU});
  EXPECT_EQ(cpu0.index, 0u);
  DeviceSpec acc = Parse("accelerator:12");
  EXPECT_EQ(acc.type, cl_device_type{CL_DEVICE_TYPE_ACCELERATOR});
  EXPECT_EQ(acc.index, 12u);
}

TEST(ParseDeviceSpecTest, PlatformAndDevice) {
  DeviceSpec pd = Parse("1:3");
  EXPECT_EQ(pd.kind, DeviceSpec::Kind::kPlatformDevice);
  EXPECT_EQ(pd.platform, 1u);
  EXPECT_EQ(pd.index, 3u);
}

TEST(ParseDeviceSpecTest, AutoAndNames) {
  EXPECT_EQ(Parse("").kind, DeviceSpec::Kind::kAuto);
  EXPECT_EQ(Parse("AUTO").kind, DeviceSpec::Kind::kAuto);
  for (const char* name : {"pthread", "NVIDIA H200", "gpu:", "gpu:x", "gpu:-1", "nvidia:0", ":1",
                           "1:", "gpu:1:2", "0:1a"}) {
    DeviceSpec spec = Parse(name);
    EXPECT_EQ(spec.kind, DeviceSpec::Kind::kName) << name;
  }
  EXPECT_EQ(Parse("NVIDIA H200").name, "nvidia h200");
}

TEST(ParseDeviceSpecTest, IndexTooLargeIsAnError) {
  for (const char* text : {"gpu:99999999999999999999999", "cpu:4294967296", "0:99999999999"}) {
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(spec.status().message(), HasSubstr("too large"));
  }
}

// Platform 0 "NVIDIA CUDA" with two "NVIDIA H200" GPUs, platform 1 "Portable
// Computing Language" with one CPU, platform 2 with no device.
DeviceTable TwoGpusAndACpu() {
  DeviceTable t;
  t.platform_names = {"NVIDIA CUDA", "Portable Computing Language", "Empty"};
  auto add = [&](cl_device_type type, const char* name, size_t p, size_t d) {
    DeviceEntryRaw e;
    e.type = type;
    e.device_name = name;
    e.platform_name = t.platform_names[p];
    e.platform_index = p;
    e.device_index = d;
    t.devices.push_back(e);
  };
  add(CL_DEVICE_TYPE_GPU, "NVIDIA H200", 0, 0);
  add(CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT, "NVIDIA H200", 0, 1);
  add(CL_DEVICE_TYPE_CPU, "pthread-cpu", 1, 0);
  AssignTypeIndices(t);
  return t;
}

absl::StatusOr<size_t> Match(const std::string& text, const DeviceTable& table) {
  absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(text);
  if (!spec.ok()) return spec.status();
  return MatchDevice(*spec, text, table);
}

TEST(MatchDeviceTest, SelectsByTypeIndexPlatformDeviceAndName) {
  const DeviceTable t = TwoGpusAndACpu();
  EXPECT_EQ(t.devices[0].type_index, 0u);
  EXPECT_EQ(t.devices[1].type_index, 1u);
  EXPECT_EQ(t.devices[2].type_index, 0u);
  EXPECT_EQ(Match("gpu:0", t).value(), 0u);
  EXPECT_EQ(Match("gpu:1", t).value(), 1u);  // same name as gpu:0: only an index tells them apart
  EXPECT_EQ(Match("cpu:0", t).value(), 2u);
  EXPECT_EQ(Match("0:1", t).value(), 1u);
  EXPECT_EQ(Match("1:0", t).value(), 2u);
  EXPECT_EQ(Match("h200", t).value(), 0u);
  EXPECT_EQ(Match("portable", t).value(), 2u);
  EXPECT_EQ(Match("", t).value(), 0u);
}

TEST(MatchDeviceTest, AutoPrefersAGpuListedAfterACpu) {
  DeviceTable t = TwoGpusAndACpu();
  std::rotate(t.devices.begin(), t.devices.begin() + 2, t.devices.end());  // CPU first
  EXPECT_EQ(t.devices[0].device_name, "pthread-cpu");
  EXPECT_EQ(Match("auto", t).value(), 1u);
}

TEST(MatchDeviceTest, TypeIndexOutOfRangeSaysHowManyExist) {
  const DeviceTable t = TwoGpusAndACpu();
  absl::StatusOr<size_t> gpu2 = Match("gpu:2", t);
  ASSERT_FALSE(gpu2.ok());
  EXPECT_EQ(gpu2.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(gpu2.status().message(), HasSubstr("there are 2 gpu devices (gpu:0 to gpu:1)"));
  EXPECT_THAT(gpu2.status().message(), HasSubstr("0:1 gpu:1 'NVIDIA H200' (NVIDIA CUDA)"));
  absl::StatusOr<size_t> cpu1 = Match("cpu:1", t);
  ASSERT_FALSE(cpu1.ok());
  EXPECT_THAT(cpu1.status().message(), HasSubstr("there is 1 cpu device (cpu:0);"));
  absl::StatusOr<size_t> acc = Match("accelerator:0", t);
  ASSERT_FALSE(acc.ok());
  EXPECT_THAT(acc.status().message(), HasSubstr("there are 0 accelerator devices;"));
}

TEST(MatchDeviceTest, PlatformOrDeviceOutOfRangeSaysHowManyExist) {
  const DeviceTable t = TwoGpusAndACpu();
  absl::StatusOr<size_t> platform = Match("3:0", t);
  ASSERT_FALSE(platform.ok());
  EXPECT_EQ(platform.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(platform.status().message(),
              HasSubstr("platform index 3 is out of range; there are 3 platforms"));
  absl::StatusOr<size_t> device = Match("0:2", t);
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.status().message(),
              HasSubstr("device index 2 is out of range; platform 0 'NVIDIA CUDA' has 2 devices"));
  absl::StatusOr<size_t> empty = Match("2:0", t);
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("platform 2 'Empty' has 0 devices"));
}

TEST(MatchDeviceTest, UnknownNameListsTheDevices) {
  absl::StatusOr<size_t> none = Match("radeon", TwoGpusAndACpu());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("no OpenCL device matches 'radeon'"));
  EXPECT_THAT(none.status().message(), HasSubstr("1:0 cpu:0 'pthread-cpu'"));
}

// The real platform: every listed device can be selected by both of its
// indices, and the context gets that very device.
TEST(DeviceSelectionTest, EveryListedDeviceBySelectorAndPlatformDevice) {
  absl::StatusOr<std::vector<DeviceListing>> devices = ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_FALSE(devices->empty());
  for (const DeviceListing& d : *devices) {
    EXPECT_EQ(d.selector.substr(0, d.selector.find(':')), DeviceTypeName(d.info.type));
    for (const std::string& spec : {d.selector, d.platform_device}) {
      ContextOptions options;
      options.device = spec;
      absl::StatusOr<Context> context = Context::Create(options);
      ASSERT_TRUE(context.ok()) << spec << ": " << context.status();
      EXPECT_EQ(context->device(), d.device) << spec;
      EXPECT_EQ(context->device_info().name, d.info.name);
    }
  }
}

TEST(DeviceSelectionTest, IndexOutOfRangeFromTheEnvironment) {
  absl::StatusOr<std::vector<DeviceListing>> devices = ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  const std::string type = DeviceTypeName(devices->front().info.type);
  size_t count = 0;
  for (const DeviceListing& d : *devices) count += DeviceTypeName(d.info.type) == type;
  const std::string spec = type + ":" + std::to_string(count);
  ASSERT_EQ(setenv("RECQ_DEVICE", spec.c_str(), 1), 0);
  absl::StatusOr<Context> context = Context::Create();
  unsetenv("RECQ_DEVICE");
  ASSERT_FALSE(context.ok());
  EXPECT_EQ(context.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(context.status().message(),
              HasSubstr(absl::StrCat("device '", spec, "': ", type, " index ", count,
                                     " is out of range; there ")));
  EXPECT_THAT(context.status().message(), HasSubstr(absl::StrCat(count, " ", type, " device")));
}

}  // namespace
}  // namespace recq::cl
