// Engine files: Engine::Serialize, Engine::Deserialize and the public
// functions of recq/engine_file.h.
#include "engine/engine_file.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <future>
#include <iterator>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/lowering.h"
#include "engine/ops/preprocess.h"
#include "engine/passes.h"
#include "engine/precision.h"
#include "engine/status_macros.h"
#include "recq/log.h"
#include "recq/onnx.h"

namespace recq {
namespace internal {
namespace {

namespace pb = ::recq::engine_file;

// Limits that keep a consistent-looking but absurd file from asking for
// absurd amounts of host or device memory before the device says no.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
constexpr size_t kMaxScalarBytes = 128;
constexpr uint64_t kMaxLocalBytes = uint64_t{1} << 30;

absl::StatusOr<std::string> Sha256(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1 ||
      size != 32) {
    return absl::InternalError("SHA-256 through OpenSSL EVP failed");
  }
  return std::string(reinterpret_cast<const char*>(digest), size);
}

// pb::ElementType lists recq's DataType values in order, from 1.
pb::ElementType ElementTypeOf(DataType dtype) {
  return static_cast<pb::ElementType>(static_cast<int>(dtype) + 1);
}

absl::StatusOr<DataType> DataTypeOf(int element_type, absl::string_view what) {
  if (element_type >= pb::FLOAT32 && element_type <= pb::BOOL) {
    return static_cast<DataType>(element_type - 1);
  }
  return absl::InvalidArgumentError(absl::StrCat("engine file: ", what, " has element type ",
                                                 element_type,
                                                 "; expected 1 to 7 (FLOAT32 to BOOL)"));
}

void SetDesc(pb::TensorDesc* out, const TensorDesc& desc) {
  for (int64_t d : desc.shape) out->add_shape(d);
  out->set_element_type(ElementTypeOf(desc.dtype));
}

absl::StatusOr<TensorDesc> DescOf(const pb::TensorDesc& in, absl::string_view what) {
  TensorDesc desc;
  RECQ_ASSIGN_OR_RETURN(desc.dtype, DataTypeOf(in.element_type(), what));
  uint64_t bytes = 4;
  for (int64_t d : in.shape()) {
    if (d <= 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) ||
        bytes > kMaxTensorBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "engine file: ", what, " has shape ", ShapeToString(in.shape()),
          "; expected positive dimensions of at most ", kMaxTensorBytes, " bytes in all"));
    }
    desc.shape.push_back(d);
  }
  return desc;
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("engine file: ", what));
}

