#include "engine/engine_file/stored_lowering.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/engine_file/convert.h"
#include "engine/passes.h"
#include "engine/precision.h"
#include "recq/onnx.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

namespace pb = ::recq::engine_file;

std::string DescribeArg(const DispatchArg& a) {
  switch (a.kind) {
    case DispatchArg::Kind::kInternal:
      return absl::StrCat("internal buffer ", a.index);
    case DispatchArg::Kind::kSlot:
      return absl::StrCat("binding ", a.index);
    case DispatchArg::Kind::kConstant:
      return absl::StrCat("constant ", a.index);
    case DispatchArg::Kind::kScalar:
      return absl::StrCat(a.bytes.size(), " scalar bytes");
    case DispatchArg::Kind::kLocal:
      return absl::StrCat(a.local_bytes, " bytes of local memory");
    case DispatchArg::Kind::kNull:
      return "a null buffer";
  }
  return "?";
}

bool SameArg(const DispatchArg& a, const DispatchArg& b) {
  return a.kind == b.kind && a.index == b.index && a.bytes == b.bytes &&
         a.local_bytes == b.local_bytes;
}

std::string Sizes(const std::array<size_t, 3>& s) { return absl::StrJoin(s, "x"); }

}  // namespace

absl::StatusOr<DispatchList> ListOf(const pb::EngineFile& f, bool with_constants) {
  DispatchList list;
  for (const pb::Kernel& k : f.kernels()) {
    list.kernels.push_back({f.programs(k.program()).name(),
                            std::vector<std::string>(k.options().begin(), k.options().end()),
                            k.entry_point()});
  }
  for (const pb::Binding& b : f.bindings()) {
    RECQ_ASSIGN_OR_RETURN(TensorDesc desc, DescOf(b.desc(), b.name()));
    list.slots.push_back({b.name(), std::move(desc), b.is_input()});
  }
  list.internal_buffer_bytes.assign(f.memory_plan().buffer_bytes().begin(),
                                    f.memory_plan().buffer_bytes().end());
  list.unplanned_bytes = f.memory_plan().unplanned_bytes();
  for (int i = 0; with_constants && i < f.constants_size(); ++i) {
    const pb::Constant& c = f.constants(i);
    RECQ_ASSIGN_OR_RETURN(DataType dtype, DataTypeOf(c.element_type(), "a constant"));
    if (c.data().size() != c.elements() * DataTypeSize(dtype)) {
      return absl::InvalidArgumentError(
          "engine file: a constant holds no data, and the stored lowering is used without "
          "lowering the stored graph");
    }
    RECQ_ASSIGN_OR_RETURN(
        HostData data,
        HostData::FromBytes(dtype,
                            absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(c.data().data()),
                                                c.data().size())));
    list.constants.push_back(std::make_shared<const HostData>(std::move(data)));
  }
  for (const pb::Dispatch& in : f.dispatches()) {
    Dispatch d;
    d.kernel = static_cast<int32_t>(in.kernel());
    d.work_dim = in.work_dim();
    for (int i = 0; i < 3; ++i) {
      d.global[i] = in.global(i);
      d.local[i] = in.local_size() ? in.local(i) : 0;
    }
    d.label = in.label();
    for (const pb::DispatchArg& a : in.args()) {
      DispatchArg arg;
      switch (a.kind()) {
        case pb::DispatchArg::INTERNAL:
          arg = DispatchArg::Internal(a.index());
          break;
        case pb::DispatchArg::SLOT:
          arg = DispatchArg::Slot(a.index());
          break;
        case pb::DispatchArg::CONSTANT:
          arg = DispatchArg::Constant(a.index());
          break;
        case pb::DispatchArg::SCALAR:
          arg.kind = DispatchArg::Kind::kScalar;
          arg.bytes.assign(a.scalar().begin(), a.scalar().end());
          break;
        case pb::DispatchArg::LOCAL:
          arg = DispatchArg::Local(a.local_bytes());
          break;
        default:
          arg = DispatchArg::Null();
      }
      d.args.push_back(std::move(arg));
    }
    list.dispatches.push_back(std::move(d));
  }
  return list;
}

