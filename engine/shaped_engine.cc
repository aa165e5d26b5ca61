// ShapedEngine: buckets of ordinary engines over one parsed model, sharing
// weights through a WeightCache, and the padding of inputs into them.
#include "recq/shaped_engine.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/opencl/cl_error.h"
#include "backends/opencl/cl_handle.h"
#include "engine/engine_file.pb.h"
#include "engine/engine_file/archive.h"
#include "engine/engine_file/load_state.h"
#include "engine/engine_file/verifier.h"
#include "engine/engine_state.h"
#include "engine/weight_cache.h"
#include "recq/engine_file.h"
#include "recq/status_macros.h"

namespace recq {
namespace {

namespace pb = ::recq::engine_file;
using internal::MsSince;

std::string ShapesToString(const InputShapes& shapes) {
  return absl::StrJoin(shapes, ", ", [](std::string* out, const auto& entry) {
    absl::StrAppend(out, entry.first, ":", ShapeToString(entry.second));
  });
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// One dimension of an input.
struct DimRef {
  std::string input;
  size_t dim = 0;
};

// Dimensions that are one: ranged dimensions of one symbolic name in the
// model (or a ranged dimension without a name, alone).
struct DimGroup {
  std::string label;  // "'sequence'" or "input_ids[1]"
  DimProfile profile;
  std::vector<DimRef> members;
  bool padded = false;
};

}  // namespace

struct ShapedEngine::State {
  Context context;
  OnnxModel model;
  OnnxOptions load;  // profiles cleared: each bucket sets input_shapes
  ShapedEngineOptions options;
  ShapeProfiles profiles;
  std::vector<DimGroup> groups;
  // (input, dim) -> index in groups, for ranged dimensions.
  std::map<std::pair<std::string, size_t>, size_t> group_of;
  std::shared_ptr<internal::WeightCache> weights = std::make_shared<internal::WeightCache>();

  struct Bucket {
    InputShapes shapes;
    std::optional<Engine> engine;
    std::optional<Recording> recording;
    std::mutex run_mu;
    std::map<std::string, cl::UniqueMem> staging;  // guarded by run_mu
    cl::UniqueEvent last_done;                     // guarded by run_mu
    BucketStats stats;                             // guarded by run_mu
  };
  mutable std::mutex mu;
  std::map<InputShapes, std::shared_ptr<Bucket>> buckets;  // guarded by mu
  std::vector<std::shared_ptr<Bucket>> order;              // guarded by mu

  State(Context c, OnnxModel m) : context(std::move(c)), model(std::move(m)) {}

