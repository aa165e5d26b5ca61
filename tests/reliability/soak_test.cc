// Soak and churn: many replays with alternating bindings while sampling the
// process's resident memory, open file descriptors and live OpenCL objects
// (counted by the fault layer), then recordings and engines created and
// destroyed in a loop. CI runs short versions; scripts/soak.sh runs the
// full one (10,000 replays of MobileNet V2 at 224, sampled every
// 1,000; 1,000 recordings; 100 engines) through these variables:
//   RECQ_SOAK_RUNS, RECQ_SOAK_SAMPLE_EVERY, RECQ_SOAK_RESOLUTION,
//   RECQ_SOAK_RECORDINGS, RECQ_SOAK_ENGINES.
// Every replay's output is checked bit for bit.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "testing/fault_layer_client.h"
#include "testing/test_env.h"
#include "tools/models/mobilenet.h"

// Under a sanitizer (gcc defines __SANITIZE_ADDRESS__ and
// __SANITIZE_THREAD__; clang answers __has_feature) the resident size is no
// measure of leaks.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RECQ_SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RECQ_SOAK_SANITIZED 1
#endif
#endif

namespace recq {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  const int64_t v = text == nullptr ? 0 : std::atoll(text);
  return v > 0 ? v : fallback;
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

int64_t OpenFds() {
  int64_t n = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (readdir(dir) != nullptr) ++n;
  closedir(dir);
  return n;
}

int64_t LiveClObjects(const absl::StatusOr<testing::FaultLayerClient>& layer) {
  if (!layer.ok()) return -1;
  int64_t n = 0;
  for (const auto& [kind, count] : layer->LiveObjects()) n += static_cast<int64_t>(count);
  return n;
}

struct Sample {
  int64_t runs, rss, fds, cl_objects;
};

// Least-squares slope of y over x.
double Slope(const std::vector<Sample>& s, int64_t Sample::*y) {
  const double n = static_cast<double>(s.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Sample& p : s) {
    sx += p.runs;
    sy += p.*y;
    sxx += double(p.runs) * p.runs;
    sxy += double(p.runs) * (p.*y);
  }
  const double d = n * sxx - sx * sx;
  return d == 0 ? 0 : (n * sxy - sx * sy) / d;
}

TEST(SoakTest, ReplaysWithAlternatingBindingsKeepResourcesFlat) {
  const absl::StatusOr<testing::FaultLayerClient> layer = testing::FaultLayerClient::Find();
  const int64_t runs = EnvInt("RECQ_SOAK_RUNS", 2000);
  const int64_t every = EnvInt("RECQ_SOAK_SAMPLE_EVERY", 200);
  const int64_t resolution = EnvInt("RECQ_SOAK_RESOLUTION", 32);
  models::MobileNetOptions options;
  options.resolution = resolution;
  options.num_classes = 100;
  RECQ_ASSERT_OK_AND_ASSIGN(Graph graph, models::BuildMobileNetV2(options));
  const Context& context = testing::SharedContext();
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(context, graph));
  RECQ_ASSERT_OK_AND_ASSIGN(Recording recording, engine.Record());
  const TensorDesc in_desc{{1, 3, resolution, resolution}};
  const TensorDesc out_desc{{1, 100}};
  std::vector<Tensor> ins, outs;
  std::vector<std::vector<float>> expected;
  for (uint32_t i = 0; i < 2; ++i) {
    const reference::HostTensor host = reference::RandomTensor(in_desc.shape, 7 + i);
    ins.push_back(testing::NewTensor(in_desc, host.data));
    outs.push_back(testing::NewTensor(out_desc));
    Bindings b;
    b.Set("input", ins[i].mem());
    b.Set("prob", outs[i].mem());
    RECQ_ASSERT_OK(recording.Run(b));
    expected.push_back(testing::Download(outs[i]));
    const std::vector<float> ref = testing::ReferenceOutput(graph, "input", host, "prob");
    const auto cmp = reference::Compare(expected.back(), ref, 1e-5f, 1e-3f);
    ASSERT_TRUE(cmp.ok()) << cmp.ToString();
  }
  std::vector<Sample> samples;
  int64_t wrong = 0;
  for (int64_t run = 1; run <= runs; ++run) {
    const size_t i = static_cast<size_t>(run % 2);
    Bindings b;
    b.Set("input", ins[i].mem());
    b.Set("prob", outs[i].mem());
    RECQ_ASSERT_OK(recording.Run(b));
    absl::StatusOr<std::vector<float>> got = outs[i].Download();
    RECQ_ASSERT_OK(got.status());
    if (std::memcmp(got->data(), expected[i].data(), got->size() * sizeof(float)) != 0) ++wrong;
    if (run % every == 0)
      samples.push_back({run, ResidentBytes(), OpenFds(), LiveClObjects(layer)});
  }
  EXPECT_EQ(wrong, 0) << "of " << runs << " replays";
  ASSERT_GE(samples.size(), 3u);
  // The first sample absorbs one-time growth (PoCL builds work-group
  // functions lazily, allocators warm up); from the second on, flat.
  const std::vector<Sample> steady(samples.begin() + 1, samples.end());
  for (const Sample& s : steady) {
    EXPECT_EQ(s.fds, steady.front().fds) << "open fds changed at run " << s.runs;
    EXPECT_EQ(s.cl_objects, steady.front().cl_objects)
        << "live CL objects changed at run " << s.runs;
  }
  const double rss_slope = Slope(steady, &Sample::rss) * 1000.0;
  std::printf(
      "soak: %lld replays at %lldx%lld, %zu samples; per 1000 runs: rss %+.0f bytes, "
      "fds %+.2f, live CL objects %+.2f (rss first %lld, last %lld; CL objects %lld)\n",
      static_cast<long long>(runs), static_cast<long long>(resolution),
      static_cast<long long>(resolution), samples.size(), rss_slope,
      Slope(steady, &Sample::fds) * 1000.0, Slope(steady, &Sample::cl_objects) * 1000.0,
      static_cast<long long>(steady.front().rss), static_cast<long long>(steady.back().rss),
      static_cast<long long>(steady.back().cl_objects));
  // A leak of 400 bytes per replay would show as 400 KB per 1000 runs.
  // Under ASan the resident size grows with its quarantine of freed memory
  // instead; LeakSanitizer checks leaks there.
#ifndef RECQ_SOAK_SANITIZED
  EXPECT_LT(rss_slope, 400.0 * 1000.0) << "resident memory grows with replays";
#endif
}

