// recq._recq: the Python extension module (pybind11) behind the `recq`
// package (python/recq/).
//
// What it wraps, and the contracts the Python side relies on:
//   Context     recq::Context (a device); copies share it.
//   Engine      recq::Engine plus a lazily made default Recording that
//               Engine.run uses (runs through it are serialized).
//   Recording   recq::Recording with its own in-order queue, so that two
//               recordings driven from two threads run concurrently. A
//               binding is a recq.Tensor (bound as is) or a numpy array
//               (an input copied in, an output copied out, through a
//               staging tensor made per call). Outputs left unbound come
//               back as new numpy arrays.
//   RunHandle   one enqueued run: holds its staging tensors, the numpy
//               arrays it reads and writes, and its completion event;
//               wait() returns the outputs. Dropping it waits for the run.
//   Tensor      recq::Tensor plus a count of live host views (buffer
//               protocol, DLPack). A view maps the buffer (zero copy where
//               the device shares host memory, CL_DEVICE_HOST_UNIFIED_MEMORY)
//               and the last view's release unmaps it; a tensor with live
//               views cannot be bound (FailedPrecondition), because OpenCL
//               leaves a kernel's use of mapped memory undefined.
// The GIL is released around everything that compiles, copies or waits.
// Failed statuses raise recq.Error subclasses named after the status code,
// with the status message; validation happens before anything is enqueued.
#include <CL/cl.h>
#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/opencl/cl_error.h"
#include "backends/opencl/cl_handle.h"
#include "onnx/onnx_pb.h"
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/engine_file.h"
#include "recq/generator.h"
#include "recq/onnx.h"
#include "recq/recording.h"
#include "recq/shape_profile.h"
#include "recq/shaped_engine.h"
#include "recq/status_macros.h"
#include "recq/tensor.h"

namespace py = pybind11;

namespace recq::python {
namespace {

// ---------------------------------------------------------------- errors

// StatusError carries a failed status to the exception translator.
struct StatusError {
  absl::Status status;
};

[[noreturn]] void Throw(absl::Status status) { throw StatusError{std::move(status)}; }

void Check(const absl::Status& status) {
  if (!status.ok()) Throw(status);
}

template <typename T>
T Value(absl::StatusOr<T> value) {
  if (!value.ok()) Throw(value.status());
  return *std::move(value);
}

// The exception class of each status code, filled by the module init.
std::map<absl::StatusCode, PyObject*>& ErrorClasses() {
  static auto* classes = new std::map<absl::StatusCode, PyObject*>();
  return *classes;
}
PyObject* g_error_base = nullptr;

// Str renders a Python object with str().
std::string Str(py::handle h) { return py::str(h).cast<std::string>(); }

// ---------------------------------------------------------------- dtypes

py::dtype NumpyDtype(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return py::dtype("float32");
    case DataType::kFloat16:
      return py::dtype("float16");
    case DataType::kInt64:
      return py::dtype("int64");
    case DataType::kInt32:
      return py::dtype("int32");
    case DataType::kInt8:
      return py::dtype("int8");
    case DataType::kUInt8:
      return py::dtype("uint8");
    case DataType::kBool:
      return py::dtype("bool");
    case DataType::kFloat64:
      return py::dtype("float64");
    case DataType::kUInt16:
      return py::dtype("uint16");
    case DataType::kInt16:
      return py::dtype("int16");
    case DataType::kUInt32:
      return py::dtype("uint32");
    case DataType::kUInt64:
      return py::dtype("uint64");
  }
  return py::dtype("float32");
}

// The buffer-protocol format character of each element type.
const char* BufferFormat(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return "f";
    case DataType::kFloat16:
      return "e";
    case DataType::kInt64:
      return "q";
    case DataType::kInt32:
      return "i";
    case DataType::kInt8:
      return "b";
    case DataType::kUInt8:
      return "B";
    case DataType::kBool:
      return "?";
    case DataType::kFloat64:
      return "d";
    case DataType::kUInt16:
      return "H";
    case DataType::kInt16:
      return "h";
    case DataType::kUInt32:
      return "I";
    case DataType::kUInt64:
      return "Q";
  }
  return "B";
}

// ------------------------------------------------------------- device info

bool HostUnified(cl_device_id device) {
  cl_bool unified = CL_FALSE;
  if (clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified), &unified, nullptr) !=
      CL_SUCCESS) {
    return false;
  }
  return unified == CL_TRUE;
}

py::dict DeviceDict(const DeviceInfo& info, cl_device_id device) {
  py::dict d;
  d["name"] = info.name;
  d["vendor"] = info.vendor;
  d["type"] = DeviceTypeName(info.type);
  d["version"] = info.version;
  d["driver_version"] = info.driver_version;
  d["platform_name"] = info.platform_name;
  d["platform_version"] = info.platform_version;
  d["compute_units"] = info.compute_units;
  d["max_work_group_size"] = info.max_work_group_size;
  d["global_mem_bytes"] = info.global_mem_bytes;
  d["max_alloc_bytes"] = info.max_alloc_bytes;
  d["host_unified_memory"] = HostUnified(device);
  d["extensions"] = info.extensions;
  return d;
}

py::list Devices() {
  std::vector<DeviceListing> listing;
  {
    py::gil_scoped_release release;
    listing = Value(ListDevices());
  }
  py::list out;
  for (const DeviceListing& l : listing) {
    py::dict d = DeviceDict(l.info, l.device);
    d["selector"] = l.selector;
    d["platform_device"] = l.platform_device;
    out.append(d);
  }
  return out;
}

// ---------------------------------------------------------------- context

struct PyContext {
  Context context;
  bool host_unified = false;

  explicit PyContext(Context c) : context(std::move(c)) {
    host_unified = HostUnified(context.device());
  }
};

std::shared_ptr<PyContext> MakeContext(const std::string& device, const std::string& cache_dir) {
  ContextOptions options;
  options.device = device;
  options.cache_dir = cache_dir;
  absl::StatusOr<Context> context;
  {
    py::gil_scoped_release release;
    context = Context::Create(options);
  }
  return std::make_shared<PyContext>(Value(std::move(context)));
}

// ---------------------------------------------------------------- tensors

// The shared state of a Python Tensor: the device tensor, its context, and
// the mapping that host views (buffer protocol, DLPack) hold.
struct TensorState {
  std::shared_ptr<PyContext> context;
  Tensor tensor;
  std::mutex mu;
  int views = 0;           // guarded by mu
  void* mapped = nullptr;  // guarded by mu: the host pointer while views > 0

  // AddView maps the tensor on the first view; the caller holds the GIL or
  // not (no Python here).
  absl::StatusOr<void*> AddView() {
    std::lock_guard<std::mutex> lock(mu);
    if (views == 0) {
      cl_int err = CL_SUCCESS;
      void* p = clEnqueueMapBuffer(context->context.queue(), tensor.mem(), CL_TRUE,
                                   CL_MAP_READ | CL_MAP_WRITE, 0, tensor.desc().ByteSize(), 0,
                                   nullptr, nullptr, &err);
      if (absl::Status s = cl::CheckCl(err, "clEnqueueMapBuffer"); !s.ok()) return s;
      mapped = p;
    }
    ++views;
    return mapped;
  }

  // DropView unmaps the tensor with the last view, and waits for the unmap
  // so that a run enqueued on another queue afterwards sees the host's writes.
  void DropView() {
    std::lock_guard<std::mutex> lock(mu);
    if (views <= 0) return;
    if (--views > 0) return;
    cl_event done = nullptr;
    if (clEnqueueUnmapMemObject(context->context.queue(), tensor.mem(), mapped, 0, nullptr,
                                &done) == CL_SUCCESS) {
      clWaitForEvents(1, &done);
      clReleaseEvent(done);
    }
    mapped = nullptr;
  }

  int LiveViews() {
    std::lock_guard<std::mutex> lock(mu);
    return views;
  }
};

struct PyTensor {
  std::shared_ptr<TensorState> state;
};

std::shared_ptr<PyTensor> AllocateTensor(const std::shared_ptr<PyContext>& context,
                                         const TensorDesc& desc) {
  auto state = std::make_shared<TensorState>();
  state->context = context;
  {
    py::gil_scoped_release release;
    state->tensor = Value(Tensor::Allocate(context->context, desc));
  }
  return std::make_shared<PyTensor>(PyTensor{std::move(state)});
}

// CheckArray validates a numpy array against a binding's type and shape;
// `what` names it in the message.
void CheckArray(const py::array& a, const std::string& what, const TensorDesc& desc) {
  const py::dtype want = NumpyDtype(desc.dtype);
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  if (!a.dtype().is(want) && !a.dtype().equal(want)) {
    Throw(absl::InvalidArgumentError(absl::StrCat(
        what, ": got a numpy array of dtype ", Str(a.dtype()), " and shape ", ShapeToString(shape),
        ", expected ", desc.ToString(), " (dtype ", Str(want), "); convert it with .astype()")));
  }
  if (shape != desc.shape) {
    Throw(absl::InvalidArgumentError(absl::StrCat(what, ": got a numpy array of shape ",
                                                  ShapeToString(shape), ", expected ",
                                                  desc.ToString())));
  }
}