  absl::StatusOr<InputShapes> BucketFor(const InputShapes& shapes) const;
  // GetBucket returns the bucket of `bucket_shapes`, compiling it if new
  // (`*compiled` says whether it did).
  absl::StatusOr<std::shared_ptr<Bucket>> GetBucket(const InputShapes& bucket_shapes,
                                                    bool* compiled);
  // AddBucket records `engine` and keeps it as the bucket of
  // `bucket_shapes`. Needs `mu` held.
  absl::StatusOr<std::shared_ptr<Bucket>> AddBucket(const InputShapes& bucket_shapes, Engine engine,
                                                    std::chrono::steady_clock::time_point start,
                                                    size_t uploaded_before);
};

namespace {

const OnnxModel::Input* FindInput(const OnnxModel& model, const std::string& name) {
  for (const OnnxModel::Input& in : model.inputs()) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

std::string InputNames(const OnnxModel& model) {
  std::vector<std::string> names;
  for (const OnnxModel::Input& in : model.inputs()) names.push_back(in.name);
  return absl::StrJoin(names, ", ");
}

// PadPattern is `value` as one element of `dtype`.
std::vector<uint8_t> PadPattern(DataType dtype, double value) {
  const double values[] = {value};
  const HostData data = HostData::FromDoubles(dtype, values);
  const auto* bytes = static_cast<const uint8_t*>(data.bytes());
  return std::vector<uint8_t>(bytes, bytes + data.byte_size());
}

// EnqueuePadCopy copies the dense `actual`-shaped tensor in `src` into the
// dense `bucket`-shaped `dst` (each dimension's first actual[i] positions),
// with rectangle copies of at most three dimensions each.
absl::Status EnqueuePadCopy(cl_command_queue queue, cl_mem src, cl_mem dst,
                            const std::vector<int64_t>& actual, const std::vector<int64_t>& bucket,
                            size_t element_bytes) {
  // Merge each dimension into the next outer one where the inner one is
  // not padded: then every dimension but the outermost is padded.
  std::vector<std::pair<size_t, size_t>> dims;  // inner first: (actual, bucket)
  for (size_t i = actual.size(); i-- > 0;) {
    const auto a = static_cast<size_t>(actual[i]);
    const auto b = static_cast<size_t>(bucket[i]);
    if (!dims.empty() && dims.back().first == dims.back().second) {
      dims.back().first *= a;
      dims.back().second *= b;
    } else {
      dims.push_back({a, b});
    }
  }
  if (dims.empty()) dims.push_back({1, 1});
  // Byte strides of each dimension, inner first.
  std::vector<size_t> src_stride(dims.size()), dst_stride(dims.size());
  size_t s = element_bytes, d = element_bytes;
  for (size_t i = 0; i < dims.size(); ++i) {
    src_stride[i] = s;
    dst_stride[i] = d;
    s *= dims[i].first;
    d *= dims[i].second;
  }
  const size_t inner = std::min<size_t>(dims.size(), 3);
  size_t region[3] = {dims[0].first * element_bytes, 1, 1};
  for (size_t i = 1; i < inner; ++i) region[i] = dims[i].first;
  const size_t src_row = inner > 1 ? src_stride[1] : region[0];
  const size_t dst_row = inner > 1 ? dst_stride[1] : region[0];
  const size_t src_slice = inner > 2 ? src_stride[2] : src_row * region[1];
  const size_t dst_slice = inner > 2 ? dst_stride[2] : dst_row * region[1];
  // The outer dimensions beyond three, one rectangle copy per index.
  std::vector<size_t> index(dims.size(), 0);
  while (true) {
    size_t src_off = 0, dst_off = 0;
    for (size_t i = inner; i < dims.size(); ++i) {
      src_off += index[i] * src_stride[i];
      dst_off += index[i] * dst_stride[i];
    }
    const size_t src_origin[3] = {src_off, 0, 0};
    const size_t dst_origin[3] = {dst_off, 0, 0};
    RECQ_RETURN_IF_ERROR(cl::CheckCl(
        clEnqueueCopyBufferRect(queue, src, dst, src_origin, dst_origin, region, src_row, src_slice,
                                dst_row, dst_slice, 0, nullptr, nullptr),
        "clEnqueueCopyBufferRect(padding)"));
    size_t i = inner;
    while (i < dims.size() && ++index[i] == dims[i].first) index[i++] = 0;
    if (i == dims.size()) break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InputShapes> ShapedEngine::State::BucketFor(const InputShapes& shapes) const {
  for (const auto& [name, shape] : shapes) {
    if (profiles.count(name) != 0) continue;
    if (FindInput(model, name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a shape is given for input '", name, "', the model's inputs are ", InputNames(model)));
    }
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "' (", ShapeToString(shape),
                                                   ") has no shape profile; the profiled inputs "
                                                   "are the only ones whose shape changes"));
  }
  InputShapes bucket;
  std::vector<int64_t> group_size(groups.size(), -1);
  std::vector<std::string> group_first(groups.size());
  for (const auto& [name, profile] : profiles) {
    auto given = shapes.find(name);
    std::vector<int64_t> shape;
    if (given == shapes.end()) {
      for (const DimProfile& d : profile) {
        if (!d.fixed()) {
          return absl::InvalidArgumentError(absl::StrCat("no shape given for input '", name,
                                                         "' (profile ",
                                                         InputProfileToString(profile), ")"));
        }
        shape.push_back(d.min);
      }
      bucket[name] = std::move(shape);
      continue;
    }
    const std::vector<int64_t>& actual = given->second;
    if (actual.size() != profile.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", name, "' has shape ", ShapeToString(actual), " (rank ", actual.size(),
          "), its profile ", InputProfileToString(profile), " has rank ", profile.size()));
    }
    for (size_t i = 0; i < actual.size(); ++i) {
      const DimProfile& d = profile[i];
      if (d.fixed()) {
        if (actual[i] != d.min) {
          return absl::InvalidArgumentError(absl::StrCat(
              "input '", name, "' dimension ", i, " is ", actual[i], "; the profile fixes it at ",
              d.min, " (", InputProfileToString(profile), ")"));
        }
        shape.push_back(d.min);
        continue;
      }
      if (actual[i] < d.min || actual[i] > d.max) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", name, "' dimension ", i, " is ", actual[i], ", outside the profile's range ",
            d.min, "..", d.max, " (", InputProfileToString(profile), ")"));
      }
      const size_t g = group_of.at({name, i});
      if (group_size[g] >= 0 && group_size[g] != actual[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", name, "' dimension ", i, " is ", actual[i], ", ",
                         group_first[g], " is ", group_size[g], "; both are dimension ",
                         groups[g].label, " of the model and must agree"));
      }
      group_size[g] = actual[i];
      group_first[g] = absl::StrCat("input '", name, "' dimension ", i);
      shape.push_back(groups[g].padded ? d.BucketFor(actual[i]) : actual[i]);
    }
    bucket[name] = std::move(shape);
  }
  return bucket;
}