// Validate checks everything Deserialize relies on without a device.
absl::Status Validate(const pb::EngineFile& f) {
  absl::flat_hash_set<std::string> names;
  bool outputs_started = false;
  size_t inputs = 0;
  for (int i = 0; i < f.bindings_size(); ++i) {
    const pb::Binding& b = f.bindings(i);
    if (b.name().empty() || !names.insert(b.name()).second) {
      return Invalid(absl::StrCat("binding ", i, " has an empty or repeated name '", b.name(),
                                  "'; expected unique names"));
    }
    RECQ_RETURN_IF_ERROR(DescOf(b.desc(), absl::StrCat("binding '", b.name(), "'")).status());
    if (b.is_input()) {
      if (outputs_started) {
        return Invalid(absl::StrCat("input binding '", b.name(),
                                    "' follows an output; expected inputs first"));
      }
      ++inputs;
    } else {
      outputs_started = true;
    }
  }
  if (inputs == static_cast<size_t>(f.bindings_size())) {
    return Invalid("no output binding; expected at least one");
  }
  for (uint64_t bytes : f.memory_plan().buffer_bytes()) {
    if (bytes > kMaxTensorBytes) {
      return Invalid(absl::StrCat("an intermediate buffer of ", bytes, " bytes; expected at most ",
                                  kMaxTensorBytes));
    }
  }
  for (int i = 0; i < f.constants_size(); ++i) {
    const pb::Constant& c = f.constants(i);
    RECQ_ASSIGN_OR_RETURN(DataType dtype,
                          DataTypeOf(c.element_type(), absl::StrCat("constant ", i)));
    const uint64_t size = DataTypeSize(dtype);
    // Without data the constant comes from lowering the stored graph.
    const bool from_graph = c.data().empty() && !f.graph_onnx().empty();
    if (c.elements() > kMaxTensorBytes / size ||
        (!from_graph && c.data().size() != c.elements() * size)) {
      return Invalid(absl::StrCat("constant ", i, " has ", c.data().size(), " bytes for ",
                                  c.elements(), " ", DataTypeName(dtype), " elements",
                                  f.graph_onnx().empty() ? " and the file holds no graph" : ""));
    }
  }
  for (int i = 0; i < f.programs_size(); ++i) {
    if (f.programs(i).name().empty() || f.programs(i).source().empty()) {
      return Invalid(absl::StrCat("program ", i, " has no name or no source"));
    }
  }
  for (int i = 0; i < f.kernels_size(); ++i) {
    const pb::Kernel& k = f.kernels(i);
    if (k.program() >= static_cast<uint32_t>(f.programs_size()) || k.entry_point().empty()) {
      return Invalid(absl::StrCat("kernel ", i, " names program ", k.program(), " of ",
                                  f.programs_size(), " or has no entry point"));
    }
    const pb::Program& p = f.programs(k.program());
    std::vector<std::string> options(k.options().begin(), k.options().end());
    if (OptionString(options) != absl::StrJoin(p.options(), " ")) {
      return Invalid(absl::StrCat("kernel ", i, "'s build options differ from its program's"));
    }
  }
  if (f.dispatches_size() == 0) return Invalid("no dispatches; expected at least one");
  const int64_t buffers = f.memory_plan().buffer_bytes_size();
  for (int d = 0; d < f.dispatches_size(); ++d) {
    const pb::Dispatch& dispatch = f.dispatches(d);
    const std::string where = absl::StrCat("dispatch ", d, " ('", dispatch.label(), "')");
    if (dispatch.kernel() >= static_cast<uint32_t>(f.kernels_size())) {
      return Invalid(
          absl::StrCat(where, " names kernel ", dispatch.kernel(), " of ", f.kernels_size()));
    }
    if (dispatch.work_dim() < 1 || dispatch.work_dim() > 3 || dispatch.global_size() != 3 ||
        (dispatch.local_size() != 0 && dispatch.local_size() != 3)) {
      return Invalid(absl::StrCat(where, " has work_dim ", dispatch.work_dim(), " with ",
                                  dispatch.global_size(), " global and ", dispatch.local_size(),
                                  " local sizes; expected 1 to 3 dimensions, 3 sizes each"));
    }
    uint64_t items = 1;
    for (int i = 0; i < 3; ++i) {
      const uint64_t g = dispatch.global(i);
      const uint64_t l = dispatch.local_size() ? dispatch.local(i) : 1;
      if (g == 0 || l == 0 || g % l != 0 || __builtin_mul_overflow(items, g, &items) ||
          items > (uint64_t{1} << 40)) {
        return Invalid(absl::StrCat(where, " has global size ", g, " and local size ", l,
                                    " in dimension ", i,
                                    "; expected positive sizes, the local dividing the global"));
      }
    }
    for (int a = 0; a < dispatch.args_size(); ++a) {
      const pb::DispatchArg& arg = dispatch.args(a);
      const int32_t index = arg.index();
      bool ok = true;
      switch (arg.kind()) {
        case pb::DispatchArg::INTERNAL:
          ok = index >= 0 && index < buffers;
          break;
        case pb::DispatchArg::SLOT:
          ok = index >= 0 && index < f.bindings_size();
          break;
        case pb::DispatchArg::CONSTANT:
          ok = index >= 0 && index < f.constants_size();
          break;
        case pb::DispatchArg::SCALAR:
          ok = !arg.scalar().empty() && arg.scalar().size() <= kMaxScalarBytes;
          break;
        case pb::DispatchArg::LOCAL:
          ok = arg.local_bytes() > 0 && arg.local_bytes() <= kMaxLocalBytes;
          break;
        case pb::DispatchArg::NULL_BUFFER:
          break;
        default:
          ok = false;
      }
      if (!ok) {
        return Invalid(absl::StrCat(where, " argument ", a, " (kind ", arg.kind(), ", index ",
                                    index, ") is out of range"));
      }
    }
  }
  return absl::OkStatus();
}

// ListOf turns a validated file into the dispatch list; its constants only
// when `with_constants` (they must all hold data then).
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

// CheckStoredLowering compares the dispatch list an engine file stores with
// the lowering of its stored graph: the bindings (names, element types,
// shapes), kernels, memory plan, constants' types and sizes, and every
// dispatch's kernel, work sizes and arguments. The constants may be numbered
// differently (the graph's ONNX form lists them in its own order):
// `*constant_of` gets, per stored constant, the lowered one it is. A
// difference is DataLoss that names it: the file passed its checksum, so it
// was written inconsistent (tampered, or by a recq that lowers differently).
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

