// A one-line progress display on a terminal.
//
// StatusLine rewrites one line of stderr in place ("\r" + erase) when stderr
// is a terminal and does nothing otherwise, so progress never lands in a log
// file or a pipe. InstallStatusLineLogSink routes recq's info messages
// (compile progress) to it, and prints warnings and errors as whole lines.
#ifndef RECQ_TOOLS_STATUS_LINE_H_
#define RECQ_TOOLS_STATUS_LINE_H_

#include <cstdio>
#include <mutex>
#include <string>

#include "absl/strings/string_view.h"

namespace recq::tools {

class StatusLine {
 public:
  // `enabled`: normally StderrIsTerminal(). `out` is not owned.
  explicit StatusLine(bool enabled, std::FILE* out = stderr) : enabled_(enabled), out_(out) {}
  ~StatusLine() { Clear(); }

  bool enabled() const { return enabled_; }
  // Update replaces the line with `text`. Thread-safe.
  void Update(absl::string_view text);
  // Clear erases the line (if anything is shown). Thread-safe.
  void Clear();
  // PrintLine clears the status, prints `text` and a newline. Thread-safe.
  void PrintLine(absl::string_view text);

 private:
  const bool enabled_;
  std::FILE* const out_;
  std::mutex mu_;
  bool shown_ = false;  // guarded by mu_
};

// StderrIsTerminal tells whether stderr is a terminal.
bool StderrIsTerminal();

// InstallStatusLineLogSink makes `line` (which must outlive the sink; call
// SetLogSink({}) before destroying it) show recq's info-level messages and
// print warnings and errors as whole lines, and raises the log level to info
// unless RECQ_LOG_LEVEL is set. Does nothing when `line` is disabled.
void InstallStatusLineLogSink(StatusLine* line);

}  // namespace recq::tools

#endif  // RECQ_TOOLS_STATUS_LINE_H_
