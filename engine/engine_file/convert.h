// Conversions between the engine file's messages (engine/engine_file.proto)
// and recq's own types, shared by the writer, the loader and the summary.
// The readers take messages that passed VerifyEngineFile (verifier.h).
#ifndef RECQ_ENGINE_ENGINE_FILE_CONVERT_H_
#define RECQ_ENGINE_ENGINE_FILE_CONVERT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/engine_file.pb.h"
#include "recq/data_type.h"
#include "recq/engine.h"
#include "recq/tensor.h"

namespace recq::internal {

// ElementTypeOf is `dtype`'s element type: pb::ElementType lists recq's
// DataType values in order, from 1.
engine_file::ElementType ElementTypeOf(DataType dtype);

// DataTypeOf is the DataType of an element type; InvalidArgument naming
// `what` for an undefined one (CheckElementType).
[[nodiscard]] absl::StatusOr<DataType> DataTypeOf(int element_type, absl::string_view what);

// SetDesc stores `desc` in `out`; DescOf reads a verified one back
// (InvalidArgument naming `what` for an undefined element type).
void SetDesc(engine_file::TensorDesc* out, const TensorDesc& desc);
[[nodiscard]] absl::StatusOr<TensorDesc> DescOf(const engine_file::TensorDesc& in,
                                                absl::string_view what);

// The stored options' kernel target and precision (kAuto and kFp32 for
// values this build does not know).
EngineOptions::KernelTarget KernelTargetOf(int target);
EngineOptions::Precision PrecisionOf(int precision);
// The stored field for `precision` (kFp16Compute never compiles: FP32).
engine_file::Options::Precision PrecisionField(EngineOptions::Precision precision);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_ENGINE_FILE_CONVERT_H_