absl::StatusOr<std::shared_ptr<ShapedEngine::State::Bucket>> ShapedEngine::State::GetBucket(
    const InputShapes& bucket_shapes, bool* compiled) {
  std::lock_guard<std::mutex> lock(mu);
  *compiled = false;
  if (auto it = buckets.find(bucket_shapes); it != buckets.end()) return it->second;
  const auto start = std::chrono::steady_clock::now();
  OnnxOptions o = load;
  for (const auto& [name, shape] : bucket_shapes) o.input_shapes[name] = shape;
  absl::StatusOr<Graph> graph = model.Import(o);
  if (!graph.ok()) {
    return absl::Status(
        graph.status().code(),
        absl::StrCat("bucket ", ShapesToString(bucket_shapes), ": ", graph.status().message()));
  }
  const size_t uploaded_before = weights->uploaded_bytes();
  absl::StatusOr<std::shared_ptr<internal::EngineState>> state =
      internal::CompileEngineState(context, *graph, options.engine, weights);
  if (!state.ok()) {
    return absl::Status(
        state.status().code(),
        absl::StrCat("bucket ", ShapesToString(bucket_shapes), ": ", state.status().message()));
  }
  RECQ_ASSIGN_OR_RETURN(
      std::shared_ptr<Bucket> bucket,
      AddBucket(bucket_shapes, Engine(*std::move(state)), start, uploaded_before));
  *compiled = true;
  return bucket;
}

absl::StatusOr<std::shared_ptr<ShapedEngine::State::Bucket>> ShapedEngine::State::AddBucket(
    const InputShapes& bucket_shapes, Engine engine, std::chrono::steady_clock::time_point start,
    size_t uploaded_before) {
  auto bucket = std::make_shared<Bucket>();
  bucket->shapes = bucket_shapes;
  bucket->engine.emplace(std::move(engine));
  RECQ_ASSIGN_OR_RETURN(Recording recording, bucket->engine->Record({options.backend}));
  bucket->recording.emplace(std::move(recording));
  bucket->stats.shapes = bucket_shapes;
  bucket->stats.outputs = bucket->engine->outputs();
  bucket->stats.engine = bucket->engine->stats();
  bucket->stats.engine.compile_ms = MsSince(start);  // import (or load) included
  bucket->stats.weight_bytes_uploaded = weights->uploaded_bytes() - uploaded_before;
  buckets.emplace(bucket_shapes, bucket);
  order.push_back(bucket);
  return bucket;
}

