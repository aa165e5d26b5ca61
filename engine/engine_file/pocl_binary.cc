#include "engine/engine_file/pocl_binary.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"

namespace recq::internal {
namespace {

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

void CanonicalizePoclBinary(std::string* binary) {
  static constexpr char kMagic[] = "poclbin";  // with its NUL: 8 bytes
  if (binary->size() < sizeof(kMagic) ||
      binary->compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)) != 0) {
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