// LowerStoredGraph imports the file's graph, optimizes it as Compile did and
// lowers it for `facts`, replaying the stored kernel-variant choices.
absl::StatusOr<Lowered> LowerStoredGraph(const pb::EngineFile& f, const Context& context,
                                         const EngineOptions& options, const DeviceFacts& facts) {
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(f.graph_onnx());
  if (!graph.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("engine file: its graph does not load: ", graph.status().message()));
  }
  Graph optimized = *std::move(graph);
  if (options.optimize) {
    RECQ_ASSIGN_OR_RETURN(optimized, Optimize(optimized, context));
  }
  LoweringTarget target;
  static_cast<DeviceFacts&>(target) = facts;
  if (options.precision == EngineOptions::Precision::kFp16Storage) {
    RECQ_ASSIGN_OR_RETURN(optimized, ToHalfStorage(optimized));
    target.half_storage = true;
  }
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

bool SameDriver(const pb::Device& a, const DeviceInfo& b) {
  return a.name() == b.name && a.vendor() == b.vendor && a.version() == b.version &&
         a.driver_version() == b.driver_version && a.platform_name() == b.platform_name &&
         a.platform_version() == b.platform_version;
}

std::string DescribeDevice(const pb::Device& d) {
  return absl::StrCat("'", d.name(), "' (", d.platform_name(), ", driver ", d.driver_version(),
                      "; ", d.gpu_kernels() ? "GPU" : "CPU", " kernels, max work-group ",
                      d.max_work_group_size(), ", ", d.compute_units(), " compute units)");
}

std::string DescribeDevice(const DeviceInfo& d, const DeviceFacts& facts) {
  return absl::StrCat("'", d.name, "' (", d.platform_name, ", driver ", d.driver_version, "; ",
                      facts.GpuKernels() ? "GPU" : "CPU", " kernels, max work-group ",
                      facts.max_work_group_size, ", ", facts.compute_units, " compute units)");
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
  return precision == pb::Options::FP16_STORAGE ? EngineOptions::Precision::kFp16Storage
                                                : EngineOptions::Precision::kFp32;
}

}  // namespace

std::string WrapEngineFilePayload(absl::string_view payload, uint32_t format_version) {
  pb::EngineFileEnvelope envelope;
  envelope.set_magic(kEngineFileMagic);
  envelope.set_format_version(format_version);
  envelope.set_payload(std::string(payload));
  absl::StatusOr<std::string> digest = Sha256(payload);
  if (digest.ok()) envelope.set_payload_sha256(*digest);
  return envelope.SerializeAsString();
}

namespace {

// Bit `i` of an LLVM bitstream: bits fill bytes from the least significant.
uint32_t GetBits(const std::string& data, size_t bit, int count) {
  uint32_t value = 0;
  for (int k = 0; k < count; ++k, ++bit) {
    value |= static_cast<uint32_t>((static_cast<uint8_t>(data[bit / 8]) >> (bit % 8)) & 1) << k;
  }
  return value;
}

void SetBits(std::string* data, size_t bit, int count, uint32_t value) {
  for (int k = 0; k < count; ++k, ++bit) {
    char& byte = (*data)[bit / 8];
    const uint8_t mask = static_cast<uint8_t>(1u << (bit % 8));
    byte = static_cast<char>(((value >> k) & 1) ? (static_cast<uint8_t>(byte) | mask)
                                                : (static_cast<uint8_t>(byte) & ~mask));
  }
}

}  // namespace