std::shared_ptr<PyTensor> TensorFromNumpy(const std::shared_ptr<PyContext>& context,
                                          const py::array& array) {
  TensorDesc desc;
  desc.shape.assign(array.shape(), array.shape() + array.ndim());
  const std::string kind = Str(array.dtype());
  absl::StatusOr<DataType> dtype = ParseDataType(kind);
  if (!dtype.ok()) {
    Throw(absl::InvalidArgumentError(
        absl::StrCat("Tensor.from_numpy: numpy dtype ", kind,
                     " has no recq element type (float32, float16, int64, int32, int8, uint8, "
                     "bool)")));
  }
  desc.dtype = *dtype;
  if (desc.shape.empty()) {
    Throw(
        absl::InvalidArgumentError("Tensor.from_numpy: a 0-d array; recq tensors have rank >= 1"));
  }
  auto contiguous = py::array::ensure(array, py::array::c_style);
  std::shared_ptr<PyTensor> t = AllocateTensor(context, desc);
  {
    const auto* bytes = static_cast<const uint8_t*>(contiguous.data());
    const size_t n = desc.ByteSize();
    py::gil_scoped_release release;
    Check(t->state->tensor.UploadBytes(absl::Span<const uint8_t>(bytes, n)));
  }
  return t;
}

py::array TensorToNumpy(const PyTensor& t) {
  const TensorDesc& desc = t.state->tensor.desc();
  py::array out(NumpyDtype(desc.dtype), desc.shape);
  void* dst = out.mutable_data();
  {
    py::gil_scoped_release release;
    absl::StatusOr<std::vector<uint8_t>> bytes = t.state->tensor.DownloadBytes();
    if (bytes.ok()) std::memcpy(dst, bytes->data(), bytes->size());
    Check(bytes.status());
  }
  return out;
}

void TensorWrite(PyTensor& t, const py::array& array) {
  CheckArray(array, "Tensor.write", t.state->tensor.desc());
  auto contiguous = py::array::ensure(array, py::array::c_style);
  const auto* bytes = static_cast<const uint8_t*>(contiguous.data());
  const size_t n = t.state->tensor.desc().ByteSize();
  py::gil_scoped_release release;
  Check(t.state->tensor.UploadBytes(absl::Span<const uint8_t>(bytes, n)));
}

// --- the buffer protocol: a view maps the tensor, its release unmaps it.

struct BufferViewInfo {
  std::shared_ptr<TensorState> state;
  std::vector<Py_ssize_t> shape;
  std::vector<Py_ssize_t> strides;
};

int TensorGetBuffer(PyObject* obj, Py_buffer* view, int flags) {
  view->obj = nullptr;
  PyTensor* t = nullptr;
  try {
    t = py::cast<PyTensor*>(py::handle(obj));
  } catch (const py::cast_error&) {
    PyErr_SetString(PyExc_BufferError, "recq.Tensor: not a tensor");
    return -1;
  }
  if (t == nullptr || !t->state->context->host_unified) {
    PyErr_SetString(PyExc_BufferError,
                    "recq.Tensor: this device does not share host memory "
                    "(CL_DEVICE_HOST_UNIFIED_MEMORY is false), so its buffers have no zero-copy "
                    "host view; use Tensor.numpy() to copy");
    return -1;
  }
  absl::StatusOr<void*> p;
  {
    py::gil_scoped_release release;
    p = t->state->AddView();
  }
  if (!p.ok()) {
    PyErr_SetString(PyExc_BufferError, std::string(p.status().message()).c_str());
    return -1;
  }
  const TensorDesc& desc = t->state->tensor.desc();
  auto* info = new BufferViewInfo{t->state, {}, {}};
  const Py_ssize_t item = static_cast<Py_ssize_t>(DataTypeSize(desc.dtype));
  info->shape.assign(desc.shape.begin(), desc.shape.end());
  info->strides.resize(desc.shape.size());
  Py_ssize_t stride = item;
  for (size_t i = desc.shape.size(); i-- > 0;) {
    info->strides[i] = stride;
    stride *= static_cast<Py_ssize_t>(desc.shape[i]);
  }
  view->buf = *p;
  view->obj = obj;
  Py_INCREF(obj);
  view->len = static_cast<Py_ssize_t>(desc.ByteSize());
  view->readonly = 0;
  view->itemsize = item;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(BufferFormat(desc.dtype)) : nullptr;
  view->ndim = static_cast<int>(desc.shape.size());
  view->shape = (flags & PyBUF_ND) ? info->shape.data() : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? info->strides.data() : nullptr;
  view->suboffsets = nullptr;
  view->internal = info;
  return 0;
}

void TensorReleaseBuffer(PyObject*, Py_buffer* view) {
  auto* info = static_cast<BufferViewInfo*>(view->internal);
  if (info == nullptr) return;
  {
    py::gil_scoped_release release;
    info->state->DropView();
  }
  delete info;
  view->internal = nullptr;
}

// --- DLPack (v0.8 ABI: DLManagedTensor), defined here: the header is not
// packaged for Debian 12.
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
constexpr int32_t kDLCPU = 1;
constexpr int32_t kDLOpenCL = 4;

struct DlpackContext {
  std::shared_ptr<TensorState> state;
  std::vector<int64_t> shape;
  DLManagedTensor managed;
};

void DlpackDeleter(DLManagedTensor* self) {
  auto* ctx = static_cast<DlpackContext*>(self->manager_ctx);
  ctx->state->DropView();
  delete ctx;
}

DLDataType DlpackType(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return {2, 32, 1};
    case DataType::kFloat16:
      return {2, 16, 1};
    case DataType::kInt64:
      return {0, 64, 1};
    case DataType::kInt32:
      return {0, 32, 1};
    case DataType::kInt8:
      return {0, 8, 1};
    case DataType::kUInt8:
      return {1, 8, 1};
    case DataType::kBool:
      return {6, 8, 1};  // kDLBool
    case DataType::kFloat64:
      return {2, 64, 1};  // kDLFloat
    case DataType::kUInt16:
      return {1, 16, 1};
    case DataType::kInt16:
      return {0, 16, 1};
    case DataType::kUInt32:
      return {1, 32, 1};
    case DataType::kUInt64:
      return {1, 64, 1};
  }
  return {1, 8, 1};
}

py::tuple DlpackDevice(const PyTensor& t) {
  return py::make_tuple(t.state->context->host_unified ? kDLCPU : kDLOpenCL, 0);
}

