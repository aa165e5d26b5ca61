// Tests of the cl_qcom_recordable_queues emulation layer. They run as an
// ordinary OpenCL application with the layer loaded by the ICD loader
// (OPENCL_LAYERS=<path to libRecqQcomLayer.so>, as ctest sets it) and check
// computed values against CPU references on fresh random data, with outputs
// poisoned (NaN) before every run.

#include <CL/cl.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "qcom/cl_qcom_recordable_queues.h"

namespace {

constexpr char kSource[] = R"CLC(
__kernel void axpb(__global const float* a, __global const float* b, __global float* y,
                   float s) {
  size_t i = get_global_id(0);
  y[i] = a[i] * s + b[i];
}
__kernel void local_size_probe(__global uint* out) {
  out[get_global_id(0)] = (uint)get_local_size(0);
}
)CLC";

constexpr size_t kN = 1024;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Index of each argument of `axpb`.
constexpr cl_uint kArgA = 0;
constexpr cl_uint kArgB = 1;
constexpr cl_uint kArgY = 2;
constexpr cl_uint kArgS = 3;

using SetFaultFn = int (*)(const char*);

// The layer's test hook, found in the already-loaded library named by
// OPENCL_LAYERS (a ':'-separated list); null when not loaded.
SetFaultFn LayerSetFaultHook() {
  const char* layers = std::getenv("OPENCL_LAYERS");
  if (layers == nullptr) return nullptr;
  std::string list(layers);
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t end = std::min(list.find(':', pos), list.size());
    const std::string path = list.substr(pos, end - pos);
    pos = end + 1;
    if (path.empty()) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    if (void* fn = dlsym(handle, "recqQcomLayerSetFault")) return reinterpret_cast<SetFaultFn>(fn);
  }
  return nullptr;
}

struct QcomApi {
  clNewRecordingQCOM_fn New = nullptr;
  clEndRecordingQCOM_fn End = nullptr;
  clRetainRecordingQCOM_fn Retain = nullptr;
  clReleaseRecordingQCOM_fn Release = nullptr;
  clEnqueueRecordingQCOM_fn Enqueue = nullptr;
  clEnqueueRecordingSVMQCOM_fn EnqueueSVM = nullptr;
  [[nodiscard]] bool complete() const {
    return New && End && Retain && Release && Enqueue && EnqueueSVM;
  }
};

// y = a * s + b, elementwise.
std::vector<float> Axpb(const std::vector<float>& a, const std::vector<float>& b, float s) {
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) y[i] = a[i] * s + b[i];
  return y;
}

struct Scalars {
  float s0, s1, s2;
};

// The three-dispatch chain every recording test uses:
//   d0: t = x * s0 + b;  d1: u = t * s1 + x;  d2: y = u * s2 + t.
std::vector<float> ChainReference(const std::vector<float>& x, const std::vector<float>& b,
                                  Scalars s) {
  const std::vector<float> t = Axpb(x, b, s.s0);
  const std::vector<float> u = Axpb(t, x, s.s1);
  return Axpb(u, t, s.s2);
}

// Compares every element with a tolerance that allows for fused
// multiply-adds on the device; NaN (the poison) never matches.
::testing::AssertionResult AllNear(const std::vector<float>& got, const std::vector<float>& want,
                                   size_t begin = 0, size_t end = SIZE_MAX) {
  end = std::min(end, want.size());
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  size_t bad = 0;
  size_t first = 0;
  for (size_t i = begin; i < end; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f * (1.0f + std::fabs(want[i])))) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << (end - begin) << " elements differ; first at " << first << ": got "
         << got[first] << ", want " << want[first];
}

::testing::AssertionResult AllNaN(const std::vector<float>& got, size_t begin = 0,
                                  size_t end = SIZE_MAX) {
  end = std::min(end, got.size());
  for (size_t i = begin; i < end; ++i) {
    if (!std::isnan(got[i])) {
      return ::testing::AssertionFailure()
             << "element " << i << " was written (" << got[i] << "); expected the NaN poison";
    }
  }
  return ::testing::AssertionSuccess();
}

class QcomLayerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setup_error_ = new std::string;
    cl_uint count = 0;
    if (clGetPlatformIDs(1, &platform_, &count) != CL_SUCCESS || count == 0) {
      *setup_error_ = "no OpenCL platform";
      return;
    }
    if (clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr) != CL_SUCCESS) {
      *setup_error_ = "no OpenCL device";
      return;
    }
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    if (context_ == nullptr) {
      *setup_error_ = "clCreateContext failed: " + std::to_string(err);
      return;
    }
    const char* source = kSource;
    program_ = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
    if (program_ == nullptr || clBuildProgram(program_, 1, &device_, "", nullptr, nullptr) != 0) {
      *setup_error_ = "building the test kernels failed";
      return;
    }
    api_.New = reinterpret_cast<clNewRecordingQCOM_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clNewRecordingQCOM"));
    api_.End = reinterpret_cast<clEndRecordingQCOM_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clEndRecordingQCOM"));
    api_.Retain = reinterpret_cast<clRetainRecordingQCOM_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clRetainRecordingQCOM"));
    api_.Release = reinterpret_cast<clReleaseRecordingQCOM_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clReleaseRecordingQCOM"));
    api_.Enqueue = reinterpret_cast<clEnqueueRecordingQCOM_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clEnqueueRecordingQCOM"));
    api_.EnqueueSVM = reinterpret_cast<clEnqueueRecordingSVMQCOM_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clEnqueueRecordingSVMQCOM"));
    if (!api_.complete()) {
      *setup_error_ =
          "the cl_qcom_recordable_queues entry points are missing: is the layer loaded? "
          "(OPENCL_LAYERS=" +
          std::string(std::getenv("OPENCL_LAYERS") ? std::getenv("OPENCL_LAYERS") : "<unset>") +
          ")";
    }
  }

  static void TearDownTestSuite() {
    if (program_ != nullptr) clReleaseProgram(program_);
    if (context_ != nullptr) clReleaseContext(context_);
    program_ = nullptr;
    context_ = nullptr;
    delete setup_error_;
    setup_error_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(setup_error_->empty()) << *setup_error_;
    queue_ = NewQueue(0);
    rqueue_ = NewQueue(CL_QUEUE_RECORDABLE_QCOM);
    ASSERT_NE(queue_, nullptr);
    ASSERT_NE(rqueue_, nullptr);
  }

  void TearDown() override {
    if (SetFaultFn hook = LayerSetFaultHook()) hook("");
    for (cl_recording_qcom r : recordings_) api_.Release(r);
    for (cl_kernel k : kernels_) clReleaseKernel(k);
    for (cl_mem m : buffers_) clReleaseMemObject(m);
    for (cl_command_queue q : queues_) {
      clFinish(q);
      clReleaseCommandQueue(q);
    }
  }

  // Sets the layer's fault rules through its test hook.
  void SetFault(const char* spec) {
    SetFaultFn hook = LayerSetFaultHook();
    ASSERT_NE(hook, nullptr) << "recqQcomLayerSetFault not found in OPENCL_LAYERS";
    ASSERT_EQ(hook(spec), CL_SUCCESS) << spec;
  }

  cl_command_queue NewQueue(cl_command_queue_properties properties) {
    const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, properties, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueueWithProperties(context_, device_, props, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    if (q != nullptr) queues_.push_back(q);
    return q;
  }

  cl_mem NewBuffer(size_t floats = kN) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE, floats * sizeof(float), nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    if (m != nullptr) buffers_.push_back(m);
    return m;
  }

  cl_kernel NewKernel(const char* name) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program_, name, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    if (k != nullptr) kernels_.push_back(k);
    return k;
  }

  cl_recording_qcom NewRecording(cl_command_queue q) {
    cl_int err = CL_SUCCESS;
    cl_recording_qcom r = api_.New(q, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    if (r != nullptr) recordings_.push_back(r);
    return r;
  }

  std::vector<float> Random(size_t n = kN) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng_);
    return v;
  }

  void Write(cl_mem m, const std::vector<float>& v, cl_command_queue q = nullptr) {
    ASSERT_EQ(clEnqueueWriteBuffer(q ? q : queue_, m, CL_TRUE, 0, v.size() * sizeof(float),
                                   v.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
  }

  void Poison(cl_mem m, size_t n = kN, cl_command_queue q = nullptr) {
    Write(m, std::vector<float>(n, kNaN), q);
  }

  std::vector<float> Read(cl_mem m, size_t n = kN, cl_command_queue q = nullptr) {
    std::vector<float> v(n);
    EXPECT_EQ(clEnqueueReadBuffer(q ? q : queue_, m, CL_TRUE, 0, n * sizeof(float), v.data(), 0,
                                  nullptr, nullptr),
              CL_SUCCESS);
    return v;
  }

  static void SetAxpbArgs(cl_kernel k, cl_mem a, cl_mem b, cl_mem y, float s) {
    ASSERT_EQ(clSetKernelArg(k, kArgA, sizeof(cl_mem), &a), CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(k, kArgB, sizeof(cl_mem), &b), CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(k, kArgY, sizeof(cl_mem), &y), CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(k, kArgS, sizeof(float), &s), CL_SUCCESS);
  }

  struct Chain {
    cl_mem x, b, t, u, y;
    Scalars s;
    cl_recording_qcom recording;
  };

  // Records the three-dispatch chain on `q` with one kernel object whose
  // arguments change between the enqueues, so each dispatch must keep its
  // own snapshot.
  Chain RecordChain(cl_command_queue q, Scalars s = {1.5f, 0.5f, -2.0f}) {
    Chain c{NewBuffer(), NewBuffer(), NewBuffer(), NewBuffer(), NewBuffer(), s, nullptr};
    cl_kernel k = NewKernel("axpb");
    c.recording = NewRecording(q);
    const size_t global = kN;
    SetAxpbArgs(k, c.x, c.b, c.t, s.s0);
    EXPECT_EQ(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
    SetAxpbArgs(k, c.t, c.x, c.u, s.s1);
    EXPECT_EQ(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
    SetAxpbArgs(k, c.u, c.t, c.y, s.s2);
    EXPECT_EQ(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(api_.End(c.recording), CL_SUCCESS);
    return c;
  }

  cl_int Replay(cl_command_queue q, cl_recording_qcom r,
                const std::vector<cl_array_arg_qcom>& args = {}, cl_uint num_wait = 0,
                const cl_event* wait = nullptr, cl_event* event = nullptr) {
    return api_.Enqueue(q, r, args.size(), args.empty() ? nullptr : args.data(), 0, nullptr, 0,
                        nullptr, 0, nullptr, num_wait, wait, event);
  }

  static cl_array_arg_qcom MemArg(cl_uint dispatch, cl_uint arg, const cl_mem* mem) {
    return cl_array_arg_qcom{dispatch, arg, sizeof(cl_mem), mem};
  }

  static cl_platform_id platform_;
  static cl_device_id device_;
  static cl_context context_;
  static cl_program program_;
  static QcomApi api_;
  static std::string* setup_error_;

  cl_command_queue queue_ = nullptr;   // ordinary, in-order
  cl_command_queue rqueue_ = nullptr;  // recordable
  std::mt19937 rng_{12345};
  std::vector<cl_command_queue> queues_;
  std::vector<cl_mem> buffers_;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_recording_qcom> recordings_;
};

cl_platform_id QcomLayerTest::platform_ = nullptr;
cl_device_id QcomLayerTest::device_ = nullptr;
cl_context QcomLayerTest::context_ = nullptr;
cl_program QcomLayerTest::program_ = nullptr;
QcomApi QcomLayerTest::api_;
std::string* QcomLayerTest::setup_error_ = nullptr;

TEST(QcomLayerLoaded, LayerIsLoadedInProcess) {
  const char* layers = std::getenv("OPENCL_LAYERS");
  if (layers == nullptr) {
    GTEST_SKIP() << "OPENCL_LAYERS is unset, so the ICD loader loads no layer; run through "
                    "ctest or set OPENCL_LAYERS=<path to libRecqQcomLayer.so>";
  }
  cl_platform_id platform = nullptr;
  ASSERT_EQ(clGetPlatformIDs(1, &platform, nullptr), CL_SUCCESS);  // the loader loads layers here
  EXPECT_NE(LayerSetFaultHook(), nullptr)
      << "no library from OPENCL_LAYERS=" << layers << " exporting recqQcomLayerSetFault is loaded";
  EXPECT_NE(clGetExtensionFunctionAddressForPlatform(platform, "clNewRecordingQCOM"), nullptr);
  EXPECT_NE(clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueRecordingQCOM"), nullptr);
  EXPECT_EQ(clGetExtensionFunctionAddressForPlatform(platform, "clNoSuchFunctionQCOM"), nullptr);
}

TEST_F(QcomLayerTest, ExtensionListedAndMaxSizeReported) {
  size_t size = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_EXTENSIONS, 0, nullptr, &size), CL_SUCCESS);
  std::string extensions(size, '\0');
  size_t size2 = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_EXTENSIONS, size, extensions.data(), &size2),
            CL_SUCCESS);
  EXPECT_EQ(size2, size);
  ASSERT_EQ(std::strlen(extensions.c_str()) + 1, size);
  extensions.resize(size - 1);
  const std::string padded = " " + extensions + " ";
  const size_t at = padded.find(" cl_qcom_recordable_queues ");
  EXPECT_NE(at, std::string::npos) << extensions;
  EXPECT_EQ(padded.find(" cl_qcom_recordable_queues ", at + 1), std::string::npos)
      << "listed twice: " << extensions;
  std::vector<char> small(size - 1);
  EXPECT_EQ(clGetDeviceInfo(device_, CL_DEVICE_EXTENSIONS, small.size(), small.data(), nullptr),
            CL_INVALID_VALUE);

  cl_uint max_size = 0;
  size_t ret = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE, sizeof(max_size),
                            &max_size, &ret),
            CL_SUCCESS);
  EXPECT_EQ(ret, sizeof(cl_uint));
  const char* env = std::getenv("RECQ_QCOM_LAYER_MAX_SIZE");
  EXPECT_EQ(max_size, env != nullptr ? static_cast<cl_uint>(std::strtoul(env, nullptr, 10)) : 64u);
  uint16_t too_small = 0;
  EXPECT_EQ(clGetDeviceInfo(device_, CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE, sizeof(too_small),
                            &too_small, nullptr),
            CL_INVALID_VALUE);
}