absl::Status CheckStoredLowering(const pb::EngineFile& f, const DispatchList& stored,
                                 const DispatchList& lowered, std::vector<int32_t>* constant_of) {
  auto differs = [](absl::string_view what) {
    return absl::DataLossError(absl::StrCat(
        "engine file: its stored lowering does not match the lowering of its stored graph: ", what,
        " (a modified file, or one written by another version of recq: rebuild it)"));
  };
  if (stored.slots.size() != lowered.slots.size()) {
    return differs(absl::StrCat(stored.slots.size(), " bindings stored; the graph has ",
                                lowered.slots.size()));
  }
  for (size_t i = 0; i < stored.slots.size(); ++i) {
    const Slot& a = stored.slots[i];
    const Slot& b = lowered.slots[i];
    if (a.name != b.name || a.desc != b.desc || a.is_input != b.is_input) {
      return differs(absl::StrCat("binding ", i, " is stored as ", a.is_input ? "input" : "output",
                                  " '", a.name, "' ", a.desc.ToString(), "; the graph gives ",
                                  b.is_input ? "input" : "output", " '", b.name, "' ",
                                  b.desc.ToString()));
    }
  }
  if (stored.kernels.size() != lowered.kernels.size()) {
    return differs(absl::StrCat(stored.kernels.size(), " kernels stored; lowering gives ",
                                lowered.kernels.size()));
  }
  for (size_t k = 0; k < stored.kernels.size(); ++k) {
    const KernelRef& a = stored.kernels[k];
    const KernelRef& b = lowered.kernels[k];
    if (a.program != b.program || a.name != b.name || a.options != b.options) {
      return differs(absl::StrCat("kernel ", k, " is stored as ", a.program, ":", a.name, " [",
                                  absl::StrJoin(a.options, " "), "]; lowering gives ", b.program,
                                  ":", b.name, " [", absl::StrJoin(b.options, " "), "]"));
    }
  }
  if (stored.internal_buffer_bytes != lowered.internal_buffer_bytes) {
    return differs(absl::StrCat("intermediate buffers of [",
                                absl::StrJoin(stored.internal_buffer_bytes, ", "),
                                "] bytes stored; lowering plans [",
                                absl::StrJoin(lowered.internal_buffer_bytes, ", "), "]"));
  }
  if (static_cast<size_t>(f.constants_size()) != lowered.constants.size()) {
    return differs(absl::StrCat(f.constants_size(), " constants stored; lowering gives ",
                                lowered.constants.size()));
  }
  // Stored constant -> lowered constant, from the order dispatches use them.
  const size_t constants = lowered.constants.size();
  constant_of->assign(constants, -1);
  std::vector<int32_t> stored_of(constants, -1);
  auto pair = [&](int32_t a, int32_t b) {
    if (a < 0 || b < 0 || static_cast<size_t>(a) >= constants ||
        static_cast<size_t>(b) >= constants) {
      return false;
    }
    if ((*constant_of)[a] < 0 && stored_of[b] < 0) {
      (*constant_of)[a] = b;
      stored_of[b] = a;
    }
    return (*constant_of)[a] == b;
  };
  if (stored.dispatches.size() != lowered.dispatches.size()) {
    return differs(absl::StrCat(stored.dispatches.size(), " dispatches stored; lowering gives ",
                                lowered.dispatches.size()));
  }
  for (size_t d = 0; d < stored.dispatches.size(); ++d) {
    const Dispatch& a = stored.dispatches[d];
    const Dispatch& b = lowered.dispatches[d];
    const std::string where = absl::StrCat("dispatch ", d, " ('", b.label, "')");
    if (a.label != b.label || a.kernel != b.kernel) {
      return differs(absl::StrCat(where, " is stored as '", a.label, "' running kernel ", a.kernel,
                                  "; lowering runs kernel ", b.kernel));
    }
    if (a.work_dim != b.work_dim || a.global != b.global || a.local != b.local) {
      return differs(absl::StrCat(where, " has work_dim ", a.work_dim, ", global ", Sizes(a.global),
                                  ", local ", Sizes(a.local), "; lowering gives work_dim ",
                                  b.work_dim, ", global ", Sizes(b.global), ", local ",
                                  Sizes(b.local)));
    }
    if (a.args.size() != b.args.size()) {
      return differs(absl::StrCat(where, " has ", a.args.size(), " arguments; lowering gives ",
                                  b.args.size()));
    }
    for (size_t i = 0; i < a.args.size(); ++i) {
      const bool constant = a.args[i].kind == DispatchArg::Kind::kConstant &&
                            b.args[i].kind == DispatchArg::Kind::kConstant;
      if (constant ? !pair(a.args[i].index, b.args[i].index) : !SameArg(a.args[i], b.args[i])) {
        return differs(absl::StrCat(where, " argument ", i, " is ", DescribeArg(a.args[i]),
                                    "; lowering gives ", DescribeArg(b.args[i])));
      }
    }
  }
  // Constants no dispatch uses pair up in order.
  for (size_t a = 0, b = 0; a < constants; ++a) {
    if ((*constant_of)[a] >= 0) continue;
    while (stored_of[b] >= 0) ++b;
    (*constant_of)[a] = static_cast<int32_t>(b);
    stored_of[b] = static_cast<int32_t>(a);
  }
  for (size_t i = 0; i < constants; ++i) {
    const pb::Constant& a = f.constants(static_cast<int>(i));
    const HostData& b = *lowered.constants[(*constant_of)[i]];
    if (a.element_type() != ElementTypeOf(b.dtype()) || a.elements() != b.size()) {
      return differs(absl::StrCat("constant ", i, " is stored as ", a.elements(),
                                  " elements of type ", a.element_type(), "; lowering gives ",
                                  b.size(), " ", DataTypeName(b.dtype())));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Lowered> LowerStoredGraph(const pb::EngineFile& f, const Context& context,
                                         const EngineOptions& options, const DeviceFacts& facts) {
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(f.graph_onnx());
  if (!graph.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("engine file: its graph does not load: ", graph.status().message()));
  }
  Graph optimized = *std::move(graph);
  if (options.optimize) {
    // As Compile: GPU kernels read Transposes in place (FuseElementwise,
    // LayerNormOnChannelsFirst), so the graph the choices were made on
    // depends on the kernel family.
    RECQ_ASSIGN_OR_RETURN(
        optimized, Optimize(optimized, context, options.fuse_elementwise, facts.GpuKernels()));
  }
  LoweringTarget target;
  static_cast<DeviceFacts&>(target) = facts;
  RECQ_RETURN_IF_ERROR(ApplyPrecision(options.precision, &optimized, &target));
  size_t next = 0;
  std::string replay_error;
  target.choose_kernel = [&](const Node& node, const LoweringContext&,
                             absl::Span<const size_t> fitting) -> KernelChoice {
    KernelChoice first{fitting[0], {}};
    if (!replay_error.empty()) return first;
    if (next >= static_cast<size_t>(f.variant_choices_size()) ||
        f.variant_choices(static_cast<int>(next)).node() != node.name) {
      replay_error = absl::StrCat("no stored kernel-variant choice for node '", node.name,
                                  "' at position ", next);
      return first;
    }
    const pb::VariantChoice& stored = f.variant_choices(static_cast<int>(next++));
    const size_t pick = stored.variant();
    if (std::find(fitting.begin(), fitting.end(), pick) == fitting.end()) {
      replay_error = absl::StrCat("the stored kernel variant ", pick, " of node '", node.name,
                                  "' does not fit it");
      return first;
    }
    absl::StatusOr<KernelParams> params = ParseKernelParams(stored.params());
    if (!params.ok()) {
      replay_error = absl::StrCat("the stored kernel parameters of node '", node.name,
                                  "' do not parse: ", params.status().message());
      return first;
    }
    return KernelChoice{pick, *std::move(params)};
  };
  absl::StatusOr<Lowered> lowered = Lower(optimized, target);
  if (replay_error.empty() && lowered.ok() &&
      next != static_cast<size_t>(f.variant_choices_size())) {
    replay_error = absl::StrCat(f.variant_choices_size(), " kernel-variant choices stored; ",
                                "lowering asked for ", next);
  }
  if (!replay_error.empty() || !lowered.ok()) {
    return absl::DataLossError(
        absl::StrCat("engine file: its stored graph does not lower as stored: ",
                     replay_error.empty() ? lowered.status().message() : replay_error,
                     " (a modified file, or one written by another version of recq: rebuild it)"));
  }
  return lowered;
}
}  // namespace recq::internal
