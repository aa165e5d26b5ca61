#include "tools/roofline.h"

#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"

namespace recq::tools {
namespace {

constexpr const char* kSource = R"CL(
// RF_CHAINS independent FMA chains of RF_W-lane vectors per item, `iters`
// times: 2 * RF_CHAINS * RF_W FLOPs per iteration. Build options set both:
// on CPUs vectors of the registers' width and enough chains to cover the FMA
// latency, all in registers (8 chains of float16 took 18 of an AVX2 core's 16
// vector registers, and the spills halved the figure).
#ifndef RF_W
#define RF_W 16
#endif
#ifndef RF_CHAINS
#define RF_CHAINS 8
#endif
#define RF_CAT_(a, b) a##b
#define RF_CAT(a, b) RF_CAT_(a, b)
#define floatW RF_CAT(float, RF_W)
__kernel void roof_fma(__global float* out, int iters, float a, float b) {
  const float s = (float)get_global_id(0);
  // Distinct lanes: a splat would let the compiler keep one lane per chain.
  float lanes[RF_W];
  for (int i = 0; i < RF_W; ++i) lanes[i] = s + 0.01f * (float)i;
  const floatW v0 = RF_CAT(vload, RF_W)(0, lanes);
  floatW v[RF_CHAINS];
#pragma unroll
  for (int c = 0; c < RF_CHAINS; ++c) v[c] = v0 + (float)c;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < RF_CHAINS; ++c) v[c] = fma(v[c], a, b);
  }
  floatW t = v[0];
#pragma unroll
  for (int c = 1; c < RF_CHAINS; ++c) t += v[c];
  float sum = 0.0f;
  RF_CAT(vstore, RF_W)(t, 0, lanes);
  for (int i = 0; i < RF_W; ++i) sum += lanes[i];
  out[get_global_id(0)] = sum;
}
// Each item copies `n` consecutive float16s.
__kernel void roof_copy(__global const float16* restrict x, __global float16* restrict y, int n) {
  const size_t at = get_global_id(0) * (size_t)n;
  for (int i = 0; i < n; ++i) y[at + i] = x[at + i];
}
)CL";

// A 64-bit FNV-1a of the strings that identify the device and driver.
std::string DeviceKey(const DeviceInfo& d) {
  uint64_t h = 1469598103934665603ull;
  for (const std::string* s :
       {&d.name, &d.vendor, &d.version, &d.driver_version, &d.platform_name, &d.platform_version}) {
    for (char c : *s + '\n') {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

struct Cl {
  cl_program program = nullptr;
  cl_kernel fma = nullptr, copy = nullptr;
  cl_mem a = nullptr, b = nullptr, out = nullptr;
  ~Cl() {
    for (cl_mem m : {a, b, out}) {
      if (m) clReleaseMemObject(m);
    }
    if (fma) clReleaseKernel(fma);
    if (copy) clReleaseKernel(copy);
    if (program) clReleaseProgram(program);
  }
};

absl::Status ClError(const char* what, cl_int err) {
  return absl::InternalError(absl::StrCat("roofline: ", what, " failed (OpenCL error ", err, ")"));
}

// Best wall time in ms of `runs` runs of `kernel` over `global` items in
// work-groups of `local` (0: the driver's choice).
absl::StatusOr<double> BestMs(cl_command_queue q, cl_kernel kernel, size_t global, size_t local,
                              int runs) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    cl_int err = clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, local ? &local : nullptr, 0,
                                        nullptr, nullptr);
    if (err != CL_SUCCESS) return ClError("clEnqueueNDRangeKernel", err);
    if ((err = clFinish(q)) != CL_SUCCESS) return ClError("clFinish", err);
    best = std::min(
        best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count());
  }
  return best;
}