TEST_F(QcomLayerTest, RecordableQueueCreationAndLifecycleErrors) {
  cl_command_queue_properties props = 0;
  ASSERT_EQ(clGetCommandQueueInfo(rqueue_, CL_QUEUE_PROPERTIES, sizeof(props), &props, nullptr),
            CL_SUCCESS);
  EXPECT_NE(props & CL_QUEUE_RECORDABLE_QCOM, 0u);
  ASSERT_EQ(clGetCommandQueueInfo(queue_, CL_QUEUE_PROPERTIES, sizeof(props), &props, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(props & CL_QUEUE_RECORDABLE_QCOM, 0u);

  size_t array_size = 0;
  ASSERT_EQ(clGetCommandQueueInfo(rqueue_, CL_QUEUE_PROPERTIES_ARRAY, 0, nullptr, &array_size),
            CL_SUCCESS);
  std::vector<cl_queue_properties> array(array_size / sizeof(cl_queue_properties));
  ASSERT_EQ(
      clGetCommandQueueInfo(rqueue_, CL_QUEUE_PROPERTIES_ARRAY, array_size, array.data(), nullptr),
      CL_SUCCESS);
  ASSERT_GE(array.size(), 2u);
  EXPECT_EQ(array[0], static_cast<cl_queue_properties>(CL_QUEUE_PROPERTIES));
  EXPECT_NE(array[1] & CL_QUEUE_RECORDABLE_QCOM, 0u);

  // The OpenCL 1.x entry point takes the bit too.
  cl_int err = CL_SUCCESS;
  cl_command_queue legacy = clCreateCommandQueue(context_, device_, CL_QUEUE_RECORDABLE_QCOM, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  queues_.push_back(legacy);
  ASSERT_EQ(clGetCommandQueueInfo(legacy, CL_QUEUE_PROPERTIES, sizeof(props), &props, nullptr),
            CL_SUCCESS);
  EXPECT_NE(props & CL_QUEUE_RECORDABLE_QCOM, 0u);

  api_.New(queue_, &err);
  EXPECT_EQ(err, CL_INVALID_COMMAND_QUEUE);
  api_.New(nullptr, &err);
  EXPECT_EQ(err, CL_INVALID_COMMAND_QUEUE);

  cl_recording_qcom r = NewRecording(rqueue_);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(api_.New(rqueue_, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  EXPECT_EQ(Replay(queue_, r), CL_INVALID_VALUE) << "replaying a recording not ended";
  EXPECT_EQ(api_.End(r), CL_SUCCESS);
  EXPECT_EQ(api_.End(r), CL_INVALID_OPERATION);

  // Reference counting: two extra references, then three releases.
  EXPECT_EQ(api_.Retain(r), CL_SUCCESS);
  EXPECT_EQ(api_.Release(r), CL_SUCCESS);
  EXPECT_EQ(Replay(queue_, r), CL_SUCCESS);
  EXPECT_EQ(api_.Release(r), CL_SUCCESS);
  recordings_.clear();
  EXPECT_EQ(api_.Release(r), CL_INVALID_VALUE) << "released past zero";

  // After End, the queue records again and runs ordinary commands.
  cl_recording_qcom again = NewRecording(rqueue_);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(api_.End(again), CL_SUCCESS);
  Poison(NewBuffer(), kN, rqueue_);
}

TEST_F(QcomLayerTest, QueueReleaseForgetsTheRecordableBit) {
  cl_command_queue q = NewQueue(CL_QUEUE_RECORDABLE_QCOM);
  queues_.pop_back();
  ASSERT_EQ(clRetainCommandQueue(q), CL_SUCCESS);
  ASSERT_EQ(clReleaseCommandQueue(q), CL_SUCCESS);
  cl_int err = CL_SUCCESS;
  cl_recording_qcom r = api_.New(q, &err);
  ASSERT_EQ(err, CL_SUCCESS) << "the queue is still referenced once";
  EXPECT_EQ(api_.End(r), CL_SUCCESS);
  EXPECT_EQ(api_.Release(r), CL_SUCCESS);
  ASSERT_EQ(clReleaseCommandQueue(q), CL_SUCCESS);
  // New queues (which may reuse the released handle's address) are ordinary.
  for (int i = 0; i < 4; ++i) {
    cl_command_queue fresh = NewQueue(0);
    cl_command_queue_properties props = 0;
    ASSERT_EQ(clGetCommandQueueInfo(fresh, CL_QUEUE_PROPERTIES, sizeof(props), &props, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(props & CL_QUEUE_RECORDABLE_QCOM, 0u);
    api_.New(fresh, &err);
    EXPECT_EQ(err, CL_INVALID_COMMAND_QUEUE);
  }
}

TEST_F(QcomLayerTest, RecordsInsteadOfRunningThenReplays) {
  const std::vector<float> x = Random(), b = Random();
  Chain c = RecordChain(rqueue_);
  Write(c.x, x);
  Write(c.b, b);
  Poison(c.t);
  Poison(c.u);
  Poison(c.y);
  ASSERT_EQ(clFinish(rqueue_), CL_SUCCESS);
  EXPECT_TRUE(AllNaN(Read(c.y))) << "a recorded dispatch ran";

  ASSERT_EQ(Replay(queue_, c.recording), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(c.y), ChainReference(x, b, c.s)));

  // Replays read the buffers' current contents.
  const std::vector<float> x2 = Random(), b2 = Random();
  Write(c.x, x2);
  Write(c.b, b2);
  Poison(c.y);
  ASSERT_EQ(Replay(queue_, c.recording), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(c.y), ChainReference(x2, b2, c.s)));

  // The recordable queue itself replays too once it stopped recording.
  Poison(c.y);
  ASSERT_EQ(Replay(rqueue_, c.recording), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(c.y, kN, rqueue_), ChainReference(x2, b2, c.s)));
}

TEST_F(QcomLayerTest, SnapshotOutlivesTheRecordedKernelObject) {
  cl_mem a = NewBuffer(), b = NewBuffer(), y = NewBuffer(), other = NewBuffer();
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(program_, "axpb", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_recording_qcom r = NewRecording(rqueue_);
  SetAxpbArgs(k, a, b, y, 3.0f);
  const size_t global = kN;
  ASSERT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(api_.End(r), CL_SUCCESS);
  SetAxpbArgs(k, b, a, other, -7.0f);
  ASSERT_EQ(clReleaseKernel(k), CL_SUCCESS);

  const std::vector<float> va = Random(), vb = Random();
  Write(a, va);
  Write(b, vb);
  Poison(y);
  Poison(other);
  ASSERT_EQ(Replay(queue_, r), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(y), Axpb(va, vb, 3.0f)));
  EXPECT_TRUE(AllNaN(Read(other)));
}

TEST_F(QcomLayerTest, SubstitutedBuffersApplyToOneReplayOnly) {
  Chain c = RecordChain(rqueue_);
  const std::vector<float> x = Random(), b = Random(), x2 = Random();
  cl_mem in2 = NewBuffer(), out2 = NewBuffer();
  Write(c.x, x);
  Write(c.b, b);
  Write(in2, x2);
  Poison(c.y);
  Poison(out2);

  // x is read by dispatches 0 (arg a) and 1 (arg b); y is written by 2.
  const std::vector<cl_array_arg_qcom> subs = {MemArg(0, kArgA, &in2), MemArg(1, kArgB, &in2),
                                               MemArg(2, kArgY, &out2)};
  ASSERT_EQ(Replay(queue_, c.recording, subs), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(out2), ChainReference(x2, b, c.s)));
  EXPECT_TRUE(AllNaN(Read(c.y))) << "the recorded output was written";

  // No substitution: the recorded buffers again.
  Poison(out2);
  ASSERT_EQ(Replay(queue_, c.recording), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(c.y), ChainReference(x, b, c.s)));
  EXPECT_TRUE(AllNaN(Read(out2))) << "a substitution persisted into the next replay";
}

TEST_F(QcomLayerTest, ScalarSubstitutionAppliesToOneReplayOnly) {
  Chain c = RecordChain(rqueue_);
  const std::vector<float> x = Random(), b = Random();
  Write(c.x, x);
  Write(c.b, b);
  Poison(c.y);
  const float s1 = -0.75f;
  ASSERT_EQ(Replay(queue_, c.recording, {cl_array_arg_qcom{1, kArgS, sizeof(float), &s1}}),
            CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(c.y), ChainReference(x, b, {c.s.s0, s1, c.s.s2})));
  Poison(c.y);
  ASSERT_EQ(Replay(queue_, c.recording), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(c.y), ChainReference(x, b, c.s)));
}