absl::StatusOr<ShapedEngine> ShapedEngine::Create(const Context& context, OnnxModel model,
                                                  const OnnxOptions& load,
                                                  const ShapedEngineOptions& options) {
  auto state = std::make_shared<State>(context, std::move(model));
  state->options = options;
  state->profiles = load.profiles;
  state->load = load;
  state->load.profiles.clear();
  const OnnxModel& m = state->model;
  if (state->profiles.empty()) {
    return absl::InvalidArgumentError(
        "no shape profile: give one with OnnxOptions::profiles (recq --shapes=NAME:1x1..512/pow2)");
  }
  std::map<std::string, size_t> group_by_param;
  for (const auto& [name, profile] : state->profiles) {
    const OnnxModel::Input* in = FindInput(m, name);
    if (in == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("a shape profile is given for input '", name,
                                                     "', the model's inputs are ", InputNames(m)));
    }
    if (load.input_shapes.count(name) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' has both a fixed shape and a profile"));
    }
    if (!in->dims.empty() && in->dims.size() != profile.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", name, "' has rank ", in->dims.size(), " in the model, its profile ",
          InputProfileToString(profile), " has rank ", profile.size()));
    }
    for (size_t i = 0; i < profile.size(); ++i) {
      const DimProfile& d = profile[i];
      const int64_t declared = i < in->dims.size() ? in->dims[i] : 0;
      if (declared > 0 && !(d.fixed() && d.min == declared)) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", name, "' dimension ", i, " is fixed at ", declared,
                         " in the model, its profile gives ", d.ToString(),
                         "; only symbolic dimensions can change"));
      }
      if (d.fixed()) continue;
      const std::string param = i < in->dim_params.size() ? in->dim_params[i] : "";
      size_t g = state->groups.size();
      if (!param.empty()) {
        auto [it, inserted] = group_by_param.try_emplace(param, g);
        g = it->second;
      }
      if (g == state->groups.size()) {
        DimGroup group;
        group.label =
            param.empty() ? absl::StrCat(name, "[", i, "]") : absl::StrCat("'", param, "'");
        group.profile = d;
        group.padded = (options.pad_values.count(name) != 0);
        state->groups.push_back(std::move(group));
      }
      DimGroup& group = state->groups[g];
      if (group.profile.ToString() != d.ToString()) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", name, "' dimension ", i, " has the profile ", d.ToString(),
                         ", input '", group.members[0].input, "' dimension ", group.members[0].dim,
                         " has ", group.profile.ToString(), "; both are dimension ", group.label,
                         " of the model and need one profile"));
      }
      if (group.padded != (options.pad_values.count(name) != 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("inputs '", group.members.empty() ? name : group.members[0].input,
                         "' and '", name, "' share dimension ", group.label,
                         "; give every input with that dimension a pad value, or none"));
      }
      group.members.push_back({name, i});
      state->group_of[{name, i}] = g;
    }
  }
  for (const auto& [name, value] : options.pad_values) {
    if (FindInput(m, name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("a pad value is given for input '", name,
                                                     "', the model's inputs are ", InputNames(m)));
    }
  }
  ShapedEngine engine(std::move(state));
  if (options.eager) {
    RECQ_ASSIGN_OR_RETURN(std::vector<InputShapes> all, engine.ListBuckets());
    for (const InputShapes& shapes : all) {
      bool compiled = false;
      RECQ_RETURN_IF_ERROR(engine.state_->GetBucket(shapes, &compiled).status());
    }
  }
  return engine;
}

absl::StatusOr<InputShapes> ShapedEngine::BucketFor(const InputShapes& shapes) const {
  return state_->BucketFor(shapes);
}

absl::StatusOr<Engine> ShapedEngine::EngineFor(const InputShapes& shapes) {
  RECQ_ASSIGN_OR_RETURN(InputShapes bucket_shapes, state_->BucketFor(shapes));
  bool compiled = false;
  RECQ_ASSIGN_OR_RETURN(std::shared_ptr<State::Bucket> bucket,
                        state_->GetBucket(bucket_shapes, &compiled));
  return *bucket->engine;
}

