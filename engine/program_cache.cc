#include "engine/program_cache.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/opencl/cl_error.h"
#include "engine/engine_file/pocl_binary.h"
#include "recq/log.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
      CL_SUCCESS) {
    return "(no build log)";
  }
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

absl::StatusOr<cl::UniqueProgram> BuildFromSource(cl_context context, cl_device_id device,
                                                  absl::string_view source,
                                                  const std::string& option_string) {
  const char* text = source.data();
  size_t length = source.size();
  cl_int err = CL_SUCCESS;
  cl::UniqueProgram program(clCreateProgramWithSource(context, 1, &text, &length, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateProgramWithSource"));
  // -w: the kernels are recq's own, and their warnings reach nobody who can
  // act on them. PoCL's compiler writes its count to the process's stderr
  // ("21 warnings generated." per program on AVX2 hosts, where its float16
  // builtins draw -Wpsabi), into the output of every cold compile.
  const std::string built_with = option_string.empty() ? "-w" : absl::StrCat(option_string, " -w");
  err = clBuildProgram(program.get(), 1, &device, built_with.c_str(), nullptr, nullptr);
  if (err == CL_BUILD_PROGRAM_FAILURE) {
    return absl::InvalidArgumentError(
        absl::StrCat("clBuildProgram: CL_BUILD_PROGRAM_FAILURE with options '", option_string,
                     "':\n", BuildLog(program.get(), device)));
  }
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clBuildProgram"));
  return program;
}

// BuildFromBinary creates and builds (as OpenCL requires for binaries) a
// program from a binary for `device`. A PoCL binary whose layout is broken
// is InvalidArgument here: PoCL itself would abort the process.
absl::StatusOr<cl::UniqueProgram> BuildFromBinary(cl_context context, cl_device_id device,
                                                  const std::vector<uint8_t>& binary,
                                                  const std::string& option_string) {
  RECQ_RETURN_IF_ERROR(CheckPoclBinary(binary));
  const unsigned char* data = binary.data();
  size_t size = binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl::UniqueProgram program(
      clCreateProgramWithBinary(context, 1, &device, &size, &data, &binary_status, &err));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(err, "clCreateProgramWithBinary"));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(binary_status, "clCreateProgramWithBinary(binary_status)"));
  RECQ_RETURN_IF_ERROR(cl::CheckCl(
      clBuildProgram(program.get(), 1, &device, option_string.c_str(), nullptr, nullptr),
      "clBuildProgram(binary)"));
  return program;
}

// MemoryKey keys a program in a ProgramCache: `sorted` (its build options,
// sorted) and its source.
std::string MemoryKey(absl::Span<const std::string> sorted, absl::string_view source) {
  return absl::StrCat(absl::StrJoin(sorted, " "), "\n", source);
}

std::vector<std::string> Sorted(absl::Span<const std::string> options) {
  std::vector<std::string> sorted(options.begin(), options.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

}  // namespace

// ProgramBinary returns the binary of a built `program` for `device`.
absl::StatusOr<std::vector<uint8_t>> ProgramBinary(cl_program program, cl_device_id device) {
  cl_uint num_devices = 0;
  RECQ_RETURN_IF_ERROR(cl::CheckCl(
      clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof(num_devices), &num_devices, nullptr),
      "clGetProgramInfo(CL_PROGRAM_NUM_DEVICES)"));
  std::vector<cl_device_id> devices(num_devices);
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetProgramInfo(program, CL_PROGRAM_DEVICES, num_devices * sizeof(cl_device_id),
                                   devices.data(), nullptr),
                  "clGetProgramInfo(CL_PROGRAM_DEVICES)"));
  auto it = std::find(devices.begin(), devices.end(), device);
  if (it == devices.end()) {
    return absl::InternalError("clGetProgramInfo(CL_PROGRAM_DEVICES): the device is not listed");
  }
  const size_t index = static_cast<size_t>(it - devices.begin());
  std::vector<size_t> sizes(num_devices);
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, num_devices * sizeof(size_t),
                                   sizes.data(), nullptr),
                  "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)"));
  if (sizes[index] == 0) {
    return absl::UnimplementedError("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES): no binary");
  }
  std::vector<uint8_t> binary(sizes[index]);
  // Null entries tell the driver to skip the other devices' binaries.
  std::vector<unsigned char*> pointers(num_devices, nullptr);
  pointers[index] = binary.data();
  RECQ_RETURN_IF_ERROR(
      cl::CheckCl(clGetProgramInfo(program, CL_PROGRAM_BINARIES,
                                   num_devices * sizeof(unsigned char*), pointers.data(), nullptr),
                  "clGetProgramInfo(CL_PROGRAM_BINARIES)"));
  // Never stored or written into an engine file where PoCL could not read it back.
  RECQ_RETURN_IF_ERROR(CheckPoclBinary(binary));
  return binary;
}

