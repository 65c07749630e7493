// See signal_stop.hpp. The handler does only what a signal handler may: it stores the signal
// in an atomic, writes its line with write(2) and wakes the watcher thread through a pipe;
// std::stop_source::request_stop() is not async-signal-safe, so the watcher calls it.
#include "signal_stop.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace hookforge::run::detail {

namespace {

std::atomic<int> first_signal{0};
int wake_fd = -1;
int requeue_signal = 0;     // set before the handlers exist, read by them
char first_line[256] = {};  // written before the handlers exist, read by them

void append(char*& out, const char* end, const char* text) {
  while (*text && out < end) *out++ = *text++;
}

extern "C" void on_stop_signal(int signal) {
  const int saved_errno = errno;
  int expected = 0;
  if (!first_signal.compare_exchange_strong(expected, signal)) {
    if (signal == requeue_signal) return;  // the stop is under way
    static constexpr char abort_line[] = "hookforge-run: a second signal: stopping now\n";
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, abort_line, sizeof abort_line - 1);
    ::_exit(128 + signal);
  }
  char line[512];
  char* out = line;
  const char* end = line + sizeof line - 1;
  append(out, end, "hookforge-run: ");
  append(out, end, signal_name(signal));
  append(out, end, first_line);
  *out++ = '\n';
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, line, static_cast<std::size_t>(out - line));
  const char byte = 1;
  [[maybe_unused]] auto m = ::write(wake_fd, &byte, 1);
  errno = saved_errno;
}

}  // namespace

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

signal_stop::signal_stop() {
  if (::pipe2(pipe_, O_CLOEXEC) != 0) pipe_[0] = pipe_[1] = -1;
  watcher_ = std::jthread([this] {
    char byte = 0;
    while (pipe_[0] >= 0 && ::read(pipe_[0], &byte, 1) < 0 && errno == EINTR) {
    }
    if (byte == 1) source_.request_stop();
  });
}

void signal_stop::arm(const char* what, int requeue) {
  if (pipe_[1] < 0) return;  // no pipe: the signals keep their default action
  std::strncpy(first_line, what, sizeof first_line - 1);
  wake_fd = pipe_[1];
  requeue_signal = requeue;
  struct sigaction action{};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  if (requeue) ::sigaction(requeue, &action, nullptr);
}

int signal_stop::received() const { return first_signal.load(); }

signal_stop::~signal_stop() {
  struct sigaction action{};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  action.sa_handler = SIG_IGN;  // a late requeue signal must not end a finished run
  if (requeue_signal) ::sigaction(requeue_signal, &action, nullptr);
  if (pipe_[1] >= 0) {
    const char byte = 0;  // wake the watcher without a stop
    [[maybe_unused]] auto n = ::write(pipe_[1], &byte, 1);
  }
  if (watcher_.joinable()) watcher_.join();
  for (int fd : pipe_)
    if (fd >= 0) ::close(fd);
}

}  // namespace hookforge::run::detail
