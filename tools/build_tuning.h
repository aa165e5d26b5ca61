// How `recq build` tunes (--tuning), for the single-shape and the profile
// builds alike: BuildTuning reads the flag (empty: $RECQ_TUNING where set,
// else exhaustive, as trtexec tunes every build); PrintBuildTuningStart
// says on stderr how the build tunes before its compile starts.
#ifndef RECQ_TOOLS_BUILD_TUNING_H_
#define RECQ_TOOLS_BUILD_TUNING_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "recq/engine.h"

namespace recq::tools {

inline absl::StatusOr<EngineOptions::Tuning> BuildTuning(const std::string& tuning) {
  if (tuning.empty()) {
    const char* env = std::getenv("RECQ_TUNING");
    return env != nullptr && *env != '\0' ? EngineOptions::DefaultTuning()
                                          : EngineOptions::Tuning::kExhaustive;
  }
  if (tuning == "exhaustive") return EngineOptions::Tuning::kExhaustive;
  if (tuning == "fast") return EngineOptions::Tuning::kFast;
  if (tuning == "off") return EngineOptions::Tuning::kOff;
  return absl::InvalidArgumentError(
      absl::StrCat("--tuning=", tuning, ": expected exhaustive (build's default), fast or off"));
}

inline void PrintBuildTuningStart(EngineOptions::Tuning tuning) {
  std::fprintf(stderr, "recq build: %s\n",
               tuning == EngineOptions::Tuning::kExhaustive
                   ? "tuning every kernel exhaustively (the tuning cache keeps the choices; "
                     "--tuning=fast or --tuning=off builds sooner)"
               : tuning == EngineOptions::Tuning::kFast
                   ? "tuning within the fast tuner's budget (--tuning=fast)"
                   : "not tuning: the kernels' heuristics (--tuning=off)");
}

}  // namespace recq::tools

#endif  // RECQ_TOOLS_BUILD_TUNING_H_