TEST(SoakTest, RecordingAndEngineChurnReleasesEverything) {
  const absl::StatusOr<testing::FaultLayerClient> layer = testing::FaultLayerClient::Find();
  const int64_t recordings = EnvInt("RECQ_SOAK_RECORDINGS", 100);
  const int64_t engines = EnvInt("RECQ_SOAK_ENGINES", 10);
  const Context& context = testing::SharedContext();
  const Graph graph = testing::ChainGraph(6, 1024);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(1024);
  for (float& v : values) v = dist(rng);
  reference::HostTensor host{{1024}, values};
  const std::vector<float> ref = testing::ReferenceOutput(graph, "x", host, "y");
  Tensor in = testing::NewTensor(TensorDesc{{1024}}, values);
  Tensor out = testing::NewTensor(TensorDesc{{1024}});
  Bindings b;
  b.Set("x", in.mem());
  b.Set("y", out.mem());
  auto check = [&]() {
    std::vector<float> got = testing::Download(out);
    for (size_t k = 0; k < got.size(); ++k) ASSERT_FLOAT_EQ(got[k], ref[k]) << k;
  };
  RECQ_ASSERT_OK_AND_ASSIGN(Engine engine, Engine::Compile(context, graph));
  {
    RECQ_ASSERT_OK_AND_ASSIGN(Recording warm, engine.Record());
    RECQ_ASSERT_OK(warm.Run(b));
  }
  const int64_t fds = OpenFds(), objects = LiveClObjects(layer);
  const Backend backends[] = {Backend::kReplay, Backend::kUnrecorded, Backend::kKhrCommandBuffer};
  for (int64_t i = 0; i < recordings; ++i) {
    RECQ_ASSERT_OK(out.Fill(NAN));
    absl::StatusOr<Recording> rec = engine.Record({backends[i % 3]});
    if (absl::IsUnavailable(rec.status())) rec = engine.Record({Backend::kReplay});
    RECQ_ASSERT_OK(rec.status());
    RECQ_ASSERT_OK(rec->Run(b));
    check();
  }
  EXPECT_EQ(OpenFds(), fds);
  EXPECT_EQ(LiveClObjects(layer), objects) << "recording churn left CL objects alive";
  for (int64_t i = 0; i < engines; ++i) {
    RECQ_ASSERT_OK(out.Fill(NAN));
    RECQ_ASSERT_OK_AND_ASSIGN(Engine e, Engine::Compile(context, graph));
    RECQ_ASSERT_OK_AND_ASSIGN(Recording rec, e.Record());
    RECQ_ASSERT_OK(rec.Run(b));
    check();
  }
  EXPECT_EQ(OpenFds(), fds);
  EXPECT_EQ(LiveClObjects(layer), objects) << "engine churn left CL objects alive";
}

}  // namespace
}  // namespace recq
