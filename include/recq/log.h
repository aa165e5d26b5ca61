// The one logger of recq: warnings and progress that are not errors.
//
// Errors always travel as absl::Status; the logger only says what recq did
// about something the caller cannot see otherwise (a cache directory it could
// not use, a long compile or tuning in progress). It writes one line per
// message to stderr, "recq W: <message>", unless a sink is installed.
//
// The level comes from RECQ_LOG_LEVEL (error, warning, info, debug or off;
// default warning), read once at the first message, or from SetLogLevel.
// Thread-safe: messages from several threads never interleave within a line.
#ifndef RECQ_LOG_H_
#define RECQ_LOG_H_

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace recq {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3, kOff = -1 };

// LogLevelName returns "error", "warning", "info", "debug" or "off".
const char* LogLevelName(LogLevel level);

// ParseLogLevel reads a level name (case-insensitive) or a digit 0-3; false
// for anything else.
bool ParseLogLevel(absl::string_view text, LogLevel* level);

// SetLogLevel overrides RECQ_LOG_LEVEL for the whole process.
void SetLogLevel(LogLevel level);
// CurrentLogLevel returns the level in force.
LogLevel CurrentLogLevel();

// A sink receives every message at or above the level, instead of stderr.
using LogSink = std::function<void(LogLevel level, absl::string_view message)>;
// SetLogSink installs `sink` (an empty function restores stderr). The sink is
// called under the logger's lock and must not log itself.
void SetLogSink(LogSink sink);

// LogEnabled tells whether a message of `level` would be written.
bool LogEnabled(LogLevel level);
// Log writes `message` at `level` if enabled.
void Log(LogLevel level, absl::string_view message);

}  // namespace recq

#endif  // RECQ_LOG_H_
