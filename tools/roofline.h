// The device's roofline, measured by recq itself: peak float32 compute
// (a kernel of independent float16 FMA chains) and global-memory bandwidth
// (a float16 copy kernel), each the best of a few timed runs. Measured once
// per device and driver, then cached as a small text file beside the
// program binary cache (Context::cache_dir). A missing, unreadable or
// corrupt file is measured again and rewritten; with caching off it is
// measured every time.
#ifndef RECQ_TOOLS_ROOFLINE_H_
#define RECQ_TOOLS_ROOFLINE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "recq/context.h"
#include "recq/engine.h"

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

// CoreOccupancy is the fraction of `units` compute units that a dispatch of
// `groups` work-groups of equal cost keeps busy while it runs:
// groups / (units * ceil(groups / units)). One group on two units is 0.5,
// three are 0.75. 0 when either is unknown (0).
double CoreOccupancy(size_t groups, uint32_t units);

// How one profiled run used the device's compute units.
struct ProfileOccupancy {
  uint32_t units = 0;
  // CoreOccupancy weighted by device time, over the dispatches whose
  // work-groups are known.
  double busy_fraction = 0;
  size_t below_units = 0;     // dispatches of fewer work-groups than units
  double below_units_ms = 0;  // their device time
  size_t unknown_groups = 0;  // dispatches whose local size the driver chose
  // Between dispatches: the device idles from one's end to the next's start.
  double span_ms = 0;  // first start to last end
  double gaps_ms = 0;  // the idle time, summed
  double gap_median_ms = 0, gap_max_ms = 0;
};

ProfileOccupancy SummarizeOccupancy(const std::vector<DispatchProfile>& profile, uint32_t units);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_ROOFLINE_H_
