// hookforge-run --nproc N: N ranks of this program on this machine, over loopback.
//
// The launcher picks a free port on 127.0.0.1, starts N copies of its own executable
// (/proc/self/exe) with the same arguments but --nproc, and RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and MASTER_PORT in their environment; each
// rank's stdout and stderr come back line by line, prefixed "[rank K] ", on the
// launcher's stdout and stderr. When a rank exits non-zero or is killed by a signal, the
// others get SIGTERM, then SIGKILL after a grace period, and the launcher exits 1 with a
// message naming the rank, how it ended and its last line on stderr. The first SIGINT or
// SIGTERM to the launcher is passed on to every rank, which stop together after their
// epoch (signal_stop.hpp; StopAgreement makes it the same epoch), and the launcher exits
// 128 + the signal's number once they have; a second one kills them. The ranks have a
// process group of their own, so a terminal's Ctrl-C reaches the launcher alone and each
// rank gets the signal once. A rank whose launcher dies is killed by the kernel
// (PR_SET_PDEATHSIG), so no rank outlives it.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/run/launch.hpp"

#include "signal_stop.hpp"

#if defined(__linux__)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;
#endif

namespace hookforge::run::detail {

#if defined(__linux__)

namespace {

volatile std::sig_atomic_t interrupted = 0;  // the first signal
volatile std::sig_atomic_t interruptions = 0;
extern "C" void on_interrupt(int signal) {
  if (!interrupted) interrupted = signal;
  interruptions = interruptions + 1;
}

/// A port on 127.0.0.1 that was free a moment ago (the kernel's choice for port 0).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    throw launch_error(
        fmt::format("cannot open a socket to find a free port: {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int e = errno;
    ::close(fd);
    throw launch_error(fmt::format("cannot find a free port on 127.0.0.1: {}", std::strerror(e)));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    static constexpr std::pair<int, std::string_view> names[] = {
        {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGSEGV, "SIGSEGV"},
        {SIGABRT, "SIGABRT"}, {SIGINT, "SIGINT"},   {SIGBUS, "SIGBUS"},
        {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},   {SIGHUP, "SIGHUP"}};
    std::string_view name = "?";
    for (const auto& [n, text] : names)
      if (n == sig) name = text;
    return fmt::format("was killed by signal {} ({})", sig, name);
  }
  return fmt::format("ended with status {}", status);
}

bool failed(int status) { return !WIFEXITED(status) || WEXITSTATUS(status) != 0; }

/// One stream of one rank: its pipe and the part of a line read so far.
struct stream {
  int fd = -1;
  int rank = 0;
  std::FILE* out = stdout;
  std::string partial;
  std::string last_line;  ///< the last non-empty line (stderr: the rank's last error line)
};

struct rank_process {
  pid_t pid = -1;
  bool running = false;
  int status = 0;
};

void emit(stream& s, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // A progress bar's \r-separated updates: keep what the line shows last.
  if (auto cr = line.rfind('\r'); cr != std::string_view::npos) line = line.substr(cr + 1);
  fmt::print(s.out, "[rank {}] {}\n", s.rank, line);
  std::fflush(s.out);
  if (line.find_first_not_of(" \t") != std::string_view::npos) s.last_line = std::string(line);
}

/// Read what `s`'s pipe has; false at its end.
bool drain(stream& s) {
  char buffer[8192];
  const ssize_t n = ::read(s.fd, buffer, sizeof buffer);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) {
    if (!s.partial.empty()) emit(s, s.partial);
    s.partial.clear();
    ::close(s.fd);
    s.fd = -1;
    return false;
  }
  s.partial.append(buffer, static_cast<std::size_t>(n));
  std::size_t start = 0;
  for (std::size_t nl; (nl = s.partial.find('\n', start)) != std::string::npos; start = nl + 1)
    emit(s, std::string_view(s.partial).substr(start, nl - start));
  s.partial.erase(0, start);
  return true;
}

}  // namespace

