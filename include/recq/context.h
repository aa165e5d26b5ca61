// Context: the OpenCL context, device and default queue recq works in.
//
//   Context ctx = Context::Create({.device = "pthread"}).value();   // recq owns the handles
//   Context ctx = Context::Create({.device = "gpu:1"}).value();     // the second GPU
//   Context ctx = Context::Adopt(user_context, user_queue).value(); // shares the user's
//
// A Context is a cheap, copyable reference to shared state; engines and
// recordings made from it keep that state alive. It is thread-safe.
#ifndef RECQ_CONTEXT_H_
#define RECQ_CONTEXT_H_

#include <CL/cl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace recq {

namespace internal {
struct ContextState;
}

struct ContextOptions {
  // Which device to use, by index or by name, as `recq devices` lists them:
  //   "gpu:N", "cpu:N", "accelerator:N"  the N-th device of that type,
  //                                      counting across platforms in order;
  //   "P:D"                              device D of platform P;
  //   "auto"                             the first GPU, else the first CPU;
  //   any other text                     a case-insensitive substring of the
  //                                      device name or of the platform name.
  // Indices are zero-based. An index out of range is NotFound saying how
  // many such devices exist. Empty means the RECQ_DEVICE environment
  // variable (same syntax), and if that is unset too, "auto".
  std::string device;
  // Create the default queue with CL_QUEUE_PROFILING_ENABLE.
  bool profiling = false;
  // Where compiled program binaries persist across processes. Empty means
  // $RECQ_CACHE_DIR, and if that is unset or empty too, $XDG_CACHE_HOME/recq,
  // else $HOME/.cache/recq. "off" (here or in $RECQ_CACHE_DIR) disables the
  // cache. An unusable directory only means compiling from source. Adopt
  // has no options: it resolves the directory as if this were empty.
  std::string cache_dir{};  // {} keeps `{device}` aggregates -Wextra clean
};

// Facts about the context's device, read once at creation.
struct DeviceInfo {
  std::string name;
  std::string vendor;
  std::string version;         // CL_DEVICE_VERSION
  std::string driver_version;  // CL_DRIVER_VERSION
  std::string platform_name;
  std::string platform_version;
  std::vector<std::string> extensions;
  cl_device_type type = 0;
  cl_uint compute_units = 0;
  // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: float lanes of the device's vector
  // registers (PoCL: 8 with AVX2, 16 with AVX-512); 0 where unknown.
  cl_uint native_vector_width_float = 0;
  size_t max_work_group_size = 0;
  cl_ulong global_mem_bytes = 0;
  cl_ulong max_alloc_bytes = 0;
  // CL_DEVICE_SVM_CAPABILITIES (0: no shared virtual memory, as before
  // OpenCL 2.0) and CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes.
  cl_device_svm_capabilities svm_capabilities = 0;
  size_t mem_base_addr_align_bytes = 128;
  cl_ulong local_mem_bytes = 0;                        // CL_DEVICE_LOCAL_MEM_SIZE
  cl_device_local_mem_type local_mem_type = CL_LOCAL;  // CL_DEVICE_LOCAL_MEM_TYPE
  bool image_support = false;                          // CL_DEVICE_IMAGE_SUPPORT
  size_t image2d_max_width = 0;                        // CL_DEVICE_IMAGE2D_MAX_WIDTH
  size_t image2d_max_height = 0;                       // CL_DEVICE_IMAGE2D_MAX_HEIGHT
  size_t image_max_buffer_size = 0;                    // CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, pixels
  // Vendor queries, empty or 0 where the extension is absent:
  // CL_DEVICE_SUB_GROUP_SIZES_INTEL (cl_intel_required_subgroup_size),
  // CL_DEVICE_IP_VERSION_INTEL (cl_intel_device_attribute_query, a
  // CL_MAKE_VERSION value: 12.x for Xe) and CL_DEVICE_WAVEFRONT_WIDTH_AMD
  // (cl_amd_device_attribute_query).
  std::vector<size_t> sub_group_sizes_intel;
  cl_uint ip_version_intel = 0;
  cl_uint wavefront_width_amd = 0;
  // NVIDIA's compute capability, major * 10 + minor (90 for an H100), from
  // CL_DEVICE_COMPUTE_CAPABILITY_*_NV (cl_nv_device_attribute_query).
  cl_uint compute_capability_nv = 0;

  bool HasExtension(const std::string& name) const;
};

// DeviceTypeName returns "gpu", "cpu", "accelerator" or "custom" for the
// first of those bits that `type` has, else "unknown".
const char* DeviceTypeName(cl_device_type type);

// One OpenCL device as ListDevices (and `recq devices`) reports it.
struct DeviceListing {
  std::string selector;         // "gpu:1", "cpu:0"...: ContextOptions::device picks it by type
  std::string platform_device;  // "P:D": ContextOptions::device picks it by platform and device
  size_t platform_index = 0;
  size_t device_index = 0;  // within the platform
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  DeviceInfo info;
};

// ListDevices enumerates every device of every platform, in the order the
// indices of ContextOptions::device refer to. NotFound when there is no
// OpenCL platform or device.
[[nodiscard]] absl::StatusOr<std::vector<DeviceListing>> ListDevices();

