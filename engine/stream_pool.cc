#include "recq/stream_pool.h"

#include <chrono>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "backends/opencl/cl_error.h"
#include "backends/opencl/cl_handle.h"
#include "recq/log.h"
#include "recq/status_macros.h"

namespace recq {

namespace {

// DefaultType is the type "all" and bare indices refer to: GPU when the
// machine has one, else CPU, else whatever the first device is.
std::string DefaultType(absl::Span<const DeviceListing> devices) {
  for (const char* type : {"gpu", "cpu"}) {
    for (const DeviceListing& d : devices) {
      if (DeviceTypeName(d.info.type) == absl::string_view(type)) return type;
    }
  }
  return devices.empty() ? "gpu" : DeviceTypeName(devices.front().info.type);
}

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ResolveDevices(absl::string_view list,
                                                        absl::Span<const DeviceListing> devices) {
  std::vector<std::string> out;
  const std::string type = DefaultType(devices);
  size_t of_type = 0;
  for (const DeviceListing& d : devices) of_type += DeviceTypeName(d.info.type) == type;
  for (absl::string_view raw : absl::StrSplit(list, ',')) {
    absl::string_view item = absl::StripAsciiWhitespace(raw);
    if (item.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device list '", list, "' has an empty item; expected 'all' or comma-separated ",
          "indices (0,1) or device specs (gpu:1, 0:1, a name)"));
    }
    if (absl::AsciiStrToLower(item) == "all") {
      for (const DeviceListing& d : devices) {
        if (DeviceTypeName(d.info.type) == type) out.push_back(d.selector);
      }
      if (of_type == 0) return absl::NotFoundError("device list 'all': no OpenCL device found");
      continue;
    }
    if (AllDigits(item)) {
      if (item.size() > 9 || std::stoul(std::string(item)) >= of_type) {
        return absl::NotFoundError(
            absl::StrCat("device list '", list, "': index ", item, " is out of range; there ",
                         of_type == 1 ? "is 1 " : absl::StrCat("are ", of_type, " "), type,
                         " device", of_type == 1 ? "" : "s", " (bare indices count ", type,
                         " devices, as ", type, ":N does)"));
      }
      out.push_back(absl::StrCat(type, ":", item));
      continue;
    }
    out.emplace_back(item);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ResolveDevices(absl::string_view list) {
  RECQ_ASSIGN_OR_RETURN(std::vector<DeviceListing> devices, ListDevices());
  return ResolveDevices(list, devices);
}

StreamPool::Stream::~Stream() {
  if (queue_ != nullptr) clReleaseCommandQueue(queue_);
}

const Tensor* StreamPool::Stream::tensor(absl::string_view name) const {
  for (const auto& [n, t] : tensors_) {
    if (n == name) return &t;
  }
  return nullptr;
}

StreamPool::Lease::~Lease() {
  if (stream_ != nullptr) pool_->Release(stream_);
}

absl::StatusOr<std::unique_ptr<StreamPool>> StreamPool::Create(const Graph& graph,
                                                               const StreamPoolOptions& options) {
  if (options.streams_per_device < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "StreamPool: streams_per_device must be at least 1, got ", options.streams_per_device));
  }
  std::vector<std::string> devices = options.devices;
  if (devices.empty()) devices.push_back("");
  std::unique_ptr<StreamPool> pool(new StreamPool);
  for (size_t d = 0; d < devices.size(); ++d) {
    auto prefix = [&](const absl::Status& s) {
      return absl::Status(
          s.code(), absl::StrCat("StreamPool device ", d, " ('", devices[d], "'): ", s.message()));
    };
    ContextOptions context_options;
    context_options.device = devices[d];
    context_options.cache_dir = options.cache_dir;
    absl::StatusOr<Context> context = Context::Create(context_options);
    if (!context.ok()) return prefix(context.status());
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Engine> engine = Engine::Compile(*context, graph, options.engine);
    if (!engine.ok()) return prefix(engine.status());
    Log(LogLevel::kInfo, absl::StrFormat("StreamPool: compiled for device %zu/%zu '%s' in %.0f ms",
                                         d + 1, devices.size(), context->device_info().name,
                                         std::chrono::duration<double, std::milli>(
                                             std::chrono::steady_clock::now() - start)
                                             .count()));
    pool->engines_.push_back(*std::move(engine));
  }
  // Streams interleave devices: stream i is on device i % device_count.
  for (int s = 0; s < options.streams_per_device; ++s) {
    for (size_t d = 0; d < pool->engines_.size(); ++d) {
      const Engine& engine = pool->engines_[d];
      size_t index = pool->streams_.size();
      auto prefix = [&](const absl::Status& st) {
        return absl::Status(st.code(), absl::StrCat("StreamPool stream ", index, " (device ", d,
                                                    "): ", st.message()));
      };
      cl_int err = CL_SUCCESS;
      cl::UniqueQueue queue(clCreateCommandQueueWithProperties(
          engine.context().context(), engine.context().device(), nullptr, &err));
      if (absl::Status st = cl::CheckCl(err, "clCreateCommandQueueWithProperties"); !st.ok()) {
        return prefix(st);
      }
      absl::StatusOr<Recording> recording = engine.Record(options.record);
      if (!recording.ok()) return prefix(recording.status());
      std::unique_ptr<Stream> stream(
          new Stream(index, d, engine, *std::move(recording), queue.release()));
      for (const std::vector<BindingInfo>* list : {&engine.inputs(), &engine.outputs()}) {
        for (const BindingInfo& b : *list) {
          absl::StatusOr<Tensor> t = Tensor::Allocate(engine.context(), b.desc);
          if (!t.ok()) return prefix(t.status());
          stream->bindings_.Set(b.name, *t);
          stream->tensors_.emplace_back(b.name, *std::move(t));
        }
      }
      pool->free_.push_back(stream.get());
      pool->streams_.push_back(std::move(stream));
    }
  }
  // One run of every stream, one after another, on zeroed inputs: drivers
  // that build a kernel's code at its first enqueue (PoCL, per local size) do
  // so here, not in the first requests; and PoCL 3.1 can abort
  // (pocl_release_dlhandle_cache: ref_count assertion) when several threads
  // make those first enqueues of one kernel at once.
  for (const std::unique_ptr<Stream>& s : pool->streams_) {
    auto prefix = [&](const absl::Status& st) {
      return absl::Status(
          st.code(), absl::StrCat("StreamPool stream ", s->index(), " first run: ", st.message()));
    };
    for (const BindingInfo& b : s->engine().inputs()) {
      Tensor t = *s->tensor(b.name);
      const uint8_t zero = 0;  // zeros of any element type (a u8 camera frame too)
      if (absl::Status st = t.FillBytes(&zero, 1); !st.ok()) return prefix(st);
    }
    if (absl::Status st = s->recording().Enqueue(s->queue(), s->bindings()); !st.ok()) {
      return prefix(st);
    }
    if (absl::Status st = cl::CheckCl(clFinish(s->queue()), "clFinish"); !st.ok()) {
      return prefix(st);
    }
  }
  return pool;
}