void CanonicalizePoclBinary(std::string* binary) {
  static constexpr char kMagic[] = "poclbin";  // with its NUL: 8 bytes
  if (binary->size() < sizeof(kMagic) ||
      binary->compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)) != 0) {
    return;
  }
  constexpr absl::string_view kPrefix = "tempfile_";
  constexpr size_t kRandom = 6;  // mkstemp's XXXXXX
  constexpr absl::string_view kSuffix = ".cl";
  constexpr absl::string_view kCanonical = "000000";
  // The raw copies (LLVM metadata strings), remembering the names replaced.
  std::vector<std::string> names;
  for (size_t at = binary->find(kPrefix.data(), 0, kPrefix.size()); at != std::string::npos;
       at = binary->find(kPrefix.data(), at + 1, kPrefix.size())) {
    const size_t random = at + kPrefix.size();
    if (random + kRandom + kSuffix.size() > binary->size() ||
        binary->compare(random + kRandom, kSuffix.size(), kSuffix.data(), kSuffix.size()) != 0 ||
        !std::all_of(binary->begin() + random, binary->begin() + random + kRandom,
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; })) {
      continue;
    }
    std::string name = binary->substr(at, kPrefix.size() + kRandom + kSuffix.size());
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    binary->replace(random, kRandom, kCanonical.data(), kRandom);
  }
  // The 7-bit copies (the module's SOURCE_FILENAME record: an array of
  // Fixed(7) characters at any bit offset).
  const size_t bits = binary->size() * 8;
  for (const std::string& name : names) {
    const size_t span = name.size() * 7;
    for (size_t bit = 0; bit + span <= bits; ++bit) {
      size_t c = 0;
      while (c < name.size() && GetBits(*binary, bit + c * 7, 7) == static_cast<uint8_t>(name[c])) {
        ++c;
      }
      if (c != name.size()) continue;
      for (size_t k = 0; k < kRandom; ++k) {
        SetBits(binary, bit + (kPrefix.size() + k) * 7, 7, static_cast<uint8_t>(kCanonical[k]));
      }
      bit += span - 1;
    }
  }
}

