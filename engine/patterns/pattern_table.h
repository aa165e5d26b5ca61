// Pattern passes: multi-node rewrites (an exported SiLU, LayerNorm, GELU,
// attention) that turn a known subgraph into fewer, fused ops. Each pattern
// lives in its own file under engine/patterns/ and registers itself:
//
//   RECQ_REGISTER_PATTERN(Silu) {
//     return table.Add({"silu", FuseSilu});
//   }
//
// The build scans engine/patterns/*.cc for RECQ_REGISTER_PATTERN(...) lines
// (cmake/RegistryTable.cmake). Optimize runs every pattern, in file-name
// order, after constant folding and before BatchNorm folding and activation
// fusion, so a pattern's fused op can still absorb what follows it.
#ifndef RECQ_ENGINE_PATTERNS_PATTERN_TABLE_H_
#define RECQ_ENGINE_PATTERNS_PATTERN_TABLE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "recq/graph.h"

namespace recq::internal {

struct PatternPass {
  std::string name;
  // Returns the rewritten graph (the same graph when nothing matched).
  std::function<absl::StatusOr<Graph>(const Graph&)> run;
};

class PatternTable {
 public:
  virtual ~PatternTable() = default;
  [[nodiscard]] virtual absl::Status Add(PatternPass pass) = 0;
};

// RegisterBuiltinPatterns calls every RECQ_REGISTER_PATTERN (generated).
[[nodiscard]] absl::Status RegisterBuiltinPatterns(PatternTable& table);

// PatternPasses lists the registered patterns in the order they run.
const std::vector<PatternPass>& PatternPasses();

// RunPatternPasses runs every pattern pass in turn.
[[nodiscard]] absl::StatusOr<Graph> RunPatternPasses(const Graph& graph);

}  // namespace recq::internal

#define RECQ_REGISTER_PATTERN(name) \
  absl::Status RecqRegisterPattern_##name(::recq::internal::PatternTable& table)

#endif  // RECQ_ENGINE_PATTERNS_PATTERN_TABLE_H_
