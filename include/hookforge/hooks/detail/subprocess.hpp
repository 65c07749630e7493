// hookforge/hooks/detail/subprocess.hpp — a program run as a child process: no shell
// (posix_spawnp, looked up in PATH), stdin from /dev/null, stdout and stderr collected in a
// temporary file, killed past a timeout. What MetricsPlot runs gnuplot with; nothing of it
// knows plots. The child blocks SIGUSR1 and SIGUSR2: a launcher signals every process of a
// job (Slurm's requeue signal reaches a whole step), and one meant for the run must not end
// the plot it is drawing.
#pragma once

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace hookforge::detail::subprocess {

/// A temporary file that removes itself.
class temp_file {
 public:
  explicit temp_file(std::string_view stem) {
    std::string name =
        (std::filesystem::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0)
      throw std::system_error(errno, std::generic_category(),
                              "hookforge: cannot create a temporary file");
    ::close(fd);
    path_ = name;
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// What running a program gave.
struct run_result {
  bool started = false;
  int spawn_error = 0;  ///< posix_spawnp's error when not started (ENOENT: not in PATH)
  std::string status;   ///< "" for exit status 0; else "exit status N", "signal N", "no exit within
                        ///< N s (killed)"
  std::string output;   ///< its stdout and stderr together
};

/// Run `argv` (looked up in PATH, no shell) with stdin from /dev/null, its output collected,
/// killed past `timeout_seconds`.
inline run_result run(const std::vector<std::string>& argv, double timeout_seconds) {
  run_result result;
  temp_file log("hookforge-run-log");
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, 1, log.path().c_str(), O_WRONLY | O_TRUNC, 0);
  ::posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attributes;
  ::posix_spawnattr_init(&attributes);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR1);
  sigaddset(&blocked, SIGUSR2);
  ::posix_spawnattr_setsigmask(&attributes, &blocked);  // kept across exec
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int error = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  ::posix_spawnattr_destroy(&attributes);
  ::posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    result.spawn_error = error;
    return result;
  }
  result.started = true;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      result.status = fmt::format("waitpid failed: {}", std::strerror(errno));
      return result;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      result.status = fmt::format("no exit within {} s (killed)", timeout_seconds);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (result.status.empty()) {
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      result.status = fmt::format("exit status {}", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
      result.status = fmt::format("signal {}", WTERMSIG(status));
  }
  std::ifstream in(log.path(), std::ios::binary);
  result.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return result;
}

}  // namespace hookforge::detail::subprocess
