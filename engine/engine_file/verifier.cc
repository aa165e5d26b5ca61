#include "engine/engine_file/verifier.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/engine_file/archive.h"
#include "recq/status_macros.h"

namespace recq::internal {
namespace {

namespace pb = ::recq::engine_file;

// Limits that keep a consistent-looking but absurd file from asking for
// absurd amounts of host or device memory before the device says no.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;
constexpr size_t kMaxScalarBytes = 128;
constexpr uint64_t kMaxLocalBytes = uint64_t{1} << 30;

struct ElementTypeInfo {
  uint64_t size;
  const char* name;
};
// Indexed by pb::ElementType (FLOAT32 = 1 ... BOOL = 7), in the order of
// recq's DataType; engine_file_test checks them against DataTypeSize and
// DataTypeName.
constexpr ElementTypeInfo kElementTypes[] = {
    {0, "?"},     {4, "float32"}, {2, "float16"}, {8, "int64"},   {4, "int32"},
    {1, "int8"},  {1, "uint8"},   {1, "bool"},    {8, "float64"}, {2, "uint16"},
    {2, "int16"}, {4, "uint32"},  {8, "uint64"},
};

bool Defined(int element_type) { return element_type >= pb::FLOAT32 && element_type <= pb::UINT64; }

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("engine file: ", what));
}

// CheckDesc checks a tensor's element type and shape: positive dimensions
// whose product, at 4 bytes an element, is at most kMaxTensorBytes.
absl::Status CheckDesc(const pb::TensorDesc& in, absl::string_view what) {
  RECQ_RETURN_IF_ERROR(CheckElementType(in.element_type(), what));
  uint64_t bytes = 4;
  for (int64_t d : in.shape()) {
    if (d <= 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) ||
        bytes > kMaxTensorBytes) {
      return Invalid(absl::StrCat(what, " has shape ", absl::StrJoin(in.shape(), "x"),
                                  "; expected positive dimensions of at most ", kMaxTensorBytes,
                                  " bytes in all"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBindings(const pb::EngineFile& f) {
  absl::flat_hash_set<std::string> names;
  bool outputs_started = false;
  size_t inputs = 0;
  for (int i = 0; i < f.bindings_size(); ++i) {
    const pb::Binding& b = f.bindings(i);
    if (b.name().empty() || !names.insert(b.name()).second) {
      return Invalid(absl::StrCat("binding ", i, " has an empty or repeated name '", b.name(),
                                  "'; expected unique names"));
    }
    RECQ_RETURN_IF_ERROR(CheckDesc(b.desc(), absl::StrCat("binding '", b.name(), "'")));
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
  return absl::OkStatus();
}

absl::Status CheckBuffersAndConstants(const pb::EngineFile& f) {
  for (uint64_t bytes : f.memory_plan().buffer_bytes()) {
    if (bytes > kMaxTensorBytes) {
      return Invalid(absl::StrCat("an intermediate buffer of ", bytes, " bytes; expected at most ",
                                  kMaxTensorBytes));
    }
  }
  for (int i = 0; i < f.constants_size(); ++i) {
    const pb::Constant& c = f.constants(i);
    const int type = c.element_type();
    if (!Defined(type)) return CheckElementType(type, absl::StrCat("constant ", i));
    const uint64_t size = kElementTypes[type].size;  // at least 1
    // Without data the constant comes from lowering the stored graph.
    const bool from_graph = c.data().empty() && !f.graph_onnx().empty();
    if (c.elements() > kMaxTensorBytes / size ||
        (!from_graph && c.data().size() != c.elements() * size)) {
      return Invalid(absl::StrCat("constant ", i, " has ", c.data().size(), " bytes for ",
                                  c.elements(), " ", kElementTypes[type].name, " elements",
                                  f.graph_onnx().empty() ? " and the file holds no graph" : ""));
    }
  }
  return absl::OkStatus();
}

// CheckPrograms checks the programs and kernels. The writer stores a
// program's options as its kernels' options sorted (the OptionString of
// engine/program_cache.h that keys the program), so a kernel's options,
// sorted and joined, must be its program's.
absl::Status CheckPrograms(const pb::EngineFile& f) {
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
    std::vector<std::string> sorted(k.options().begin(), k.options().end());
    std::sort(sorted.begin(), sorted.end());
    if (absl::StrJoin(sorted, " ") != absl::StrJoin(p.options(), " ")) {
      return Invalid(absl::StrCat("kernel ", i, "'s build options differ from its program's"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDispatch(const pb::EngineFile& f, int d) {
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
  const int64_t buffers = f.memory_plan().buffer_bytes_size();
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
      return Invalid(absl::StrCat(where, " argument ", a, " (kind ", arg.kind(), ", index ", index,
                                  ") is out of range"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckElementType(int element_type, absl::string_view what) {
  if (Defined(element_type)) return absl::OkStatus();
  return Invalid(absl::StrCat(what, " has element type ", element_type,
                              "; expected 1 to 12 (FLOAT32 to UINT64)"));
}

uint64_t ElementTypeSize(int element_type) {
  return Defined(element_type) ? kElementTypes[element_type].size : 0;
}

const char* ElementTypeName(int element_type) {
  return Defined(element_type) ? kElementTypes[element_type].name : "?";
}

namespace {

// VerifyOneEngine checks one engine's message: the file's own, or one
// bucket of its shape profile.
absl::Status VerifyOneEngine(const pb::EngineFile& f) {
  RECQ_RETURN_IF_ERROR(CheckBindings(f));
  RECQ_RETURN_IF_ERROR(CheckBuffersAndConstants(f));
  RECQ_RETURN_IF_ERROR(CheckPrograms(f));
  if (f.dispatches_size() == 0) return Invalid("no dispatches; expected at least one");
  for (int d = 0; d < f.dispatches_size(); ++d) {
    RECQ_RETURN_IF_ERROR(CheckDispatch(f, d));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyEngineFile(const pb::EngineFile& f) {
  RECQ_RETURN_IF_ERROR(VerifyOneEngine(f));
  for (int b = 0; b < f.shape_profile().more_buckets_size(); ++b) {
    const pb::EngineFile& bucket = f.shape_profile().more_buckets(b);
    absl::Status verified = VerifyOneEngine(bucket);
    if (verified.ok() && bucket.has_shape_profile()) {
      verified = absl::InvalidArgumentError("it holds a shape profile of its own");
    }
    if (!verified.ok()) {
      return absl::Status(verified.code(),
                          absl::StrCat("shape profile bucket ", b + 1, ": ", verified.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<pb::EngineFile> ParseEngineFile(absl::string_view bytes) {
  RECQ_ASSIGN_OR_RETURN(pb::EngineFile f, ReadEngineFileArchive(bytes));
  RECQ_RETURN_IF_ERROR(VerifyEngineFile(f));
  return f;
}

}  // namespace recq::internal