absl::StatusOr<std::string> SerializeEngineState(const EngineState& state) {
  pb::EngineFile f;
  f.set_producer("recq");
  const DeviceInfo& info = state.context->info;
  pb::Device* device = f.mutable_built_for();
  device->set_name(info.name);
  device->set_vendor(info.vendor);
  device->set_version(info.version);
  device->set_driver_version(info.driver_version);
  device->set_platform_name(info.platform_name);
  device->set_platform_version(info.platform_version);
  device->set_device_type(info.type);
  device->set_gpu_kernels(state.lowered_for.GpuKernels());
  device->set_selection_key(state.lowered_for.SelectionKey());
  device->set_max_work_group_size(state.lowered_for.max_work_group_size);
  device->set_compute_units(state.lowered_for.compute_units);
  pb::Options* options = f.mutable_options();
  options->set_optimize(state.options.optimize);
  switch (state.options.kernel_target) {
    case EngineOptions::KernelTarget::kAuto:
      options->set_kernel_target(pb::Options::AUTO);
      break;
    case EngineOptions::KernelTarget::kCpu:
      options->set_kernel_target(pb::Options::CPU);
      break;
    case EngineOptions::KernelTarget::kGpu:
      options->set_kernel_target(pb::Options::GPU);
      break;
  }
  options->set_had_variant_chooser(static_cast<bool>(state.options.choose_variant));
  options->set_precision(state.options.precision == EngineOptions::Precision::kFp16Storage
                             ? pb::Options::FP16_STORAGE
                             : pb::Options::FP32);
  const DispatchList& list = state.list;
  for (const Slot& slot : list.slots) {
    pb::Binding* b = f.add_bindings();
    b->set_name(slot.name);
    SetDesc(b->mutable_desc(), slot.desc);
    b->set_is_input(slot.is_input);
  }
  pb::MemoryPlan* plan = f.mutable_memory_plan();
  for (size_t bytes : list.internal_buffer_bytes) plan->add_buffer_bytes(bytes);
  plan->set_total_bytes(state.stats.intermediate_bytes);
  plan->set_unplanned_bytes(list.unplanned_bytes);
  plan->set_lower_bound_bytes(state.stats.lower_bound_bytes);
  // The graph first: with it, the constants' data is not stored (the loader
  // lowers the graph again), so the weights are in the file once.
  if (state.graph_onnx != nullptr) {
    f.set_graph_onnx(*state.graph_onnx);
  } else if (!state.graph_missing_reason.empty()) {
    f.set_graph_missing_reason(state.graph_missing_reason);
  } else {
    absl::StatusOr<std::string> onnx = SaveOnnxToBytes(state.source_graph, "recq-engine");
    if (onnx.ok()) {
      f.set_graph_onnx(*std::move(onnx));
    } else {
      f.set_graph_missing_reason(std::string(onnx.status().message()));
    }
  }
  for (const EngineState::VariantChoice& c : state.variant_choices) {
    pb::VariantChoice* choice = f.add_variant_choices();
    choice->set_node(c.node);
    choice->set_variant(c.variant);
    choice->set_params(c.params);
  }
  for (const auto& data : list.constants) {
    pb::Constant* c = f.add_constants();
    c->set_element_type(ElementTypeOf(data->dtype()));
    c->set_elements(data->size());
    if (f.graph_onnx().empty()) {
      c->set_data(std::string(static_cast<const char*>(data->bytes()),
                              data->byte_size()));  // little-endian hosts
    }
  }
  // One Program per distinct (sorted options, source); its binary is taken
  // now, after the warm-up, so that drivers that add code lazily (PoCL's
  // work-group functions) store it too.
  absl::flat_hash_map<std::string, uint32_t> program_of;
  for (size_t k = 0; k < list.kernels.size(); ++k) {
    const KernelRef& ref = list.kernels[k];
    const std::string sorted = OptionString(ref.options);
    auto [it, inserted] = program_of.try_emplace(
        absl::StrCat(sorted, "\n", ref.program, "\n", *state.kernel_sources[k]),
        static_cast<uint32_t>(f.programs_size()));
    if (inserted) {
      pb::Program* p = f.add_programs();
      p->set_name(ref.program);
      std::vector<std::string> options_sorted = ref.options;
      std::sort(options_sorted.begin(), options_sorted.end());
      for (const std::string& o : options_sorted) p->add_options(o);
      p->set_source(*state.kernel_sources[k]);
      // An engine loaded as stored keeps its file's binaries (it serializes
      // to the file it came from); otherwise the binary is taken as the
      // driver has the program now (ProgramCache::CurrentBinary).
      RECQ_ASSIGN_OR_RETURN(
          std::vector<uint8_t> binary,
          state.stats.origin == EngineOrigin::kFileAsStored
              ? ProgramBinary(state.programs[k]->get(), state.context->device)
              : state.context->programs.CurrentBinary(state.programs[k]->get(),
                                                      *state.kernel_sources[k], ref.options));
      std::string stored(binary.begin(), binary.end());
      CanonicalizePoclBinary(&stored);
      p->set_binary(std::move(stored));
    }
    pb::Kernel* kernel = f.add_kernels();
    kernel->set_program(it->second);
    kernel->set_entry_point(ref.name);
    for (const std::string& o : ref.options) kernel->add_options(o);
  }
  for (const Dispatch& d : list.dispatches) {
    pb::Dispatch* out = f.add_dispatches();
    out->set_kernel(static_cast<uint32_t>(d.kernel));
    out->set_work_dim(d.work_dim);
    for (size_t g : d.global) out->add_global(g);
    if (d.has_local()) {
      for (size_t l : d.local) out->add_local(l);
    }
    out->set_label(d.label);
    for (const DispatchArg& a : d.args) {
      pb::DispatchArg* arg = out->add_args();
      arg->set_index(a.index);
      switch (a.kind) {
        case DispatchArg::Kind::kInternal:
          arg->set_kind(pb::DispatchArg::INTERNAL);
          break;
        case DispatchArg::Kind::kSlot:
          arg->set_kind(pb::DispatchArg::SLOT);
          break;
        case DispatchArg::Kind::kConstant:
          arg->set_kind(pb::DispatchArg::CONSTANT);
          break;
        case DispatchArg::Kind::kScalar:
          arg->set_kind(pb::DispatchArg::SCALAR);
          arg->set_scalar(std::string(a.bytes.begin(), a.bytes.end()));
          break;
        case DispatchArg::Kind::kLocal:
          arg->set_kind(pb::DispatchArg::LOCAL);
          arg->set_local_bytes(a.local_bytes);
          break;
        case DispatchArg::Kind::kNull:
          arg->set_kind(pb::DispatchArg::NULL_BUFFER);
          break;
      }
    }
  }
  std::string payload;
  if (f.ByteSizeLong() > static_cast<size_t>(INT_MAX) || !f.SerializeToString(&payload)) {
    return absl::UnimplementedError(absl::StrCat("Engine::Serialize: the engine file would need ",
                                                 f.ByteSizeLong(),
                                                 " bytes; protobuf messages are limited to 2 GiB"));
  }
  pb::EngineFileEnvelope envelope;
  envelope.set_magic(kEngineFileMagic);
  envelope.set_format_version(kEngineFileFormatVersion);
  RECQ_ASSIGN_OR_RETURN(std::string digest, Sha256(payload));
  envelope.set_payload_sha256(std::move(digest));
  envelope.set_payload(std::move(payload));
  std::string bytes;
  if (!envelope.SerializeToString(&bytes)) {
    return absl::InternalError("Engine::Serialize: the envelope does not serialize");
  }
  return bytes;
}

