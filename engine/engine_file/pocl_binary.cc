#include "engine/engine_file/pocl_binary.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace recq::internal {
namespace {

constexpr char kPoclMagic[] = "poclbin";  // with its NUL: 8 bytes

// Reader walks a little-endian byte range; every read is bounds-checked and
// a failed one leaves `ok` false.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t size() const { return size_; }
  bool ok() const { return ok_; }

  uint64_t Uint(size_t bytes) {
    if (!Skip(bytes)) return 0;
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) value |= uint64_t{data_[pos_ - bytes + i]} << (8 * i);
    return value;
  }
  bool Skip(uint64_t bytes) {
    if (!ok_ || bytes > size_ - pos_) return ok_ = false;
    pos_ += static_cast<size_t>(bytes);
    return true;
  }
  // A string: a u32 length and that many bytes; returns the length.
  uint64_t String() {
    const uint64_t length = Uint(4);
    Skip(length);
    return length;
  }
  // A sub-reader over the next `bytes`, which this one skips.
  Reader Sub(uint64_t bytes) {
    const size_t at = pos_;
    Reader sub(data_ + at, Skip(bytes) ? static_cast<size_t>(bytes) : 0);
    sub.ok_ = ok_;
    return sub;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// CheckFiles checks that `files` is a sequence of file records, each a
// non-empty name and its contents, ending exactly at its end.
absl::Status CheckFiles(Reader files, absl::string_view what) {
  for (size_t n = 0; files.ok() && files.pos() < files.size(); ++n) {
    if (files.String() == 0 && files.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": file record ", n, " has no name"));
    }
    files.String();
  }
  if (!files.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": a file record runs past its ", files.size(), " bytes"));
  }
  return absl::OkStatus();
}

// Bit `i` of an LLVM bitstream: bits fill bytes from the least significant.
uint32_t GetBits(const std::string& data, size_t bit, int count) {
  uint32_t value = 0;
  for (int k = 0; k < count; ++k, ++bit) {
    value |= static_cast<uint32_t>((static_cast<uint8_t>(data[bit / 8]) >> (bit % 8)) & 1) << k;
  }
  return value;
}

void SetBits(std::string* data, size_t bit, int count, uint32_t value) {
  for (int k = 0; k < count; ++k, ++bit) {
    char& byte = (*data)[bit / 8];
    const uint8_t mask = static_cast<uint8_t>(1u << (bit % 8));
    byte = static_cast<char>(((value >> k) & 1) ? (static_cast<uint8_t>(byte) | mask)
                                                : (static_cast<uint8_t>(byte) & ~mask));
  }
}

}  // namespace

