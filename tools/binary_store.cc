#include "tools/binary_store.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

// Spawn starts `argv` as /proc/self/exe with its standard streams on
// /dev/null, except standard output on `stdout_fd` when that is >= 0, and
// `cache_dir` (when not empty) as its $RECQ_CACHE_DIR; `detach` puts it in
// a session of its own. It does not wait for it.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& cache_dir,
                            bool detach, int stdout_fd = -1) {
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&files);
  posix_spawnattr_init(&attr);
  for (int fd : {0, 1, 2}) {
    if (fd == 1 && stdout_fd >= 0) {
      posix_spawn_file_actions_adddup2(&files, stdout_fd, 1);
    } else {
      posix_spawn_file_actions_addopen(&files, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  if (detach) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (cache_dir.empty() || std::string(*e).rfind("RECQ_CACHE_DIR=", 0) != 0) {
      env_strings.emplace_back(*e);
    }
  }
  if (!cache_dir.empty()) env_strings.push_back(absl::StrCat("RECQ_CACHE_DIR=", cache_dir));
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
    return absl::UnavailableError(absl::StrCat(
        "posix_spawn(/proc/self/exe ", argv.size() > 1 ? argv[1] : "", "): ", std::strerror(err)));
  }
  return pid;
}

// HelperProcess is a running `recq build-helper`, read through a pipe from
// its standard output: "P" once its programs are built, then "L" as each
// launch starts.
class HelperProcess final : public BuildHelper {
 public:
  HelperProcess(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  ~HelperProcess() override { WaitDone(); }

  void WaitProgramsBuilt() override {
    while (!built_ && !eof_) Read(/*block=*/true);
  }

  void WaitDone() override {
    if (pid_ <= 0) return;
    while (!eof_) Read(/*block=*/true);
    close(fd_);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      Log(LogLevel::kInfo, "compile: the build helper failed; this process built the rest");
    }
    pid_ = -1;
  }

  size_t LaunchesStarted() override {
    if (!eof_) Read(/*block=*/false);
    return started_;
  }

  bool Ended() override {
    if (!eof_) Read(/*block=*/false);
    return eof_;
  }

 private:
  // Read takes what the helper has written, waiting for something when
  // `block`, and notes the end of its output.
  void Read(bool block) {
    pollfd p{fd_, POLLIN, 0};
    int ready = 0;
    do {
      ready = poll(&p, 1, block ? -1 : 0);
    } while (ready < 0 && errno == EINTR);
    if (ready <= 0) {
      if (ready < 0) eof_ = true;
      return;
    }
    char buffer[256];
    const ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      eof_ = true;
      return;
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == 'P') built_ = true;
      if (buffer[i] == 'L') ++started_;
    }
  }

  pid_t pid_;
  int fd_;
  bool eof_ = false;
  bool built_ = false;
  size_t started_ = 0;
};

// Set by EnableBuildHelpers (the recq executable).
std::atomic<bool> build_helpers_enabled{false};

}  // namespace

void EnableBuildHelpers() { build_helpers_enabled = true; }

void UseBuildHelpers(const Context& context, const std::string& device) {
  if (!build_helpers_enabled) return;
  const char* env = std::getenv("RECQ_BUILD_HELPER");
  if (env != nullptr && std::string(env) == "off") return;
  context.SetBuildHelper(
      [device](const std::string& plan) -> absl::StatusOr<std::unique_ptr<BuildHelper>> {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) {
          return absl::UnavailableError(absl::StrCat("pipe2: ", std::strerror(errno)));
        }
        std::vector<std::string> argv = {"recq", "build-helper", plan};
        if (!device.empty()) argv.push_back(absl::StrCat("--device=", device));
        absl::StatusOr<pid_t> pid = Spawn(argv, "", /*detach=*/false, fds[1]);
        close(fds[1]);
        if (!pid.ok()) {
          close(fds[0]);
          return pid.status();
        }
        return std::unique_ptr<BuildHelper>(std::make_unique<HelperProcess>(*pid, fds[0]));
      });
}

absl::Status BuildHelperCommand(const std::string& path, const std::string& device) {
  ContextOptions options;
  options.device = device;
  absl::StatusOr<Context> context = Context::Create(options);
  if (!context.ok()) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return context.status();
  }
  auto say = [](char c) {
    while (write(1, &c, 1) < 0 && errno == EINTR) {
    }
  };
  BuildPlanProgress progress;
  progress.programs_built = [&] { say('P'); };
  progress.launch_started = [&] { say('L'); };
  return context->RunBuildPlan(path, progress);
}

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
  absl::StatusOr<pid_t> pid = Spawn(argv, cache_dir, /*detach=*/true);
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