absl::StatusOr<Roofline> Measure(const Context& context) {
  Cl cl;
  cl_int err = CL_SUCCESS;
  const char* src = kSource;
  cl.program = clCreateProgramWithSource(context.context(), 1, &src, nullptr, &err);
  if (err != CL_SUCCESS) return ClError("clCreateProgramWithSource", err);
  cl_device_id device = context.device();
  const DeviceInfo& info = context.device_info();
  const bool gpu = (info.type & CL_DEVICE_TYPE_GPU) != 0;
  // GPUs: 8 chains of float16 per item (many items hide the latency). CPUs:
  // the registers' width (8 lanes on AVX2 hosts, 16 on AVX-512 ones) and 12
  // chains, which cover 2 FMA pipes of latency 4-5 with registers to spare.
  const int width = gpu ? 16 : (info.native_vector_width_float >= 16 ? 16 : 8);
  const int chains = gpu ? 8 : 12;
  const std::string options = absl::StrCat("-DRF_W=", width, " -DRF_CHAINS=", chains);
  if ((err = clBuildProgram(cl.program, 1, &device, options.c_str(), nullptr, nullptr)) !=
      CL_SUCCESS) {
    return ClError("clBuildProgram", err);
  }
  cl.fma = clCreateKernel(cl.program, "roof_fma", &err);
  if (err != CL_SUCCESS) return ClError("clCreateKernel(roof_fma)", err);
  cl.copy = clCreateKernel(cl.program, "roof_copy", &err);
  if (err != CL_SUCCESS) return ClError("clCreateKernel(roof_copy)", err);
  const size_t items = std::max<size_t>(1, info.compute_units) * (gpu ? 4096 : 64);
  // 64 MiB per copy buffer (less where the device allows less): far above
  // caches of CPUs and GPUs alike.
  const size_t bytes =
      std::min<size_t>(size_t{64} << 20, info.max_alloc_bytes / 2) / (64 * 1024) * (64 * 1024);
  cl.out =
      clCreateBuffer(context.context(), CL_MEM_READ_WRITE, items * sizeof(float), nullptr, &err);
  if (err != CL_SUCCESS) return ClError("clCreateBuffer", err);
  cl.a = clCreateBuffer(context.context(), CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS) return ClError("clCreateBuffer", err);
  cl.b = clCreateBuffer(context.context(), CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS) return ClError("clCreateBuffer", err);
  const float zero = 0.0f;
  if ((err = clEnqueueFillBuffer(context.queue(), cl.a, &zero, sizeof(zero), 0, bytes, 0, nullptr,
                                 nullptr)) != CL_SUCCESS) {
    return ClError("clEnqueueFillBuffer", err);
  }
  const float fa = 0.999f, fb = 0.001f;
  clSetKernelArg(cl.fma, 0, sizeof(cl_mem), &cl.out);
  clSetKernelArg(cl.fma, 2, sizeof(float), &fa);
  clSetKernelArg(cl.fma, 3, sizeof(float), &fb);
  clSetKernelArg(cl.copy, 0, sizeof(cl_mem), &cl.a);
  clSetKernelArg(cl.copy, 1, sizeof(cl_mem), &cl.b);
  // CPUs: one item per work-group, so that every core takes some (PoCL put
  // all 128 items in one group, on one core, when left to choose).
  const size_t fma_local = gpu ? 0 : 1;
  // A first run of one iteration: PoCL builds a kernel's work-group function
  // at its first enqueue, which the growth below would otherwise time, stop
  // at 64 iterations and measure the enqueue (37-57 GFLOP/s where
  // conv2d_pointwise reaches 130 on the same CPU).
  cl_int iters = 1;
  clSetKernelArg(cl.fma, 1, sizeof(cl_int), &iters);
  if (auto t = BestMs(context.queue(), cl.fma, items, fma_local, 1); !t.ok()) return t.status();
  // Grow the iterations until one run takes 10 ms; then the best of 15 runs
  // (short runs, many of them: the best escapes other processes' load).
  iters = 64;
  for (;;) {
    clSetKernelArg(cl.fma, 1, sizeof(cl_int), &iters);
    auto t = BestMs(context.queue(), cl.fma, items, fma_local, 1);
    if (!t.ok()) return t.status();
    if (*t >= 10 || iters >= (1 << 24)) break;
    iters *= 2;
  }
  auto fma_ms = BestMs(context.queue(), cl.fma, items, fma_local, 15);
  if (!fma_ms.ok()) return fma_ms.status();
  // GPUs: one float16 per item; CPUs: 1024 items of consecutive float16s.
  const size_t copy_items = gpu ? bytes / 64 : 1024;
  const cl_int per_item = static_cast<cl_int>(bytes / 64 / copy_items);
  clSetKernelArg(cl.copy, 2, sizeof(cl_int), &per_item);
  // The first run builds the kernel (PoCL) and touches the pages.
  if (auto t = BestMs(context.queue(), cl.copy, copy_items, 0, 1); !t.ok()) return t.status();
  auto copy_ms = BestMs(context.queue(), cl.copy, copy_items, 0, 15);
  if (!copy_ms.ok()) return copy_ms.status();
  Roofline roof;
  roof.gflops = 2.0 * chains * width * double(iters) * double(items) / (*fma_ms * 1e6);
  roof.gbps = 2.0 * double(copy_items * size_t(per_item) * 64) / (*copy_ms * 1e6);
  return roof;
}

}  // namespace

