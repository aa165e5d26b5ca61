#include "engine/binary_cache.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "recq/log.h"

namespace recq::internal {

namespace {

using Digest = std::array<uint8_t, 32>;

constexpr char kMagic[8] = {'R', 'E', 'C', 'Q', 'P', 'B', 'I', 'N'};
// magic, format version (u32), key digest, payload size (u64), payload digest.
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 + 32 + 8 + 32;

// Sha256 is an incremental SHA-256 through OpenSSL's EVP interface. A failed
// OpenSSL call makes Finish return an error.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1;
  }
  void Update(const void* data, size_t size) {
    if (ok_ && size > 0) ok_ = EVP_DigestUpdate(ctx_.get(), data, size) == 1;
  }
  // Field hashes a length-prefixed string, so that field boundaries are part
  // of the digest ("ab","c" and "a","bc" differ).
  void Field(absl::string_view text) {
    uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t{text.size()} >> (8 * i));
    Update(length, sizeof(length));
    Update(text.data(), text.size());
  }
  absl::StatusOr<Digest> Finish() {
    Digest digest{};
    unsigned int size = 0;
    if (!ok_ || EVP_DigestFinal_ex(ctx_.get(), digest.data(), &size) != 1 ||
        size != digest.size()) {
      return absl::InternalError("SHA-256 through OpenSSL EVP failed");
    }
    return digest;
  }

 private:
  struct Free {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx_;
  bool ok_ = false;
};

void PutLe(uint64_t value, size_t bytes, std::vector<uint8_t>& out) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint64_t GetLe(const uint8_t* data, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= uint64_t{data[i]} << (8 * i);
  return value;
}

std::string ErrnoMessage(absl::string_view what, const std::string& path, int error) {
  return absl::StrCat(what, " '", path, "': ", std::generic_category().message(error));
}

// ReadFile reads all of `path`; nullopt when it cannot be opened or read.
std::optional<std::vector<uint8_t>> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::vector<uint8_t> bytes;
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0) bytes.reserve(static_cast<size_t>(st.st_size));
  uint8_t buffer[1 << 16];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  close(fd);
  return bytes;
}

absl::Status WriteAll(int fd, const uint8_t* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::UnavailableError(ErrnoMessage("write", path, errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// A temporary file older than this is stale even if its writer's pid is in
// use (pids are reused).
constexpr int64_t kStaleTempSeconds = 3600;

bool IsEntryName(absl::string_view name) {
  if (name.size() != 64) return false;
  for (char c : name) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// TempWriterPid returns the writer's pid of a temporary file name
// "<entry>.tmp.<pid>.<nonce>", or 0 if `name` is not one.
pid_t TempWriterPid(absl::string_view name) {
  std::vector<absl::string_view> parts = absl::StrSplit(name, '.');
  if (parts.size() != 4 || !IsEntryName(parts[0]) || parts[1] != "tmp") return 0;
  int64_t pid = 0;
  if (!absl::SimpleAtoi(parts[2], &pid) || pid <= 0 || pid > INT32_MAX) return 0;
  return static_cast<pid_t>(pid);
}

bool ProcessGone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

uint64_t BinaryCacheMaxBytesFromEnv() {
  const char* text = std::getenv("RECQ_CACHE_MAX_BYTES");
  uint64_t value = 0;
  if (text != nullptr && absl::SimpleAtoi(text, &value) && value > 0) return value;
  return kDefaultBinaryCacheMaxBytes;
}

std::string BinaryCacheKey::Hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (uint8_t byte : digest) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xf]);
  }
  return hex;
}

absl::StatusOr<BinaryCacheKey> MakeBinaryCacheKey(absl::string_view source,
                                                  absl::Span<const std::string> options,
                                                  const DeviceInfo& device) {
  std::vector<std::string> sorted(options.begin(), options.end());
  std::sort(sorted.begin(), sorted.end());
  Sha256 sha;
  sha.Field(absl::StrCat("recq program binary cache v", kBinaryCacheFormatVersion));
  sha.Field(source);
  sha.Field(absl::StrCat(sorted.size()));
  for (const std::string& option : sorted) sha.Field(option);
  sha.Field(device.name);
  sha.Field(device.driver_version);
  sha.Field(device.version);
  sha.Field(device.platform_name);
  sha.Field(device.platform_version);
  absl::StatusOr<Digest> digest = sha.Finish();
  if (!digest.ok()) return digest.status();
  BinaryCacheKey key;
  key.digest = *digest;
  return key;
}

std::optional<std::string> ResolveBinaryCacheDir(const std::string& override_dir) {
  std::string dir = override_dir;
  if (dir.empty()) {
    if (const char* env = std::getenv("RECQ_CACHE_DIR"); env != nullptr) dir = env;
  }
  if (dir == "off") return std::nullopt;
  if (!dir.empty()) return dir;
  // The XDG base directory spec says to ignore a relative XDG_CACHE_HOME.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return absl::StrCat(xdg, "/recq");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return absl::StrCat(home, "/.cache/recq");
  }
  return std::nullopt;
}

