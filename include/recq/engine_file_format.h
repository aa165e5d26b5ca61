// The engine file's format version and its cheap recognition test: the part
// of recq/engine_file.h that needs no device (the engine-file format
// library, recq_engine_file_format, defines it; recq/engine_file.h includes
// it).
#ifndef RECQ_ENGINE_FILE_FORMAT_H_
#define RECQ_ENGINE_FILE_FORMAT_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace recq {

// The format version this build reads and writes.
inline constexpr uint32_t kEngineFileFormatVersion = 2;

// LooksLikeEngineFile tells (cheaply, without checking the contents) whether
// `bytes` begin like a recq engine file rather than, say, an ONNX model.
bool LooksLikeEngineFile(absl::string_view bytes);

}  // namespace recq

#endif  // RECQ_ENGINE_FILE_FORMAT_H_
