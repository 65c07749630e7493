// hookforge-run's lock on its output directory: see output_lock.hpp.
#include "output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/core.h>

namespace hookforge::run::detail {

namespace {

// Set by a launcher for its ranks: the launcher's pid.
constexpr const char* parent_variable = "HOOKFORGE_RUN_LOCKED_BY";

/// The pid written in the lock file, or "" where there is none.
std::string holder_of(int fd) {
  char text[32] = {};
  const auto n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return {};
  std::string pid(text, static_cast<std::size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

std::variant<output_lock, std::string> output_lock::take(const std::filesystem::path& dir) {
  const auto path = dir / file_name;
  // O_NOFOLLOW: a symlink planted in place of the lock file is not followed.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return fmt::format("cannot create the lock file '{}': {}", path.string(), std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const auto pid = holder_of(fd);
    ::close(fd);
    if (error != EWOULDBLOCK)
      return fmt::format("cannot lock '{}': {}", path.string(), std::strerror(error));
    return fmt::format(
        "the output directory '{}' is in use by another hookforge-run{}; one run writes to a "
        "directory at a time: wait for it to end, or choose another --output",
        dir.string(), pid.empty() ? std::string() : fmt::format(" (pid {})", pid));
  }
  const auto pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    const int error = errno;
    ::close(fd);
    return fmt::format("cannot write the lock file '{}': {}", path.string(), std::strerror(error));
  }
  return output_lock(fd);
}

void output_lock::remove(const std::filesystem::path& dir) {
  ::unlink((dir / file_name).c_str());  // while still holding it: no run can take it meanwhile
  ::close(fd_);
  fd_ = -1;
}

void output_lock::share_with_children() const {
  ::setenv(parent_variable, std::to_string(::getpid()).c_str(), 1);
}

bool output_lock::held_by_parent() {
  const char* parent = std::getenv(parent_variable);
  return parent != nullptr && std::to_string(::getppid()) == parent;
}

output_lock::output_lock(output_lock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

output_lock::~output_lock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace hookforge::run::detail