absl::Status CheckPoclBinary(absl::Span<const uint8_t> binary) {
  if (binary.size() < sizeof(kPoclMagic) ||
      !std::equal(kPoclMagic, kPoclMagic + sizeof(kPoclMagic), binary.begin())) {
    return absl::OkStatus();
  }
  auto invalid = [&](auto&&... parts) {
    return absl::InvalidArgumentError(
        absl::StrCat("PoCL program binary of ", binary.size(), " bytes: ", parts...));
  };
  Reader r(binary.data(), binary.size());
  r.Skip(sizeof(kPoclMagic));
  r.Uint(8);  // the device's build hash, checked by PoCL
  const uint64_t version = r.Uint(4);
  if (!r.ok()) return invalid("truncated header");
  if (version != 9) return absl::OkStatus();  // a layout this check does not know
  const uint64_t kernels = r.Uint(4);
  r.Uint(8);  // flags
  const uint64_t roots = r.Uint(4);
  r.Skip(41);  // the program's build hash: 40 hex digits and a NUL
  if (!r.ok()) return invalid("truncated header");
  if (kernels == 0) return invalid("no kernels");
  for (uint64_t i = 0; i < roots; ++i) {
    const uint64_t bytes = r.Uint(8);
    if (!r.ok()) return invalid("root entry ", i, " is truncated");
    if (bytes == 0) {
      return invalid("root entry ", i,
                     " is empty (PoCL's cache lost the program's files before the binary was "
                     "taken)");
    }
    Reader files = r.Sub(bytes);
    if (!r.ok()) return invalid("root entry ", i, " of ", bytes, " bytes runs past the end");
    if (absl::Status s = CheckFiles(files, absl::StrCat("root entry ", i)); !s.ok()) {
      return invalid(s.message());
    }
  }
  for (uint64_t k = 0; k < kernels; ++k) {
    const size_t start = r.pos();
    const uint64_t struct_size = r.Uint(8);
    const uint64_t binaries_size = r.Uint(8);
    const uint64_t arginfo_size = r.Uint(4);
    if (!r.ok()) return invalid("kernel ", k, " is truncated");
    if (struct_size > binary.size() - start || binaries_size > struct_size) {
      return invalid("kernel ", k, " claims ", struct_size, " bytes (", binaries_size,
                     " of files) with ", binary.size() - start, " left");
    }
    Reader kernel = Reader(binary.data() + start, static_cast<size_t>(struct_size));
    kernel.Skip(8 + 8 + 4);
    if (kernel.String() == 0 && kernel.ok()) return invalid("kernel ", k, " has no name");
    const uint64_t args = kernel.Uint(4);
    const uint64_t locals = kernel.Uint(4);
    kernel.Skip(3 * 8);  // required work-group size
    for (uint64_t l = 0; l < locals && kernel.ok(); ++l) kernel.Uint(8);
    kernel.String();  // attributes
    kernel.Uint(8);   // which argument metadata it has
    const size_t arginfo_start = kernel.pos();
    for (uint64_t a = 0; a < args && kernel.ok(); ++a) {
      // access, address qualifiers (4 each), type qualifier (8), type and
      // its size (4 each), name, type name.
      kernel.Skip(4 + 4 + 8 + 4 + 4);
      kernel.String();
      kernel.String();
    }
    if (!kernel.ok() || kernel.pos() - arginfo_start != arginfo_size ||
        kernel.pos() + binaries_size != struct_size) {
      return invalid("kernel ", k, "'s metadata (", args, " arguments, ", locals,
                     " local buffers) does not fit its record of ", struct_size, " bytes");
    }
    if (absl::Status s = CheckFiles(kernel.Sub(binaries_size), absl::StrCat("kernel ", k));
        !s.ok()) {
      return invalid(s.message());
    }
    r.Skip(struct_size - (r.pos() - start));
  }
  if (r.pos() != binary.size()) {
    return invalid(binary.size() - r.pos(), " bytes after the last kernel");
  }
  return absl::OkStatus();
}

void CanonicalizePoclBinary(std::string* binary) {
  if (binary->size() < sizeof(kPoclMagic) ||
      binary->compare(0, sizeof(kPoclMagic), kPoclMagic, sizeof(kPoclMagic)) != 0) {
    return;
  }
  constexpr absl::string_view kPrefix = "tempfile_";
  constexpr size_t kRandom = 6;  // mkstemp's XXXXXX
  constexpr absl::string_view kSuffix = ".cl";
  constexpr absl::string_view kCanonical = "000000";
  // The raw copies (LLVM metadata strings), remembering the names replaced.
  std::vector<std::string> names;
  for (size_t at = binary->find(kPrefix.data(), 0, kPrefix.size()); at != std::string::npos;
       at = binary->find(kPrefix.data(), at + 1, kPrefix.size())) {
    const size_t random = at + kPrefix.size();
    if (random + kRandom + kSuffix.size() > binary->size() ||
        binary->compare(random + kRandom, kSuffix.size(), kSuffix.data(), kSuffix.size()) != 0 ||
        !std::all_of(binary->begin() + random, binary->begin() + random + kRandom,
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; })) {
      continue;
    }
    std::string name = binary->substr(at, kPrefix.size() + kRandom + kSuffix.size());
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    binary->replace(random, kRandom, kCanonical.data(), kRandom);
  }
  // The 7-bit copies (the module's SOURCE_FILENAME record: an array of
  // Fixed(7) characters at any bit offset).
  const size_t bits = binary->size() * 8;
  for (const std::string& name : names) {
    const size_t span = name.size() * 7;
    for (size_t bit = 0; bit + span <= bits; ++bit) {
      size_t c = 0;
      while (c < name.size() && GetBits(*binary, bit + c * 7, 7) == static_cast<uint8_t>(name[c])) {
        ++c;
      }
      if (c != name.size()) continue;
      for (size_t k = 0; k < kRandom; ++k) {
        SetBits(binary, bit + (kPrefix.size() + k) * 7, 7, static_cast<uint8_t>(kCanonical[k]));
      }
      bit += span - 1;
    }
  }
}

}  // namespace recq::internal
