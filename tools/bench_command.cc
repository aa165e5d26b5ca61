#include "tools/bench_command.h"

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <sys/resource.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "recq/device_facts.h"
#include "recq/log.h"
#include "recq/onnx.h"
#include "recq/recq.h"
#include "recq/status_macros.h"
#include "recq/stream_pool.h"
#include "tools/json_writer.h"
#include "tools/latency_stats.h"
#include "tools/onnx_commands.h"
#include "tools/random_input.h"
#include "tools/roofline.h"
#include "tools/status_line.h"
#include "tools/write_file.h"

#ifndef RECQ_VERSION
#define RECQ_VERSION "unknown"
#endif

namespace recq::tools {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

absl::Status ClCall(cl_int err, const char* call) {
  if (err == CL_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, " failed with OpenCL error ", err));
}

// One measured (or warm-up) phase.
struct Phase {
  std::vector<std::vector<double>> latency_ms;  // per stream
  double wall_s = 0;
  // The process's CPU time (user + system, every thread: the driver's
  // included, PoCL's device threads too) over the phase.
  double cpu_s = 0;
};

// ProcessCpuSeconds is the process's user + system time so far.
double ProcessCpuSeconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

// Run for `seconds`, or exactly `iterations` inferences when > 0.
struct PhaseLimit {
  const char* name;
  double seconds;
  int64_t iterations;
};

// Ticket decides, thread-safely, whether one more inference may start.
class Ticket {
 public:
  Ticket(const PhaseLimit& limit, Clock::time_point start)
      : iterations_(limit.iterations),
        deadline_(start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(limit.seconds))) {}
  bool Take() {
    if (iterations_ > 0) return issued_.fetch_add(1) < iterations_;
    return Clock::now() < deadline_;
  }

 private:
  const int64_t iterations_;
  const Clock::time_point deadline_;
  std::atomic<int64_t> issued_{0};
};

// StreamWorker ("threads" mode): one stream, enqueue then wait, repeated.
absl::Status StreamWorker(StreamPool::Stream& s, Ticket& ticket, std::vector<double>& latency,
                          std::atomic<int64_t>& done, const std::atomic<bool>& stop) {
  while (!stop.load() && ticket.Take()) {
    Clock::time_point t0 = Clock::now();
    RECQ_RETURN_IF_ERROR(s.recording().Enqueue(s.queue(), s.bindings()));
    RECQ_RETURN_IF_ERROR(ClCall(clFinish(s.queue()), "clFinish"));
    latency.push_back(Ms(Clock::now() - t0));
    done.fetch_add(1);
  }
  return absl::OkStatus();
}

// EventsWorker ("events" mode): one thread keeps every stream busy; it waits
// for each stream's completion event in turn and re-enqueues that stream.
absl::Status EventsWorker(StreamPool& pool, Ticket& ticket,
                          std::vector<std::vector<double>>& latency, std::atomic<int64_t>& done,
                          const std::atomic<bool>& stop) {
  const size_t n = pool.stream_count();
  std::vector<cl_event> events(n, nullptr);
  std::vector<Clock::time_point> started(n);
  auto issue = [&](size_t i) -> absl::Status {
    if (stop.load() || !ticket.Take()) return absl::OkStatus();
    StreamPool::Stream& s = pool.stream(i);
    started[i] = Clock::now();
    RECQ_RETURN_IF_ERROR(s.recording().Enqueue(s.queue(), s.bindings(), {}, &events[i]));
    return ClCall(clFlush(s.queue()), "clFlush");
  };
  absl::Status status;
  for (size_t i = 0; i < n && status.ok(); ++i) status = issue(i);
  for (bool active = true; active;) {
    active = false;
    for (size_t i = 0; i < n; ++i) {
      if (events[i] == nullptr) continue;
      cl_int err = clWaitForEvents(1, &events[i]);
      Clock::time_point t = Clock::now();
      clReleaseEvent(events[i]);
      events[i] = nullptr;
      if (status.ok()) status = ClCall(err, "clWaitForEvents");
      if (!status.ok()) continue;  // drain the other streams
      latency[i].push_back(Ms(t - started[i]));
      done.fetch_add(1);
      status = issue(i);
      active = true;
    }
  }
  return status;
}

