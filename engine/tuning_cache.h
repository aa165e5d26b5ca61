// TuningCache: the auto-tuner's choices on disk, one small text file per
// key, in a "tuning" directory inside the binary cache's directory.
//
//   TuningCache cache(binary_cache_dir + "/tuning");
//   if (auto entry = cache.Load(key, &corrupt)) { ...use entry->variant, params... }
//   else { ...measure...; (void)cache.Store(key, entry); }
//
// An entry is text: a magic line with the format version, the full key, the
// chosen variant, its parameters, the measured time, and a SHA-256 of those
// lines. Load checks all of it: a truncated, edited or foreign entry (another
// key hashing to the same name) is a miss and flagged corrupt, so the tuner
// measures again and stores over it. Store writes a temporary file and
// renames it over the entry. Disk errors never fail a compile. Thread-safe
// (no state besides the directory).
#ifndef RECQ_ENGINE_TUNING_CACHE_H_
#define RECQ_ENGINE_TUNING_CACHE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "recq/op_registry.h"

namespace recq::internal {

// Bumped whenever the entry layout or the key's inputs change.
inline constexpr int kTuningCacheFormatVersion = 1;

struct TuningEntry {
  std::string variant;  // the kernel variant's name
  KernelParams params;  // empty: the variant's heuristic
  double ms = 0;        // measured device time of the choice
};

// Sha256Hex returns the 64 lowercase hex digits of SHA-256(`data`); Internal
// if OpenSSL's digest fails.
[[nodiscard]] absl::StatusOr<std::string> Sha256Hex(absl::string_view data);

class TuningCache {
 public:
  // The directory is created on the first Store.
  explicit TuningCache(std::string directory) : directory_(std::move(directory)) {}

  // Load returns the entry stored under `key`, or nullopt; `*corrupt` tells
  // whether a file was there but failed a check.
  std::optional<TuningEntry> Load(const std::string& key, bool* corrupt) const;
  // Store writes `entry` under `key`, replacing any entry; an error names the
  // file operation that failed.
  [[nodiscard]] absl::Status Store(const std::string& key, const TuningEntry& entry) const;
  // PathFor returns the entry's file ("" if hashing fails).
  std::string PathFor(const std::string& key) const;
  const std::string& directory() const { return directory_; }

 private:
  const std::string directory_;
};

}  // namespace recq::internal

#endif  // RECQ_ENGINE_TUNING_CACHE_H_
