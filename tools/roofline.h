// The device's roofline, measured by recq itself: peak float32 compute
// (a kernel of independent float16 FMA chains) and global-memory bandwidth
// (a float16 copy kernel), each the best of a few timed runs. Measured once
// per device and driver, then cached as a small text file beside the
// program binary cache (Context::cache_dir). A missing, unreadable or
// corrupt file is measured again and rewritten; with caching off it is
// measured every time.
#ifndef RECQ_TOOLS_ROOFLINE_H_
#define RECQ_TOOLS_ROOFLINE_H_

#include <string>

#include "absl/status/statusor.h"
#include "recq/context.h"

namespace recq::tools {

struct Roofline {
  double gflops = 0;  // peak float32 GFLOP/s (an FMA counts 2)
  double gbps = 0;    // peak global-memory GB/s (bytes read + written)
  bool cached = false;
  std::string cache_file;  // empty when caching is off
};

[[nodiscard]] absl::StatusOr<Roofline> DeviceRoofline(const Context& context);

// RooflineFraction returns achieved / attainable for a dispatch that did
// `flops` and moved `bytes` in `ms`: attainable is min(peak compute,
// intensity * peak bandwidth) when flops > 0, else peak bandwidth.
double RooflineFraction(const Roofline& roof, double flops, double bytes, double ms);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_ROOFLINE_H_