TEST_F(QcomLayerTest, GlobalSizeAndOffsetSubstitution) {
  cl_mem a = NewBuffer(), b = NewBuffer(), y = NewBuffer();
  cl_kernel k = NewKernel("axpb");
  cl_recording_qcom r = NewRecording(rqueue_);
  SetAxpbArgs(k, a, b, y, 2.5f);
  const size_t global = kN;
  ASSERT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(api_.End(r), CL_SUCCESS);
  const std::vector<float> va = Random(), vb = Random();
  const std::vector<float> want = Axpb(va, vb, 2.5f);
  Write(a, va);
  Write(b, vb);

  const size_t half = kN / 2;
  const cl_workgroup_qcom half_size{0, &half};
  Poison(y);
  ASSERT_EQ(api_.Enqueue(queue_, r, 0, nullptr, 0, nullptr, 1, &half_size, 0, nullptr, 0, nullptr,
                         nullptr),
            CL_SUCCESS);
  std::vector<float> got = Read(y);
  EXPECT_TRUE(AllNear(got, want, 0, half));
  EXPECT_TRUE(AllNaN(got, half, kN));

  const cl_offset_qcom second_half{0, {half, 0, 0}};
  Poison(y);
  ASSERT_EQ(api_.Enqueue(queue_, r, 0, nullptr, 1, &second_half, 1, &half_size, 0, nullptr, 0,
                         nullptr, nullptr),
            CL_SUCCESS);
  got = Read(y);
  EXPECT_TRUE(AllNaN(got, 0, half));
  EXPECT_TRUE(AllNear(got, want, half, kN));

  Poison(y);
  ASSERT_EQ(Replay(queue_, r), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(y), want)) << "a geometry substitution persisted";
}

TEST_F(QcomLayerTest, LocalSizeSubstitution) {
  cl_mem out = NewBuffer();
  cl_kernel k = NewKernel("local_size_probe");
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  cl_recording_qcom r = NewRecording(rqueue_);
  const size_t global = kN, local = 64;
  ASSERT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, &local, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(api_.End(r), CL_SUCCESS);
  auto read_sizes = [&] {
    std::vector<cl_uint> v(kN);
    EXPECT_EQ(clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, kN * sizeof(cl_uint), v.data(), 0,
                                  nullptr, nullptr),
              CL_SUCCESS);
    return v;
  };

  Poison(out);
  ASSERT_EQ(Replay(queue_, r), CL_SUCCESS);
  EXPECT_EQ(read_sizes(), std::vector<cl_uint>(kN, 64));

  const size_t local16 = 16;
  const cl_workgroup_qcom sub{0, &local16};
  Poison(out);
  ASSERT_EQ(
      api_.Enqueue(queue_, r, 0, nullptr, 0, nullptr, 0, nullptr, 1, &sub, 0, nullptr, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(read_sizes(), std::vector<cl_uint>(kN, 16));

  Poison(out);
  ASSERT_EQ(Replay(queue_, r), CL_SUCCESS);
  EXPECT_EQ(read_sizes(), std::vector<cl_uint>(kN, 64));
}

TEST_F(QcomLayerTest, MaxSizeOverflowIsOutOfResources) {
  cl_uint max_size = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_RECORDABLE_QUEUE_MAX_SIZE, sizeof(max_size),
                            &max_size, nullptr),
            CL_SUCCESS);
  ASSERT_LE(max_size, 4096u) << "too large to test here";
  cl_mem y = NewBuffer(), b = NewBuffer();
  cl_kernel k = NewKernel("axpb");
  SetAxpbArgs(k, y, b, y, 1.0f);  // y = y + b, in place
  cl_recording_qcom r = NewRecording(rqueue_);
  const size_t global = kN;
  for (cl_uint i = 0; i < max_size; ++i) {
    ASSERT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS)
        << "dispatch " << i;
  }
  EXPECT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_OUT_OF_RESOURCES);
  ASSERT_EQ(api_.End(r), CL_SUCCESS);

  const std::vector<float> y0 = Random(), vb = Random();
  std::vector<float> want = y0;
  for (cl_uint i = 0; i < max_size; ++i) want = Axpb(want, vb, 1.0f);
  Write(y, y0);
  Write(b, vb);
  ASSERT_EQ(Replay(queue_, r), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(y), want)) << "the recording keeps exactly the first " << max_size;
}