absl::StatusOr<ShapedRun> ShapedEngine::Enqueue(cl_command_queue queue, const Bindings& bindings,
                                                const InputShapes& shapes,
                                                absl::Span<const cl_event> wait_list,
                                                cl_event* done) {
  RECQ_ASSIGN_OR_RETURN(InputShapes bucket_shapes, state_->BucketFor(shapes));
  ShapedRun run;
  RECQ_ASSIGN_OR_RETURN(std::shared_ptr<State::Bucket> bucket,
                        state_->GetBucket(bucket_shapes, &run.compiled));
  run.bucket = bucket_shapes;
  run.outputs = bucket->engine->outputs();
  std::lock_guard<std::mutex> lock(bucket->run_mu);
  // Inputs whose shape is not the bucket's: which, and checked before
  // anything is enqueued.
  struct Pad {
    std::string name;
    cl_mem src;
    std::vector<int64_t> actual;
    const BindingInfo* info;
  };
  std::vector<Pad> pads;
  for (const auto& [name, bucket_shape] : bucket_shapes) {
    auto given = shapes.find(name);
    if (given == shapes.end() || given->second == bucket_shape) continue;
    const BindingInfo* info = nullptr;
    for (const BindingInfo& in : bucket->engine->inputs()) {
      if (in.name == name) info = &in;
    }
    if (info == nullptr || info->preprocessed) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' cannot be padded: ",
                       info == nullptr ? "the bucket's engine has no binding of that name"
                                       : "it is read by pre-processing"));
    }
    cl_mem src = bindings.Get(name);
    if (src == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "missing binding '", name, "' (", ShapeToString(given->second), ", padded to ",
          ShapeToString(bucket_shape), "): a padded input binds a buffer (Set)"));
    }
    const size_t need =
        static_cast<size_t>(Product(given->second)) * DataTypeSize(info->desc.dtype);
    size_t size = 0;
    const cl_int err = clGetMemObjectInfo(src, CL_MEM_SIZE, sizeof(size), &size, nullptr);
    if (err != CL_SUCCESS) {
      return absl::InvalidArgumentError(
          absl::StrCat("binding '", name, "' is not a valid cl_mem (clGetMemObjectInfo: ",
                       cl::ErrorName(err) ? cl::ErrorName(err) : "?", ")"));
    }
    if (size < need) {
      return absl::InvalidArgumentError(absl::StrCat(
          "binding '", name, "' has ", size, " bytes, the input ", ShapeToString(given->second),
          " ", DataTypeName(info->desc.dtype), " needs ", need));
    }
    pads.push_back({name, src, given->second, info});
  }
  Bindings bound = bindings;
  std::vector<cl_event> waits(wait_list.begin(), wait_list.end());
  if (!pads.empty()) {
    // The staging buffers are reused: wait for the bucket's previous run.
    if (bucket->last_done) waits.push_back(bucket->last_done.get());
    for (const Pad& pad : pads) {
      const size_t bytes = pad.info->desc.ByteSize();
      cl::UniqueMem& staging = bucket->staging[pad.name];
      if (!staging) {
        cl_int err = CL_SUCCESS;
        staging.reset(
            clCreateBuffer(state_->context.context(), CL_MEM_READ_WRITE, bytes, nullptr, &err));
        RECQ_RETURN_IF_ERROR(cl::CheckCl(
            err, absl::StrCat("clCreateBuffer(padding of '", pad.name, "', ", bytes, " bytes)")));
        bucket->stats.staging_bytes += bytes;
      }
      const std::vector<uint8_t> pattern =
          PadPattern(pad.info->desc.dtype, state_->options.pad_values.at(pad.name));
      RECQ_RETURN_IF_ERROR(
          cl::CheckCl(clEnqueueFillBuffer(queue, staging.get(), pattern.data(), pattern.size(), 0,
                                          bytes, static_cast<cl_uint>(waits.size()),
                                          waits.empty() ? nullptr : waits.data(), nullptr),
                      "clEnqueueFillBuffer(padding)"));
      waits.clear();  // the queue is in order: later commands follow the fill
      RECQ_RETURN_IF_ERROR(EnqueuePadCopy(queue, pad.src, staging.get(), pad.actual,
                                          pad.info->desc.shape,
                                          DataTypeSize(pad.info->desc.dtype)));
      bound.Set(pad.name, staging.get());
    }
    run.padded = true;
  }
  cl::UniqueEvent event;
  RECQ_RETURN_IF_ERROR(bucket->recording->Enqueue(queue, bound, waits, event.out()));
  if (done != nullptr) {
    RECQ_ASSIGN_OR_RETURN(cl::UniqueEvent copy, cl::UniqueEvent::RetainFrom(event.get()));
    *done = copy.release();
  }
  bucket->last_done = std::move(event);
  ++bucket->stats.runs;
  if (run.padded) ++bucket->stats.padded_runs;
  return run;
}

