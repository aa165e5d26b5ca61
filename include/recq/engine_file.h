// Engine files: build once, load many times (TensorRT's serialize /
// deserialize flow).
//
//   absl::StatusOr<Engine> engine = LoadEngine(ctx, "model.recq");
//   if (!engine.ok()) {                       // no file yet (or a bad one)
//     engine = Engine::Compile(ctx, LoadOnnx("model.onnx").value());
//     engine->SerializeToFile("model.recq").IgnoreError();
//   }
//
// An engine file holds the graph given to Compile (as ONNX, with the
// weights), the lowered dispatch list with each dispatch's kernel variant and
// each node's variant choice, the bindings, the memory plan, every kernel's
// source and its program binary for the build device, and the device, driver
// and options it was built with. The weights are stored once, in the graph:
// the lowered constants are described (type, size) but not stored. It is
// versioned (kEngineFileFormatVersion) and its contents are checked against
// a SHA-256 before anything is parsed. The same model, options, device and
// caches give the same bytes (on PoCL: under the same POCL_CACHE_DIR path,
// which its binaries name).
//
// Loading into a context whose device and driver match the file lowers the
// stored graph again on the host (passes and lowering, replaying the stored
// variant choices; constant folding, where a graph has constant subgraphs,
// runs on the device), checks that this gives the stored dispatch list, its
// bindings, work sizes and arguments (a difference is DataLoss), takes the
// constants from it, and uses the stored program binaries (no kernel
// compiler). Another driver of the
// same device type rebuilds the programs from the stored sources; another
// device type (kernel family, work-group limit, compute units) re-lowers
// from the stored graph. EngineStats::origin says which happened;
// EngineLoadOptions::strict makes the last two FailedPrecondition.
//
// Errors: NotFound / PermissionDenied for a file that cannot be read;
// InvalidArgument for bytes that are not a recq engine file (foreign,
// truncated before the header parses, another format version, inconsistent
// contents); DataLoss for a file whose contents fail the checksum (corrupt,
// truncated or tampered), or whose stored lowering disagrees with the lowering
// of its stored graph (a binding's type or shape, a work size, an argument,
// a constant's size: tampered behind a valid checksum, or written by another
// version of recq). Nothing here aborts on malformed input. The
// checksum detects accidents, not attackers: a file's program binaries are
// native code, so load engine files only from sources you trust, as you
// would a shared library.
#ifndef RECQ_ENGINE_FILE_H_
#define RECQ_ENGINE_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/engine_file_format.h"  // kEngineFileFormatVersion, LooksLikeEngineFile

namespace recq {

// LoadEngine reads the engine file at `path` and loads it into `context`.
[[nodiscard]] absl::StatusOr<Engine> LoadEngine(const Context& context, const std::string& path,
                                                const EngineLoadOptions& options = {});

// LoadEngineFromBytes loads an engine file's bytes into `context`.
[[nodiscard]] absl::StatusOr<Engine> LoadEngineFromBytes(const Context& context,
                                                         absl::string_view bytes,
                                                         const EngineLoadOptions& options = {});

// What an engine file holds, read without a device (for `recq info`).
struct EngineFileSummary {
  uint32_t format_version = 0;
  std::string producer;
  DeviceInfo built_for;  // name, vendor, version, driver, platform, type
  bool gpu_kernels = false;
  EngineOptions::KernelTarget kernel_target = EngineOptions::KernelTarget::kAuto;
  bool optimize = true;
  bool had_variant_chooser = false;
  EngineOptions::Precision precision = EngineOptions::Precision::kFp32;
  std::vector<BindingInfo> inputs;
  std::vector<BindingInfo> outputs;
  std::vector<std::string> dispatches;  // "<node>/<kernel variant>"
  size_t programs = 0;
  size_t programs_with_binary = 0;
  size_t weight_bytes = 0;
  size_t intermediate_bytes = 0;
  bool has_graph = false;
  std::string graph_missing_reason;
  // A ShapedEngine's file (recq/shaped_engine.h): its profile and how many
  // buckets it stores (the summary's bindings are the first bucket's).
  std::string shape_profile;
  size_t shape_buckets = 0;
};

// SummarizeEngineFile checks and summarizes an engine file's bytes.
[[nodiscard]] absl::StatusOr<EngineFileSummary> SummarizeEngineFile(absl::string_view bytes);

// ReadFileBytes reads a whole file (NotFound / PermissionDenied / DataLoss).
[[nodiscard]] absl::StatusOr<std::string> ReadFileBytes(const std::string& path);

}  // namespace recq

#endif  // RECQ_ENGINE_FILE_H_