namespace {

// The envelope's fields, its payload a view into the file's bytes (the
// payload is most of the file: parsing the envelope as a message would copy
// it).
struct EnvelopeView {
  std::string magic;
  uint32_t format_version = 0;
  absl::string_view payload;
  std::string payload_sha256;
};

// ReadEnvelope reads an EngineFileEnvelope with protobuf's wire-format
// reader; false when `bytes` are not one.
bool ReadEnvelope(absl::string_view bytes, EnvelopeView* out) {
  using google::protobuf::internal::WireFormatLite;
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == static_cast<int>(bytes.size());
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const bool delimited =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    uint32_t length = 0;
    if (field == pb::EngineFileEnvelope::kFormatVersionFieldNumber &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT) {
      if (!in.ReadVarint32(&out->format_version)) return false;
    } else if (delimited && (field == pb::EngineFileEnvelope::kMagicFieldNumber ||
                             field == pb::EngineFileEnvelope::kPayloadSha256FieldNumber)) {
      std::string* value =
          field == pb::EngineFileEnvelope::kMagicFieldNumber ? &out->magic : &out->payload_sha256;
      if (!in.ReadVarint32(&length) || length > 256 || !in.ReadString(value, length)) return false;
    } else if (delimited && field == pb::EngineFileEnvelope::kPayloadFieldNumber) {
      if (!in.ReadVarint32(&length)) return false;
      const size_t start = static_cast<size_t>(in.CurrentPosition());
      if (length > bytes.size() - start || !in.Skip(static_cast<int>(length))) return false;
      out->payload = bytes.substr(start, length);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
}

}  // namespace

absl::StatusOr<pb::EngineFile> ParseEngineFile(absl::string_view bytes) {
  EnvelopeView envelope;
  if (!ReadEnvelope(bytes, &envelope)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a recq engine file: ", bytes.size(),
                     " bytes that do not parse as an engine-file envelope (truncated, corrupt, "
                     "or another kind of file)"));
  }
  if (envelope.magic != kEngineFileMagic) {
    return absl::InvalidArgumentError(
        "not a recq engine file: the envelope lacks the magic 'recq-engine'");
  }
  if (envelope.format_version != kEngineFileFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("engine file format version ", envelope.format_version,
                     "; this build of recq reads "
                     "version ",
                     kEngineFileFormatVersion, ": rebuild the engine (recq build MODEL.onnx)"));
  }
  // A large payload's digest is taken on another thread while this one
  // parses (a small one's costs less than starting a thread): a parse of
  // unchecked bytes is safe (protobuf checks every length), and its result
  // is used only once the digest matches.
  constexpr size_t kDigestBesideParse = size_t{4} << 20;
  std::future<absl::StatusOr<std::string>> digest = std::async(
      envelope.payload.size() >= kDigestBesideParse ? std::launch::async : std::launch::deferred,
      [payload = envelope.payload] { return Sha256(payload); });
  pb::EngineFile f;
  const bool parsed =
      f.ParseFromArray(envelope.payload.data(), static_cast<int>(envelope.payload.size()));
  RECQ_ASSIGN_OR_RETURN(std::string payload_digest, digest.get());
  if (envelope.payload_sha256 != payload_digest) {
    return absl::DataLossError(
        absl::StrCat("engine file: the SHA-256 of its ", envelope.payload.size(),
                     "-byte payload does not match the stored one (corrupt, truncated or "
                     "modified file)"));
  }
  if (!parsed) {
    return absl::DataLossError(
        "engine file: the payload passes its checksum but does not parse (written by a "
        "broken writer?)");
  }
  RECQ_RETURN_IF_ERROR(Validate(f));
  return f;
}

}  // namespace internal

namespace {
namespace pb = ::recq::engine_file;
}  // namespace

absl::StatusOr<std::string> Engine::Serialize() const {
  return internal::SerializeEngineState(*state_);
}