absl::StatusOr<Roofline> DeviceRoofline(const Context& context) {
  std::string file;
  if (const std::string dir = context.cache_dir(); !dir.empty()) {
    file = (std::filesystem::path(dir) /
            absl::StrCat("roofline-", DeviceKey(context.device_info()), ".txt"))
               .string();
    std::ifstream in(file);
    std::string magic;
    Roofline roof;
    if (in >> magic >> roof.gflops >> roof.gbps && magic == "recq-roofline-v4" && roof.gflops > 0 &&
        roof.gbps > 0 && roof.gflops < 1e9 && roof.gbps < 1e8) {
      roof.cached = true;
      roof.cache_file = file;
      return roof;
    }
  }
  absl::StatusOr<Roofline> roof = Measure(context);
  if (!roof.ok() || file.empty()) return roof;
  roof->cache_file = file;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
  const std::string tmp = absl::StrCat(file, ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "recq-roofline-v4 " << roof->gflops << " " << roof->gbps << "\n";
  }
  std::filesystem::rename(tmp, file, ec);  // a failed write only means measuring again
  return roof;
}

double RooflineFraction(const Roofline& roof, double flops, double bytes, double ms) {
  if (ms <= 0 || roof.gflops <= 0 || roof.gbps <= 0) return 0;
  if (flops > 0) {
    const double attainable =
        bytes > 0 ? std::min(roof.gflops, flops / bytes * roof.gbps) : roof.gflops;
    return flops / (ms * 1e6) / attainable;
  }
  return bytes / (ms * 1e6) / roof.gbps;
}

double CoreOccupancy(size_t groups, uint32_t units) {
  if (groups == 0 || units == 0) return 0;
  const size_t waves = (groups + units - 1) / units;
  return static_cast<double>(groups) / static_cast<double>(waves * units);
}

ProfileOccupancy SummarizeOccupancy(const std::vector<DispatchProfile>& profile, uint32_t units) {
  ProfileOccupancy o;
  o.units = units;
  double known_ms = 0, busy_ms = 0, end_ms = 0;
  std::vector<double> gaps;
  for (size_t i = 0; i < profile.size(); ++i) {
    const DispatchProfile& p = profile[i];
    if (p.work_groups == 0) {
      ++o.unknown_groups;
    } else {
      known_ms += p.device_ms;
      busy_ms += p.device_ms * CoreOccupancy(p.work_groups, units);
      if (p.work_groups < units) {
        ++o.below_units;
        o.below_units_ms += p.device_ms;
      }
    }
    if (i > 0) gaps.push_back(std::max(0.0, p.start_ms - end_ms));
    end_ms = std::max(end_ms, p.start_ms + p.device_ms);
  }
  o.busy_fraction = known_ms > 0 ? busy_ms / known_ms : 0;
  o.span_ms = profile.empty() ? 0 : end_ms - profile.front().start_ms;
  for (double g : gaps) o.gaps_ms += g;
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    o.gap_median_ms = gaps[gaps.size() / 2];
    o.gap_max_ms = gaps.back();
  }
  return o;
}

}  // namespace recq::tools
