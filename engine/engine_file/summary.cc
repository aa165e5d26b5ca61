// SummarizeEngineFile (recq/engine_file.h): what `recq info` prints about
// an engine file, read from the verified message without a device.
#include <utility>
#include <vector>

#include "engine/engine_file/convert.h"
#include "engine/engine_file/verifier.h"
#include "engine/ops/preprocess.h"
#include "recq/engine_file.h"
#include "recq/status_macros.h"

namespace recq {
namespace {
namespace pb = ::recq::engine_file;
}  // namespace

absl::StatusOr<EngineFileSummary> SummarizeEngineFile(absl::string_view bytes) {
  RECQ_ASSIGN_OR_RETURN(pb::EngineFile f, internal::ParseEngineFile(bytes));
  EngineFileSummary s;
  s.format_version = kEngineFileFormatVersion;
  s.producer = f.producer();
  const pb::Device& d = f.built_for();
  s.built_for.name = d.name();
  s.built_for.vendor = d.vendor();
  s.built_for.version = d.version();
  s.built_for.driver_version = d.driver_version();
  s.built_for.platform_name = d.platform_name();
  s.built_for.platform_version = d.platform_version();
  s.built_for.type = d.device_type();
  s.built_for.max_work_group_size = d.max_work_group_size();
  s.built_for.compute_units = d.compute_units();
  s.gpu_kernels = d.gpu_kernels();
  s.kernel_target = internal::KernelTargetOf(f.options().kernel_target());
  s.optimize = f.options().optimize();
  s.had_variant_chooser = f.options().had_variant_chooser();
  s.precision = internal::PrecisionOf(f.options().precision());
  // Which bindings pre-processing reads, from the stored kernels' options.
  std::vector<BindingInfo> infos;
  for (const pb::Binding& b : f.bindings()) {
    RECQ_ASSIGN_OR_RETURN(TensorDesc desc, internal::DescOf(b.desc(), b.name()));
    infos.push_back({b.name(), std::move(desc)});
  }
  for (const pb::Dispatch& dispatch : f.dispatches()) {
    if (dispatch.kernel() >= static_cast<uint32_t>(f.kernels_size())) continue;
    const pb::Kernel& k = f.kernels(static_cast<int>(dispatch.kernel()));
    if (k.program() >= static_cast<uint32_t>(f.programs_size())) continue;
    const KernelRef ref{f.programs(static_cast<int>(k.program())).name(),
                        {k.options().begin(), k.options().end()},
                        k.entry_point()};
    for (int a = 0; a < dispatch.args_size(); ++a) {
      const pb::DispatchArg& arg = dispatch.args(a);
      if (arg.kind() != pb::DispatchArg::SLOT || arg.index() < 0 ||
          arg.index() >= static_cast<int>(infos.size())) {
        continue;
      }
      internal::DescribeSource(ref, static_cast<uint32_t>(a), infos[arg.index()]);
    }
  }
  for (int i = 0; i < f.bindings_size(); ++i) {
    (f.bindings(i).is_input() ? s.inputs : s.outputs).push_back(std::move(infos[i]));
  }
  for (const pb::Dispatch& dispatch : f.dispatches()) s.dispatches.push_back(dispatch.label());
  s.programs = f.programs_size();
  for (const pb::Program& p : f.programs()) s.programs_with_binary += !p.binary().empty();
  for (const pb::Constant& c : f.constants()) {
    // Verified: a defined type, and a size that fits.
    s.weight_bytes += c.elements() * internal::ElementTypeSize(c.element_type());
  }
  s.intermediate_bytes = f.memory_plan().total_bytes();
  s.has_graph = !f.graph_onnx().empty();
  s.graph_missing_reason = f.graph_missing_reason();
  if (f.has_shape_profile()) {
    s.shape_profile = f.shape_profile().profile();
    s.shape_buckets = 1 + static_cast<size_t>(f.shape_profile().more_buckets_size());
  }
  return s;
}

}  // namespace recq