absl::Status Engine::SerializeToFile(const std::string& path) const {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, Serialize());
  const std::string temp = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      return absl::UnavailableError(absl::StrCat("cannot write engine file '", temp, "'"));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot rename '", temp, "' to '", path, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Engine> Engine::Deserialize(const Context& context, absl::string_view bytes,
                                           const EngineLoadOptions& load) {
  auto start = std::chrono::steady_clock::now();
  RECQ_ASSIGN_OR_RETURN(pb::EngineFile f, internal::ParseEngineFile(bytes));
  Log(LogLevel::kInfo, absl::StrCat("load: ", bytes.size(), " bytes checked and parsed in ",
                                    internal::MsSince(start), " ms"));
  EngineOptions options;
  options.optimize = f.options().optimize();
  options.kernel_target = internal::KernelTargetOf(f.options().kernel_target());
  options.precision = internal::PrecisionOf(f.options().precision());
  options.warm_up = load.warm_up;
  const DeviceInfo& device = context.device_info();
  const DeviceFacts here = internal::LoweringFactsFor(device, options.kernel_target);
  const pb::Device& built = f.built_for();
  // The key holds every fact selection reads; files from before it, the three.
  const bool same_lowering =
      here.GpuKernels() == built.gpu_kernels() &&
      here.max_work_group_size == built.max_work_group_size() &&
      here.compute_units == built.compute_units() &&
      (built.selection_key().empty() || built.selection_key() == here.SelectionKey());
  const bool same_driver = internal::SameDriver(built, device);
  const std::string mismatch =
      absl::StrCat("the engine file was built for ", internal::DescribeDevice(built),
                   "; this device is ", internal::DescribeDevice(device, here));

  if (!same_lowering) {
    if (load.strict) {
      return absl::FailedPreconditionError(
          absl::StrCat(mismatch, ": its lowering does not apply (strict load)"));
    }
    if (f.graph_onnx().empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(mismatch, ", and the file holds no graph to lower afresh (",
                       f.graph_missing_reason(), ")"));
    }
    absl::StatusOr<Graph> graph = LoadOnnxFromBytes(f.graph_onnx());
    if (!graph.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("engine file: its graph does not load: ", graph.status().message()));
    }
    RECQ_ASSIGN_OR_RETURN(std::shared_ptr<internal::EngineState> state,
                          internal::CompileEngineState(context, *graph, options));
    state->graph_onnx = std::make_shared<const std::string>(std::move(*f.mutable_graph_onnx()));
    state->stats.origin = EngineOrigin::kFileRelowered;
    state->stats.origin_reason = absl::StrCat(mismatch, ": re-lowered from the stored graph");
    state->stats.compile_ms = internal::MsSince(start);
    return Engine(std::move(state));
  }
  if (!same_driver && load.strict) {
    return absl::FailedPreconditionError(
        absl::StrCat(mismatch, ": its program binaries do not apply (strict load)"));
  }

  auto state = std::make_shared<internal::EngineState>(context);
  state->options = options;
  state->lowered_for = here;
  // The programs load from their stored binaries on another thread while
  // this one lowers the stored graph: the two are independent, and each is
  // a large part of the load (PoCL unpacks every binary into its cache).
  std::vector<internal::ProgramRequest> requests(f.programs_size());
  for (int p = 0; p < f.programs_size(); ++p) {
    const pb::Program& program = f.programs(p);
    requests[p].source = program.source();
    requests[p].options.assign(program.options().begin(), program.options().end());
    if (same_driver) requests[p].binary = program.binary();
  }
  internal::ProgramCache& program_cache = state->context->programs;
  std::future<absl::Status> programs_ready =
      std::async(std::launch::async, [&program_cache, &requests] {
        const auto programs_start = std::chrono::steady_clock::now();
        absl::Status built = program_cache.GetOrBuildAll(absl::MakeSpan(requests));
        Log(LogLevel::kInfo,
            absl::StrCat("load: ", requests.size(), " programs ready in ",
                         internal::MsSince(programs_start), " ms (beside the lowering)"));
        return built;
      });
  const bool from_graph = !f.graph_onnx().empty();
  RECQ_ASSIGN_OR_RETURN(internal::DispatchList stored, internal::ListOf(f, !from_graph));
  if (from_graph) {
    // The weights are in the graph: lower it again (replaying the stored
    // variant choices) and check that this gives the stored dispatch list,
    // bindings and work sizes included; the constants come from it.
    auto lower_start = std::chrono::steady_clock::now();
    RECQ_ASSIGN_OR_RETURN(internal::Lowered lowered,
                          internal::LowerStoredGraph(f, context, options, here));
    std::vector<int32_t> constant_of;
    RECQ_RETURN_IF_ERROR(internal::CheckStoredLowering(f, stored, lowered.list, &constant_of));
    // The stored list, with the lowering's constants (in the stored order)
    // and its work estimates for profiles.
    for (int32_t c : constant_of) stored.constants.push_back(lowered.list.constants[c]);
    for (size_t d = 0; d < stored.dispatches.size(); ++d) {
      stored.dispatches[d].flops = lowered.list.dispatches[d].flops;
      stored.dispatches[d].bytes = lowered.list.dispatches[d].bytes;
    }
    state->list = std::move(stored);
    Log(LogLevel::kInfo, absl::StrCat("load: stored graph lowered and checked in ",
                                      internal::MsSince(lower_start), " ms"));
  } else {
    state->list = std::move(stored);
  }
  RECQ_RETURN_IF_ERROR(internal::CheckPlanFits(state->list, device));
  state->stats.intermediate_bytes = f.memory_plan().total_bytes();
  state->stats.lower_bound_bytes = f.memory_plan().lower_bound_bytes();
  for (const pb::VariantChoice& c : f.variant_choices()) {
    state->variant_choices.push_back({c.node(), c.variant(), c.params()});
  }
  if (from_graph) {
    state->graph_onnx = std::make_shared<const std::string>(std::move(*f.mutable_graph_onnx()));
  } else {
    state->graph_missing_reason = f.graph_missing_reason().empty()
                                      ? std::string("the engine file held no graph")
                                      : f.graph_missing_reason();
  }

  RECQ_RETURN_IF_ERROR(programs_ready.get());
  std::vector<std::shared_ptr<const std::string>> sources;
  for (internal::ProgramRequest& r : requests) {
    if (r.origin == internal::ProgramOrigin::kSource) ++state->stats.kernels_built;
    if (r.origin == internal::ProgramOrigin::kDisk) ++state->stats.programs_from_disk;
    if (r.origin == internal::ProgramOrigin::kBinary) ++state->stats.programs_from_file;
    sources.push_back(std::make_shared<const std::string>(std::move(r.source)));
  }
  for (const pb::Kernel& k : f.kernels()) {
    state->programs.push_back(requests[k.program()].program);
    state->kernel_sources.push_back(sources[k.program()]);
  }
  RECQ_RETURN_IF_ERROR(internal::FinishEngineState(state, load.warm_up));
  if (same_driver) {
    state->stats.origin = EngineOrigin::kFileAsStored;
    state->stats.origin_reason =
        state->stats.kernels_built == 0
            ? "same device and driver: stored lowering and program binaries"
            : absl::StrCat("same device and driver: stored lowering; ", state->stats.kernels_built,
                           " program binaries were rejected by the driver and rebuilt");
  } else {
    state->stats.origin = EngineOrigin::kFileRebuiltPrograms;
    state->stats.origin_reason =
        absl::StrCat(mismatch, ": stored lowering, programs rebuilt from the stored sources");
  }
  state->stats.compile_ms = internal::MsSince(start);
  return Engine(std::move(state));
}

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  // One read(2) loop into a string sized from fstat: a stream iterator read
  // a 200 MB engine file a character at a time (about a second).
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == EACCES) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot open '", path, "': permission denied"));
    }
    return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(error)));
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return absl::NotFoundError(absl::StrCat("cannot read '", path, "': not a regular file"));
  }
  std::string bytes;
  bytes.resize(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  if (done != bytes.size()) {
    return absl::DataLossError(
        absl::StrCat("cannot read '", path, "': read ", done, " of ", bytes.size(), " bytes"));
  }
  return bytes;
}

