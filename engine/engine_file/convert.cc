#include "engine/engine_file/convert.h"

#include "engine/engine_file/verifier.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {
namespace pb = ::recq::engine_file;
}  // namespace

pb::ElementType ElementTypeOf(DataType dtype) {
  return static_cast<pb::ElementType>(static_cast<int>(dtype) + 1);
}

absl::StatusOr<DataType> DataTypeOf(int element_type, absl::string_view what) {
  RECQ_RETURN_IF_ERROR(CheckElementType(element_type, what));
  return static_cast<DataType>(element_type - 1);
}

void SetDesc(pb::TensorDesc* out, const TensorDesc& desc) {
  for (int64_t d : desc.shape) out->add_shape(d);
  out->set_element_type(ElementTypeOf(desc.dtype));
}

absl::StatusOr<TensorDesc> DescOf(const pb::TensorDesc& in, absl::string_view what) {
  TensorDesc desc;
  RECQ_ASSIGN_OR_RETURN(desc.dtype, DataTypeOf(in.element_type(), what));
  desc.shape.assign(in.shape().begin(), in.shape().end());
  return desc;
}

EngineOptions::KernelTarget KernelTargetOf(int target) {
  switch (target) {
    case pb::Options::CPU:
      return EngineOptions::KernelTarget::kCpu;
    case pb::Options::GPU:
      return EngineOptions::KernelTarget::kGpu;
    default:
      return EngineOptions::KernelTarget::kAuto;
  }
}

EngineOptions::Precision PrecisionOf(int precision) {
  switch (precision) {
    case pb::Options::FP16_STORAGE:
      return EngineOptions::Precision::kFp16Storage;
    case pb::Options::TF32:
      return EngineOptions::Precision::kTf32;
    default:
      return EngineOptions::Precision::kFp32;
  }
}

pb::Options::Precision PrecisionField(EngineOptions::Precision precision) {
  switch (precision) {
    case EngineOptions::Precision::kFp16Storage:
      return pb::Options::FP16_STORAGE;
    case EngineOptions::Precision::kTf32:
      return pb::Options::TF32;
    default:
      return pb::Options::FP32;
  }
}

}  // namespace recq::internal