absl::StatusOr<Phase> RunPhase(StreamPool& pool, const std::string& mode, const PhaseLimit& limit,
                               StatusLine& line) {
  Phase phase;
  const size_t n = pool.stream_count();
  phase.latency_ms.resize(n);
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false};
  std::atomic<size_t> running{0};
  std::vector<absl::Status> results(n);
  const double cpu_start = ProcessCpuSeconds();
  const Clock::time_point start = Clock::now();
  Ticket ticket(limit, start);
  std::vector<std::thread> threads;
  auto finish = [&](size_t i, absl::Status s) {
    if (!s.ok()) stop.store(true);
    results[i] = std::move(s);
    running.fetch_sub(1);
  };
  if (mode == "events") {
    running = 1;
    threads.emplace_back(
        [&] { finish(0, EventsWorker(pool, ticket, phase.latency_ms, done, stop)); });
  } else {
    running = n;
    for (size_t i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        finish(i, StreamWorker(pool.stream(i), ticket, phase.latency_ms[i], done, stop));
      });
    }
  }
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    double elapsed = Seconds(Clock::now() - start);
    if (limit.iterations > 0) {
      line.Update(absl::StrFormat("%s: %lld/%lld inferences, %.1f s", limit.name,
                                  static_cast<long long>(done.load()),
                                  static_cast<long long>(limit.iterations), elapsed));
    } else {
      line.Update(absl::StrFormat("%s: %.1f/%.1f s, %lld inferences", limit.name,
                                  std::min(elapsed, limit.seconds), limit.seconds,
                                  static_cast<long long>(done.load())));
    }
  }
  for (std::thread& t : threads) t.join();
  phase.wall_s = Seconds(Clock::now() - start);
  phase.cpu_s = ProcessCpuSeconds() - cpu_start;
  line.Clear();
  for (const absl::Status& s : results) RECQ_RETURN_IF_ERROR(s);
  return phase;
}

// Per-dispatch device times over several op-by-op profiled runs.
struct DispatchTimes {
  std::string label;
  double mean_ms = 0, min_ms = 0;
  size_t work_groups = 0;  // 0: the driver chose the local size
};
constexpr int kProfileRuns = 10;

// A device's profile: each dispatch's times, and how the runs used the
// compute units (tools::SummarizeOccupancy; the gaps are means over runs).
struct DeviceProfile {
  std::vector<DispatchTimes> dispatches;
  tools::ProfileOccupancy occupancy;
};

absl::StatusOr<DeviceProfile> ProfileDispatches(StreamPool::Stream& s) {
  DeviceProfile out;
  std::vector<DispatchTimes>& times = out.dispatches;
  const uint32_t units = s.engine().context().device_info().compute_units;
  double gaps_ms = 0, span_ms = 0;
  for (int run = 0; run < kProfileRuns; ++run) {
    RECQ_ASSIGN_OR_RETURN(std::vector<DispatchProfile> p, s.engine().Profile(s.bindings()));
    if (times.empty()) {
      for (const DispatchProfile& d : p) times.push_back({d.label, 0, d.device_ms, d.work_groups});
    }
    for (size_t i = 0; i < p.size() && i < times.size(); ++i) {
      times[i].mean_ms += p[i].device_ms / kProfileRuns;
      times[i].min_ms = std::min(times[i].min_ms, p[i].device_ms);
    }
    const tools::ProfileOccupancy o = tools::SummarizeOccupancy(p, units);
    if (run == 0) out.occupancy = o;
    gaps_ms += o.gaps_ms / kProfileRuns;
    span_ms += o.span_ms / kProfileRuns;
  }
  out.occupancy.gaps_ms = gaps_ms;
  out.occupancy.span_ms = span_ms;
  return out;
}

std::string HostCpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "model name")) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

void WriteStats(JsonWriter& j, const LatencyStats& s) {
  j.BeginObject();
  j.Key("count");
  j.Int(static_cast<int64_t>(s.count));
  for (auto [key, value] : {std::pair<const char*, double>{"min", s.min},
                            {"mean", s.mean},
                            {"p50", s.p50},
                            {"p90", s.p90},
                            {"p95", s.p95},
                            {"p99", s.p99},
                            {"max", s.max}}) {
    j.Key(key);
    j.Number(value);
  }
  j.EndObject();
}

// CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE of cl_qcom_recordable_queues (a
// cl_uint device query), as Qualcomm's header defines it.
constexpr cl_device_info kRecordableQueueMaxSize = 0x41DE;

// RecordingExtensions describes what a device offers for recording.
std::string RecordingExtensions(const DeviceInfo& info, cl_device_id device) {
  std::vector<std::string> parts;
  if (info.HasExtension("cl_qcom_recordable_queues")) {
    cl_uint max_size = 0;
    clGetDeviceInfo(device, kRecordableQueueMaxSize, sizeof(max_size), &max_size, nullptr);
    parts.push_back(absl::StrCat("cl_qcom_recordable_queues (max ", max_size, " dispatches)"));
  }
  if (info.HasExtension("cl_khr_command_buffer")) {
    std::string version;
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &bytes) ==
            CL_SUCCESS &&
        bytes > 0) {
      std::vector<cl_name_version> list(bytes / sizeof(cl_name_version));
      if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, bytes, list.data(), nullptr) ==
          CL_SUCCESS) {
        for (const cl_name_version& e : list) {
          if (std::string(e.name) == "cl_khr_command_buffer") {
            version = absl::StrCat(" ", CL_VERSION_MAJOR(e.version), ".",
                                   CL_VERSION_MINOR(e.version), ".", CL_VERSION_PATCH(e.version));
          }
        }
      }
    }
    parts.push_back(absl::StrCat("cl_khr_command_buffer", version));
    parts.push_back(info.HasExtension("cl_khr_command_buffer_mutable_dispatch")
                        ? "cl_khr_command_buffer_mutable_dispatch"
                        : "no mutable dispatch");
  }
  if (parts.empty()) return "none (the replay list runs everywhere)";
  std::string out;
  for (const std::string& p : parts) absl::StrAppend(&out, out.empty() ? "" : ", ", p);
  return out;
}

