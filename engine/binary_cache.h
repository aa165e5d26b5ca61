// BinaryCache: a directory of OpenCL program binaries that outlives the
// process, so that a second run of recq skips the kernel compiler.
//
//   std::optional<std::string> dir = ResolveBinaryCacheDir(options.cache_dir);
//   auto cache = dir ? std::make_unique<BinaryCache>(*dir) : nullptr;
//   BinaryCacheKey key = MakeBinaryCacheKey(source, options, device_info).value();
//   if (auto bytes = cache->Load(key)) { ...clCreateProgramWithBinary... }
//   else { ...build from source...; (void)cache->Store(key, binary); }
//
// One entry per key, named by the key's hex digest. An entry is a header
// (magic, format version, the key digest, payload size, SHA-256 of the
// payload) followed by the payload. Load checks all of it; a corrupt,
// truncated or foreign entry is a miss, counted in stats(). Store writes a
// temporary file in the directory and renames it over the entry, so readers
// in other threads or processes see either the old entry or the new one,
// never a partial file. Disk errors never fail a compile: Store reports them
// as a Status that callers may drop, and Load treats them as a miss.
//
// Size cap: after each Store the entries' total size is kept within
// max_bytes by deleting the least recently used entries (a Load marks an
// entry used by touching its modification time). Only files named like
// entries or like recq's temporary files are ever deleted; other files in
// the directory are left alone and not counted.
// Crashed writers: a temporary file ("<entry>.tmp.<pid>.<nonce>") whose
// writer process is gone, or older than an hour, is deleted at the first
// use of the cache and after each Store.
// An unusable directory (a file, read-only, full disk...) means compiling
// from source; the first failure is logged once per BinaryCache as a warning
// through recq/log.h.
// Thread-safe.
#ifndef RECQ_ENGINE_BINARY_CACHE_H_
#define RECQ_ENGINE_BINARY_CACHE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "recq/context.h"

namespace recq::internal {

// Bumped whenever the entry layout or the key's inputs change; part of both
// the key and the header, so old entries become misses.
inline constexpr uint32_t kBinaryCacheFormatVersion = 1;

// The default size cap; $RECQ_CACHE_MAX_BYTES overrides it (see
// BinaryCacheMaxBytesFromEnv).
inline constexpr uint64_t kDefaultBinaryCacheMaxBytes = uint64_t{256} << 20;

// BinaryCacheMaxBytesFromEnv returns $RECQ_CACHE_MAX_BYTES when it is a
// positive integer (bytes), else kDefaultBinaryCacheMaxBytes.
uint64_t BinaryCacheMaxBytesFromEnv();

// The SHA-256 digest that names one cache entry.
struct BinaryCacheKey {
  std::array<uint8_t, 32> digest{};

  // Hex returns the 64 lowercase hex digits of the digest (the file name).
  std::string Hex() const;
  friend bool operator==(const BinaryCacheKey& a, const BinaryCacheKey& b) {
    return a.digest == b.digest;
  }
};

// MakeBinaryCacheKey hashes the kernel source, the build options (sorted, so
// their order does not matter), the device's name, driver version and
// version, the platform's name and version, and kBinaryCacheFormatVersion.
// Fails (Internal) only if OpenSSL's digest fails.
[[nodiscard]] absl::StatusOr<BinaryCacheKey> MakeBinaryCacheKey(
    absl::string_view source, absl::Span<const std::string> options, const DeviceInfo& device);

// ResolveBinaryCacheDir returns the cache directory, or nullopt when caching
// is off. `override_dir` (ContextOptions::cache_dir) wins when non-empty;
// otherwise $RECQ_CACHE_DIR when set and non-empty; otherwise
// $XDG_CACHE_HOME/recq, else $HOME/.cache/recq. The value "off" (from either
// source) turns caching off, as does having no HOME to default to.
std::optional<std::string> ResolveBinaryCacheDir(const std::string& override_dir);

class BinaryCache {
 public:
  // Counters since construction; each is a number of entries.
  struct Stats {
    size_t loaded = 0;        // valid entries returned by Load
    size_t missing = 0;       // Load found no entry
    size_t invalid = 0;       // entries rejected by Load or by MarkInvalid
    size_t stored = 0;        // entries written by Store
    size_t store_failed = 0;  // Store calls that failed (disk full, read-only...)
    size_t evicted = 0;       // entries deleted to stay within the size cap
    size_t stale_temps = 0;   // temporary files of crashed writers deleted
  };

  // The directory is created on the first Store; it need not exist yet.
  explicit BinaryCache(std::string directory, uint64_t max_bytes = BinaryCacheMaxBytesFromEnv());
  BinaryCache(const BinaryCache&) = delete;
  BinaryCache& operator=(const BinaryCache&) = delete;

  // Load returns the payload stored under `key`, or nullopt when there is no
  // valid entry (missing, unreadable, or failing any header or hash check).
  std::optional<std::vector<uint8_t>> Load(const BinaryCacheKey& key);

  // Store writes `payload` under `key` atomically, replacing any entry. An
  // error says which file operation failed; the cache stays consistent.
  [[nodiscard]] absl::Status Store(const BinaryCacheKey& key, absl::Span<const uint8_t> payload);

  // MarkInvalid counts an entry that passed Load's checks but that the
  // driver rejected; the caller then rebuilds and Stores over it.
  void MarkInvalid() { invalid_.fetch_add(1, std::memory_order_relaxed); }

  // PathFor returns the entry's file path.
  std::string PathFor(const BinaryCacheKey& key) const;
  const std::string& directory() const { return directory_; }
  uint64_t max_bytes() const { return max_bytes_; }
  Stats stats() const;

 private:
  // Tidy deletes stale temporary files and, when the entries exceed the cap,
  // the least recently used entries (never `keep`).
  void Tidy(const std::string& keep);
  // WarnOnce logs the first problem with the directory.
  void WarnOnce(absl::string_view problem);

  const std::string directory_;
  const uint64_t max_bytes_;
  std::atomic<bool> warned_{false};
  std::atomic<bool> tidied_{false};
  std::mutex tidy_mu_;  // one Tidy at a time per cache
  std::atomic<size_t> evicted_{0};
  std::atomic<size_t> stale_temps_{0};
  std::atomic<size_t> loaded_{0};
  std::atomic<size_t> missing_{0};
  std::atomic<size_t> invalid_{0};
  std::atomic<size_t> stored_{0};
  std::atomic<size_t> store_failed_{0};
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_BINARY_CACHE_H_
