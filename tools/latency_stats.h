// Latency statistics of `recq bench`.
#ifndef RECQ_TOOLS_LATENCY_STATS_H_
#define RECQ_TOOLS_LATENCY_STATS_H_

#include <cstddef>
#include <vector>

namespace recq::tools {

struct LatencyStats {
  size_t count = 0;
  double min = 0, mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
};

// Percentile returns the nearest-rank percentile of sorted `values`: the
// smallest value with at least `p` percent of the values at or below it
// (0 for an empty vector).
double Percentile(const std::vector<double>& sorted, double p);

// Summarize computes the statistics of `values` (any order). All zero when
// `values` is empty.
LatencyStats Summarize(std::vector<double> values);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_LATENCY_STATS_H_
