#include "tools/binary_store.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "recq/log.h"
#include "recq/status_macros.h"

extern char** environ;

namespace recq::tools {

namespace {

// SpawnDetached starts `argv` in a session of its own with its standard
// streams on /dev/null and `cache_dir` as its $RECQ_CACHE_DIR; it does not
// wait for it.
absl::StatusOr<pid_t> SpawnDetached(const std::vector<std::string>& argv,
                                    const std::string& cache_dir) {
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&files);
  posix_spawnattr_init(&attr);
  for (int fd : {0, 1, 2}) {
    posix_spawn_file_actions_addopen(&files, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("RECQ_CACHE_DIR=", 0) != 0) env_strings.emplace_back(*e);
  }
  env_strings.push_back(absl::StrCat("RECQ_CACHE_DIR=", cache_dir));
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& s : args) argp.push_back(s.data());
  argp.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, "/proc/self/exe", &files, &attr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (err != 0) {
    return absl::UnavailableError(
        absl::StrCat("posix_spawn(/proc/self/exe store-binaries): ", std::strerror(err)));
  }
  return pid;
}

}  // namespace

void StoreBinariesAfterExit(const Context& context, const std::string& device) {
  const std::string cache_dir = context.cache_dir();
  if (cache_dir.empty()) return;
  std::random_device random;
  const std::string path = (std::filesystem::path(cache_dir) / "handoff" /
                            absl::StrCat(getpid(), "-", absl::Hex(random()), ".pending"))
                               .string();
  absl::StatusOr<size_t> handed = context.HandOffBinaryCache(path);
  if (!handed.ok()) {
    Log(LogLevel::kWarning,
        absl::StrCat("program binaries not stored: ", handed.status().ToString()));
    return;
  }
  if (*handed == 0) return;
  std::vector<std::string> argv = {"recq", "store-binaries", path};
  if (!device.empty()) argv.push_back(absl::StrCat("--device=", device));
  absl::StatusOr<pid_t> pid = SpawnDetached(argv, cache_dir);
  if (!pid.ok()) {
    Log(LogLevel::kWarning, absl::StrCat("program binaries not stored: ", pid.status().ToString()));
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return;
  }
  Log(LogLevel::kInfo,
      absl::StrCat("program binaries: ", *handed, " programs handed to recq store-binaries (pid ",
                   *pid, ", file ", path, ")"));
}

absl::Status StoreBinariesCommand(const std::string& path, const std::string& device) {
  // The whole process yields the CPU to everything else; failing only
  // leaves it at normal priority.
  setpriority(PRIO_PROCESS, 0, 19);
  absl::Status stored = [&]() -> absl::Status {
    ContextOptions options;
    options.device = device;
    RECQ_ASSIGN_OR_RETURN(Context context, Context::Create(options));
    return context.StoreHandedOffBinaries(path);
  }();
  // A file that failed once would fail again: it goes either way.
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return stored;
}

}  // namespace recq::tools