absl::StatusOr<Engine> LoadEngine(const Context& context, const std::string& path,
                                  const EngineLoadOptions& options) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  absl::StatusOr<Engine> engine = LoadEngineFromBytes(context, bytes, options);
  if (!engine.ok()) {
    return absl::Status(engine.status().code(),
                        absl::StrCat("'", path, "': ", engine.status().message()));
  }
  return engine;
}

absl::StatusOr<Engine> LoadEngineFromBytes(const Context& context, absl::string_view bytes,
                                           const EngineLoadOptions& options) {
  return Engine::Deserialize(context, bytes, options);
}

bool LooksLikeEngineFile(absl::string_view bytes) {
  // The envelope's first field is the magic: tag 0x0a, length, "recq-engine".
  const std::string magic = internal::kEngineFileMagic;
  return bytes.size() >= magic.size() + 2 && bytes[0] == 0x0a &&
         static_cast<size_t>(bytes[1]) == magic.size() && bytes.substr(2, magic.size()) == magic;
}

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
    // Validated: a defined type, and a size that fits.
    s.weight_bytes += c.elements() * DataTypeSize(*internal::DataTypeOf(c.element_type(), ""));
  }
  s.intermediate_bytes = f.memory_plan().total_bytes();
  s.has_graph = !f.graph_onnx().empty();
  s.graph_missing_reason = f.graph_missing_reason();
  return s;
}

}  // namespace recq