// BuildHelper is a process that compiles beside this one, started on a
// build plan file. A compile on a driver that builds one program at a time
// per process (PoCL) hands it about half of the programs it would build
// from source and builds the others meanwhile, then creates the helper's
// programs from the driver's own cache. The plan also lists the warm-up
// launches of all those programs, whose work-group functions the driver
// compiles at the first enqueue: the helper takes them from the front of
// the list and this process from the back, until they meet. `recq` starts
// `recq build-helper PLAN` (Context::RunBuildPlan).
class BuildHelper {
 public:
  virtual ~BuildHelper() = default;
  // WaitProgramsBuilt blocks until the helper has built its programs, or
  // has ended; WaitDone until it has ended. Neither fails: a helper that
  // failed only leaves more for this process to build.
  virtual void WaitProgramsBuilt() = 0;
  virtual void WaitDone() = 0;
  // LaunchesStarted is how many of the plan's launches the helper has
  // started so far, without waiting; Ended whether it has ended.
  virtual size_t LaunchesStarted() = 0;
  virtual bool Ended() = 0;
};

// What a build helper reports while it runs a plan (Context::RunBuildPlan).
struct BuildPlanProgress {
  std::function<void()> programs_built;  // its own programs are built
  std::function<void()> launch_started;  // the next launch starts
};
// Starts a helper on the plan file at `plan_path`; the helper deletes it.
using BuildHelperStarter =
    std::function<absl::StatusOr<std::unique_ptr<BuildHelper>>(const std::string& plan_path)>;

class Context {
 public:
  // Create selects a device (see ContextOptions::device) and creates a
  // context and an in-order queue that recq owns.
  [[nodiscard]] static absl::StatusOr<Context> Create(const ContextOptions& options = {});
  // Adopt shares a user's context and in-order queue; both are retained and
  // released with the last reference. The device is the queue's device.
  [[nodiscard]] static absl::StatusOr<Context> Adopt(cl_context context, cl_command_queue queue);

  cl_context context() const;
  cl_command_queue queue() const;
  cl_device_id device() const;
  cl_platform_id platform() const;
  const DeviceInfo& device_info() const;

  // FlushBinaryCache has the binaries of the programs this context built
  // from source since the last flush stored in the on-disk binary cache, on a
  // background thread at the lowest CPU priority, and returns at once.
  // Compile leaves that for later because asking PoCL for a binary compiles
  // a generic work-group function for every kernel of the program (seconds
  // of CPU when cold): a long-running process calls it once the first result
  // is out. The context's destruction waits for the binaries already handed
  // over, and stores the rest only where that is cheap (not on PoCL, whose own
  // kernel cache keeps the programs): a one-shot command that does not call
  // it exits right after its result. Errors only mean a colder next start;
  // they are counted, not returned.
  void FlushBinaryCache() const;

  // HandOffBinaryCache is FlushBinaryCache for a process about to exit.
  // Where serializing a program is cheap it stores the binaries now, in this
  // thread, and returns 0. Where it is not (PoCL compiles a generic
  // work-group function for every kernel at the first binary query: seconds
  // when cold), it writes the sources and build options of the programs
  // still to store to a hand-off file at `path` (atomically), forgets them,
  // and returns how many it wrote: another process stores them with
  // StoreHandedOffBinaries while this one exits (`recq run` starts `recq
  // store-binaries` for that). With nothing to store, or no binary cache, it
  // writes no file and returns 0.
  [[nodiscard]] absl::StatusOr<size_t> HandOffBinaryCache(const std::string& path) const;

  // StoreHandedOffBinaries builds every program of the hand-off file at
  // `path` (written by HandOffBinaryCache for this context's device) from
  // source and stores its binary in this context's binary cache; a program
  // already there is skipped. The file is left where it is. A damaged file is
  // InvalidArgument; one for another device (name or driver version) is
  // FailedPrecondition; no binary cache here is FailedPrecondition.
  [[nodiscard]] absl::Status StoreHandedOffBinaries(const std::string& path) const;

  // cache_dir is the directory of the on-disk binary cache this context
  // uses (ContextOptions::cache_dir resolved), or empty when caching is off.
  // Tools may keep per-device files of their own there.
  std::string cache_dir() const;

  // SetBuildHelper lets compiles on this context start build helpers
  // (null: none, the default). A compile uses one only on PoCL, with at
  // least two hardware threads, and for at least two programs to build from
  // source; where none is used, or it fails, the compile builds everything.
  void SetBuildHelper(BuildHelperStarter starter) const;

  // RunBuildPlan is a build helper's work: it builds the programs of the
  // plan file at `path` that are its own from source and reports that,
  // then enqueues the plan's warm-up launches in order on zero-filled
  // buffers, reporting each start and waiting for each (a program built by
  // the compiling process is created when its first launch comes, from the
  // driver's cache), so that the driver's own cache holds the programs and
  // their work-group functions. The file is deleted once read. A damaged
  // file is InvalidArgument; one for another device is FailedPrecondition;
  // a failed launch is skipped and its error returned at the end.
  [[nodiscard]] absl::Status RunBuildPlan(const std::string& path,
                                          const BuildPlanProgress& progress = {}) const;

  // Internal state shared with engines and recordings.
  const std::shared_ptr<internal::ContextState>& state() const { return state_; }

 private:
  explicit Context(std::shared_ptr<internal::ContextState> state) : state_(std::move(state)) {}
  std::shared_ptr<internal::ContextState> state_;
};

}  // namespace recq

#endif  // RECQ_CONTEXT_H_
