// The auto-tuner behind EngineOptions::tuning (recq/engine.h).
//
//   RECQ_ASSIGN_OR_RETURN(std::shared_ptr<Tuner> tuner,
//                         Tuner::Tune(context, optimized_graph, options, target));
//   target.choose_kernel = tuner->Chooser();
//   ... Lower(optimized_graph, target) ...; stats += tuner->stats()
//
// Tune lowers the graph once (no programs are built) to find every node
// whose fitting variants offer more than one (variant, params) candidate,
// groups the nodes by key (device, driver, kernel-library hash, kernel
// target, op, shapes, attributes), reads each key's choice from the tuning
// cache or times its candidates on a one-node engine (device time through
// Engine::Profile, the fastest of a few runs), and stores what it measured.
// Chooser answers from those choices only, so the real lowering is
// deterministic given the cache.
#ifndef RECQ_ENGINE_TUNER_H_
#define RECQ_ENGINE_TUNER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/lowering.h"
#include "engine/tuning_cache.h"
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/graph.h"

namespace recq::internal {

class Tuner {
 public:
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const Tuner>> Tune(
      const Context& context, const Graph& graph, const EngineOptions& options,
      const LoweringTarget& target);

  // Chooser returns the chosen (variant, params) of a tuned key, else the
  // first fitting variant with its heuristic parameters. It refers to the
  // tuner, which must outlive it.
  KernelChooser Chooser() const;

  // CopyStatsTo fills the tuning fields of `stats`.
  void CopyStatsTo(EngineStats& stats) const;

  // KeyOf returns a node's tuning key (without the device part) and whether
  // it has one: float inputs, and an op that can be written as ONNX or
  // renders its attributes (OpDef::tuning_attrs).
  static bool KeyOf(const Node& node, const LoweringContext& ctx, std::string* key);

 private:
  Tuner() = default;

  std::string device_key_;
  std::map<std::string, TuningEntry> choices_;  // by full key
  EngineStats stats_;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_TUNER_H_