absl::Status ValidateOptions(const BenchOptions& o) {
  if (o.streams < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--streams must be at least 1, got ", o.streams));
  }
  if (o.stream_mode != "threads" && o.stream_mode != "events") {
    return absl::InvalidArgumentError(
        absl::StrCat("--stream_mode must be threads or events, got '", o.stream_mode, "'"));
  }
  if (!(o.warmup_s >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--warmup must be >= 0 seconds, got ", o.warmup_s));
  }
  if (o.iterations < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--iterations must be >= 0 (0: use --duration), got ", o.iterations));
  }
  if (o.iterations == 0 && !(o.duration_s > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--duration must be > 0 seconds (or give --iterations), got ", o.duration_s));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BenchCommand(const BenchOptions& options) {
  RECQ_RETURN_IF_ERROR(ValidateOptions(options));
  RECQ_ASSIGN_OR_RETURN(Backend backend, ParseBackend(options.backend));
  StatusLine no_line(false);
  StatusLine& line = options.status_line != nullptr ? *options.status_line : no_line;

  line.Update(absl::StrCat("loading ", options.model_path));
  OnnxOptions load;
  RECQ_ASSIGN_OR_RETURN(load.input_shapes, ParseShapes(options.shapes));
  RECQ_ASSIGN_OR_RETURN(Graph graph, LoadOnnx(options.model_path, load));
  RECQ_ASSIGN_OR_RETURN(PrePostProcessing ppp,
                        ParsePrePost(graph, options.input_format, options.output_format));
  for (const auto& [name, in] : ppp.inputs) {
    if (in.kind == MemoryKind::kImage2D) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-format for '", name,
          "': bench binds buffers it allocates; kind=image is for recq run and the API"));
    }
  }
  RECQ_RETURN_IF_ERROR(ApplyPrePostProcessing(graph, ppp));
  StreamPoolOptions pool_options;
  if (options.devices.empty()) {
    pool_options.devices = {options.device};
  } else {
    RECQ_ASSIGN_OR_RETURN(pool_options.devices, ResolveDevices(options.devices));
  }
  pool_options.streams_per_device = options.streams;
  pool_options.record.backend = backend;
  if (!options.precision.empty()) {
    RECQ_ASSIGN_OR_RETURN(pool_options.engine.precision, ParsePrecision(options.precision));
  }
  line.Update(absl::StrFormat("compiling for %zu device(s), %d stream(s) each",
                              pool_options.devices.size(), options.streams));
  RECQ_ASSIGN_OR_RETURN(std::unique_ptr<StreamPool> pool, StreamPool::Create(graph, pool_options));
  line.Clear();

  // Seeded random inputs (floats in [-1, 1), integers in [0, 10)), the same
  // on every stream.
  for (size_t i = 0; i < pool->stream_count(); ++i) {
    StreamPool::Stream& s = pool->stream(i);
    std::mt19937 rng(1);
    for (const BindingInfo& in : s.engine().inputs()) {
      Tensor t = *s.tensor(in.name);
      RECQ_RETURN_IF_ERROR(t.UploadBytes(RandomInput(in.desc, rng)));
    }
  }

  const size_t num_devices = pool->device_count();
  std::printf("model: %s, %zu graph nodes, %zu dispatches after passes\n",
              options.model_path.c_str(), graph.nodes().size(), pool->engine(0).stats().dispatches);
  for (size_t d = 0; d < num_devices; ++d) {
    const Engine& e = pool->engine(d);
    const DeviceInfo& info = e.context().device_info();
    const Recording& rec = pool->stream(d).recording();
    std::printf("device %zu (%s): %s (%s, driver %s); compile %.1f ms; backend %s (%s)\n", d,
                pool_options.devices[d].empty() ? "default" : pool_options.devices[d].c_str(),
                info.name.c_str(), info.platform_name.c_str(), info.driver_version.c_str(),
                e.stats().compile_ms, BackendName(rec.backend()), rec.backend_reason().c_str());
  }
  std::printf("streams: %d per device x %zu device(s), mode %s; warm-up %.1f s; %s\n",
              options.streams, num_devices, options.stream_mode.c_str(), options.warmup_s,
              options.iterations > 0
                  ? absl::StrCat(options.iterations, " inferences").c_str()
                  : absl::StrFormat("%.1f s measured", options.duration_s).c_str());
  std::fflush(stdout);

  if (options.warmup_s > 0) {
    RECQ_RETURN_IF_ERROR(
        RunPhase(*pool, options.stream_mode, {"warm-up", options.warmup_s, 0}, line).status());
  }
  RECQ_ASSIGN_OR_RETURN(Phase phase,
                        RunPhase(*pool, options.stream_mode,
                                 {"measuring", options.duration_s, options.iterations}, line));

  std::vector<double> all;
  std::vector<size_t> per_device(num_devices, 0);
  for (size_t i = 0; i < phase.latency_ms.size(); ++i) {
    all.insert(all.end(), phase.latency_ms[i].begin(), phase.latency_ms[i].end());
    per_device[pool->stream(i).device()] += phase.latency_ms[i].size();
  }
  const LatencyStats stats = Summarize(all);
  const double throughput = static_cast<double>(stats.count) / phase.wall_s;
  std::printf(
      "latency (ms, enqueue to completion, %zu inferences): min %.3f  mean %.3f  p50 %.3f  "
      "p90 %.3f  p95 %.3f  p99 %.3f  max %.3f\n",
      stats.count, stats.min, stats.mean, stats.p50, stats.p90, stats.p95, stats.p99, stats.max);
  std::string by_device;
  for (size_t d = 0; d < num_devices; ++d) {
    absl::StrAppendFormat(&by_device, "%sdevice %zu: %.1f/s", d ? ", " : "", d,
                          static_cast<double>(per_device[d]) / phase.wall_s);
  }
  std::printf("throughput: %.1f inferences/s over %.2f s (%s)\n", throughput, phase.wall_s,
              by_device.c_str());
  // On a CPU device this is how many cores the runs kept busy; on a GPU, the
  // host's cost of driving it.
  std::printf(
      "host CPU: %.2f s over %.2f s, %.2f of %u hardware threads busy, %.3f ms per "
      "inference\n",
      phase.cpu_s, phase.wall_s, phase.cpu_s / phase.wall_s, std::thread::hardware_concurrency(),
      1e3 * phase.cpu_s / static_cast<double>(std::max<size_t>(stats.count, 1)));

  std::vector<DeviceProfile> profiles;
  if (options.profile) {
    for (size_t d = 0; d < num_devices; ++d) {
      line.Update(absl::StrFormat("profiling device %zu", d));
      RECQ_ASSIGN_OR_RETURN(DeviceProfile p, ProfileDispatches(pool->stream(d)));
      profiles.push_back(std::move(p));
    }
    line.Clear();
    for (size_t d = 0; d < profiles.size(); ++d) {
      double total = 0;
      for (const DispatchTimes& t : profiles[d].dispatches) total += t.mean_ms;
      std::vector<DispatchTimes> slowest = profiles[d].dispatches;
      std::sort(slowest.begin(), slowest.end(), [](const DispatchTimes& a, const DispatchTimes& b) {
        return a.mean_ms > b.mean_ms;
      });
      slowest.resize(std::min<size_t>(slowest.size(), 5));
      std::printf(
          "profile device %zu (mean of %d op-by-op runs): %.3f ms device time in %zu "
          "dispatches; slowest:",
          d, kProfileRuns, total, profiles[d].dispatches.size());
      for (const DispatchTimes& t : slowest)
        std::printf(" %s %.3f ms;", t.label.c_str(), t.mean_ms);
      const tools::ProfileOccupancy& o = profiles[d].occupancy;
      std::printf(
          "\n  %u compute units, %.1f%% kept busy by the work-groups; idle between dispatches "
          "%.3f ms of %.3f ms (%.1f%%)\n",
          o.units, 100.0 * o.busy_fraction, o.gaps_ms, o.span_ms,
          100.0 * o.gaps_ms / std::max(o.span_ms, 1e-9));
    }
  }

  if (options.json_path.empty()) return absl::OkStatus();
  JsonWriter j;
  j.BeginObject();
  j.Key("recq_version");
  j.String(RECQ_VERSION);
  j.Key("command");
  j.String("bench");
  j.Key("model");
  j.String(options.model_path);
  j.Key("host");
  j.BeginObject();
  j.Key("cpu");
  j.String(HostCpu());
  j.Key("hardware_threads");
  j.Int(std::thread::hardware_concurrency());
  j.EndObject();
  j.Key("options");
  j.BeginObject();
  j.Key("devices");
  j.String(options.devices);
  j.Key("device");
  j.String(options.device);
  j.Key("backend");
  j.String(options.backend);
  j.Key("precision");
  j.String(options.precision.empty() ? "fp32" : options.precision);
  j.Key("streams");
  j.Int(options.streams);
  j.Key("stream_mode");
  j.String(options.stream_mode);
  j.Key("warmup_s");
  j.Number(options.warmup_s);
  j.Key("duration_s");
  if (options.iterations > 0) {
    j.Number(NAN);
  } else {
    j.Number(options.duration_s);
  }
  j.Key("iterations");
  j.Int(options.iterations);
  j.Key("profile");
  j.Bool(options.profile);
  j.EndObject();
  j.Key("devices");
  j.BeginArray();
  for (size_t d = 0; d < num_devices; ++d) {
    const Engine& e = pool->engine(d);
    const DeviceInfo& info = e.context().device_info();
    const Recording& rec = pool->stream(d).recording();
    j.BeginObject();
    j.Key("index");
    j.Int(static_cast<int64_t>(d));
    j.Key("spec");
    j.String(pool_options.devices[d]);
    j.Key("name");
    j.String(info.name);
    j.Key("type");
    j.String(DeviceTypeName(info.type));
    j.Key("vendor");
    j.String(info.vendor);
    j.Key("version");
    j.String(info.version);
    j.Key("driver");
    j.String(info.driver_version);
    j.Key("platform");
    j.String(info.platform_name);
    j.Key("platform_version");
    j.String(info.platform_version);
    j.Key("compute_units");
    j.Int(info.compute_units);
    j.Key("global_mem_bytes");
    j.Int(static_cast<int64_t>(info.global_mem_bytes));
    j.Key("recording_extensions");
    j.String(RecordingExtensions(info, e.context().device()));
    j.Key("backend");
    j.String(BackendName(rec.backend()));
    j.Key("backend_reason");
    j.String(rec.backend_reason());
    j.Key("dispatches");
    j.Int(static_cast<int64_t>(rec.dispatch_count()));
    j.Key("compile_ms");
    j.Number(e.stats().compile_ms);
    j.Key("programs_built");
    j.Int(static_cast<int64_t>(e.stats().kernels_built));
    j.Key("programs_from_disk");
    j.Int(static_cast<int64_t>(e.stats().programs_from_disk));
    j.Key("inferences");
    j.Int(static_cast<int64_t>(per_device[d]));
    j.Key("throughput_per_s");
    j.Number(static_cast<double>(per_device[d]) / phase.wall_s);
    j.EndObject();
  }
  j.EndArray();
  j.Key("streams_total");
  j.Int(static_cast<int64_t>(pool->stream_count()));
  j.Key("inferences");
  j.Int(static_cast<int64_t>(stats.count));
  j.Key("wall_s");
  j.Number(phase.wall_s);
  j.Key("host_cpu_s");
  j.Number(phase.cpu_s);
  j.Key("host_threads_busy");
  j.Number(phase.cpu_s / phase.wall_s);
  j.Key("throughput_per_s");
  j.Number(throughput);
  j.Key("latency_ms");
  WriteStats(j, stats);
  j.Key("per_stream");
  j.BeginArray();
  for (size_t i = 0; i < phase.latency_ms.size(); ++i) {
    j.BeginObject();
    j.Key("stream");
    j.Int(static_cast<int64_t>(i));
    j.Key("device");
    j.Int(static_cast<int64_t>(pool->stream(i).device()));
    j.Key("latency_ms");
    WriteStats(j, Summarize(phase.latency_ms[i]));
    j.EndObject();
  }
  j.EndArray();
  if (options.profile) {
    j.Key("profile");
    j.BeginArray();
    for (size_t d = 0; d < profiles.size(); ++d) {
      j.BeginObject();
      j.Key("device");
      j.Int(static_cast<int64_t>(d));
      j.Key("runs");
      j.Int(kProfileRuns);
      const tools::ProfileOccupancy& o = profiles[d].occupancy;
      j.Key("compute_units");
      j.Int(o.units);
      j.Key("busy_fraction");
      j.Number(o.busy_fraction);
      j.Key("dispatches_below_units");
      j.Int(static_cast<int64_t>(o.below_units));
      j.Key("idle_between_dispatches_ms");
      j.Number(o.gaps_ms);
      j.Key("span_ms");
      j.Number(o.span_ms);
      j.Key("dispatches");
      j.BeginArray();
      for (const DispatchTimes& t : profiles[d].dispatches) {
        j.BeginObject();
        j.Key("label");
        j.String(t.label);
        j.Key("mean_ms");
        j.Number(t.mean_ms);
        j.Key("min_ms");
        j.Number(t.min_ms);
        j.Key("work_groups");
        j.Int(static_cast<int64_t>(t.work_groups));
        j.EndObject();
      }
      j.EndArray();
      j.EndObject();
    }
    j.EndArray();
  }
  j.EndObject();
  RECQ_RETURN_IF_ERROR(WriteFile(options.json_path, absl::StrCat(j.str(), "\n")));
  std::printf("report: %s\n", options.json_path.c_str());
  return absl::OkStatus();
}