py::capsule Dlpack(const PyTensor& t, const py::object& stream) {
  if (!stream.is_none()) {
    throw py::buffer_error("recq.Tensor.__dlpack__: stream must be None for a host (kDLCPU) view");
  }
  if (!t.state->context->host_unified) {
    throw py::buffer_error(
        "recq.Tensor.__dlpack__: this device does not share host memory "
        "(CL_DEVICE_HOST_UNIFIED_MEMORY is false); a GPU OpenCL buffer (kDLOpenCL) has no host "
        "address, and no DLPack consumer takes cl_mem handles. Use Tensor.numpy() to copy");
  }
  auto* ctx = new DlpackContext{t.state, t.state->tensor.desc().shape, {}};
  absl::StatusOr<void*> p;
  {
    py::gil_scoped_release release;
    p = t.state->AddView();
  }
  if (!p.ok()) {
    delete ctx;
    Throw(p.status());
  }
  DLManagedTensor& m = ctx->managed;
  m.dl_tensor.data = *p;
  m.dl_tensor.device = {kDLCPU, 0};
  m.dl_tensor.ndim = static_cast<int32_t>(ctx->shape.size());
  m.dl_tensor.dtype = DlpackType(t.state->tensor.desc().dtype);
  m.dl_tensor.shape = ctx->shape.data();
  m.dl_tensor.strides = nullptr;  // compact, row-major
  m.dl_tensor.byte_offset = 0;
  m.manager_ctx = ctx;
  m.deleter = DlpackDeleter;
  // A consumer renames the capsule "used_dltensor" and calls the deleter
  // itself; an unconsumed capsule calls it here.
  PyObject* capsule = PyCapsule_New(&m, "dltensor", [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
    }
  });
  if (capsule == nullptr) {
    DlpackDeleter(&m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

// ---------------------------------------------------------------- engines

struct PyRecording;

struct PyEngine {
  PyEngine(std::shared_ptr<PyContext> c, Engine e) : context(std::move(c)), engine(std::move(e)) {}

  std::shared_ptr<PyContext> context;
  Engine engine;
  std::mutex mu;                                   // guards default_recording
  std::shared_ptr<PyRecording> default_recording;  // Engine.run's, made at the first run
};

const BindingInfo* FindBinding(const Engine& engine, const std::string& name, bool* is_input) {
  for (const BindingInfo& b : engine.inputs()) {
    if (b.name == name) {
      *is_input = true;
      return &b;
    }
  }
  for (const BindingInfo& b : engine.outputs()) {
    if (b.name == name) {
      *is_input = false;
      return &b;
    }
  }
  return nullptr;
}

std::string BindingNames(const Engine& engine) {
  std::vector<std::string> names;
  for (const BindingInfo& b : engine.inputs())
    names.push_back(absl::StrCat("input '", b.name, "'"));
  for (const BindingInfo& b : engine.outputs()) {
    names.push_back(absl::StrCat("output '", b.name, "'"));
  }
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<EngineOptions::Tuning> ParseTuning(const std::string& name) {
  if (name == "off") return EngineOptions::Tuning::kOff;
  if (name == "fast") return EngineOptions::Tuning::kFast;
  if (name == "exhaustive") return EngineOptions::Tuning::kExhaustive;
  return absl::InvalidArgumentError(
      absl::StrCat("tuning '", name, "': expected off, fast or exhaustive"));
}

// MakeEngineOptions reads Engine.load's compile arguments.
EngineOptions MakeEngineOptions(const std::optional<std::string>& precision,
                                const std::optional<std::string>& tuning,
                                const std::string& kernel_target) {
  EngineOptions options;
  if (precision.has_value()) options.precision = Value(ParsePrecision(*precision));
  if (tuning.has_value()) options.tuning = Value(ParseTuning(*tuning));
  if (kernel_target == "cpu") {
    options.kernel_target = EngineOptions::KernelTarget::kCpu;
  } else if (kernel_target == "gpu") {
    options.kernel_target = EngineOptions::KernelTarget::kGpu;
  } else if (kernel_target != "auto") {
    Throw(absl::InvalidArgumentError(
        absl::StrCat("kernel_target '", kernel_target, "': expected auto, cpu or gpu")));
  }
  return options;
}

std::shared_ptr<PyEngine> LoadEngineFile(const std::string& path, const std::string& bytes,
                                         const std::shared_ptr<PyContext>& context,
                                         const std::optional<std::string>& precision,
                                         const std::map<std::string, std::vector<int64_t>>& shapes,
                                         const std::optional<std::string>& tuning,
                                         const std::string& kernel_target) {
  py::gil_scoped_release release;
  if (LooksLikeEngineFile(bytes)) {
    if (!shapes.empty()) {
      Throw(absl::InvalidArgumentError(absl::StrCat(
          "Engine.load('", path, "'): shapes apply to ONNX models; an engine file's are fixed")));
    }
    auto e =
        std::make_shared<PyEngine>(context, Value(LoadEngineFromBytes(context->context, bytes)));
    if (precision.has_value()) {
      const auto want = Value(ParsePrecision(*precision));
      if (want != e->engine.options().precision) {
        Throw(absl::InvalidArgumentError(absl::StrCat(
            "Engine.load('", path, "'): precision ", *precision, " asked for, the engine file ",
            "was built with ", PrecisionName(e->engine.options().precision))));
      }
    }
    return e;
  }
  OnnxOptions onnx;
  onnx.input_shapes = shapes;
  const size_t slash = path.rfind('/');
  onnx.external_data_dir = slash == std::string::npos ? "." : path.substr(0, slash);
  // Import errors name the file, as `recq run` prints them.
  absl::StatusOr<Graph> graph = LoadOnnxFromBytes(bytes, onnx);
  if (!graph.ok()) {
    Throw(absl::Status(graph.status().code(), absl::StrCat(path, ": ", graph.status().message())));
  }
  const EngineOptions options = MakeEngineOptions(precision, tuning, kernel_target);
  return std::make_shared<PyEngine>(context,
                                    Value(Engine::Compile(context->context, *graph, options)));
}

struct PyBindingInfo {
  std::string name;
  std::vector<int64_t> shape;
  DataType dtype;
};

std::vector<PyBindingInfo> Infos(const std::vector<BindingInfo>& bindings) {
  std::vector<PyBindingInfo> out;
  for (const BindingInfo& b : bindings) out.push_back({b.name, b.desc.shape, b.desc.dtype});
  return out;
}

py::dict Stats(const Engine& engine) {
  const EngineStats& s = engine.stats();
  py::dict d;
  d["dispatches"] = s.dispatches;
  d["kernels_built"] = s.kernels_built;
  d["programs_from_disk"] = s.programs_from_disk;
  d["programs_from_file"] = s.programs_from_file;
  d["intermediate_bytes"] = s.intermediate_bytes;
  d["weight_bytes"] = s.weight_bytes;
  d["compile_ms"] = s.compile_ms;
  d["warmup_ms"] = s.warmup_ms;
  d["tuning_ms"] = s.tuning_ms;
  d["origin"] = EngineOriginName(s.origin);
  d["origin_reason"] = s.origin_reason;
  d["precision"] = PrecisionName(engine.options().precision);
  return d;
}

// ------------------------------------------------------------- recordings

// One run's memory: the bindings, the staging tensors of numpy bindings,
// the copies to enqueue around the recording, and the arrays they touch.
struct Prepared {
  Bindings bindings;
  std::vector<Tensor> staging;
  struct Copy {
    cl_mem mem;
    void* host;
    size_t bytes;
    std::string name;  // the binding's
  };
  std::vector<Copy> uploads;
  std::vector<Copy> downloads;
  std::vector<py::object> keep;                             // numpy arrays the copies read or write
  std::vector<std::pair<std::string, py::object>> outputs;  // returned by run / wait
  std::vector<std::shared_ptr<TensorState>> tensors;        // bound recq.Tensors
};

struct PyRecording {
  std::shared_ptr<PyEngine> engine;
  cl::UniqueQueue queue;               // this recording's own in-order queue
  std::optional<Recording> recording;  // destroyed first: it drains `queue`
  std::mutex mu;                       // serializes Enqueue calls
  // The device buffers that numpy bindings are copied through, one per
  // binding name, made at the first run and reused: runs that share one are
  // ordered by the recording's in-order queue (each run's upload, dispatches
  // and download follow the previous run's), and a buffer per run cost an
  // allocation and a rebinding every time.
  std::mutex staging_mu;
  std::map<std::string, Tensor> staging;

  // On a device that does not share host memory, numpy inputs go through
  // pinned host buffers: a numpy array is pageable memory, which the driver
  // first copies into its own staging before the DMA, on the enqueueing
  // thread. Copied into a persistently mapped CL_MEM_ALLOC_HOST_PTR buffer
  // instead, the write can DMA straight from it. Two per binding, used in
  // turn, each waiting for its previous write to finish before it is
  // overwritten. Guarded by `mu` (EnqueueRun).
  struct Pinned {
    cl::UniqueMem mem;
    void* ptr = nullptr;
    size_t bytes = 0;
    cl::UniqueEvent written;  // the last write that read `ptr`
  };
  bool pinned_uploads = false;
  std::map<std::string, std::pair<std::array<Pinned, 2>, int>> pinned;

  // PinnedFor returns the next pinned buffer of `name`, of `bytes`, after its
  // previous write completed; made (allocated and mapped) on first use.
  absl::StatusOr<Pinned*> PinnedFor(cl_command_queue q, const std::string& name, size_t bytes) {
    auto& [ring, next] = pinned[name];
    Pinned& p = ring[next];
    next = 1 - next;
    if (p.written) {
      cl_event e = p.written.get();
      RECQ_RETURN_IF_ERROR(cl::CheckCl(clWaitForEvents(1, &e), "clWaitForEvents"));
      p.written.reset();
    }
    if (p.bytes == bytes) return &p;
    if (p.mem) {
      RECQ_RETURN_IF_ERROR(
          cl::CheckCl(clEnqueueUnmapMemObject(q, p.mem.get(), p.ptr, 0, nullptr, nullptr),
                      "clEnqueueUnmapMemObject"));
      RECQ_RETURN_IF_ERROR(cl::CheckCl(clFinish(q), "clFinish"));
      p = Pinned{};
    }
    const Context& ctx = engine->context->context;
    cl_int err = CL_SUCCESS;
    p.mem.reset(clCreateBuffer(ctx.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                               nullptr, &err));
    RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)"));
    p.ptr = clEnqueueMapBuffer(q, p.mem.get(), CL_TRUE, CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr,
                               &err);
    RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clEnqueueMapBuffer"));
    p.bytes = bytes;
    return &p;
  }

  void UnmapPinned() {
    for (auto& [name, entry] : pinned) {
      for (Pinned& p : entry.first) {
        if (p.mem) clEnqueueUnmapMemObject(queue.get(), p.mem.get(), p.ptr, 0, nullptr, nullptr);
      }
    }
    if (!pinned.empty()) clFinish(queue.get());
    pinned.clear();
  }

  Tensor Staging(const Context& context, const std::string& name, const TensorDesc& desc) {
    std::lock_guard<std::mutex> lock(staging_mu);
    auto it = staging.find(name);
    if (it != staging.end() && it->second.desc() == desc) return it->second;
    Tensor t = Value(Tensor::Allocate(context, desc));
    staging[name] = t;
    return t;
  }

  ~PyRecording() {
    // Destroying the recording waits for its runs; never with the GIL held.
    if (recording.has_value() && PyGILState_Check()) {
      py::gil_scoped_release release;
      recording.reset();
      UnmapPinned();
    } else {
      recording.reset();
      UnmapPinned();
    }
  }
};

// pinned_uploads: None (the default) stages numpy inputs through pinned
// host buffers where the device does not share host memory; True or False
// forces it (True on PoCL exercises the same path the GPU takes).
std::shared_ptr<PyRecording> MakeRecording(const std::shared_ptr<PyEngine>& engine,
                                           const std::string& backend,
                                           std::optional<bool> pinned_uploads) {
  auto r = std::make_shared<PyRecording>();
  r->engine = engine;
  const Backend b = Value(ParseBackend(backend));
  py::gil_scoped_release release;
  const Context& ctx = engine->context->context;
  cl_int err = CL_SUCCESS;
  const cl_queue_properties props[] = {0};
  r->queue.reset(clCreateCommandQueueWithProperties(ctx.context(), ctx.device(), props, &err));
  Check(cl::CheckCl(err, "clCreateCommandQueueWithProperties"));
  r->recording.emplace(Value(engine->engine.Record({b})));
  r->pinned_uploads = pinned_uploads.value_or(!engine->context->host_unified);
  return r;
}

// Prepare turns a Python dict of bindings into a Prepared run; it raises
// (with nothing enqueued) on an unknown name, a missing input, a wrong
// dtype or shape, a tensor of another context, or a tensor with live host
// views. Needs the GIL.
std::unique_ptr<Prepared> Prepare(PyRecording& rec, const py::dict& feeds) {
  const Engine& engine = rec.engine->engine;
  const std::shared_ptr<PyContext>& context = rec.engine->context;
  auto p = std::make_unique<Prepared>();
  std::map<std::string, bool> bound;
  for (auto item : feeds) {
    if (!py::isinstance<py::str>(item.first)) {
      Throw(absl::InvalidArgumentError(
          absl::StrCat("bindings: keys must be binding names (str), got ",
                       Str(py::type::of(item.first).attr("__name__")))));
    }
    const std::string name = py::cast<std::string>(item.first);
    bool is_input = false;
    const BindingInfo* info = FindBinding(engine, name, &is_input);
    if (info == nullptr) {
      Throw(absl::InvalidArgumentError(absl::StrCat(
          "binding '", name, "' is not a binding of this engine; it has ", BindingNames(engine))));
    }
    if (info->preprocessed && info->memory != MemoryKind::kBuffer) {
      Throw(absl::UnimplementedError(
          absl::StrCat("binding '", name, "' (", info->Describe(),
                       ") binds an image; the Python API binds buffers only")));
    }
    const std::string what = absl::StrCat(is_input ? "input '" : "output '", name, "'");
    bound[name] = true;
    if (py::isinstance<PyTensor>(item.second)) {
      auto& t = py::cast<PyTensor&>(item.second);
      if (t.state->context->context.context() != context->context.context()) {
        Throw(absl::InvalidArgumentError(absl::StrCat(
            what, ": the tensor belongs to another context (device '",
            t.state->context->context.device_info().name,
            "'); make it with this engine's new_tensor() or Tensor.from_numpy(engine, ...)")));
      }
      if (t.state->tensor.desc() != info->desc) {
        Throw(absl::InvalidArgumentError(absl::StrCat(what, ": the tensor is ",
                                                      t.state->tensor.desc().ToString(),
                                                      ", expected ", info->desc.ToString())));
      }
      if (const int views = t.state->LiveViews(); views > 0) {
        Throw(absl::FailedPreconditionError(absl::StrCat(
            what, ": the tensor has ", views,
            " live host view(s) (numpy arrays or memoryviews over it, DLPack exports); OpenCL "
            "does not define a kernel's use of mapped memory, so release them (del) first")));
      }
      p->bindings.Set(name, t.state->tensor);
      p->tensors.push_back(t.state);
      continue;
    }
    if (!py::isinstance<py::array>(item.second)) {
      Throw(absl::InvalidArgumentError(
          absl::StrCat(what, ": expected a numpy array or a recq.Tensor, got ",
                       Str(py::type::of(item.second).attr("__name__")))));
    }
    py::array a = py::reinterpret_borrow<py::array>(item.second);
    CheckArray(a, what, info->desc);
    Tensor staging = rec.Staging(context->context, name, info->desc);
    if (is_input) {
      py::array c = py::array::ensure(a, py::array::c_style);
      p->uploads.push_back(
          {staging.mem(), const_cast<void*>(c.data()), info->desc.ByteSize(), name});
      p->keep.push_back(c);
    } else {
      if (!a.writeable() || !(a.flags() & py::array::c_style)) {
        Throw(absl::InvalidArgumentError(
            absl::StrCat(what, ": an output array must be writable and C-contiguous")));
      }
      p->downloads.push_back({staging.mem(), a.mutable_data(), info->desc.ByteSize(), name});
      p->keep.push_back(a);
      p->outputs.emplace_back(name, a);
    }
    p->bindings.Set(name, staging);
    p->staging.push_back(std::move(staging));
  }
  std::vector<std::string> missing;
  for (const BindingInfo& b : engine.inputs()) {
    if (!bound.count(b.name))
      missing.push_back(absl::StrCat("'", b.name, "' (", b.Describe(), ")"));
  }
  if (!missing.empty()) {
    Throw(absl::InvalidArgumentError(
        absl::StrCat("missing input(s) ", absl::StrJoin(missing, ", "))));
  }
  for (const BindingInfo& b : engine.outputs()) {
    if (bound.count(b.name)) continue;
    py::array a(NumpyDtype(b.desc.dtype), b.desc.shape);
    Tensor staging = rec.Staging(context->context, b.name, b.desc);
    p->downloads.push_back({staging.mem(), a.mutable_data(), b.desc.ByteSize(), b.name});
    p->keep.push_back(a);
    p->outputs.emplace_back(b.name, a);
    p->bindings.Set(b.name, staging);
    p->staging.push_back(std::move(staging));
  }
  return p;
}

// EnqueueRun enqueues the uploads, the recording and the downloads on the
// recording's queue and returns an event that completes with the last of
// them. Without the GIL. On failure it drains what it enqueued.
absl::StatusOr<cl_event> EnqueueRun(PyRecording& rec, Prepared& p) {
  std::lock_guard<std::mutex> lock(rec.mu);
  cl_command_queue q = rec.queue.get();
  auto fail = [&](absl::Status s) {
    cl::DrainQueue(q).IgnoreError();
    return s;
  };
  for (const Prepared::Copy& c : p.uploads) {
    const void* from = c.host;
    cl_event* written = nullptr;
    if (rec.pinned_uploads) {
      absl::StatusOr<PyRecording::Pinned*> pinned = rec.PinnedFor(q, c.name, c.bytes);
      if (!pinned.ok()) return fail(pinned.status());
      std::memcpy((*pinned)->ptr, c.host, c.bytes);
      from = (*pinned)->ptr;
      written = (*pinned)->written.out();
    }
    absl::Status s =
        cl::CheckCl(clEnqueueWriteBuffer(q, c.mem, CL_FALSE, 0, c.bytes, from, 0, nullptr, written),
                    "clEnqueueWriteBuffer");
    if (!s.ok()) return fail(s);
  }
  if (absl::Status s = rec.recording->Enqueue(q, p.bindings); !s.ok()) return fail(s);
  for (const Prepared::Copy& c : p.downloads) {
    absl::Status s = cl::CheckCl(
        clEnqueueReadBuffer(q, c.mem, CL_FALSE, 0, c.bytes, c.host, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
    if (!s.ok()) return fail(s);
  }
  cl_event done = nullptr;
  absl::Status s =
      cl::CheckCl(clEnqueueMarkerWithWaitList(q, 0, nullptr, &done), "clEnqueueMarkerWithWaitList");
  if (!s.ok()) return fail(s);
  s = cl::CheckCl(clFlush(q), "clFlush");
  if (!s.ok()) {
    clReleaseEvent(done);
    return fail(s);
  }
  return done;
}

absl::Status WaitEvent(cl_event event) {
  absl::Status s = cl::CheckCl(clWaitForEvents(1, &event), "clWaitForEvents");
  if (!s.ok()) return s;
  cl_int status = CL_COMPLETE;
  s = cl::CheckCl(
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
      "clGetEventInfo");
  if (!s.ok()) return s;
  if (status < 0) {
    return absl::InternalError(
        absl::StrCat("the run failed on the device: ", cl::ErrorName(status)));
  }
  return absl::OkStatus();
}

py::dict OutputsDict(Prepared& p) {
  py::dict out;
  for (auto& [name, array] : p.outputs) out[py::str(name)] = array;
  return out;
}

// RunHandle: one enqueued run.
struct RunHandle {
  std::shared_ptr<PyRecording> recording;
  std::unique_ptr<Prepared> prepared;
  cl::UniqueEvent done;
  bool waited = false;
  absl::Status status;

  void WaitNoGil() {
    if (waited) return;
    status = WaitEvent(done.get());
    waited = true;
  }

  ~RunHandle() {
    // The staging tensors and numpy arrays must outlive the run.
    if (!waited && done) {
      if (PyGILState_Check()) {
        py::gil_scoped_release release;
        WaitNoGil();
      } else {
        WaitNoGil();
      }
    }
  }
};

std::shared_ptr<RunHandle> Enqueue(const std::shared_ptr<PyRecording>& rec, const py::dict& feeds) {
  auto h = std::make_shared<RunHandle>();
  h->recording = rec;
  h->prepared = Prepare(*rec, feeds);
  absl::StatusOr<cl_event> done;
  {
    py::gil_scoped_release release;
    done = EnqueueRun(*rec, *h->prepared);
  }
  Check(done.status());
  h->done.reset(*done);
  return h;
}

py::dict Wait(RunHandle& h) {
  {
    py::gil_scoped_release release;
    h.WaitNoGil();
  }
  Check(h.status);
  return OutputsDict(*h.prepared);
}

py::dict Run(const std::shared_ptr<PyRecording>& rec, const py::dict& feeds) {
  std::shared_ptr<RunHandle> h = Enqueue(rec, feeds);
  return Wait(*h);
}

std::shared_ptr<PyRecording> DefaultRecording(const std::shared_ptr<PyEngine>& e) {
  std::lock_guard<std::mutex> lock(e->mu);
  if (!e->default_recording) e->default_recording = MakeRecording(e, "auto", std::nullopt);
  return e->default_recording;
}

std::shared_ptr<PyContext> ContextOf(const py::object& ctx_or_engine) {
  if (py::isinstance<PyContext>(ctx_or_engine)) {
    return py::cast<std::shared_ptr<PyContext>>(ctx_or_engine);
  }
  if (py::isinstance<PyEngine>(ctx_or_engine)) {
    return py::cast<std::shared_ptr<PyEngine>>(ctx_or_engine)->context;
  }
  Throw(
      absl::InvalidArgumentError(absl::StrCat("expected a recq.Context or a recq.Engine, got ",
                                              Str(py::type::of(ctx_or_engine).attr("__name__")))));
}

// ----------------------------------------------------------- shape profiles

// ProfileText turns Engine.load's `shapes` into the profile syntax of
// recq/shape_profile.h: a str is that syntax already; a dict maps each
// input to a sequence of ints (a fixed shape) or a str ("1x1..512/pow2").
std::string ProfileText(const py::object& shapes) {
  if (shapes.is_none()) return "";
  if (py::isinstance<py::str>(shapes)) return py::cast<std::string>(shapes);
  if (!py::isinstance<py::dict>(shapes)) {
    Throw(absl::InvalidArgumentError(
        absl::StrCat("shapes: expected a dict (input name -> shape or profile string) or a "
                     "profile string such as 'input_ids:1x1..512/pow2', got ",
                     Str(py::type::of(shapes).attr("__name__")))));
  }
  std::vector<std::string> parts;
  for (auto item : py::reinterpret_borrow<py::dict>(shapes)) {
    const std::string name = Str(item.first);
    if (py::isinstance<py::str>(item.second)) {
      parts.push_back(absl::StrCat(name, ":", py::cast<std::string>(item.second)));
      continue;
    }
    std::vector<int64_t> dims;
    try {
      dims = py::cast<std::vector<int64_t>>(item.second);
    } catch (const py::cast_error&) {
      Throw(absl::InvalidArgumentError(
          absl::StrCat("shapes['", name,
                       "']: expected a sequence of ints or a profile string "
                       "such as '1x1..512/pow2', got ",
                       Str(py::type::of(item.second).attr("__name__")))));
    }
    parts.push_back(absl::StrCat(name, ":", absl::StrJoin(dims, "x")));
  }
  return absl::StrJoin(parts, ",");
}

// PadValues reads Engine.load's `pad`: None, a dict (input -> number) or
// the CLI's "input_ids:0,attention_mask:0".
std::map<std::string, double> PadValues(const py::object& pad) {
  if (pad.is_none()) return {};
  if (py::isinstance<py::str>(pad)) return Value(ParsePadValues(py::cast<std::string>(pad)));
  try {
    return py::cast<std::map<std::string, double>>(pad);
  } catch (const py::cast_error&) {
    Throw(absl::InvalidArgumentError(
        absl::StrCat("pad: expected a dict (input name -> number) or 'input_ids:0,...', got ",
                     Str(py::type::of(pad).attr("__name__")))));
  }
}

py::tuple Tuple(const std::vector<int64_t>& v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = v[i];
  return t;
}

py::dict ShapesDict(const InputShapes& shapes) {
  py::dict d;
  for (const auto& [name, shape] : shapes) d[py::str(name)] = Tuple(shape);
  return d;
}

// PyShapedEngine: a recq::ShapedEngine, plus the symbolic dimension names
// (dim_param) of the model's inputs and outputs, which say which output
// dimensions follow a padded input dimension. ShapedEngine::Run returns
// the bucket's outputs; the binding slices them to the request's sizes.
struct PyShapedEngine {
  std::shared_ptr<PyContext> context;
  std::optional<ShapedEngine> engine;
  std::map<std::string, std::vector<std::string>> input_dims;   // dim_param per dimension
  std::map<std::string, std::vector<std::string>> output_dims;  // dim_param per dimension
  std::vector<std::string> output_order;
};

// ReadDimParams fills the dim_param names from the engine's model. The
// public OnnxModel lists its inputs' names only, so the outputs' come
// from the serialized ModelProto.
void ReadDimParams(PyShapedEngine& e) {
  const OnnxModel& model = e.engine->model();
  for (const OnnxModel::Input& in : model.inputs()) e.input_dims[in.name] = in.dim_params;
  onnx::ModelProto proto;
  if (!proto.ParseFromString(model.SerializeToBytes())) return;  // no slicing then
  for (const onnx::ValueInfoProto& out : proto.graph().output()) {
    std::vector<std::string> dims;
    for (const auto& d : out.type().tensor_type().shape().dim()) dims.push_back(d.dim_param());
    e.output_dims[out.name()] = std::move(dims);
    e.output_order.push_back(out.name());
  }
}

std::shared_ptr<PyShapedEngine> WrapShaped(const std::shared_ptr<PyContext>& context,
                                           ShapedEngine engine) {
  auto e = std::make_shared<PyShapedEngine>();
  e->context = context;
  e->engine.emplace(std::move(engine));
  ReadDimParams(*e);
  return e;
}

std::shared_ptr<PyShapedEngine> CreateShaped(const std::string& path, const std::string& bytes,
                                             const std::shared_ptr<PyContext>& context,
                                             const ShapeProfiles& profiles,
                                             std::map<std::string, double> pad, bool eager,
                                             const EngineOptions& options) {
  const size_t slash = path.rfind('/');
  absl::StatusOr<OnnxModel> model =
      OnnxModel::FromBytes(bytes, slash == std::string::npos ? "." : path.substr(0, slash));
  if (!model.ok()) {
    Throw(absl::Status(model.status().code(), absl::StrCat(path, ": ", model.status().message())));
  }
  OnnxOptions load;
  load.profiles = profiles;
  ShapedEngineOptions opts;
  opts.engine = options;
  opts.pad_values = std::move(pad);
  opts.eager = eager;
  return WrapShaped(context,
                    Value(ShapedEngine::Create(context->context, *std::move(model), load, opts)));
}

// ShapedRunPy runs numpy inputs of any in-profile shape: it validates
// everything (profile, names, dtypes) before enqueuing, runs the bucket
// (padding inside the engine) and returns each output sliced to the
// request's sizes along dimensions that carry a padded symbolic name.
py::dict ShapedRunPy(PyShapedEngine& e, const py::dict& feeds) {
  InputShapes shapes;
  std::vector<std::pair<std::string, py::array>> arrays;
  for (auto item : feeds) {
    if (!py::isinstance<py::str>(item.first)) {
      Throw(
          absl::InvalidArgumentError(absl::StrCat("inputs: keys must be input names (str), got ",
                                                  Str(py::type::of(item.first).attr("__name__")))));
    }
    const std::string name = py::cast<std::string>(item.first);
    if (!py::isinstance<py::array>(item.second)) {
      Throw(absl::InvalidArgumentError(
          absl::StrCat("input '", name, "': expected a numpy array, got ",
                       Str(py::type::of(item.second).attr("__name__")))));
    }
    py::array a = py::array::ensure(item.second, py::array::c_style);
    shapes[name] = std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
    arrays.emplace_back(name, a);
  }
  ShapedEngine& se = *e.engine;
  absl::StatusOr<Engine> bucket_engine;
  {
    py::gil_scoped_release release;
    // BucketFor names a size outside the profile, an unknown input, a
    // wrong rank or disagreeing tied sizes, before anything compiles.
    absl::StatusOr<InputShapes> bucket = se.BucketFor(shapes);
    if (!bucket.ok()) Throw(bucket.status());
    bucket_engine = se.EngineFor(shapes);
  }
  const Engine& be = Value(std::move(bucket_engine));
  std::vector<std::string> missing;
  for (const BindingInfo& b : be.inputs()) {
    if (!shapes.count(b.name))
      missing.push_back(absl::StrCat("'", b.name, "' (", b.Describe(), ")"));
  }
  if (!missing.empty()) {
    Throw(absl::InvalidArgumentError(
        absl::StrCat("missing input(s) ", absl::StrJoin(missing, ", "))));
  }
  Bindings bindings;
  std::vector<Tensor> tensors;
  std::vector<std::pair<const void*, size_t>> uploads;
  for (const auto& [name, a] : arrays) {
    const BindingInfo* info = nullptr;
    for (const BindingInfo& b : be.inputs()) {
      if (b.name == name) info = &b;
    }
    if (info == nullptr) {
      Throw(absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' is not an input of this engine")));
    }
    TensorDesc desc = info->desc;
    desc.shape = shapes[name];
    const py::dtype want = NumpyDtype(desc.dtype);
    if (!a.dtype().is(want) && !a.dtype().equal(want)) {
      Throw(absl::InvalidArgumentError(
          absl::StrCat("input '", name, "': got a numpy array of dtype ", Str(a.dtype()),
                       ", expected ", Str(want), "; convert it with .astype()")));
    }
    Tensor t = Value(Tensor::Allocate(e.context->context, desc));
    uploads.emplace_back(a.data(), desc.ByteSize());
    bindings.Set(name, t);
    tensors.push_back(std::move(t));
  }
  std::vector<std::pair<std::string, Tensor>> outputs;
  for (const BindingInfo& b : be.outputs()) {
    Tensor t = Value(Tensor::Allocate(e.context->context, b.desc));
    bindings.Set(b.name, t);
    outputs.emplace_back(b.name, std::move(t));
  }
  std::vector<std::vector<uint8_t>> host(outputs.size());
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < uploads.size(); ++i) {
      const auto* p = static_cast<const uint8_t*>(uploads[i].first);
      Check(tensors[i].UploadBytes(absl::Span<const uint8_t>(p, uploads[i].second)));
    }
    Value(se.Run(bindings, shapes));
    for (size_t i = 0; i < outputs.size(); ++i) host[i] = Value(outputs[i].second.DownloadBytes());
  }
  // The request's size of each symbolic dimension name.
  std::map<std::string, int64_t> sizes;
  for (const auto& [name, shape] : shapes) {
    auto it = e.input_dims.find(name);
    if (it == e.input_dims.end()) continue;
    for (size_t d = 0; d < it->second.size() && d < shape.size(); ++d) {
      if (!it->second[d].empty()) sizes[it->second[d]] = shape[d];
    }
  }
  py::dict out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorDesc& desc = outputs[i].second.desc();
    py::array a(NumpyDtype(desc.dtype), desc.shape);
    std::memcpy(a.mutable_data(), host[i].data(), host[i].size());
    auto dims = e.output_dims.find(outputs[i].first);
    bool sliced = false;
    py::tuple index(desc.shape.size());
    for (size_t d = 0; d < desc.shape.size(); ++d) {
      int64_t keep = desc.shape[d];
      if (dims != e.output_dims.end() && d < dims->second.size() && !dims->second[d].empty()) {
        auto s = sizes.find(dims->second[d]);
        if (s != sizes.end() && s->second < keep) {
          keep = s->second;
          sliced = true;
        }
      }
      index[d] = py::slice(0, keep, 1);
    }
    if (sliced) {
      out[py::str(outputs[i].first)] =
          py::module_::import("numpy").attr("ascontiguousarray")(a[index]);
    } else {
      out[py::str(outputs[i].first)] = a;
    }
  }
  return out;
}

py::dict ShapedStats(const ShapedEngine& engine) {
  const ShapedEngineStats s = engine.stats();
  py::dict d;
  d["weight_bytes_uploaded"] = s.weight_bytes_uploaded;
  d["weight_uploads"] = s.weight_uploads;
  d["weight_reuses"] = s.weight_reuses;
  py::list buckets;
  for (const BucketStats& b : s.buckets) {
    py::dict bd;
    bd["shapes"] = ShapesDict(b.shapes);
    py::dict outs;
    for (const BindingInfo& o : b.outputs) outs[py::str(o.name)] = Tuple(o.desc.shape);
    bd["outputs"] = outs;
    bd["weight_bytes"] = b.engine.weight_bytes;
    bd["weight_bytes_uploaded"] = b.weight_bytes_uploaded;
    bd["intermediate_bytes"] = b.engine.intermediate_bytes;
    bd["staging_bytes"] = b.staging_bytes;
    bd["memory_bytes"] = b.engine.intermediate_bytes + b.staging_bytes;
    bd["dispatches"] = b.engine.dispatches;
    bd["compile_ms"] = b.engine.compile_ms;
    bd["first_result_ms"] = b.first_result_ms;
    bd["runs"] = b.runs;
    bd["padded_runs"] = b.padded_runs;
    buckets.append(bd);
  }
  d["buckets"] = buckets;
  return d;
}

// --------------------------------------------------------------- generator

struct PyGenerator {
  std::shared_ptr<PyContext> context;
  std::optional<Generator> generator;
  std::string sampling;
  std::mutex mu;  // one generation at a time
};

struct PyGenerateResult {
  GenerateResult result;
};

std::shared_ptr<PyGenerator> LoadGenerator(const std::string& path, int64_t max_length,
                                           const std::shared_ptr<PyContext>& context,
                                           const std::string& sampling,
                                           const std::optional<std::string>& tuning) {
  GeneratorOptions options;
  options.max_length = max_length;
  options.sampling = Value(ParseSampling(sampling));
  if (tuning.has_value()) options.engine.tuning = Value(ParseTuning(*tuning));
  auto g = std::make_shared<PyGenerator>();
  g->context = context;
  g->sampling = SamplingName(options.sampling);
  py::gil_scoped_release release;
  absl::StatusOr<Graph> graph = LoadDecoderOnnx(path, max_length);
  if (!graph.ok()) {
    Throw(absl::Status(graph.status().code(), absl::StrCat(path, ": ", graph.status().message())));
  }
  g->generator.emplace(Value(Generator::Create(context->context, *graph, options)));
  return g;
}

PyGenerateResult GenerateIds(PyGenerator& g, const std::vector<int64_t>& prompt,
                             int64_t max_new_tokens, const std::optional<int64_t>& eos_id,
                             int64_t chunk, const py::object& on_chunk) {
  GenerateOptions o;
  o.max_new_tokens = max_new_tokens;
  o.eos_id = eos_id.value_or(-1);
  o.chunk = chunk;
  if (!on_chunk.is_none() && !PyCallable_Check(on_chunk.ptr())) {
    Throw(absl::InvalidArgumentError(
        absl::StrCat("on_chunk: expected a callable taking a list of ids, got ",
                     Str(py::type::of(on_chunk).attr("__name__")))));
  }
  // A raising callback stops further calls; its exception is raised once
  // the generation (which cannot be interrupted mid-chunk) returns.
  std::optional<py::error_already_set> failure;
  if (!on_chunk.is_none()) {
    o.on_chunk = [&](absl::Span<const int64_t> ids) {
      py::gil_scoped_acquire acquire;
      if (failure.has_value()) return;
      try {
        on_chunk(std::vector<int64_t>(ids.begin(), ids.end()));
      } catch (py::error_already_set& err) {
        failure.emplace(std::move(err));
      }
    };
  }
  absl::StatusOr<GenerateResult> r;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(g.mu);
    r = g.generator->Generate(prompt, o);
  }
  if (failure.has_value()) throw *failure;
  return PyGenerateResult{Value(std::move(r))};
}

double TokensPerSecond(int64_t tokens, double ms) { return ms > 0 ? tokens * 1000.0 / ms : 0.0; }

// Init defines the module's exceptions, functions and classes.
void Init(py::module_& m) {
  m.doc() = "recq's extension module; import the recq package instead.";

  // Exceptions: one recq.Error base, one subclass per status code.
  py::object error = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "recq.Error", "A failed recq status.", PyExc_RuntimeError, nullptr));
  g_error_base = error.ptr();
  m.attr("Error") = error;
  struct Named {
    absl::StatusCode code;
    const char* name;
    PyObject* also;
  };
  const Named codes[] = {
      {absl::StatusCode::kCancelled, "Cancelled", nullptr},
      {absl::StatusCode::kUnknown, "Unknown", nullptr},
      {absl::StatusCode::kInvalidArgument, "InvalidArgument", PyExc_ValueError},
      {absl::StatusCode::kDeadlineExceeded, "DeadlineExceeded", PyExc_TimeoutError},
      {absl::StatusCode::kNotFound, "NotFound", PyExc_LookupError},
      {absl::StatusCode::kAlreadyExists, "AlreadyExists", nullptr},
      {absl::StatusCode::kPermissionDenied, "PermissionDenied", PyExc_PermissionError},
      {absl::StatusCode::kResourceExhausted, "ResourceExhausted", PyExc_MemoryError},
      {absl::StatusCode::kFailedPrecondition, "FailedPrecondition", nullptr},
      {absl::StatusCode::kAborted, "Aborted", nullptr},
      {absl::StatusCode::kOutOfRange, "OutOfRange", nullptr},
      {absl::StatusCode::kUnimplemented, "Unimplemented", PyExc_NotImplementedError},
      {absl::StatusCode::kInternal, "Internal", nullptr},
      {absl::StatusCode::kUnavailable, "Unavailable", nullptr},
      {absl::StatusCode::kDataLoss, "DataLoss", nullptr},
      {absl::StatusCode::kUnauthenticated, "Unauthenticated", nullptr},
  };
  for (const Named& n : codes) {
    py::object bases = n.also != nullptr ? py::object(py::make_tuple(error, py::handle(n.also)))
                                         : py::object(py::make_tuple(error));
    py::object cls = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
        absl::StrCat("recq.", n.name).c_str(),
        absl::StrCat("A recq status with code ", absl::StatusCodeToString(n.code), ".").c_str(),
        bases.ptr(), nullptr));
    m.attr(n.name) = cls;
    ErrorClasses()[n.code] = cls.release().ptr();
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      auto it = ErrorClasses().find(e.status.code());
      PyObject* cls = it != ErrorClasses().end() ? it->second : g_error_base;
      PyErr_SetString(cls, std::string(e.status.message()).c_str());
    }
  });

  m.def("devices", &Devices,
        "Every OpenCL device of every platform, as `recq devices` lists them: dicts with "
        "selector ('cpu:0', 'gpu:1'...), platform_device ('P:D'), name, vendor, type, ...");

  py::class_<PyContext, std::shared_ptr<PyContext>>(m, "Context")
      .def(py::init(&MakeContext), py::arg("device") = "", py::arg("cache_dir") = "",
           "Opens a device: 'cpu:0', 'gpu:1', 'P:D', 'auto' or a name substring; '' means "
           "$RECQ_DEVICE, else auto. cache_dir: where program binaries persist ('' means "
           "$RECQ_CACHE_DIR, else ~/.cache/recq; 'off' disables).")
      .def_property_readonly("device",
                             [](const PyContext& c) {
                               return DeviceDict(c.context.device_info(), c.context.device());
                             })
      .def_property_readonly("host_unified_memory",
                             [](const PyContext& c) { return c.host_unified; })
      .def("flush_binary_cache", [](const PyContext& c) {
        py::gil_scoped_release release;
        c.context.FlushBinaryCache();
      });

  py::class_<PyBindingInfo>(m, "BindingInfo")
      .def_readonly("name", &PyBindingInfo::name)
      .def_property_readonly("shape",
                             [](const PyBindingInfo& b) {
                               py::tuple t(b.shape.size());
                               for (size_t i = 0; i < b.shape.size(); ++i) t[i] = b.shape[i];
                               return t;
                             })
      .def_property_readonly("dtype", [](const PyBindingInfo& b) { return NumpyDtype(b.dtype); })
      .def("__repr__", [](const PyBindingInfo& b) {
        return absl::StrCat("BindingInfo(name='", b.name, "', shape=", ShapeToString(b.shape),
                            ", dtype=", DataTypeName(b.dtype), ")");
      });

  py::class_<PyTensor, std::shared_ptr<PyTensor>> tensor(m, "Tensor", py::buffer_protocol());
  // The buffer protocol maps and unmaps (pybind11's def_buffer has no
  // release hook): replace the slots pybind11 installed on the heap type.
  {
    auto* heap = reinterpret_cast<PyHeapTypeObject*>(tensor.ptr());
    heap->as_buffer.bf_getbuffer = TensorGetBuffer;
    heap->as_buffer.bf_releasebuffer = TensorReleaseBuffer;
  }
  tensor
      .def_static(
          "from_numpy",
          [](const py::object& ctx_or_engine, const py::array& array) {
            return TensorFromNumpy(ContextOf(ctx_or_engine), array);
          },
          py::arg("context"), py::arg("array"),
          "A device tensor in the context (or the engine's context) holding a copy of `array`.")
      .def_static(
          "empty",
          [](const py::object& ctx_or_engine, const std::vector<int64_t>& shape,
             const py::object& dtype) {
            TensorDesc desc;
            desc.shape = shape;
            desc.dtype = Value(ParseDataType(Str(py::dtype::from_args(dtype))));
            return AllocateTensor(ContextOf(ctx_or_engine), desc);
          },
          py::arg("context"), py::arg("shape"), py::arg("dtype") = "float32",
          "An uninitialized device tensor.")
      .def_property_readonly("shape",
                             [](const PyTensor& t) {
                               const auto& s = t.state->tensor.desc().shape;
                               py::tuple out(s.size());
                               for (size_t i = 0; i < s.size(); ++i) out[i] = s[i];
                               return out;
                             })
      .def_property_readonly(
          "dtype", [](const PyTensor& t) { return NumpyDtype(t.state->tensor.desc().dtype); })
      .def_property_readonly("nbytes",
                             [](const PyTensor& t) { return t.state->tensor.desc().ByteSize(); })
      .def_property_readonly("host_views", [](const PyTensor& t) { return t.state->LiveViews(); })
      .def("numpy", &TensorToNumpy, "A copy of the tensor's contents (blocking).")
      .def("write", &TensorWrite, py::arg("array"),
           "Copies `array` (the tensor's dtype and shape) into the tensor (blocking).")
      .def("__dlpack__", &Dlpack, py::arg("stream") = py::none())
      .def("__dlpack_device__", &DlpackDevice)
      .def("__repr__", [](const PyTensor& t) {
        return absl::StrCat("recq.Tensor(", t.state->tensor.desc().ToString(), ")");
      });

  py::class_<RunHandle, std::shared_ptr<RunHandle>>(m, "RunHandle")
      .def("wait", &Wait,
           "Waits for the run (without the GIL) and returns its numpy outputs by name.")
      .def_property_readonly("done", [](const RunHandle& h) {
        if (h.waited) return true;
        cl_int status = CL_QUEUED;
        clGetEventInfo(h.done.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                       nullptr);
        return status <= CL_COMPLETE;
      });

  py::class_<PyRecording, std::shared_ptr<PyRecording>>(m, "Recording")
      .def("run", &Run, py::arg("bindings"),
           "Runs once with `bindings` (name -> numpy array or recq.Tensor) and waits. Returns the "
           "outputs not bound to a recq.Tensor as numpy arrays.")
      .def("enqueue", &Enqueue, py::arg("bindings"),
           "Enqueues one run on the recording's own queue; returns a RunHandle (wait()).")
      .def_property_readonly(
          "backend", [](const PyRecording& r) { return BackendName(r.recording->backend()); })
      .def_property_readonly("backend_reason",
                             [](const PyRecording& r) { return r.recording->backend_reason(); })
      .def_property_readonly("dispatch_count",
                             [](const PyRecording& r) { return r.recording->dispatch_count(); })
      .def_property_readonly("engine", [](const PyRecording& r) { return r.engine; })
      .def_property_readonly(
          "pinned_uploads", [](const PyRecording& r) { return r.pinned_uploads; },
          "Whether numpy inputs are staged through pinned host buffers (Engine.record).");

  py::class_<PyEngine, std::shared_ptr<PyEngine>>(m, "Engine")
      .def_static(
          "load",
          [](const std::string& path, const py::object& device,
             const std::optional<std::string>& precision, const py::object& shapes,
             const std::optional<std::string>& tuning, const std::string& kernel_target,
             const std::string& cache_dir, const py::object& pad, bool eager) -> py::object {
            std::shared_ptr<PyContext> context =
                py::isinstance<PyContext>(device)
                    ? py::cast<std::shared_ptr<PyContext>>(device)
                    : MakeContext(device.is_none() ? "" : py::cast<std::string>(device), cache_dir);
            const std::string text = ProfileText(shapes);
            ShapeProfiles profiles;
            if (!text.empty()) profiles = Value(ParseShapeProfiles(text));
            std::map<std::string, double> pads = PadValues(pad);
            std::string bytes;
            {
              py::gil_scoped_release release;
              bytes = Value(ReadFileBytes(path));
            }
            if (LooksLikeEngineFile(bytes)) {
              const EngineFileSummary summary = Value(SummarizeEngineFile(bytes));
              if (!summary.shape_profile.empty()) {
                if (!profiles.empty() || !pads.empty()) {
                  Throw(absl::InvalidArgumentError(absl::StrCat(
                      "Engine.load('", path, "'): shapes and pad apply to ONNX models; this ",
                      "engine file has its profile (", summary.shape_profile, ") and pad values")));
                }
                absl::StatusOr<ShapedEngine> loaded;
                {
                  py::gil_scoped_release release;
                  loaded = ShapedEngine::LoadFromBytes(context->context, bytes);
                }
                return py::cast(WrapShaped(context, Value(std::move(loaded))));
              }
              if (!pads.empty() || eager) {
                Throw(absl::InvalidArgumentError(
                    absl::StrCat("Engine.load('", path,
                                 "'): pad and eager apply to ONNX models and engine "
                                 "files with a shape profile; this engine file has fixed shapes")));
              }
            } else if (!profiles.empty() && (!IsFixed(profiles) || !pads.empty() || eager)) {
              const EngineOptions options = MakeEngineOptions(precision, tuning, kernel_target);
              std::shared_ptr<PyShapedEngine> shaped;
              {
                // The compile without the GIL; the Python object made with it.
                py::gil_scoped_release release;
                shaped =
                    CreateShaped(path, bytes, context, profiles, std::move(pads), eager, options);
              }
              return py::cast(shaped);
            } else if (!pads.empty()) {
              Throw(absl::InvalidArgumentError(absl::StrCat(
                  "Engine.load('", path, "'): pad needs shapes with a range to pad in, such as ",
                  "shapes={'input_ids': '1x1..512/pow2'}")));
            }
            std::map<std::string, std::vector<int64_t>> fixed;
            for (const auto& [name, dims] : profiles) {
              for (const DimProfile& d : dims) fixed[name].push_back(d.min);
            }
            return py::cast(
                LoadEngineFile(path, bytes, context, precision, fixed, tuning, kernel_target));
          },
          py::arg("path"), py::arg("device") = py::none(), py::arg("precision") = py::none(),
          py::arg("shapes") = py::none(), py::arg("tuning") = py::none(),
          py::arg("kernel_target") = "auto", py::arg("cache_dir") = "", py::arg("pad") = py::none(),
          py::arg("eager") = false,
          "Loads an ONNX model or an engine file. Fixed shapes (or none) give an Engine; shapes "
          "with a range ('1x1..512/pow2'), pad values, or an engine file saved by a "
          "ShapedEngine give a ShapedEngine (see docs/python.md).")
      .def(
          "save",
          [](const PyEngine& e, const std::string& path) {
            py::gil_scoped_release release;
            Check(e.engine.SerializeToFile(path));
          },
          py::arg("path"))
      .def_property_readonly("inputs", [](const PyEngine& e) { return Infos(e.engine.inputs()); })
      .def_property_readonly("outputs", [](const PyEngine& e) { return Infos(e.engine.outputs()); })
      .def_property_readonly("context", [](const PyEngine& e) { return e.context; })
      .def_property_readonly("stats", [](const PyEngine& e) { return Stats(e.engine); })
      .def_property_readonly("dispatches",
                             [](const PyEngine& e) { return e.engine.DispatchLabels(); })
      .def("record", &MakeRecording, py::arg("backend") = "auto",
           py::arg("pinned_uploads") = py::none())
      .def(
          "run",
          [](const std::shared_ptr<PyEngine>& e, const py::dict& feeds) {
            return Run(DefaultRecording(e), feeds);
          },
          py::arg("inputs"))
      .def(
          "new_tensor",
          [](const PyEngine& e, const std::string& name) {
            bool is_input = false;
            const BindingInfo* info = FindBinding(e.engine, name, &is_input);
            if (info == nullptr) {
              Throw(absl::NotFoundError(absl::StrCat("new_tensor('", name, "'): the engine has ",
                                                     BindingNames(e.engine))));
            }
            return AllocateTensor(e.context, info->desc);
          },
          py::arg("name"));

  py::class_<PyShapedEngine, std::shared_ptr<PyShapedEngine>>(m, "ShapedEngine")
      .def("run", &ShapedRunPy, py::arg("inputs"),
           "Runs numpy inputs of any shape inside the profile: picks the bucket (padding where "
           "pad values were given), runs its recording and returns the outputs sliced to the "
           "request's sizes along padded dimensions (the unpadded result).")
      .def(
          "bucket_for",
          [](const PyShapedEngine& e, const std::map<std::string, std::vector<int64_t>>& shapes) {
            py::gil_scoped_release release;
            InputShapes b = Value(e.engine->BucketFor(shapes));
            py::gil_scoped_acquire acquire;
            return ShapesDict(b);
          },
          py::arg("shapes"), "The bucket's input shapes for inputs of `shapes` (name -> shape).")
      .def(
          "buckets",
          [](const PyShapedEngine& e, size_t limit) {
            std::vector<InputShapes> all = Value(e.engine->ListBuckets(limit));
            py::list out;
            for (const InputShapes& b : all) out.append(ShapesDict(b));
            return out;
          },
          py::arg("limit") = 256, "Every bucket of the profile, compiled or not.")
      .def(
          "save",
          [](PyShapedEngine& e, const std::string& path) {
            py::gil_scoped_release release;
            Check(e.engine->SerializeToFile(path));
          },
          py::arg("path"), "Compiles every bucket and writes one engine file.")
      .def_property_readonly("profile",
                             [](const PyShapedEngine& e) {
                               py::dict d;
                               for (const auto& [name, p] : e.engine->profiles()) {
                                 d[py::str(name)] = InputProfileToString(p);
                               }
                               return d;
                             })
      .def_property_readonly(
          "max_shapes", [](const PyShapedEngine& e) { return ShapesDict(e.engine->MaxShapes()); })
      .def_property_readonly("input_names",
                             [](const PyShapedEngine& e) {
                               std::vector<std::string> names;
                               for (const auto& in : e.engine->model().inputs()) {
                                 names.push_back(in.name);
                               }
                               return names;
                             })
      .def_property_readonly("output_names", [](const PyShapedEngine& e) { return e.output_order; })
      .def_property_readonly("context", [](const PyShapedEngine& e) { return e.context; })
      .def_property_readonly("stats",
                             [](const PyShapedEngine& e) { return ShapedStats(*e.engine); });

  py::class_<PyGenerateResult>(m, "GenerateResult")
      .def_property_readonly("ids", [](const PyGenerateResult& r) { return r.result.tokens; })
      .def_property_readonly(
          "stop", [](const PyGenerateResult& r) { return StopReasonName(r.result.stop); })
      .def_property_readonly("stop_detail",
                             [](const PyGenerateResult& r) { return r.result.stop_detail; })
      .def_property_readonly("prompt_tokens",
                             [](const PyGenerateResult& r) { return r.result.prompt_tokens; })
      .def_property_readonly("steps", [](const PyGenerateResult& r) { return r.result.steps; })
      .def_property_readonly("chunks", [](const PyGenerateResult& r) { return r.result.chunks; })
      .def_property_readonly("prefill_ms",
                             [](const PyGenerateResult& r) { return r.result.prefill_ms; })
      .def_property_readonly("decode_ms",
                             [](const PyGenerateResult& r) { return r.result.decode_ms; })
      .def_property_readonly("token_ms",
                             [](const PyGenerateResult& r) { return r.result.token_ms; })
      .def_property_readonly("prefill_tokens_per_s",
                             [](const PyGenerateResult& r) {
                               return TokensPerSecond(r.result.prompt_tokens, r.result.prefill_ms);
                             })
      .def_property_readonly("decode_tokens_per_s",
                             [](const PyGenerateResult& r) {
                               const int64_t n = static_cast<int64_t>(r.result.tokens.size()) - 1;
                               return TokensPerSecond(n > 0 ? n : 0, r.result.decode_ms);
                             })
      .def("__len__", [](const PyGenerateResult& r) { return r.result.tokens.size(); })
      .def("__repr__", [](const PyGenerateResult& r) {
        return absl::StrCat("GenerateResult(ids=[", absl::StrJoin(r.result.tokens, ", "),
                            "], stop='", StopReasonName(r.result.stop), "')");
      });

  py::class_<PyGenerator, std::shared_ptr<PyGenerator>>(m, "Generator")
      .def_static(
          "load",
          [](const std::string& path, int64_t max_length, const py::object& device,
             const std::string& sampling, const std::optional<std::string>& tuning,
             const std::string& cache_dir) {
            std::shared_ptr<PyContext> context =
                py::isinstance<PyContext>(device)
                    ? py::cast<std::shared_ptr<PyContext>>(device)
                    : MakeContext(device.is_none() ? "" : py::cast<std::string>(device), cache_dir);
            return LoadGenerator(path, max_length, context, sampling, tuning);
          },
          py::arg("path"), py::arg("max_length") = 128, py::arg("device") = py::none(),
          py::arg("sampling") = "greedy", py::arg("tuning") = py::none(), py::arg("cache_dir") = "",
          "Loads a decoder exported with past key/values (GPT-2 style) for prompts and "
          "generations of at most max_length tokens together.")
      .def("generate", &GenerateIds, py::arg("prompt_ids"), py::arg("max_new_tokens") = 32,
           py::arg("eos_id") = py::none(), py::arg("chunk") = 16, py::arg("on_chunk") = py::none(),
           "Decodes after `prompt_ids`; returns a GenerateResult (ids and timings). on_chunk "
           "is called with each chunk's new ids.")
      .def(
          "reset",
          [](PyGenerator& g) {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(g.mu);
            Check(g.generator->Reset());
          },
          "Zeroes the KV cache and the state (generate does it first).")
      .def_property_readonly("max_length",
                             [](const PyGenerator& g) { return g.generator->max_length(); })
      .def_property_readonly("vocab", [](const PyGenerator& g) { return g.generator->vocab(); })
      .def_property_readonly("kv_cache_bytes",
                             [](const PyGenerator& g) { return g.generator->kv_cache_bytes(); })
      .def_property_readonly("sampling", [](const PyGenerator& g) { return g.sampling; })
      .def_property_readonly("context", [](const PyGenerator& g) { return g.context; });
}

}  // namespace
}  // namespace recq::python

PYBIND11_MODULE(_recq, m) { recq::python::Init(m); }
