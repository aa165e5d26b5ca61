// The dispatch list an engine file stores, and its check against a fresh
// lowering of the file's stored graph (the loader's work between parsing a
// verified file and building the engine).
#ifndef RECQ_ENGINE_ENGINE_FILE_STORED_LOWERING_H_
#define RECQ_ENGINE_ENGINE_FILE_STORED_LOWERING_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/dispatch_list.h"
#include "engine/engine_file.pb.h"
#include "engine/lowering.h"
#include "recq/context.h"
#include "recq/engine.h"

namespace recq::internal {

// ListOf turns a verified file (VerifyEngineFile) into the dispatch list; its
// constants only when `with_constants` (they must all hold data then:
// InvalidArgument otherwise).
[[nodiscard]] absl::StatusOr<DispatchList> ListOf(const engine_file::EngineFile& f,
                                                  bool with_constants);

// CheckStoredLowering compares the dispatch list an engine file stores with
// the lowering of its stored graph: the bindings (names, element types,
// shapes), kernels, memory plan, constants' types and sizes, and every
// dispatch's kernel, work sizes and arguments. The constants may be numbered
// differently (the graph's ONNX form lists them in its own order):
// `*constant_of` gets, per stored constant, the lowered one it is. A
// difference is DataLoss that names it: the file passed its checksum, so it
// was written inconsistent (tampered, or by a recq that lowers differently).
[[nodiscard]] absl::Status CheckStoredLowering(const engine_file::EngineFile& f,
                                               const DispatchList& stored,
                                               const DispatchList& lowered,
                                               std::vector<int32_t>* constant_of);

// LowerStoredGraph imports the file's graph, optimizes it as Compile did and
// lowers it for `facts`, replaying the stored kernel-variant choices.
// InvalidArgument when the graph does not import; DataLoss when it does not
// lower as stored (a choice missing, extra or not fitting its node).
[[nodiscard]] absl::StatusOr<Lowered> LowerStoredGraph(const engine_file::EngineFile& f,
                                                       const Context& context,
                                                       const EngineOptions& options,
                                                       const DeviceFacts& facts);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_FILE_STORED_LOWERING_H_
