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
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/engine_file.h"
#include "recq/onnx.h"
#include "recq/recording.h"
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

std::shared_ptr<PyEngine> LoadEngineFile(const std::string& path,
                                         const std::shared_ptr<PyContext>& context,
                                         const std::optional<std::string>& precision,
                                         const std::map<std::string, std::vector<int64_t>>& shapes,
                                         const std::optional<std::string>& tuning,
                                         const std::string& kernel_target) {
  py::gil_scoped_release release;
  std::string bytes = Value(ReadFileBytes(path));
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

  ~PyRecording() {
    // Destroying the recording waits for its runs; never with the GIL held.
    if (recording.has_value() && PyGILState_Check()) {
      py::gil_scoped_release release;
      recording.reset();
    } else {
      recording.reset();
    }
  }
};

std::shared_ptr<PyRecording> MakeRecording(const std::shared_ptr<PyEngine>& engine,
                                           const std::string& backend) {
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
    Tensor staging = Value(Tensor::Allocate(context->context, info->desc));
    if (is_input) {
      py::array c = py::array::ensure(a, py::array::c_style);
      p->uploads.push_back({staging.mem(), const_cast<void*>(c.data()), info->desc.ByteSize()});
      p->keep.push_back(c);
    } else {
      if (!a.writeable() || !(a.flags() & py::array::c_style)) {
        Throw(absl::InvalidArgumentError(
            absl::StrCat(what, ": an output array must be writable and C-contiguous")));
      }
      p->downloads.push_back({staging.mem(), a.mutable_data(), info->desc.ByteSize()});
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
    Tensor staging = Value(Tensor::Allocate(context->context, b.desc));
    p->downloads.push_back({staging.mem(), a.mutable_data(), b.desc.ByteSize()});
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
    absl::Status s = cl::CheckCl(
        clEnqueueWriteBuffer(q, c.mem, CL_FALSE, 0, c.bytes, c.host, 0, nullptr, nullptr),
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
  if (!e->default_recording) e->default_recording = MakeRecording(e, "auto");
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
      .def_property_readonly("engine", [](const PyRecording& r) { return r.engine; });

  py::class_<PyEngine, std::shared_ptr<PyEngine>>(m, "Engine")
      .def_static(
          "load",
          [](const std::string& path, const py::object& device,
             const std::optional<std::string>& precision,
             const std::optional<std::map<std::string, std::vector<int64_t>>>& shapes,
             const std::optional<std::string>& tuning, const std::string& kernel_target,
             const std::string& cache_dir) {
            std::shared_ptr<PyContext> context =
                py::isinstance<PyContext>(device)
                    ? py::cast<std::shared_ptr<PyContext>>(device)
                    : MakeContext(device.is_none() ? "" : py::cast<std::string>(device), cache_dir);
            return LoadEngineFile(path, context, precision,
                                  shapes.value_or(std::map<std::string, std::vector<int64_t>>{}),
                                  tuning, kernel_target);
          },
          py::arg("path"), py::arg("device") = py::none(), py::arg("precision") = py::none(),
          py::arg("shapes") = py::none(), py::arg("tuning") = py::none(),
          py::arg("kernel_target") = "auto", py::arg("cache_dir") = "")
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
      .def("record", &MakeRecording, py::arg("backend") = "auto")
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
}

}  // namespace
}  // namespace recq::python

PYBIND11_MODULE(_recq, m) { recq::python::Init(m); }
