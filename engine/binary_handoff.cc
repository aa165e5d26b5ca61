#include "engine/binary_handoff.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "recq/status_macros.h"

namespace recq::internal {

namespace {

constexpr char kMagic[8] = {'R', 'E', 'C', 'Q', 'H', 'O', 'F', 'F'};
constexpr uint32_t kVersion = 2;  // 2: build plans (launches, builder)
// Bounds a damaged length field before it becomes an allocation.
constexpr uint64_t kMaxString = uint64_t{64} << 20;
constexpr uint64_t kMaxCount = 1 << 16;

void PutU64(uint64_t v, std::string& out) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PutString(absl::string_view s, std::string& out) {
  PutU64(s.size(), out);
  out.append(s.data(), s.size());
}

// Reader walks the bytes of a hand-off file; every read is bounds-checked.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  absl::StatusOr<uint64_t> U64(absl::string_view what) {
    if (bytes_.size() - pos_ < 8) return Damaged(absl::StrCat(what, " is cut off"));
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(bytes_[pos_ + i])) << (8 * i);
    pos_ += 8;
    return v;
  }

  absl::StatusOr<std::string> String(absl::string_view what) {
    absl::StatusOr<uint64_t> size = U64(what);
    if (!size.ok()) return size.status();
    if (*size > kMaxString || bytes_.size() - pos_ < *size) {
      return Damaged(
          absl::StrCat(what, " claims ", *size, " bytes; ", bytes_.size() - pos_, " are left"));
    }
    std::string s = bytes_.substr(pos_, *size);
    pos_ += *size;
    return s;
  }

  absl::Status Damaged(absl::string_view why) const {
    return absl::InvalidArgumentError(
        absl::StrCat("binary hand-off file '", path_, "' is damaged: ", why));
  }

  bool AtEnd() const { return pos_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  const std::string& path_;
  size_t pos_ = sizeof(kMagic) + 8;
};