TEST_F(QcomLayerTest, OnlyKernelDispatchesAreAcceptedWhileRecording) {
  cl_mem m = NewBuffer(), m2 = NewBuffer();
  Poison(m);
  cl_kernel k = NewKernel("axpb");
  SetAxpbArgs(k, m, m, m2, 1.0f);
  std::vector<float> host(kN);
  const float zero = 0.0f;
  const size_t global = kN;
  cl_recording_qcom r = NewRecording(rqueue_);

  EXPECT_EQ(clEnqueueReadBuffer(rqueue_, m, CL_TRUE, 0, 4, host.data(), 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueWriteBuffer(rqueue_, m, CL_TRUE, 0, 4, host.data(), 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueCopyBuffer(rqueue_, m, m2, 0, 0, 4, 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueFillBuffer(rqueue_, m, &zero, sizeof(zero), 0, 4, 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueMarkerWithWaitList(rqueue_, 0, nullptr, nullptr), CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueBarrierWithWaitList(rqueue_, 0, nullptr, nullptr), CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueTask(rqueue_, k, 0, nullptr, nullptr), CL_INVALID_OPERATION);
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(clEnqueueMapBuffer(rqueue_, m, CL_TRUE, CL_MAP_READ, 0, 4, 0, nullptr, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);
  // A recorded command cannot carry an event or a wait list.
  cl_event event = nullptr;
  EXPECT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, nullptr, 0, nullptr, &event),
            CL_INVALID_OPERATION);
  cl_event user = clCreateUserEvent(context_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, nullptr, 1, &user, nullptr),
            CL_INVALID_OPERATION);
  clSetUserEventStatus(user, CL_COMPLETE);
  clReleaseEvent(user);
  // Replaying onto a queue that records is a non-kernel command too.
  EXPECT_EQ(Replay(rqueue_, r), CL_INVALID_OPERATION);
  EXPECT_EQ(clFlush(rqueue_), CL_SUCCESS);
  EXPECT_EQ(clFinish(rqueue_), CL_SUCCESS);
  // Other queues are unaffected.
  Write(m2, Random());

  ASSERT_EQ(api_.End(r), CL_SUCCESS);
  EXPECT_EQ(clEnqueueFillBuffer(rqueue_, m, &zero, sizeof(zero), 0, 4, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(clFinish(rqueue_), CL_SUCCESS);
}

TEST_F(QcomLayerTest, InvalidReplayArgumentsAreRejectedBeforeAnythingRuns) {
  Chain c = RecordChain(rqueue_);
  const std::vector<float> x = Random(), b = Random();
  Write(c.x, x);
  Write(c.b, b);
  Poison(c.y);
  cl_mem other = NewBuffer();
  const float s = 1.0f;

  EXPECT_EQ(Replay(queue_, c.recording, {MemArg(3, kArgA, &other)}), CL_INVALID_VALUE)
      << "dispatch index out of range";
  EXPECT_EQ(Replay(queue_, c.recording, {cl_array_arg_qcom{0, 4, sizeof(float), &s}}),
            CL_INVALID_VALUE)
      << "argument index out of range (axpb has 4)";
  EXPECT_EQ(api_.Enqueue(queue_, c.recording, 1, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 0,
                         nullptr, nullptr),
            CL_INVALID_VALUE)
      << "NULL args with a nonzero count";
  EXPECT_EQ(api_.Enqueue(queue_, c.recording, 0, nullptr, 1, nullptr, 0, nullptr, 0, nullptr, 0,
                         nullptr, nullptr),
            CL_INVALID_VALUE);
  const cl_offset_qcom bad_offset{5, {0, 0, 0}};
  EXPECT_EQ(api_.Enqueue(queue_, c.recording, 0, nullptr, 1, &bad_offset, 0, nullptr, 0, nullptr, 0,
                         nullptr, nullptr),
            CL_INVALID_VALUE);
  const cl_workgroup_qcom null_global{0, nullptr};
  EXPECT_EQ(api_.Enqueue(queue_, c.recording, 0, nullptr, 0, nullptr, 1, &null_global, 0, nullptr,
                         0, nullptr, nullptr),
            CL_INVALID_VALUE);
  // The platform's clSetKernelArg verdict is returned as is.
  EXPECT_EQ(Replay(queue_, c.recording, {cl_array_arg_qcom{2, kArgY, 3, &other}}),
            CL_INVALID_ARG_SIZE);
  EXPECT_EQ(api_.Enqueue(queue_, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 0,
                         nullptr, nullptr),
            CL_INVALID_VALUE)
      << "NULL recording";

  // A queue of another context.
  cl_int err = CL_SUCCESS;
  cl_context other_context = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_command_queue foreign =
      clCreateCommandQueueWithProperties(other_context, device_, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(Replay(foreign, c.recording), CL_INVALID_CONTEXT);
  clReleaseCommandQueue(foreign);
  clReleaseContext(other_context);

  ASSERT_EQ(clFinish(queue_), CL_SUCCESS);
  EXPECT_TRUE(AllNaN(Read(c.y))) << "a rejected replay ran";
  ASSERT_EQ(Replay(queue_, c.recording), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(c.y), ChainReference(x, b, c.s)));
}

TEST_F(QcomLayerTest, WaitListGatesTheReplayAndTheEventSignalsItsEnd) {
  Chain c = RecordChain(rqueue_);
  const std::vector<float> x = Random(), b = Random();
  Write(c.x, x);
  Write(c.b, b);
  Poison(c.y);
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(context_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_event done = nullptr;
  ASSERT_EQ(Replay(queue_, c.recording, {}, 1, &gate, &done), CL_SUCCESS);
  ASSERT_NE(done, nullptr);
  clFlush(queue_);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  cl_int status = CL_COMPLETE;
  ASSERT_EQ(
      clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
      CL_SUCCESS);
  EXPECT_GT(status, CL_COMPLETE) << "the replay ran before its wait list completed";

  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  ASSERT_EQ(clWaitForEvents(1, &done), CL_SUCCESS);
  ASSERT_EQ(
      clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_COMPLETE);
  // Read on another queue: only the event orders it after the replay.
  cl_command_queue reader = NewQueue(0);
  EXPECT_TRUE(AllNear(Read(c.y, kN, reader), ChainReference(x, b, c.s)));
  clReleaseEvent(done);
  clReleaseEvent(gate);
}

TEST_F(QcomLayerTest, ReplaysOnAnOutOfOrderQueueKeepTheRecordedOrder) {
  cl_command_queue_properties supported = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof(supported),
                            &supported, nullptr),
            CL_SUCCESS);
  if ((supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0) {
    GTEST_SKIP() << "the device has no out-of-order queues";
  }
  Chain c = RecordChain(rqueue_);
  cl_command_queue ooo = NewQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  for (int run = 0; run < 5; ++run) {
    const std::vector<float> x = Random(), b = Random();
    Write(c.x, x);
    Write(c.b, b);
    Poison(c.t);
    Poison(c.u);
    Poison(c.y);
    cl_int err = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(context_, &err);
    cl_event done = nullptr;
    ASSERT_EQ(Replay(ooo, c.recording, {}, 1, &gate, &done), CL_SUCCESS);
    clFlush(ooo);
    ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    ASSERT_EQ(clWaitForEvents(1, &done), CL_SUCCESS);
    EXPECT_TRUE(AllNear(Read(c.y), ChainReference(x, b, c.s))) << "run " << run;
    clReleaseEvent(done);
    clReleaseEvent(gate);
  }
}

TEST_F(QcomLayerTest, EmptyRecordingEnqueuesAMarker) {
  cl_recording_qcom r = NewRecording(rqueue_);
  ASSERT_EQ(api_.End(r), CL_SUCCESS);
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(context_, &err);
  cl_event done = nullptr;
  ASSERT_EQ(Replay(queue_, r, {}, 1, &gate, &done), CL_SUCCESS);
  cl_command_type type = 0;
  ASSERT_EQ(clGetEventInfo(done, CL_EVENT_COMMAND_TYPE, sizeof(type), &type, nullptr), CL_SUCCESS);
  EXPECT_EQ(type, static_cast<cl_command_type>(CL_COMMAND_MARKER));
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  EXPECT_EQ(clWaitForEvents(1, &done), CL_SUCCESS);
  clReleaseEvent(done);
  clReleaseEvent(gate);
}

TEST_F(QcomLayerTest, TwoThreadsReplayTwoRecordingsConcurrently) {
  constexpr int kRuns = 40;
  struct Worker {
    Chain chain;
    cl_command_queue queue;
    std::vector<std::vector<float>> xs, bs;
    std::atomic<int> failures{0};
    std::string first_failure;
  };
  Worker workers[2];
  for (int w = 0; w < 2; ++w) {
    workers[w].chain = RecordChain(
        rqueue_, {1.0f + static_cast<float>(w), -0.5f, 0.25f * static_cast<float>(w + 1)});
    workers[w].queue = NewQueue(0);
    for (int i = 0; i < kRuns; ++i) {
      workers[w].xs.push_back(Random());
      workers[w].bs.push_back(Random());
    }
  }
  auto work = [this](Worker* w) {
    for (int i = 0; i < kRuns; ++i) {
      const Chain& c = w->chain;
      std::vector<float> got(kN, kNaN);
      cl_int err = clEnqueueWriteBuffer(w->queue, c.x, CL_FALSE, 0, kN * sizeof(float),
                                        w->xs[i].data(), 0, nullptr, nullptr);
      err |= clEnqueueWriteBuffer(w->queue, c.b, CL_FALSE, 0, kN * sizeof(float), w->bs[i].data(),
                                  0, nullptr, nullptr);
      err |= clEnqueueWriteBuffer(w->queue, c.y, CL_FALSE, 0, kN * sizeof(float), got.data(), 0,
                                  nullptr, nullptr);
      err |= Replay(w->queue, c.recording);
      err |= clEnqueueReadBuffer(w->queue, c.y, CL_TRUE, 0, kN * sizeof(float), got.data(), 0,
                                 nullptr, nullptr);
      const auto result = AllNear(got, ChainReference(w->xs[i], w->bs[i], c.s));
      if (err != CL_SUCCESS || !static_cast<bool>(result)) {
        if (w->failures++ == 0) {
          w->first_failure =
              "run " + std::to_string(i) + ": err " + std::to_string(err) + " " + result.message();
        }
      }
    }
  };
  std::thread t0(work, &workers[0]);
  std::thread t1(work, &workers[1]);
  t0.join();
  t1.join();
  for (const Worker& w : workers) EXPECT_EQ(w.failures.load(), 0) << w.first_failure;
}

TEST_F(QcomLayerTest, OverlappingReplaysOfOneRecordingDoNotMixSubstitutions) {
  constexpr int kRuns = 200;
  Chain c = RecordChain(rqueue_);
  struct Worker {
    cl_command_queue queue;
    cl_mem x, b, t, u, y;
    std::vector<std::vector<float>> xs, bs;
    int failures = 0;
    std::string first_failure;
  };
  Worker workers[2];
  for (Worker& w : workers) {
    w.queue = NewQueue(0);
    w.x = NewBuffer();
    w.b = NewBuffer();
    w.t = NewBuffer();
    w.u = NewBuffer();
    w.y = NewBuffer();
    for (int i = 0; i < kRuns; ++i) {
      w.xs.push_back(Random());
      w.bs.push_back(Random());
    }
  }
  auto work = [this, &c](Worker* w) {
    // Every buffer substituted: the threads share only the recording.
    const std::vector<cl_array_arg_qcom> subs = {
        MemArg(0, kArgA, &w->x), MemArg(0, kArgB, &w->b), MemArg(0, kArgY, &w->t),
        MemArg(1, kArgA, &w->t), MemArg(1, kArgB, &w->x), MemArg(1, kArgY, &w->u),
        MemArg(2, kArgA, &w->u), MemArg(2, kArgB, &w->t), MemArg(2, kArgY, &w->y)};
    for (int i = 0; i < kRuns; ++i) {
      std::vector<float> got(kN, kNaN);
      cl_int err = clEnqueueWriteBuffer(w->queue, w->x, CL_FALSE, 0, kN * sizeof(float),
                                        w->xs[i].data(), 0, nullptr, nullptr);
      err |= clEnqueueWriteBuffer(w->queue, w->b, CL_FALSE, 0, kN * sizeof(float), w->bs[i].data(),
                                  0, nullptr, nullptr);
      err |= clEnqueueWriteBuffer(w->queue, w->y, CL_FALSE, 0, kN * sizeof(float), got.data(), 0,
                                  nullptr, nullptr);
      err |= Replay(w->queue, c.recording, subs);
      err |= clEnqueueReadBuffer(w->queue, w->y, CL_TRUE, 0, kN * sizeof(float), got.data(), 0,
                                 nullptr, nullptr);
      const auto result = AllNear(got, ChainReference(w->xs[i], w->bs[i], c.s));
      if ((err != CL_SUCCESS || !static_cast<bool>(result)) && w->failures++ == 0) {
        w->first_failure =
            "run " + std::to_string(i) + ": err " + std::to_string(err) + " " + result.message();
      }
    }
  };
  Poison(c.y);
  std::thread t0(work, &workers[0]);
  std::thread t1(work, &workers[1]);
  t0.join();
  t1.join();
  for (const Worker& w : workers) EXPECT_EQ(w.failures, 0) << w.first_failure;
  EXPECT_TRUE(AllNaN(Read(c.y))) << "a replay used the recorded output";
}

TEST_F(QcomLayerTest, SvmVariantSubstitutesSvmPointersForOneReplay) {
  Chain c = RecordChain(rqueue_);
  const std::vector<float> x = Random(), b = Random();
  cl_mem out2 = NewBuffer();
  Write(c.x, x);
  Write(c.b, b);
  Poison(out2);
  const std::vector<float> want = ChainReference(x, b, c.s);
  // Plain arguments through the SVM variant.
  const cl_array_arg_qcom sub = MemArg(2, kArgY, &out2);
  ASSERT_EQ(api_.EnqueueSVM(queue_, c.recording, 1, &sub, 0, nullptr, 0, nullptr, 0, nullptr, 0,
                            nullptr, 0, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(out2), want));

  cl_device_svm_capabilities caps = 0;
  clGetDeviceInfo(device_, CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, nullptr);
  if ((caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) == 0) GTEST_SKIP() << "the device has no SVM";
  const size_t bytes = kN * sizeof(float);
  float* svm_x = static_cast<float*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, bytes, 0));
  float* svm_y = static_cast<float*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, bytes, 0));
  ASSERT_NE(svm_x, nullptr);
  ASSERT_NE(svm_y, nullptr);
  // Coarse-grained SVM: host access only while mapped.
  auto map = [&](float* p, cl_map_flags flags) {
    ASSERT_EQ(clEnqueueSVMMap(queue_, CL_TRUE, flags, p, bytes, 0, nullptr, nullptr), CL_SUCCESS);
  };
  auto unmap = [&](float* p) {
    ASSERT_EQ(clEnqueueSVMUnmap(queue_, p, 0, nullptr, nullptr), CL_SUCCESS);
    ASSERT_EQ(clFinish(queue_), CL_SUCCESS);
  };
  const std::vector<float> x2 = Random();
  map(svm_x, CL_MAP_WRITE);
  std::copy(x2.begin(), x2.end(), svm_x);
  unmap(svm_x);
  map(svm_y, CL_MAP_WRITE);
  std::fill(svm_y, svm_y + kN, kNaN);
  unmap(svm_y);
  Poison(c.y);
  // x (read by d0 and d1) from SVM, y (d2) into SVM; b stays the recorded
  // cl_mem. arg_value is the pointer itself, as clSetKernelArgSVMPointer.
  const cl_array_arg_qcom svm_args[] = {{0, kArgA, sizeof(void*), svm_x},
                                        {1, kArgB, sizeof(void*), svm_x},
                                        {2, kArgY, sizeof(void*), svm_y}};
  void* used[] = {svm_x, svm_y};
  const cl_array_kernel_exec_info_qcom info{2, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof(used), used};
  ASSERT_EQ(api_.EnqueueSVM(queue_, c.recording, 0, nullptr, 3, svm_args, 0, nullptr, 0, nullptr, 0,
                            nullptr, 1, &info, 0, nullptr, nullptr),
            CL_SUCCESS);
  map(svm_y, CL_MAP_READ);
  std::vector<float> got(svm_y, svm_y + kN);
  unmap(svm_y);
  EXPECT_TRUE(AllNear(got, ChainReference(x2, b, c.s)));
  EXPECT_TRUE(AllNaN(Read(c.y))) << "the SVM replay wrote the recorded output";

  // The substitution lasted one replay: the next one uses the recorded
  // arguments again.
  map(svm_y, CL_MAP_WRITE);
  std::fill(svm_y, svm_y + kN, kNaN);
  unmap(svm_y);
  ASSERT_EQ(Replay(queue_, c.recording), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(c.y), want));
  map(svm_y, CL_MAP_READ);
  EXPECT_TRUE(std::all_of(svm_y, svm_y + kN, [](float v) { return std::isnan(v); }));
  unmap(svm_y);

  // Malformed SVM substitutions enqueue nothing.
  Poison(c.y);
  const cl_array_arg_qcom bad_dispatch{3, kArgY, sizeof(void*), svm_y};
  EXPECT_EQ(api_.EnqueueSVM(queue_, c.recording, 0, nullptr, 1, &bad_dispatch, 0, nullptr, 0,
                            nullptr, 0, nullptr, 0, nullptr, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  const cl_array_arg_qcom bad_arg{2, 4, sizeof(void*), svm_y};
  EXPECT_EQ(api_.EnqueueSVM(queue_, c.recording, 0, nullptr, 1, &bad_arg, 0, nullptr, 0, nullptr, 0,
                            nullptr, 0, nullptr, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(api_.EnqueueSVM(queue_, c.recording, 0, nullptr, 1, nullptr, 0, nullptr, 0, nullptr, 0,
                            nullptr, 0, nullptr, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  const cl_array_kernel_exec_info_qcom unknown{0, 0x7777, sizeof(used), used};
  EXPECT_EQ(api_.EnqueueSVM(queue_, c.recording, 0, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 0,
                            nullptr, 1, &unknown, 0, nullptr, nullptr),
            CL_INVALID_VALUE);
  ASSERT_EQ(clFinish(queue_), CL_SUCCESS);
  EXPECT_TRUE(AllNaN(Read(c.y))) << "a rejected replay ran";
  clSVMFree(context_, svm_x);
  clSVMFree(context_, svm_y);
}

TEST_F(QcomLayerTest, FaultInjectionFailsTheNthReplayOnly) {
  Chain c = RecordChain(rqueue_);
  const std::vector<float> x = Random(), b = Random();
  const std::vector<float> want = ChainReference(x, b, c.s);
  Write(c.x, x);
  Write(c.b, b);
  SetFault("clEnqueueRecordingQCOM:3:CL_OUT_OF_RESOURCES");
  for (int call = 1; call <= 5; ++call) {
    Poison(c.y);
    const cl_int err = Replay(queue_, c.recording);
    if (call == 3) {
      EXPECT_EQ(err, CL_OUT_OF_RESOURCES);
      EXPECT_TRUE(AllNaN(Read(c.y))) << "a failed replay ran";
    } else {
      EXPECT_EQ(err, CL_SUCCESS) << "call " << call;
      EXPECT_TRUE(AllNear(Read(c.y), want)) << "call " << call;
    }
  }
}

TEST_F(QcomLayerTest, FaultInjectionCoversOtherEntryPoints) {
  SetFault(
      "clNewRecordingQCOM:1:CL_OUT_OF_HOST_MEMORY, clSetKernelArg:2:-51,"
      "clCreateBuffer:1:CL_MEM_OBJECT_ALLOCATION_FAILURE,clCreateKernel:1:CL_INVALID_KERNEL_NAME,"
      "clEnqueueNDRangeKernel:2:CL_OUT_OF_RESOURCES,clBuildProgram:1:CL_BUILD_PROGRAM_FAILURE,"
      "clCreateCommandQueueWithProperties:1:CL_OUT_OF_RESOURCES,clEndRecordingQCOM:1:-5,"
      "clEnqueueRecordingSVMQCOM:1:-6,clRetainRecordingQCOM:1:CL_INVALID_OPERATION,"
      "clReleaseRecordingQCOM:1:-59");
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(api_.New(rqueue_, &err), nullptr);
  EXPECT_EQ(err, CL_OUT_OF_HOST_MEMORY);
  cl_recording_qcom r = NewRecording(rqueue_);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(clCreateBuffer(context_, CL_MEM_READ_WRITE, 64, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  EXPECT_EQ(clCreateKernel(program_, "axpb", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_KERNEL_NAME);
  const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, 0, 0};
  EXPECT_EQ(clCreateCommandQueueWithProperties(context_, device_, props, &err), nullptr);
  EXPECT_EQ(err, CL_OUT_OF_RESOURCES);
  EXPECT_EQ(clBuildProgram(program_, 1, &device_, "", nullptr, nullptr), CL_BUILD_PROGRAM_FAILURE);

  cl_mem a = NewBuffer(), y = NewBuffer();
  cl_kernel k = NewKernel("axpb");
  EXPECT_EQ(clSetKernelArg(k, kArgA, sizeof(cl_mem), &a), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, kArgB, sizeof(cl_mem), &a), CL_INVALID_ARG_SIZE);
  SetAxpbArgs(k, a, a, y, 2.0f);
  const size_t global = kN;
  EXPECT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(clEnqueueNDRangeKernel(rqueue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_OUT_OF_RESOURCES);
  EXPECT_EQ(api_.End(r), CL_OUT_OF_RESOURCES);
  EXPECT_EQ(api_.End(r), CL_SUCCESS);
  EXPECT_EQ(api_.Retain(r), CL_INVALID_OPERATION);
  EXPECT_EQ(api_.Release(r), CL_INVALID_OPERATION);  // did nothing: r keeps its reference
  EXPECT_EQ(api_.EnqueueSVM(queue_, r, 0, nullptr, 0, nullptr, 0, nullptr, 0, nullptr, 0, nullptr,
                            0, nullptr, 0, nullptr, nullptr),
            CL_OUT_OF_HOST_MEMORY);

  // The recording holds the one dispatch that was accepted.
  const std::vector<float> va = Random();
  Write(a, va);
  Poison(y);
  ASSERT_EQ(Replay(queue_, r), CL_SUCCESS);
  EXPECT_TRUE(AllNear(Read(y), Axpb(va, va, 2.0f)));
}

TEST_F(QcomLayerTest, MalformedFaultSpecsAreRejected) {
  SetFaultFn hook = LayerSetFaultHook();
  ASSERT_NE(hook, nullptr);
  for (const char* spec :
       {"bogus", "clNoSuchCall:1:CL_OUT_OF_RESOURCES", "clSetKernelArg:0:CL_OUT_OF_RESOURCES",
        "clSetKernelArg:x:CL_OUT_OF_RESOURCES", "clSetKernelArg:1:CL_SUCCESS",
        "clSetKernelArg:1:CL_NOT_AN_ERROR", "clSetKernelArg:1:5", "clSetKernelArg:1:-5,garbage"}) {
    EXPECT_EQ(hook(spec), CL_INVALID_VALUE) << spec;
  }
  // A rejected spec leaves no rule behind.
  cl_mem m = NewBuffer();
  EXPECT_EQ(clSetKernelArg(NewKernel("axpb"), 0, sizeof(cl_mem), &m), CL_SUCCESS);
  EXPECT_EQ(hook(nullptr), CL_SUCCESS);
}

// Runs only as the ctest entry qcom_layer.env_fault, which sets
// RECQ_QCOM_LAYER_FAIL=clCreateBuffer:2:CL_MEM_OBJECT_ALLOCATION_FAILURE,
// clEnqueueRecordingQCOM:2:-6 before the layer loads.
class EnvFault : public QcomLayerTest {};

TEST_F(EnvFault, RulesFromTheEnvironment) {
  const char* spec = std::getenv("RECQ_QCOM_LAYER_FAIL");
  if (spec == nullptr ||
      std::string(spec) !=
          "clCreateBuffer:2:CL_MEM_OBJECT_ALLOCATION_FAILURE,clEnqueueRecordingQCOM:2:-6") {
    GTEST_SKIP() << "runs as ctest qcom_layer.env_fault, with RECQ_QCOM_LAYER_FAIL set";
  }
  cl_int err = CL_SUCCESS;
  cl_mem first = clCreateBuffer(context_, CL_MEM_READ_WRITE, 64, nullptr, &err);
  EXPECT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(clCreateBuffer(context_, CL_MEM_READ_WRITE, 64, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_MEM_OBJECT_ALLOCATION_FAILURE);
  clReleaseMemObject(first);

  cl_recording_qcom r = NewRecording(rqueue_);
  ASSERT_EQ(api_.End(r), CL_SUCCESS);
  EXPECT_EQ(Replay(queue_, r), CL_SUCCESS);
  EXPECT_EQ(Replay(queue_, r), CL_OUT_OF_HOST_MEMORY);
  EXPECT_EQ(Replay(queue_, r), CL_SUCCESS);
}

}  // namespace
