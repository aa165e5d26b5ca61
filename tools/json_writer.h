// A minimal JSON writer for the reports of the recq tool (no dependency).
//
//   JsonWriter j;
//   j.BeginObject();
//   j.Key("model"); j.String(path);
//   j.Key("latency_ms"); j.BeginObject(); j.Key("p50"); j.Number(1.5); j.EndObject();
//   j.EndObject();
//   std::string text = j.str();
//
// The caller keeps the nesting right; the writer adds commas, escapes
// strings, and writes NaN and infinities as null.
#ifndef RECQ_TOOLS_JSON_WRITER_H_
#define RECQ_TOOLS_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace recq::tools {

class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(absl::string_view key);
  void String(absl::string_view value);
  void Number(double value);
  void Int(int64_t value);
  void Bool(bool value);

  const std::string& str() const { return out_; }

 private:
  void Open(char c);
  void Close(char c);
  void BeforeValue();

  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// JsonEscape returns `s` as a quoted JSON string.
std::string JsonEscape(absl::string_view s);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_JSON_WRITER_H_
