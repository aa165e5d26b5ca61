// ProgramCache: builds each (kernel source, build options) pair once per
// context and device, and hands out shared references to the program. On a
// miss it first tries the BinaryCache on disk (when there is one); the
// binaries of programs it builds from source are stored there on a background
// thread once the owner flushes (FlushPendingBinaries).
#ifndef RECQ_ENGINE_PROGRAM_CACHE_H_
#define RECQ_ENGINE_PROGRAM_CACHE_H_

#include <CL/cl.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backends/opencl/cl_handle.h"
#include "engine/binary_cache.h"
#include "engine/binary_handoff.h"
#include "recq/context.h"

namespace recq::internal {

// A built program shared by every engine and recording that uses it.
using SharedProgram = std::shared_ptr<const cl::UniqueProgram>;

// Where GetOrBuild found a program.
// OptionString is the build-option string a program is built and keyed with:
// `options` sorted (their order does not matter) and joined by spaces.
std::string OptionString(absl::Span<const std::string> options);

enum class ProgramOrigin {
  kMemory,  // built earlier in this context
  kDisk,    // created from a binary in the BinaryCache
  kSource,  // compiled from source by this call
  kBinary,  // created from a binary the caller gave (an engine file's)
};

// One program to get from a ProgramCache: its full source and build
// options, and optionally a binary for the cache's device to try first.
struct ProgramRequest {
  std::string source;
  std::vector<std::string> options;
  absl::string_view binary;  // not owned; empty: none
  // Filled by GetOrBuildAll:
  SharedProgram program;
  ProgramOrigin origin = ProgramOrigin::kMemory;
};

class ProgramCache {
 public:
  // `context`, `device`, `device_info` and `disk` are not owned; the owner of
  // the cache keeps them alive. `disk` may be null: no persistent cache.
  ProgramCache(cl_context context, cl_device_id device, const DeviceInfo* device_info,
               BinaryCache* disk)
      : context_(context), device_(device), device_info_(device_info), disk_(disk) {}

  // GetOrBuild returns the program built from `source` with `options`
  // (order-insensitive). On a miss it loads the binary from disk, or, when
  // there is none or the driver rejects it, builds from source and stores
  // the binary (disk errors are ignored, counted by the BinaryCache).
  // `*origin` (if non-null) tells where the program came from. A build
  // failure is InvalidArgument with the compiler's log; it is not cached.
  // Thread-safe.
  [[nodiscard]] absl::StatusOr<SharedProgram> GetOrBuild(absl::string_view source,
                                                         absl::Span<const std::string> options,
                                                         ProgramOrigin* origin = nullptr);

  // GetOrLoad is GetOrBuild trying `binary` (for this cache's device) before
  // the disk cache and the source; a binary the driver rejects is ignored.
  // `*origin` is kBinary when the binary was used. Thread-safe.
  [[nodiscard]] absl::StatusOr<SharedProgram> GetOrLoad(absl::string_view source,
                                                        absl::Span<const std::string> options,
                                                        absl::string_view binary,
                                                        ProgramOrigin* origin = nullptr);

  // GetOrBuildAll gets every request's program (GetOrLoad when it has a
  // binary, else GetOrBuild), on up to `threads` threads (0: one per
  // hardware thread). Different programs build concurrently; the first
  // failure is returned.
  [[nodiscard]] absl::Status GetOrBuildAll(absl::Span<ProgramRequest> requests,
                                           unsigned threads = 0);

  // CurrentBinary returns a binary of `program` (built from `source` with
  // `options`) holding what the driver has built for it so far. PoCL
  // serializes a program once, at its first binary query, and a program it
  // created from a binary (the disk cache's) answers with that binary: neither
  // holds the work-group functions compiled since, such as this engine's
  // warm-up's. On PoCL the program is therefore built afresh from its source
  // (a hit in PoCL's own kernel cache, which holds those functions) and that
  // build is serialized; on other drivers `program` is queried.
  [[nodiscard]] absl::StatusOr<std::vector<uint8_t>> CurrentBinary(
      cl_program program, absl::string_view source, absl::Span<const std::string> options) const;

  // FlushPendingBinaries hands the binaries of the programs built from
  // source since the last flush to a background writer thread, which stores
  // them in the disk cache, and returns at once. Context::FlushBinaryCache
  // calls it, after the engines' warm-ups: a driver that adds code to a
  // program lazily at the first enqueue (PoCL's work-group functions)
  // includes it in the binary it serializes at the first binary query, and
  // keeps that serialization. Compile does not: for PoCL the first binary
  // query also compiles a generic work-group function per kernel, seconds
  // of CPU a program when cold. The writer runs at the lowest CPU priority
  // (Linux: nice 19 for its thread); while it queries a program PoCL holds
  // its compile lock, so a Compile in another thread waits for that program.
  // Disk errors are counted by the BinaryCache and otherwise ignored.
  void FlushPendingBinaries();