StreamPool::Lease StreamPool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  free_cv_.wait(lock, [&] { return !free_.empty(); });
  Stream* stream = free_.front();
  free_.pop_front();
  return Lease(this, stream);
}

void StreamPool::Release(Stream* stream) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(stream);
  }
  free_cv_.notify_one();
}

absl::StatusOr<std::map<std::string, std::vector<float>>> StreamPool::Infer(
    const std::map<std::string, absl::Span<const float>>& inputs) {
  const Engine& engine = engines_.front();
  for (const auto& [name, data] : inputs) {
    bool known = false;
    for (const BindingInfo& b : engine.inputs()) {
      if (b.name != name) continue;
      known = true;
      if (b.desc.dtype != DataType::kFloat32) {
        return absl::InvalidArgumentError(
            absl::StrCat("StreamPool::Infer: input '", name, "' is ", b.desc.ToString(),
                         "; Infer takes float32 inputs only (bind Stream::tensor instead)"));
      }
      if (data.size() != static_cast<size_t>(b.desc.NumElements())) {
        return absl::InvalidArgumentError(absl::StrCat("StreamPool::Infer: input '", name, "' has ",
                                                       data.size(), " floats; ", b.desc.ToString(),
                                                       " needs ", b.desc.NumElements()));
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("StreamPool::Infer: the model has no input '", name, "'"));
    }
  }
  for (const BindingInfo& b : engine.inputs()) {
    if (inputs.count(b.name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("StreamPool::Infer: input '", b.name, "' (",
                                                     b.desc.ToString(), ") is missing"));
    }
  }
  Lease stream = Acquire();
  cl_command_queue queue = stream->queue();
  std::map<std::string, std::vector<float>> outputs;
  absl::Status status = [&]() -> absl::Status {
    for (const auto& [name, data] : inputs) {
      // Non-blocking: the blocking reads below complete after it on this
      // in-order queue, while `data` is still alive.
      RECQ_RETURN_IF_ERROR(cl::CheckCl(
          clEnqueueWriteBuffer(queue, stream->tensor(name)->mem(), CL_FALSE, 0,
                               data.size() * sizeof(float), data.data(), 0, nullptr, nullptr),
          absl::StrCat("clEnqueueWriteBuffer(input '", name, "')")));
    }
    RECQ_RETURN_IF_ERROR(stream->recording().Enqueue(queue, stream->bindings()));
    for (const BindingInfo& b : engine.outputs()) {
      std::vector<float> data(b.desc.NumElements());
      RECQ_RETURN_IF_ERROR(cl::CheckCl(
          clEnqueueReadBuffer(queue, stream->tensor(b.name)->mem(), CL_TRUE, 0,
                              data.size() * sizeof(float), data.data(), 0, nullptr, nullptr),
          absl::StrCat("clEnqueueReadBuffer(output '", b.name, "')")));
      outputs.emplace(b.name, std::move(data));
    }
    return absl::OkStatus();
  }();
  if (!status.ok()) {
    // Nothing enqueued may still read the caller's input memory.
    cl::DrainQueue(queue).IgnoreError();
    return status;
  }
  return outputs;
}

}  // namespace recq
