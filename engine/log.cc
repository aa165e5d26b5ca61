#include "recq/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/strings/ascii.h"

namespace recq {
namespace {

constexpr int kUnset = -2;
std::atomic<int> g_level{kUnset};

std::mutex& SinkMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
LogSink& Sink() {
  static LogSink* sink = new LogSink;
  return *sink;
}

LogLevel LevelFromEnvironment() {
  const char* env = std::getenv("RECQ_LOG_LEVEL");
  LogLevel level = LogLevel::kWarning;
  if (env != nullptr && *env != '\0' && !ParseLogLevel(env, &level)) {
    std::fprintf(stderr,
                 "recq W: RECQ_LOG_LEVEL='%s' is not one of error, warning, info, debug, off; "
                 "using warning\n",
                 env);
    level = LogLevel::kWarning;
  }
  return level;
}

char Letter(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return 'E';
    case LogLevel::kWarning:
      return 'W';
    case LogLevel::kInfo:
      return 'I';
    case LogLevel::kDebug:
      return 'D';
    case LogLevel::kOff:
      break;
  }
  return '?';
}

}  // namespace

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kOff:
      return "off";
  }
  return "?";
}

bool ParseLogLevel(absl::string_view text, LogLevel* level) {
  const std::string t = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  for (LogLevel l :
       {LogLevel::kError, LogLevel::kWarning, LogLevel::kInfo, LogLevel::kDebug, LogLevel::kOff}) {
    if (t == LogLevelName(l) || (l != LogLevel::kOff && t == std::to_string(static_cast<int>(l)))) {
      *level = l;
      return true;
    }
  }
  if (t == "warn") {
    *level = LogLevel::kWarning;
    return true;
  }
  return false;
}

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

LogLevel CurrentLogLevel() {
  int level = g_level.load();
  if (level == kUnset) {
    int from_env = static_cast<int>(LevelFromEnvironment());
    // A concurrent SetLogLevel wins over the environment.
    g_level.compare_exchange_strong(level, from_env);
    level = g_level.load();
  }
  return static_cast<LogLevel>(level);
}

void SetLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(SinkMutex());
  Sink() = std::move(sink);
}

bool LogEnabled(LogLevel level) {
  const LogLevel current = CurrentLogLevel();
  return level != LogLevel::kOff && current != LogLevel::kOff &&
         static_cast<int>(level) <= static_cast<int>(current);
}

void Log(LogLevel level, absl::string_view message) {
  if (!LogEnabled(level)) return;
  std::lock_guard<std::mutex> lock(SinkMutex());
  if (Sink()) {
    Sink()(level, message);
    return;
  }
  std::string line = std::string("recq ") + Letter(level) + ": ";
  line.append(message.data(), message.size());
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace recq
