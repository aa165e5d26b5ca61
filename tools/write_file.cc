#include "tools/write_file.h"

#include <fstream>

#include "absl/strings/str_cat.h"

namespace recq::tools {

absl::Status WriteFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

}  // namespace recq::tools
