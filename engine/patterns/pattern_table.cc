#include "engine/patterns/pattern_table.h"

#include <cstdio>
#include <cstdlib>

#include "recq/status_macros.h"

namespace recq::internal {
namespace {

class Table final : public PatternTable {
 public:
  absl::Status Add(PatternPass pass) override {
    if (pass.name.empty() || !pass.run) {
      return absl::InvalidArgumentError("a pattern pass needs a name and a function");
    }
    passes.push_back(std::move(pass));
    return absl::OkStatus();
  }
  std::vector<PatternPass> passes;
};

}  // namespace

const std::vector<PatternPass>& PatternPasses() {
  static const std::vector<PatternPass>* passes = [] {
    Table table;
    absl::Status s = RegisterBuiltinPatterns(table);
    if (!s.ok()) {
      std::fprintf(stderr, "recq: pattern registration failed: %s\n", s.ToString().c_str());
      std::abort();
    }
    return new std::vector<PatternPass>(std::move(table.passes));
  }();
  return *passes;
}

absl::StatusOr<Graph> RunPatternPasses(const Graph& graph) {
  Graph g = graph;
  for (const PatternPass& pass : PatternPasses()) {
    RECQ_ASSIGN_OR_RETURN(g, pass.run(g));
  }
  return g;
}

}  // namespace recq::internal