absl::Status ReadLaunches(Reader& r, std::vector<WarmLaunch>& launches) {
  RECQ_ASSIGN_OR_RETURN(uint64_t count, r.U64("a launch count"));
  if (count > kMaxCount) return r.Damaged(absl::StrCat(count, " launches"));
  for (uint64_t i = 0; i < count; ++i) {
    WarmLaunch l;
    RECQ_ASSIGN_OR_RETURN(l.kernel, r.String("a kernel name"));
    RECQ_ASSIGN_OR_RETURN(uint64_t work_dim, r.U64("a work dimension"));
    if (work_dim < 1 || work_dim > 3) return r.Damaged(absl::StrCat("work dimension ", work_dim));
    l.work_dim = static_cast<uint32_t>(work_dim);
    for (uint64_t& g : l.global) {
      RECQ_ASSIGN_OR_RETURN(g, r.U64("a global size"));
    }
    for (uint64_t& g : l.local) {
      RECQ_ASSIGN_OR_RETURN(g, r.U64("a local size"));
    }
    RECQ_ASSIGN_OR_RETURN(uint64_t args, r.U64("an argument count"));
    if (args > kMaxCount) return r.Damaged(absl::StrCat(args, " kernel arguments"));
    for (uint64_t j = 0; j < args; ++j) {
      WarmLaunch::Arg a;
      RECQ_ASSIGN_OR_RETURN(uint64_t kind, r.U64("an argument kind"));
      if (kind > static_cast<uint64_t>(WarmLaunch::Arg::Kind::kNull)) {
        return r.Damaged(absl::StrCat("argument kind ", kind));
      }
      a.kind = static_cast<WarmLaunch::Arg::Kind>(kind);
      RECQ_ASSIGN_OR_RETURN(a.bytes, r.U64("an argument size"));
      RECQ_ASSIGN_OR_RETURN(a.value, r.String("an argument value"));
      l.args.push_back(std::move(a));
    }
    launches.push_back(std::move(l));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteBinaryHandOff(const std::string& path, const BinaryHandOff& handoff) {
  std::string bytes(kMagic, sizeof(kMagic));
  PutU64(kVersion, bytes);
  PutString(handoff.device_name, bytes);
  PutString(handoff.driver_version, bytes);
  PutU64(handoff.programs.size(), bytes);
  for (const HandedOffProgram& p : handoff.programs) {
    PutString(p.source, bytes);
    PutU64(p.options.size(), bytes);
    for (const std::string& o : p.options) PutString(o, bytes);
    PutU64(p.built_by_compiler ? 1 : 0, bytes);
    PutU64(p.launches.size(), bytes);
    for (const WarmLaunch& l : p.launches) {
      PutString(l.kernel, bytes);
      PutU64(l.work_dim, bytes);
      for (uint64_t g : l.global) PutU64(g, bytes);
      for (uint64_t g : l.local) PutU64(g, bytes);
      PutU64(l.args.size(), bytes);
      for (const WarmLaunch::Arg& a : l.args) {
        PutU64(static_cast<uint64_t>(a.kind), bytes);
        PutU64(a.bytes, bytes);
        PutString(a.value, bytes);
      }
    }
  }
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("create directory '", dir.string(),
                                               "' for a binary hand-off: ", ec.message()));
  }
  std::random_device random;
  const std::string temp = absl::StrCat(path, ".tmp.", getpid(), ".", absl::Hex(random()));
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("create '", temp, "' for a binary hand-off: ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      close(fd);
      unlink(temp.c_str());
      return absl::UnavailableError(absl::StrCat("write '", temp, "': ", std::strerror(err)));
    }
    done += size_t(n);
  }
  if (close(fd) != 0 || rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return absl::UnavailableError(
        absl::StrCat("write '", path, "' (through '", temp, "'): ", std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<BinaryHandOff> ReadBinaryHandOff(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("binary hand-off file '", path, "' not found"));
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  Reader r(bytes, path);
  if (bytes.size() < sizeof(kMagic) + 8 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return r.Damaged("it does not start with a hand-off header");
  }
  uint64_t version = 0;
  for (int i = 0; i < 8; ++i) version |= uint64_t(uint8_t(bytes[sizeof(kMagic) + i])) << (8 * i);
  if (version != kVersion) {
    return r.Damaged(absl::StrCat("version ", version, "; this recq reads version ", kVersion));
  }
  BinaryHandOff h;
  absl::StatusOr<std::string> s = r.String("the device name");
  if (!s.ok()) return s.status();
  h.device_name = *std::move(s);
  s = r.String("the driver version");
  if (!s.ok()) return s.status();
  h.driver_version = *std::move(s);
  absl::StatusOr<uint64_t> count = r.U64("the program count");
  if (!count.ok()) return count.status();
  if (*count > kMaxCount) return r.Damaged(absl::StrCat(*count, " programs"));
  for (uint64_t i = 0; i < *count; ++i) {
    HandedOffProgram p;
    s = r.String("a program's source");
    if (!s.ok()) return s.status();
    p.source = *std::move(s);
    absl::StatusOr<uint64_t> options = r.U64("an option count");
    if (!options.ok()) return options.status();
    if (*options > kMaxCount) return r.Damaged(absl::StrCat(*options, " build options"));
    for (uint64_t j = 0; j < *options; ++j) {
      s = r.String("a build option");
      if (!s.ok()) return s.status();
      p.options.push_back(*std::move(s));
    }
    RECQ_ASSIGN_OR_RETURN(uint64_t by_compiler, r.U64("a program's builder"));
    if (by_compiler > 1) return r.Damaged(absl::StrCat("a program's builder is ", by_compiler));
    p.built_by_compiler = by_compiler == 1;
    RECQ_RETURN_IF_ERROR(ReadLaunches(r, p.launches));
    h.programs.push_back(std::move(p));
  }
  if (!r.AtEnd()) return r.Damaged("bytes follow the last program");
  return h;
}

}  // namespace recq::internal