std::string OptionString(absl::Span<const std::string> options) {
  return absl::StrJoin(Sorted(options), " ");
}

absl::StatusOr<SharedProgram> ProgramCache::GetOrBuild(absl::string_view source,
                                                       absl::Span<const std::string> options,
                                                       ProgramOrigin* origin) {
  return GetOrLoad(source, options, absl::string_view(), origin);
}

std::shared_ptr<ProgramCache::Entry> ProgramCache::EntryFor(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Entry>& entry = programs_[key];
  if (entry == nullptr) entry = std::make_shared<Entry>();
  return entry;
}

absl::StatusOr<SharedProgram> ProgramCache::GetOrLoad(absl::string_view source,
                                                      absl::Span<const std::string> options,
                                                      absl::string_view given_binary,
                                                      ProgramOrigin* origin) {
  const std::vector<std::string> sorted = Sorted(options);
  // OptionString(options), from `sorted`, which also keys the disk cache.
  const std::string option_string = absl::StrJoin(sorted, " ");
  const std::string key = MemoryKey(sorted, source);
  if (origin != nullptr) *origin = ProgramOrigin::kMemory;

  // Builds of one key are serialized (two engines compiling at once share
  // one build); different keys build concurrently.
  std::shared_ptr<Entry> entry = EntryFor(key);
  std::lock_guard<std::mutex> lock(entry->mu);
  if (entry->program != nullptr) return entry->program;

  cl::UniqueProgram program;
  ProgramOrigin from = ProgramOrigin::kSource;
  if (!given_binary.empty()) {
    std::vector<uint8_t> binary(given_binary.begin(), given_binary.end());
    absl::StatusOr<cl::UniqueProgram> loaded =
        BuildFromBinary(context_, device_, binary, option_string);
    if (loaded.ok()) {
      program = *std::move(loaded);
      from = ProgramOrigin::kBinary;
    } else {
      Log(LogLevel::kWarning, absl::StrCat("program cache: the given binary is not used (",
                                           loaded.status().ToString(), ")"));
    }
  }
  // The disk cache is an optimization: failing to hash, read, or write it
  // only means building from source.
  std::optional<BinaryCacheKey> disk_key;
  if (!program && disk_ != nullptr) {
    absl::StatusOr<BinaryCacheKey> k = MakeBinaryCacheKey(source, sorted, *device_info_);
    if (k.ok()) disk_key = *k;
  }
  if (disk_key.has_value()) {
    if (std::optional<std::vector<uint8_t>> binary = disk_->Load(*disk_key)) {
      absl::StatusOr<cl::UniqueProgram> loaded =
          BuildFromBinary(context_, device_, *binary, option_string);
      if (loaded.ok()) {
        program = *std::move(loaded);
        from = ProgramOrigin::kDisk;
      } else {
        Log(LogLevel::kWarning,
            absl::StrCat("binary cache: entry ", disk_->PathFor(*disk_key), " is not used (",
                         loaded.status().ToString(), "); building from source"));
        disk_->MarkInvalid();  // rebuilt below and overwritten
      }
    }
  }
  if (!program) {
    RECQ_ASSIGN_OR_RETURN(program, BuildFromSource(context_, device_, source, option_string));
    if (disk_key.has_value()) {
      // Stored by FlushPendingBinaries, after the engine's warm-up.
      entry->pending_store = disk_key;
      entry->pending_source = HandedOffProgram{std::string(source), sorted, {}};
      std::lock_guard<std::mutex> pending_lock(mu_);
      pending_.push_back(entry);
    }
  }
  entry->program = std::make_shared<const cl::UniqueProgram>(std::move(program));
  if (origin != nullptr) *origin = from;
  return entry->program;
}

