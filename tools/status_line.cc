#include "tools/status_line.h"

#include <unistd.h>

#include <cstdlib>

#include "recq/log.h"

namespace recq::tools {

void StatusLine::Update(absl::string_view text) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::fprintf(out_, "\r\033[K%.*s", static_cast<int>(text.size()), text.data());
  std::fflush(out_);
  shown_ = true;
}

void StatusLine::Clear() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  shown_ = false;
}

void StatusLine::PrintLine(absl::string_view text) {
  Clear();
  std::lock_guard<std::mutex> lock(mu_);
  std::fprintf(out_, "%.*s\n", static_cast<int>(text.size()), text.data());
  std::fflush(out_);
}

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

void InstallStatusLineLogSink(StatusLine* line) {
  if (!line->enabled()) return;
  const char* env = std::getenv("RECQ_LOG_LEVEL");
  if (env == nullptr || *env == '\0') SetLogLevel(LogLevel::kInfo);
  SetLogSink([line](LogLevel level, absl::string_view message) {
    if (level == LogLevel::kInfo) {
      line->Update(message);
    } else {
      line->PrintLine(std::string("recq ") + LogLevelName(level) + ": " + std::string(message));
    }
  });
}

}  // namespace recq::tools