absl::Status DevicesCommand() {
  RECQ_ASSIGN_OR_RETURN(std::vector<DeviceListing> devices, ListDevices());
  size_t platform = static_cast<size_t>(-1);
  for (const DeviceListing& d : devices) {
    const DeviceInfo& info = d.info;
    if (d.platform_index != platform) {
      platform = d.platform_index;
      std::printf("platform %zu: %s (%s)\n", platform, info.platform_name.c_str(),
                  info.platform_version.c_str());
    }
    std::printf("  %-5s %-7s %s\n", d.platform_device.c_str(), d.selector.c_str(),
                info.name.c_str());
    std::printf(
        "                type %s, %u compute units, %.1f GiB global memory (max allocation "
        "%.1f GiB), %s, driver %s\n",
        DeviceTypeName(info.type), info.compute_units, info.global_mem_bytes / 1073741824.0,
        info.max_alloc_bytes / 1073741824.0, info.version.c_str(), info.driver_version.c_str());
    std::printf("                device: %s\n", DeviceFactsFromInfo(info).Describe().c_str());
    std::printf("                recording: %s\n", RecordingExtensions(info, d.device).c_str());
  }
  std::printf(
      "select with --device (or RECQ_DEVICE) = gpu:N, cpu:N, P:D, or a name substring; "
      "recq bench --devices=0,1 or all\n");
  return absl::OkStatus();
}

}  // namespace recq::tools