bool ProgramCache::WouldBuildFromSource(absl::string_view source,
                                        absl::Span<const std::string> options) {
  const std::vector<std::string> sorted = Sorted(options);
  const std::string key = MemoryKey(sorted, source);
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = programs_.find(key);
    if (it != programs_.end()) entry = it->second;
  }
  if (entry != nullptr) {
    std::lock_guard<std::mutex> entry_lock(entry->mu);
    if (entry->program != nullptr) return false;
  }
  if (disk_ == nullptr) return true;
  absl::StatusOr<BinaryCacheKey> k = MakeBinaryCacheKey(source, sorted, *device_info_);
  if (!k.ok()) return true;
  std::error_code ec;
  return !std::filesystem::exists(disk_->PathFor(*k), ec);
}

absl::StatusOr<cl::UniqueProgram> ProgramCache::BuildUncached(
    absl::string_view source, absl::Span<const std::string> options) const {
  return BuildFromSource(context_, device_, source, OptionString(options));
}

absl::StatusOr<std::vector<uint8_t>> ProgramCache::CurrentBinary(
    cl_program program, absl::string_view source, absl::Span<const std::string> options) const {
  if (!IsPocl()) return ProgramBinary(program, device_);
  RECQ_ASSIGN_OR_RETURN(cl::UniqueProgram fresh,
                        BuildFromSource(context_, device_, source, OptionString(options)));
  return ProgramBinary(fresh.get(), device_);
}

bool ProgramCache::IsPocl() const {
  return device_info_ != nullptr &&
         device_info_->platform_name.find("Portable Computing Language") != std::string::npos;
}

