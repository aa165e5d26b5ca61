// ShapedEngine: one ONNX model served over a range of input shapes.
//
// A shape profile (recq/shape_profile.h) gives each input dimension a fixed
// size or a range with buckets. The engine holds one ordinary compiled
// Engine per bucket, compiled on first use (or all in Create, `eager`),
// each with a Recording made once and replayed. The buckets share:
//   - the parsed model: a bucket imports (and folds its shape subgraphs)
//     from the OnnxModel, never re-reading the file;
//   - the weights: each constant is on the device once however many buckets
//     use it (stats().weight_bytes_uploaded);
//   - the programs, through the context's program cache (and the binary and
//     tuning caches on disk).
//
//   OnnxModel model = OnnxModel::Read("bert.onnx").value();
//   OnnxOptions load;
//   load.profiles = ParseShapeProfiles(
//       "input_ids:1x1..512/pow2,attention_mask:1x1..512/pow2").value();
//   ShapedEngineOptions opts;
//   opts.pad_values = {{"input_ids", 0}, {"attention_mask", 0}};
//   ShapedEngine engine = ShapedEngine::Create(ctx, model, load, opts).value();
//   InputShapes shapes = {{"input_ids", {1, 37}}, {"attention_mask", {1, 37}}};
//   Bindings b;  // inputs sized for 1x37, the output for its bucket (1x64x256)
//   ...
//   ShapedRun run = engine.Run(b, shapes).value();  // bucket 64, padded
//
// Padding. Dimensions of one symbolic name in the model (dim_param, such as
// "sequence" on input_ids and attention_mask) are one dimension: their sizes
// must agree, and one bucket serves them. When every input with a range in
// such a dimension has a pad value (ShapedEngineOptions::pad_values), a
// size runs in the smallest bucket that holds it: the engine copies each
// such input into a bucket-sized staging buffer of its own, filled with the
// pad value first (on the device, on the run's queue). Without pad values a
// size runs at exactly that size: its own bucket, compiled on first use and
// kept. Padding is the model's contract to honour: a BERT encoder whose
// attention_mask is 0 at padded positions gives the same outputs at the
// unpadded positions (to rounding), but a model that pools over the
// sequence does not.
//
// Outputs are the bucket's: output bindings must hold the bucket's output
// (ShapedRun::outputs; size them for the profile's largest bucket to serve
// any shape). Along a padded dimension the first `size` positions are the
// unpadded result, in the bucket's layout: an output [1, bucket, H] holds
// the unpadded [1, size, H] as its first size*H elements; with batch > 1
// rows are `bucket` apart.
//
// Thread-safety: all methods may be called from several threads. A bucket's
// first use compiles it while holding the engine's lock (other first uses
// wait); runs of one bucket are serialized, runs of different buckets are
// not.
#ifndef RECQ_SHAPED_ENGINE_H_
#define RECQ_SHAPED_ENGINE_H_

#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "recq/bindings.h"
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/onnx.h"
#include "recq/recording.h"
#include "recq/shape_profile.h"

namespace recq {

// Input shapes by input name.
using InputShapes = std::map<std::string, std::vector<int64_t>>;

struct ShapedEngineOptions {
  EngineOptions engine;              // every bucket's compile
  Backend backend = Backend::kAuto;  // the buckets' recordings
  // Per input, the value its padded positions get (converted to the
  // input's element type). See "Padding" above.
  std::map<std::string, double> pad_values;
  // Compile every bucket in Create (a range with the exact rule counts
  // every size: at most 256 buckets in all). Else each on first use.
  bool eager = false;
};

// One bucket of a ShapedEngine.
struct BucketStats {
  InputShapes shapes;                // the bucket's input shapes
  std::vector<BindingInfo> outputs;  // its output tensors
  EngineStats engine;                // its compile (weight_bytes: what it binds)
  // Import, compile and record (engine.compile_ms, the import included)
  // plus the first Run's wall time: the first result of a new bucket.
  double first_result_ms = 0;
  size_t weight_bytes_uploaded = 0;  // by its compile (the others were shared)
  size_t runs = 0;
  size_t padded_runs = 0;    // runs that padded an input
  size_t staging_bytes = 0;  // the bucket's staging buffers for padded inputs
};

struct ShapedEngineStats {
  size_t weight_bytes_uploaded = 0;  // every constant once, over all buckets
  size_t weight_uploads = 0;         // distinct constants uploaded
  size_t weight_reuses = 0;          // constants a bucket found already uploaded
  std::vector<BucketStats> buckets;  // in the order they were compiled
};

// What one run used.
struct ShapedRun {
  InputShapes bucket;                // the bucket's input shapes
  std::vector<BindingInfo> outputs;  // the bucket's outputs
  bool padded = false;               // an input was padded
  bool compiled = false;             // this call compiled the bucket
};

class ShapedEngine {
 public:
  // Create checks the profile against the model: every profiled input
  // exists with that rank, fixed dimensions agree, dimensions of one
  // symbolic name have one profile and are padded all or none.
  // `load.profiles` is the profile; its other fields apply to every bucket.
  [[nodiscard]] static absl::StatusOr<ShapedEngine> Create(const Context& context, OnnxModel model,
                                                           const OnnxOptions& load,
                                                           const ShapedEngineOptions& options = {});

