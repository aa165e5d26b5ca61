// StreamPool: one model compiled for several devices, with several streams
// per device, shared by the threads of one process.
//
//   Graph graph = LoadOnnx("model.onnx").value();              // parsed once
//   StreamPoolOptions options;
//   options.devices = ResolveDevices("all").value();           // {"gpu:0", "gpu:1"}
//   options.streams_per_device = 4;
//   std::unique_ptr<StreamPool> pool = StreamPool::Create(graph, options).value();
//   // from any number of threads, each request on the next free stream:
//   auto outputs = pool->Infer({{"input", pixels}});           // host floats in and out
//   // or zero-copy, on the stream's own queue, recording and tensors:
//   StreamPool::Lease s = pool->Acquire();
//   s->recording().Enqueue(s->queue(), s->bindings(), {}, &done);
//
// Create compiles the graph once per entry of `devices` (each entry gets its
// own Context and Engine, so a device named twice is driven as two devices:
// that is how one PoCL CPU stands in for several GPUs in the tests) and
// records it `streams_per_device` times per engine. A stream is one Recording
// with its own in-order queue and its own tensor for every engine input and
// output, so the streams of one device run concurrently. Create runs every
// stream once, one after another, on zeroed inputs, so that drivers that
// build kernel code at the first enqueue do it before the first request. Streams are ordered
// device by device in turn (stream i is on device i % device_count()), and
// Acquire hands out the free stream that has waited longest, which spreads
// requests over devices x streams.
//
// Thread-safety: Acquire and Infer may be called from any number of threads.
// A Lease gives its holder the stream alone until the lease is destroyed.
// stream(i) bypasses the leases, for callers that give each thread its own
// stream (recq bench does). The pool must outlive its leases.
#ifndef RECQ_STREAM_POOL_H_
#define RECQ_STREAM_POOL_H_

#include <CL/cl.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "recq/bindings.h"
#include "recq/context.h"
#include "recq/engine.h"
#include "recq/graph.h"
#include "recq/recording.h"
#include "recq/tensor.h"

namespace recq {

// ResolveDevices turns a device list as `recq bench --devices` takes it into
// device specs for ContextOptions::device. Items are comma-separated:
//   "all"        every device of the default type (every GPU if there is
//                one, else every CPU), e.g. {"gpu:0", "gpu:1"};
//   "N"          the N-th device of the default type ("gpu:N" or "cpu:N");
//   other text   a device spec as is ("gpu:1", "0:1", "cpu:0", a name).
// A device may be named more than once. InvalidArgument for an empty list or
// item; NotFound (naming how many devices exist) for an index out of range.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ResolveDevices(absl::string_view list);
// The same against a device listing already made (tests, tools).
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ResolveDevices(
    absl::string_view list, absl::Span<const DeviceListing> devices);

struct StreamPoolOptions {
  // Device specs (see ContextOptions::device), one Context and Engine each.
  // Empty means one entry "" (RECQ_DEVICE, else auto).
  std::vector<std::string> devices;
  int streams_per_device = 1;
  EngineOptions engine;
  RecordOptions record;
  std::string cache_dir{};  // see ContextOptions::cache_dir
};

class StreamPool {
 public:
  // One recording with its own in-order queue and tensors.
  class Stream {
   public:
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream();

    size_t index() const { return index_; }
    // device is the position in StreamPoolOptions::devices.
    size_t device() const { return device_; }
    const Context& context() const { return engine_.context(); }
    const Engine& engine() const { return engine_; }
    Recording& recording() { return recording_; }
    // queue is the stream's own in-order queue (owned by the stream).
    cl_command_queue queue() const { return queue_; }
    // bindings binds every engine input and output to the stream's tensors.
    const Bindings& bindings() const { return bindings_; }
    // tensor returns the stream's tensor for binding `name`, or nullptr.
    const Tensor* tensor(absl::string_view name) const;

   private:
    friend class StreamPool;
    Stream(size_t index, size_t device, Engine engine, Recording recording, cl_command_queue queue)
        : index_(index),
          device_(device),
          engine_(std::move(engine)),
          recording_(std::move(recording)),
          queue_(queue) {}

    size_t index_;
    size_t device_;
    Engine engine_;
    Recording recording_;
    cl_command_queue queue_;  // owned: released by the destructor
    Bindings bindings_;
    std::vector<std::pair<std::string, Tensor>> tensors_;
  };

  // Lease: exclusive use of one stream; gives it back when destroyed.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), stream_(other.stream_) {
      other.stream_ = nullptr;
    }
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    ~Lease();
    Stream* operator->() const { return stream_; }
    Stream& operator*() const { return *stream_; }

   private:
    friend class StreamPool;
    Lease(StreamPool* pool, Stream* stream) : pool_(pool), stream_(stream) {}
    StreamPool* pool_;  // not owned
    Stream* stream_;    // not owned; null after a move
  };

  // Create compiles `graph` for every device and records every stream.
  // Errors: those of Context::Create, Engine::Compile and Engine::Record,
  // prefixed with the device entry; InvalidArgument for streams_per_device < 1.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<StreamPool>> Create(
      const Graph& graph, const StreamPoolOptions& options);

  StreamPool(const StreamPool&) = delete;
  StreamPool& operator=(const StreamPool&) = delete;

  size_t device_count() const { return engines_.size(); }
  size_t stream_count() const { return streams_.size(); }
  // engine returns the engine of device entry `device`.
  const Engine& engine(size_t device) const { return engines_[device]; }
  Stream& stream(size_t i) { return *streams_[i]; }

  // Acquire blocks until a stream is free and leases it.
  Lease Acquire();

  // Infer runs one request on the next free stream: writes every input
  // (host float32, by binding name, exactly the input's element count) into
  // the stream's tensors, runs the recording, and returns every output by
  // name. Errors: InvalidArgument for a missing, unknown or wrongly sized
  // input; OpenCL failures naming the call.
  [[nodiscard]] absl::StatusOr<std::map<std::string, std::vector<float>>> Infer(
      const std::map<std::string, absl::Span<const float>>& inputs);

 private:
  StreamPool() = default;
  void Release(Stream* stream);

  std::vector<Engine> engines_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::mutex mu_;
  std::condition_variable free_cv_;
  std::deque<Stream*> free_;  // guarded by mu_
};

}  // namespace recq

#endif  // RECQ_STREAM_POOL_H_