absl::StatusOr<ShapedRun> ShapedEngine::Run(const Bindings& bindings, const InputShapes& shapes) {
  const auto start = std::chrono::steady_clock::now();
  cl::UniqueEvent done;
  RECQ_ASSIGN_OR_RETURN(ShapedRun run,
                        Enqueue(state_->context.queue(), bindings, shapes, {}, done.out()));
  const cl_event event = done.get();
  RECQ_RETURN_IF_ERROR(cl::CheckCl(clWaitForEvents(1, &event), "clWaitForEvents(shaped run)"));
  const double ms = MsSince(start);
  std::shared_ptr<State::Bucket> bucket;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    bucket = state_->buckets.at(run.bucket);
  }
  std::lock_guard<std::mutex> run_lock(bucket->run_mu);
  if (bucket->stats.first_result_ms == 0) {
    bucket->stats.first_result_ms = bucket->stats.engine.compile_ms + ms;
  }
  return run;
}

absl::StatusOr<std::vector<InputShapes>> ShapedEngine::ListBuckets(size_t limit) const {
  // Each group's sizes; the product over groups.
  std::vector<std::vector<int64_t>> sizes;
  size_t total = 1;
  for (const DimGroup& g : state_->groups) {
    std::vector<int64_t> s = g.profile.Buckets();
    if (s.empty()) {
      for (int64_t v = g.profile.min; v <= g.profile.max && s.size() <= limit; ++v) s.push_back(v);
    }
    total *= s.size();
    if (total > limit) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the profile has more than ", limit, " buckets (dimension ", g.label, ": ",
                       g.profile.ToString(), "); give bucket rules (/pow2, /mulN, {...})"));
    }
    sizes.push_back(std::move(s));
  }
  std::vector<InputShapes> all;
  std::vector<size_t> index(sizes.size(), 0);
  while (true) {
    InputShapes shapes;
    for (const auto& [name, profile] : state_->profiles) {
      std::vector<int64_t> shape;
      for (size_t i = 0; i < profile.size(); ++i) {
        shape.push_back(
            profile[i].fixed()
                ? profile[i].min
                : sizes[state_->group_of.at({name, i})][index[state_->group_of.at({name, i})]]);
      }
      shapes[name] = std::move(shape);
    }
    all.push_back(std::move(shapes));
    size_t i = 0;
    while (i < sizes.size() && ++index[i] == sizes[i].size()) index[i++] = 0;
    if (i == sizes.size()) break;
  }
  return all;
}

absl::StatusOr<std::string> ShapedEngine::Serialize() {
  RECQ_ASSIGN_OR_RETURN(std::vector<InputShapes> all, ListBuckets());
  for (const InputShapes& shapes : all) {
    bool compiled = false;
    RECQ_RETURN_IF_ERROR(state_->GetBucket(shapes, &compiled).status());
  }
  std::vector<std::shared_ptr<State::Bucket>> order;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    order = state_->order;
  }
  pb::EngineFile top;
  pb::ShapeProfile profile;
  for (size_t i = 0; i < order.size(); ++i) {
    RECQ_ASSIGN_OR_RETURN(std::string bytes, order[i]->engine->Serialize());
    RECQ_ASSIGN_OR_RETURN(pb::EngineFile f, internal::ParseEngineFile(bytes));
    if (i == 0) {
      top = std::move(f);
    } else {
      *profile.add_more_buckets() = std::move(f);
    }
  }
  std::vector<std::string> parts;
  for (const auto& [name, dims] : state_->profiles) {
    parts.push_back(absl::StrCat(name, ":", InputProfileToString(dims)));
  }
  profile.set_profile(absl::StrJoin(parts, ","));
  for (const auto& [name, value] : state_->options.pad_values) {
    (*profile.mutable_pad_values())[name] = value;
  }
  profile.set_model_onnx(state_->model.SerializeToBytes());
  *top.mutable_shape_profile() = std::move(profile);
  return internal::SealEngineFilePayload(internal::SerializeDeterministically(top));
}

absl::Status ShapedEngine::SerializeToFile(const std::string& path) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, Serialize());
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return absl::UnavailableError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