  // BucketFor returns the bucket's input shapes for inputs of `shapes`
  // (inputs without a range may be left out). InvalidArgument names the
  // input, the dimension and the range for a size outside the profile, and
  // an unknown input, a wrong rank or disagreeing tied sizes.
  [[nodiscard]] absl::StatusOr<InputShapes> BucketFor(const InputShapes& shapes) const;

  // EngineFor returns the bucket's engine for `shapes`, compiling it on
  // first use.
  [[nodiscard]] absl::StatusOr<Engine> EngineFor(const InputShapes& shapes);

  // Enqueue runs `bindings` (inputs of `shapes`, outputs sized for the
  // bucket) on `queue`, an in-order queue of the engine's context, after
  // `wait_list`; `done`, if non-null, gets an event for the run. Run
  // enqueues on the context's queue and waits.
  [[nodiscard]] absl::StatusOr<ShapedRun> Enqueue(cl_command_queue queue, const Bindings& bindings,
                                                  const InputShapes& shapes,
                                                  absl::Span<const cl_event> wait_list = {},
                                                  cl_event* done = nullptr);
  [[nodiscard]] absl::StatusOr<ShapedRun> Run(const Bindings& bindings, const InputShapes& shapes);

  // ListBuckets lists every bucket of the profile (the product over the
  // ranged dimensions; the exact rule lists every size); ResourceExhausted
  // above `limit`.
  [[nodiscard]] absl::StatusOr<std::vector<InputShapes>> ListBuckets(size_t limit = 256) const;

  // Serialize compiles every bucket of the profile (ListBuckets) and writes
  // the engine as one engine file (recq/engine_file.h): the first bucket is
  // a complete engine of its shape (LoadEngine loads it alone), and the
  // file also holds the profile, the pad values, every other bucket (its
  // lowering, tuned choices and program binaries, each with its own copy
  // of the weights) and the model, for sizes no bucket serves.
  // SerializeToFile writes those bytes to `path`.
  [[nodiscard]] absl::StatusOr<std::string> Serialize();
  [[nodiscard]] absl::Status SerializeToFile(const std::string& path);
  // Load restores a file Serialize wrote: every stored bucket as LoadEngine
  // loads an engine (stored lowering and binaries, no re-tuning), their
  // weights uploaded once; other sizes compile on first use from the stored
  // model. InvalidArgument for an engine file without a profile.
  [[nodiscard]] static absl::StatusOr<ShapedEngine> Load(const Context& context,
                                                         const std::string& path,
                                                         const EngineLoadOptions& options = {});
  [[nodiscard]] static absl::StatusOr<ShapedEngine> LoadFromBytes(
      const Context& context, absl::string_view bytes, const EngineLoadOptions& options = {});

  // Every input's shape at the profile's largest sizes.
  InputShapes MaxShapes() const;
  const ShapeProfiles& profiles() const;
  const OnnxModel& model() const;
  ShapedEngineStats stats() const;
  const Context& context() const;

  struct State;

 private:
  explicit ShapedEngine(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace recq

#endif  // RECQ_SHAPED_ENGINE_H_