int launch_local(int nproc, const std::vector<std::string>& args, const launch_options& options) {
  if (nproc < 1) throw launch_error(fmt::format("--nproc must be >= 1, got {}", nproc));
  const int port = free_port();
  const std::string exe = "/proc/self/exe";
  char resolved[4096];
  const ssize_t len = ::readlink(exe.c_str(), resolved, sizeof resolved - 1);
  const std::string program = len > 0 ? std::string(resolved, static_cast<std::size_t>(len)) : exe;

  std::vector<rank_process> ranks(static_cast<std::size_t>(nproc));
  std::vector<stream> streams;
  streams.reserve(2 * static_cast<std::size_t>(nproc));
  std::fflush(stdout);
  std::fflush(stderr);

  struct sigaction action{};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int{}, old_term{};
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);

  auto terminate_all = [&](int signal) {
    for (auto& r : ranks)
      if (r.running) ::kill(r.pid, signal);
  };

  const pid_t launcher = ::getpid();
  std::vector<std::string> arguments{program};
  arguments.insert(arguments.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (int rank = 0; rank < nproc; ++rank) {
    // Everything the child needs is made here: between fork and exec a child of a process
    // with threads (LibTorch's) may only make async-signal-safe calls (no malloc).
    static constexpr std::string_view overridden[] = {
        "RANK=", "LOCAL_RANK=", "WORLD_SIZE=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=", "MASTER_PORT="};
    std::vector<std::string> environment;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      if (std::none_of(std::begin(overridden), std::end(overridden),
                       [&](std::string_view key) { return entry.starts_with(key); }))
        environment.emplace_back(entry);
    }
    environment.push_back(fmt::format("RANK={}", rank));
    environment.push_back(fmt::format("LOCAL_RANK={}", rank));
    environment.push_back(fmt::format("WORLD_SIZE={}", nproc));
    environment.push_back(fmt::format("LOCAL_WORLD_SIZE={}", nproc));
    environment.push_back("MASTER_ADDR=127.0.0.1");
    environment.push_back(fmt::format("MASTER_PORT={}", port));
    std::vector<char*> envp;
    for (auto& e : environment) envp.push_back(e.data());
    envp.push_back(nullptr);
    static constexpr char exec_failed[] =
        "hookforge-run: cannot run this program again (execve failed)\n";

    int out_pipe[2], err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
      terminate_all(SIGKILL);
      throw launch_error(
          fmt::format("cannot create pipes for rank {}: {}", rank, std::strerror(errno)));
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      terminate_all(SIGKILL);
      throw launch_error(fmt::format("cannot start rank {}: fork: {}", rank, std::strerror(errno)));
    }
    if (pid == 0) {
      // The rank: dies with the launcher; its output goes to the pipes.
      // (exec restores the default action of SIGINT and SIGTERM, which the launcher catches.)
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher) ::_exit(1);
      ::setpgid(0, 0);
      ::dup2(out_pipe[1], STDOUT_FILENO);
      ::dup2(err_pipe[1], STDERR_FILENO);
      ::execve(argv[0], argv.data(), envp.data());
      [[maybe_unused]] auto written = ::write(STDERR_FILENO, exec_failed, sizeof exec_failed - 1);
      ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ranks[static_cast<std::size_t>(rank)] = {pid, true, 0};
    streams.push_back({out_pipe[0], rank, stdout, {}, {}});
    streams.push_back({err_pipe[0], rank, stderr, {}, {}});
  }
  {
    std::vector<std::string> pids;
    for (int r = 0; r < nproc; ++r)
      pids.push_back(fmt::format("rank {}: pid {}", r, ranks[static_cast<std::size_t>(r)].pid));
    std::string joined;
    for (const auto& p : pids) joined += (joined.empty() ? "" : ", ") + p;
    fmt::print("hookforge-run: started {} ranks on 127.0.0.1:{} ({})\n", nproc, port, joined);
    std::fflush(stdout);
  }

  std::optional<int> first_failure;  // the rank that failed first
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  bool killed = false;
  bool forwarded = false;  // the first signal, to every rank
  auto running = [&] {
    return std::any_of(ranks.begin(), ranks.end(), [](const rank_process& r) { return r.running; });
  };
  auto open_streams = [&] {
    return std::any_of(streams.begin(), streams.end(), [](const stream& s) { return s.fd >= 0; });
  };

  while (running() || open_streams()) {
    std::vector<pollfd> fds;
    std::vector<stream*> owners;
    for (auto& s : streams)
      if (s.fd >= 0) {
        fds.push_back({s.fd, POLLIN, 0});
        owners.push_back(&s);
      }
    if (!fds.empty()) {
      const int ready = ::poll(fds.data(), fds.size(), 100);
      if (ready > 0)
        for (std::size_t i = 0; i < fds.size(); ++i)
          if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) drain(*owners[i]);
    } else {
      ::usleep(20000);
    }
    // Reap the ranks that ended. Of those that failed in one round, a rank ended by a signal
    // is named: the others' errors (a collective's peer gone) follow from it, and the kernel
    // reports the oldest child first, not the first to die.
    std::optional<int> round_failure;
    for (int status = 0;;) {
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        if (ranks[r].pid != pid) continue;
        ranks[r].running = false;
        ranks[r].status = status;
        // After the launcher passed a signal on: the rank stopped on it (or was ended by it
        // before it could stop cleanly, still building).
        const int signal = static_cast<int>(interrupted);
        const bool stopped =
            signal && ((WIFEXITED(status) && WEXITSTATUS(status) == 128 + signal) ||
                       (WIFSIGNALED(status) && WTERMSIG(status) == signal));
        if (failed(status) && !stopped && !first_failure && !kill_at &&
            (!round_failure ||
             (WIFSIGNALED(status) &&
              !WIFSIGNALED(ranks[static_cast<std::size_t>(*round_failure)].status))))
          round_failure = static_cast<int>(r);
      }
    }
    if (round_failure) first_failure = round_failure;
    if (interrupted && !forwarded) {
      fmt::print(stderr,
                 "hookforge-run: {}: the ranks stop after this epoch, to save it (a second signal "
                 "stops them now)\n",
                 signal_name(static_cast<int>(interrupted)));
      terminate_all(static_cast<int>(interrupted));
      forwarded = true;
    }
    if (interruptions > 1 && !kill_at) {
      terminate_all(SIGKILL);
      kill_at = std::chrono::steady_clock::now();
      killed = true;
    }
    if (first_failure && !kill_at) {
      terminate_all(SIGTERM);
      kill_at = std::chrono::steady_clock::now() + options.grace;
    }
    if (kill_at && !killed && running() && std::chrono::steady_clock::now() >= *kill_at) {
      terminate_all(SIGKILL);
      killed = true;
    }
    // A rank that left its pipes open in a child of its own must not keep the launcher here.
    if (!running() && kill_at && std::chrono::steady_clock::now() >= *kill_at + options.grace)
      break;
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);

  if (first_failure) {
    const auto r = static_cast<std::size_t>(*first_failure);
    std::string last;
    for (const auto& s : streams)
      if (s.rank == *first_failure && s.out == stderr && !s.last_line.empty()) last = s.last_line;
    fmt::print(stderr, "hookforge-run: rank {} (pid {}) {}{}; the other ranks were stopped\n", r,
               ranks[r].pid, describe_status(ranks[r].status),
               last.empty() ? std::string() : fmt::format(": {}", last));
    return 1;
  }
  if (interrupted) {
    if (killed) fmt::print(stderr, "hookforge-run: a second signal: the ranks were killed\n");
    return 128 + static_cast<int>(interrupted);
  }
  return 0;
}

#else

int launch_local(int, const std::vector<std::string>&, const launch_options&) {
  throw launch_error(
      "--nproc is only available on Linux; start each rank yourself with RANK, WORLD_SIZE, "
      "MASTER_ADDR and MASTER_PORT set (docs/distributed.md)");
}

#endif

}  // namespace hookforge::run::detail