absl::StatusOr<ShapedEngine> ShapedEngine::Load(const Context& context, const std::string& path,
                                                const EngineLoadOptions& options) {
  RECQ_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  absl::StatusOr<ShapedEngine> engine = LoadFromBytes(context, bytes, options);
  if (!engine.ok()) {
    return absl::Status(engine.status().code(),
                        absl::StrCat("'", path, "': ", engine.status().message()));
  }
  return engine;
}

absl::StatusOr<ShapedEngine> ShapedEngine::LoadFromBytes(const Context& context,
                                                         absl::string_view bytes,
                                                         const EngineLoadOptions& options) {
  RECQ_ASSIGN_OR_RETURN(pb::EngineFile f, internal::ParseEngineFile(bytes));
  if (!f.has_shape_profile()) {
    return absl::InvalidArgumentError(
        "the engine file has one shape and no shape profile (LoadEngine loads it)");
  }
  pb::ShapeProfile stored = std::move(*f.mutable_shape_profile());
  f.clear_shape_profile();
  RECQ_ASSIGN_OR_RETURN(OnnxModel model, OnnxModel::FromBytes(stored.model_onnx()));
  OnnxOptions load;
  RECQ_ASSIGN_OR_RETURN(load.profiles, ParseShapeProfiles(stored.profile()));
  ShapedEngineOptions shaped;
  for (const auto& [name, value] : stored.pad_values()) shaped.pad_values[name] = value;
  RECQ_ASSIGN_OR_RETURN(ShapedEngine engine, Create(context, std::move(model), load, shaped));
  State& state = *engine.state_;
  std::vector<pb::EngineFile> files;
  files.push_back(std::move(f));
  for (pb::EngineFile& b : *stored.mutable_more_buckets()) files.push_back(std::move(b));
  std::lock_guard<std::mutex> lock(state.mu);
  for (size_t i = 0; i < files.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    const size_t uploaded_before = state.weights->uploaded_bytes();
    absl::StatusOr<std::shared_ptr<internal::EngineState>> loaded =
        internal::LoadEngineState(context, std::move(files[i]), options, state.weights, start);
    if (!loaded.ok()) {
      return absl::Status(
          loaded.status().code(),
          absl::StrCat("bucket ", i + 1, " of ", files.size(), ": ", loaded.status().message()));
    }
    Engine bucket_engine(*std::move(loaded));
    if (i == 0) {
      // Later buckets (compiled on first use) take the stored options.
      state.options.engine = bucket_engine.options();
      state.options.engine.warm_up = options.warm_up;
    }
    InputShapes shapes;
    for (const auto& [name, profile] : state.profiles) {
      for (const BindingInfo& in : bucket_engine.inputs()) {
        if (in.name == name) shapes[name] = in.desc.shape;
      }
      if (shapes.count(name) == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "bucket ", i + 1, " of the engine file has no input '", name, "' of its profile"));
      }
    }
    if (state.buckets.count(shapes) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the engine file holds bucket ", ShapesToString(shapes), " twice"));
    }
    RECQ_RETURN_IF_ERROR(
        state.AddBucket(shapes, std::move(bucket_engine), start, uploaded_before).status());
  }
  return engine;
}

InputShapes ShapedEngine::MaxShapes() const {
  InputShapes shapes;
  for (const auto& [name, profile] : state_->profiles) {
    std::vector<int64_t> shape;
    for (const DimProfile& d : profile) shape.push_back(d.max);
    shapes[name] = std::move(shape);
  }
  return shapes;
}

const ShapeProfiles& ShapedEngine::profiles() const { return state_->profiles; }
const OnnxModel& ShapedEngine::model() const { return state_->model; }
const Context& ShapedEngine::context() const { return state_->context; }

ShapedEngineStats ShapedEngine::stats() const {
  ShapedEngineStats stats;
  stats.weight_bytes_uploaded = state_->weights->uploaded_bytes();
  stats.weight_uploads = state_->weights->uploads();
  stats.weight_reuses = state_->weights->hits();
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& bucket : state_->order) {
    std::lock_guard<std::mutex> run_lock(bucket->run_mu);
    stats.buckets.push_back(bucket->stats);
  }
  return stats;
}

}  // namespace recq