BinaryCache::BinaryCache(std::string directory, uint64_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {}

void BinaryCache::WarnOnce(absl::string_view problem) {
  if (warned_.exchange(true)) return;
  Log(LogLevel::kWarning, absl::StrCat("program binary cache '", directory_, "' is unusable (",
                                       problem, "); compiling from source"));
}

void BinaryCache::Tidy(const std::string& keep) {
  std::lock_guard<std::mutex> lock(tidy_mu_);
  struct Entry {
    std::string path;
    uint64_t bytes;
    int64_t mtime_ns;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  const int64_t now = static_cast<int64_t>(time(nullptr));
  std::error_code ec;
  for (std::filesystem::directory_iterator it(directory_, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string path = it->path().string();
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (const pid_t pid = TempWriterPid(name); pid != 0) {
      if (ProcessGone(pid) || now - static_cast<int64_t>(st.st_mtime) > kStaleTempSeconds) {
        if (unlink(path.c_str()) == 0) stale_temps_.fetch_add(1, std::memory_order_relaxed);
      }
      continue;
    }
    if (!IsEntryName(name)) continue;
    const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
    entries.push_back({path, static_cast<uint64_t>(st.st_size), mtime_ns});
    total += static_cast<uint64_t>(st.st_size);
  }
  if (total <= max_bytes_) return;
  // Least recently used first; ties broken by name for determinism.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.mtime_ns != b.mtime_ns ? a.mtime_ns < b.mtime_ns : a.path < b.path;
  });
  for (const Entry& e : entries) {
    if (total <= max_bytes_) break;
    if (e.path == keep) continue;
    if (unlink(e.path.c_str()) == 0) {
      total -= e.bytes;
      evicted_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

std::string BinaryCache::PathFor(const BinaryCacheKey& key) const {
  return absl::StrCat(directory_, "/", key.Hex());
}

std::optional<std::vector<uint8_t>> BinaryCache::Load(const BinaryCacheKey& key) {
  if (!tidied_.exchange(true)) Tidy("");
  const std::string path = PathFor(key);
  std::optional<std::vector<uint8_t>> file = ReadFile(path);
  if (!file.has_value()) {
    if (errno != ENOENT) WarnOnce(ErrnoMessage("read", path, errno));
    missing_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  auto reject = [this]() -> std::optional<std::vector<uint8_t>> {
    invalid_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  };
  const std::vector<uint8_t>& bytes = *file;
  if (bytes.size() < kHeaderBytes) return reject();
  const uint8_t* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) return reject();
  p += sizeof(kMagic);
  if (GetLe(p, 4) != kBinaryCacheFormatVersion) return reject();
  p += 4;
  if (std::memcmp(p, key.digest.data(), key.digest.size()) != 0) return reject();
  p += key.digest.size();
  uint64_t payload_size = GetLe(p, 8);
  p += 8;
  if (payload_size != bytes.size() - kHeaderBytes) return reject();
  const uint8_t* expected_hash = p;
  Sha256 sha;
  sha.Update(bytes.data() + kHeaderBytes, payload_size);
  absl::StatusOr<Digest> hash = sha.Finish();
  if (!hash.ok() || std::memcmp(hash->data(), expected_hash, hash->size()) != 0) return reject();
  // Marks the entry recently used for the size cap; failing is harmless.
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  loaded_.fetch_add(1, std::memory_order_relaxed);
  return std::vector<uint8_t>(bytes.begin() + kHeaderBytes, bytes.end());
}

absl::Status BinaryCache::Store(const BinaryCacheKey& key, absl::Span<const uint8_t> payload) {
  absl::Status status = [&]() -> absl::Status {
    Sha256 sha;
    sha.Update(payload.data(), payload.size());
    absl::StatusOr<Digest> hash = sha.Finish();
    if (!hash.ok()) return hash.status();
    std::vector<uint8_t> header;
    header.reserve(kHeaderBytes);
    header.insert(header.end(), kMagic, kMagic + sizeof(kMagic));
    PutLe(kBinaryCacheFormatVersion, 4, header);
    header.insert(header.end(), key.digest.begin(), key.digest.end());
    PutLe(payload.size(), 8, header);
    header.insert(header.end(), hash->begin(), hash->end());

    std::error_code ec;
    std::filesystem::create_directories(directory_, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("create directory '", directory_, "': ", ec.message()));
    }
    // A name no other thread or process picks: pid plus 64 random bits.
    std::random_device random;
    uint64_t nonce = (uint64_t{random()} << 32) ^ random();
    std::string temp = absl::StrCat(PathFor(key), ".tmp.", getpid(), ".", absl::Hex(nonce));
    int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return absl::UnavailableError(ErrnoMessage("create", temp, errno));
    absl::Status written = WriteAll(fd, header.data(), header.size(), temp);
    if (written.ok()) written = WriteAll(fd, payload.data(), payload.size(), temp);
    if (close(fd) != 0 && written.ok()) {
      written = absl::UnavailableError(ErrnoMessage("close", temp, errno));
    }
    if (written.ok() && rename(temp.c_str(), PathFor(key).c_str()) != 0) {
      written = absl::UnavailableError(ErrnoMessage("rename", temp, errno));
    }
    if (!written.ok()) unlink(temp.c_str());
    return written;
  }();
  (status.ok() ? stored_ : store_failed_).fetch_add(1, std::memory_order_relaxed);
  if (!status.ok()) {
    WarnOnce(status.message());
  } else {
    tidied_.store(true);
    Tidy(PathFor(key));
  }
  return status;
}

BinaryCache::Stats BinaryCache::stats() const {
  Stats s;
  s.loaded = loaded_.load(std::memory_order_relaxed);
  s.missing = missing_.load(std::memory_order_relaxed);
  s.invalid = invalid_.load(std::memory_order_relaxed);
  s.stored = stored_.load(std::memory_order_relaxed);
  s.store_failed = store_failed_.load(std::memory_order_relaxed);
  s.evicted = evicted_.load(std::memory_order_relaxed);
  s.stale_temps = stale_temps_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace recq::internal