  // TakePending returns the sources and options of the programs built from
  // source since the last flush and forgets them, for another process to
  // store (Context::HandOffBinaryCache).
  std::vector<HandedOffProgram> TakePending();

  // StoreFromSource builds `program` from source and stores its binary in
  // the disk cache, unless an entry for it is there already. Build and disk
  // errors are returned; with no disk cache it is FailedPrecondition.
  [[nodiscard]] absl::Status StoreFromSource(
      const HandedOffProgram& program,
      const std::function<absl::Status(cl_program)>& warm = nullptr);

  // ReplacePendingStore: the program built from `source` and `options` (a
  // merged one, engine/program_merge.h) is not stored; `parts`, the
  // programs merged into it, are instead, each built from its own source
  // (by FlushPendingBinaries, or by the process a hand-off goes to, which
  // runs their launches first).
  void ReplacePendingStore(absl::string_view source, absl::Span<const std::string> options,
                           std::vector<HandedOffProgram> parts);

  // SerializingIsCheap is false where a binary query compiles code (PoCL).
  bool SerializingIsCheap() const;

  // BuildsOneAtATime is true where the driver compiles one program at a
  // time per process (PoCL: one compiler lock), so that only another
  // process builds in parallel.
  bool BuildsOneAtATime() const { return IsPocl(); }

  // BuildCostIsPerProgram is true where each program built from source
  // costs much beyond its size (PoCL: the OpenCL C header, common.cl and
  // the kernel library again), so that compiles merge programs
  // (engine/program_merge.h). $RECQ_MERGE_PROGRAMS=off makes it false.
  bool BuildCostIsPerProgram() const;

  // WouldBuildFromSource tells whether GetOrBuild of `source` and `options`
  // would compile from source: it is neither built in this context nor in
  // the disk cache.
  bool WouldBuildFromSource(absl::string_view source, absl::Span<const std::string> options);

  // BuildUncached builds `source` with `options` from source, outside this
  // cache (a build helper's work: the driver's own cache keeps the result).
  [[nodiscard]] absl::StatusOr<cl::UniqueProgram> BuildUncached(
      absl::string_view source, absl::Span<const std::string> options) const;

  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;
  // Waits for the binaries already handed to the writer (FlushPendingBinaries).
  // Programs never flushed are stored now where serializing is cheap (not on
  // PoCL) and dropped on PoCL, so that a process that exits after its result
  // does not spend seconds compiling generic work-group functions for the
  // next start: PoCL's own kernel cache (POCL_CACHE_DIR) still keeps those
  // programs, and a later start builds them from source against it.
  ~ProgramCache();

  size_t size() const;

 private:
  bool IsPocl() const;  // the device is PoCL's
  // One cached program; its mutex serializes the builds of one key, so that
  // different keys build concurrently.
  struct Entry {
    std::mutex mu;
    SharedProgram program;                           // null until built
    std::optional<BinaryCacheKey> pending_store;     // built from source, not yet stored
    std::optional<HandedOffProgram> pending_source;  // what pending_store was built from
  };
  std::shared_ptr<Entry> EntryFor(const std::string& key);

  cl_context context_;
  cl_device_id device_;
  const DeviceInfo* device_info_;
  BinaryCache* disk_;
  // Guards programs_ and pending_. Lock order: an Entry::mu before mu_,
  // never the other way round.
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> programs_;
  std::vector<std::shared_ptr<Entry>> pending_;  // entries with a pending_store

  // StorePending stores `entry`'s binary if it is still pending.
  void StorePending(Entry& entry);
  void WriterLoop();
  // The background writer. Lock order: writer_mu_ is never held while
  // taking an Entry::mu or mu_.
  std::mutex writer_mu_;
  std::condition_variable writer_cv_;
  std::deque<std::shared_ptr<Entry>> to_write_;  // handed over, not yet stored
  bool stop_ = false;
  std::thread writer_;  // started by the first FlushPendingBinaries
};

// ProgramBinary returns the binary of a built `program` for `device`
// (Unimplemented when the driver has none; InvalidArgument for a PoCL binary
// that PoCL could not read back, see CheckPoclBinary).
[[nodiscard]] absl::StatusOr<std::vector<uint8_t>> ProgramBinary(cl_program program,
                                                                 cl_device_id device);

}  // namespace recq::internal

#endif  // RECQ_ENGINE_PROGRAM_CACHE_H_