absl::Status ProgramCache::GetOrBuildAll(absl::Span<ProgramRequest> requests, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // PoCL compiles under one lock per cl_context, so its builds do not run
  // in parallel; and the bitcode it keeps in a program binary carries the
  // metadata kinds that context's LLVM context has registered so far, so
  // the order of builds shows in the binaries. One thread, in request order,
  // keeps engine files reproducible at no cost.
  if (IsPocl()) threads = 1;
  threads = std::min<unsigned>(threads, static_cast<unsigned>(requests.size()));
  std::atomic<size_t> next{0};
  std::vector<absl::Status> status(requests.size());
  auto work = [&] {
    for (size_t i = next++; i < requests.size(); i = next++) {
      ProgramRequest& r = requests[i];
      absl::StatusOr<SharedProgram> p = GetOrLoad(r.source, r.options, r.binary, &r.origin);
      if (p.ok()) {
        r.program = *std::move(p);
      } else {
        status[i] = p.status();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const absl::Status& s : status) RECQ_RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

void ProgramCache::StorePending(Entry& entry) {
  std::lock_guard<std::mutex> lock(entry.mu);
  if (!entry.pending_store.has_value()) return;
  if (entry.program == nullptr) {  // a merged program's part (ReplacePendingStore)
    if (entry.pending_source.has_value()) StoreFromSource(*entry.pending_source).IgnoreError();
    entry.pending_store.reset();
    entry.pending_source.reset();
    return;
  }
  absl::StatusOr<std::vector<uint8_t>> binary = ProgramBinary(entry.program->get(), device_);
  // A failed store is counted by the cache and otherwise ignored.
  if (binary.ok()) disk_->Store(*entry.pending_store, *binary).IgnoreError();
  entry.pending_store.reset();
  entry.pending_source.reset();
}

std::vector<HandedOffProgram> ProgramCache::TakePending() {
  std::vector<std::shared_ptr<Entry>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(pending_);
  }
  std::vector<HandedOffProgram> out;
  for (const std::shared_ptr<Entry>& entry : pending) {
    std::lock_guard<std::mutex> lock(entry->mu);
    if (!entry->pending_store.has_value() || !entry->pending_source.has_value()) continue;
    out.push_back(*std::move(entry->pending_source));
    entry->pending_store.reset();
    entry->pending_source.reset();
  }
  return out;
}

void ProgramCache::ReplacePendingStore(absl::string_view source,
                                       absl::Span<const std::string> options,
                                       std::vector<HandedOffProgram> parts) {
  const std::string key = MemoryKey(Sorted(options), source);
  std::shared_ptr<Entry> merged;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = programs_.find(key);
    if (it != programs_.end()) merged = it->second;
  }
  if (merged != nullptr) {
    std::lock_guard<std::mutex> lock(merged->mu);
    if (!merged->pending_store.has_value()) return;  // not built from source here
    merged->pending_store.reset();
    merged->pending_source.reset();
  }
  if (disk_ == nullptr) return;
  for (HandedOffProgram& part : parts) {
    std::sort(part.options.begin(), part.options.end());
    absl::StatusOr<BinaryCacheKey> k = MakeBinaryCacheKey(part.source, part.options, *device_info_);
    if (!k.ok()) continue;
    auto entry = std::make_shared<Entry>();  // no program: built from source when stored
    entry->pending_store = *k;
    entry->pending_source = std::move(part);
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(std::move(entry));
  }
}

absl::Status ProgramCache::StoreFromSource(const HandedOffProgram& program,
                                           const std::function<absl::Status(cl_program)>& warm) {
  if (disk_ == nullptr) {
    return absl::FailedPreconditionError(
        "storing a program binary needs a binary cache; it is off");
  }
  std::vector<std::string> sorted = program.options;
  std::sort(sorted.begin(), sorted.end());
  RECQ_ASSIGN_OR_RETURN(const BinaryCacheKey key,
                        MakeBinaryCacheKey(program.source, sorted, *device_info_));
  if (disk_->Load(key).has_value()) return absl::OkStatus();  // stored meanwhile
  RECQ_ASSIGN_OR_RETURN(cl::UniqueProgram built, BuildFromSource(context_, device_, program.source,
                                                                 absl::StrJoin(sorted, " ")));
  // The launches compile what the driver compiles lazily (PoCL's
  // work-group functions), so that the binary holds them.
  if (warm) RECQ_RETURN_IF_ERROR(warm(built.get()));
  RECQ_ASSIGN_OR_RETURN(std::vector<uint8_t> binary, ProgramBinary(built.get(), device_));
  return disk_->Store(key, binary);
}

bool ProgramCache::SerializingIsCheap() const { return !IsPocl(); }

bool ProgramCache::BuildCostIsPerProgram() const {
  const char* env = std::getenv("RECQ_MERGE_PROGRAMS");
  return IsPocl() && !(env != nullptr && absl::string_view(env) == "off");
}

void ProgramCache::WriterLoop() {
#ifdef __linux__
  // Linux gives each thread its own nice value: the writer yields the CPU to
  // the threads that run inference. Failing only leaves it at normal priority.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
#endif
  std::unique_lock<std::mutex> lock(writer_mu_);
  while (true) {
    writer_cv_.wait(lock, [&] { return stop_ || !to_write_.empty(); });
    if (to_write_.empty()) return;  // stop_, nothing left
    std::shared_ptr<Entry> entry = std::move(to_write_.front());
    to_write_.pop_front();
    lock.unlock();
    StorePending(*entry);
    lock.lock();
  }
}

void ProgramCache::FlushPendingBinaries() {
  std::vector<std::shared_ptr<Entry>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(pending_);
  }
  if (pending.empty()) return;
  std::lock_guard<std::mutex> lock(writer_mu_);
  to_write_.insert(to_write_.end(), pending.begin(), pending.end());
  if (!writer_.joinable()) writer_ = std::thread([this] { WriterLoop(); });
  writer_cv_.notify_all();
}

ProgramCache::~ProgramCache() {
  {
    std::lock_guard<std::mutex> lock(writer_mu_);
    stop_ = true;  // the writer finishes what it was handed, then returns
    writer_cv_.notify_all();
  }
  if (writer_.joinable()) writer_.join();
  std::vector<std::shared_ptr<Entry>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(pending_);
  }
  if (pending.empty()) return;
  if (IsPocl()) {
    Log(LogLevel::kInfo,
        absl::StrCat("program binary cache: ", pending.size(),
                     " programs built from source were not stored (no FlushBinaryCache); "
                     "PoCL's kernel cache keeps them"));
    return;
  }
  for (const std::shared_ptr<Entry>& entry : pending) StorePending(*entry);
}

size_t ProgramCache::size() const {
  // Entries are copied first: GetOrLoad takes an entry's mutex, then mu_.
  std::vector<std::shared_ptr<Entry>> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, entry] : programs_) entries.push_back(entry);
  }
  size_t built = 0;
  for (const std::shared_ptr<Entry>& entry : entries) {
    std::lock_guard<std::mutex> entry_lock(entry->mu);
    built += entry->program != nullptr;
  }
  return built;
}

}  // namespace recq::internal
