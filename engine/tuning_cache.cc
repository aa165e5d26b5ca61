#include "engine/tuning_cache.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace recq::internal {

namespace {

constexpr absl::string_view kMagic = "recq-tuning";

// The lines an entry's checksum covers.
std::string Body(const std::string& key, const TuningEntry& e) {
  return absl::StrCat(kMagic, " ", kTuningCacheFormatVersion, "\nkey=", key,
                      "\nvariant=", e.variant, "\nparams=", KernelParamsString(e.params),
                      "\nms=", e.ms, "\n");
}

}  // namespace

absl::StatusOr<std::string> Sha256Hex(absl::string_view data) {
  struct Free {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx(EVP_MD_CTX_new());
  unsigned char digest[32];
  unsigned int size = 0;
  if (ctx == nullptr || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1 || size != sizeof(digest)) {
    return absl::InternalError("SHA-256 through OpenSSL EVP failed");
  }
  std::string hex;
  for (unsigned char b : digest) absl::StrAppend(&hex, absl::Hex(b, absl::kZeroPad2));
  return hex;
}

std::string TuningCache::PathFor(const std::string& key) const {
  absl::StatusOr<std::string> name = Sha256Hex(key);
  if (!name.ok()) return "";
  return absl::StrCat(directory_, "/", *name, ".tune");
}

std::optional<TuningEntry> TuningCache::Load(const std::string& key, bool* corrupt) const {
  *corrupt = false;
  const std::string path = PathFor(key);
  std::ifstream in(path, std::ios::binary);
  if (path.empty() || !in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  *corrupt = true;
  // The checksum line is the last; the body is everything before it.
  const size_t at = text.rfind("sha256=");
  if (at == std::string::npos || (at > 0 && text[at - 1] != '\n')) return std::nullopt;
  const std::string body = text.substr(0, at);
  absl::StatusOr<std::string> sum = Sha256Hex(body);
  if (!sum.ok() || text.substr(at) != absl::StrCat("sha256=", *sum, "\n")) return std::nullopt;
  TuningEntry entry;
  std::string stored_key;
  std::vector<absl::string_view> lines = absl::StrSplit(body, '\n', absl::SkipEmpty());
  if (lines.size() != 5 || lines[0] != absl::StrCat(kMagic, " ", kTuningCacheFormatVersion)) {
    return std::nullopt;
  }
  absl::string_view v;
  for (size_t i = 1; i < lines.size(); ++i) {
    v = lines[i];
    if (absl::ConsumePrefix(&v, "key=")) {
      stored_key = std::string(v);
    } else if (absl::ConsumePrefix(&v, "variant=")) {
      entry.variant = std::string(v);
    } else if (absl::ConsumePrefix(&v, "params=")) {
      absl::StatusOr<KernelParams> params = ParseKernelParams(v);
      if (!params.ok()) return std::nullopt;
      entry.params = *std::move(params);
    } else if (absl::ConsumePrefix(&v, "ms=")) {
      if (!absl::SimpleAtod(v, &entry.ms)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (stored_key != key || entry.variant.empty()) return std::nullopt;
  *corrupt = false;
  return entry;
}

absl::Status TuningCache::Store(const std::string& key, const TuningEntry& entry) const {
  const std::string path = PathFor(key);
  if (path.empty()) return absl::InternalError("SHA-256 through OpenSSL EVP failed");
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("tuning cache: create_directories '", directory_, "': ", ec.message()));
  }
  const std::string body = Body(key, entry);
  absl::StatusOr<std::string> sum = Sha256Hex(body);
  if (!sum.ok()) return sum.status();
  static std::atomic<uint64_t> counter{0};
  const std::string temp = absl::StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << body << "sha256=" << *sum << "\n";
    if (!out.flush()) {
      std::remove(temp.c_str());
      return absl::UnavailableError(absl::StrCat("tuning cache: cannot write '", temp, "'"));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temp.c_str());
    return absl::UnavailableError(
        absl::StrCat("tuning cache: rename '", temp, "' to '", path, "': ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace recq::internal
