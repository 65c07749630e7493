// hookforge/torch/io/file_descriptor-inl.hpp — unique_fd's definitions: included by
// file_descriptor.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hookforge/torch/io/file_descriptor.hpp"

namespace hookforge::detail {

HOOKFORGE_INLINE void throw_file_error(const std::string& what, const std::filesystem::path& p,
                                       int err) {
  throw std::filesystem::filesystem_error("hookforge: " + what, p,
                                          std::error_code(err, std::generic_category()));
}

HOOKFORGE_INLINE unique_fd unique_fd::open(const std::filesystem::path& path, int flags,
                                           mode_t mode) {
  int fd;
  do fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  while (fd < 0 && errno == EINTR);
  return unique_fd(fd, path);
}

HOOKFORGE_INLINE void unique_fd::write_all(const void* data, std::size_t size,
                                           std::int64_t offset) const {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const std::size_t chunk = size < (std::size_t{1} << 30) ? size : std::size_t{1} << 30;
    const ssize_t n = offset < 0 ? ::write(fd_, p, chunk) : ::pwrite(fd_, p, chunk, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_file_error("write failed", path_, n < 0 ? errno : EIO);
    p += n;
    size -= static_cast<std::size_t>(n);
    if (offset >= 0) offset += n;
  }
}

HOOKFORGE_INLINE std::size_t unique_fd::read_at(void* data, std::size_t size,
                                                std::uint64_t offset) const {
  auto* p = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd_, p + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_file_error("read failed", path_, errno);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

HOOKFORGE_INLINE std::uint64_t unique_fd::size() const {
  struct stat st{};
  if (::fstat(fd_, &st) != 0) throw_file_error("fstat failed", path_, errno);
  return static_cast<std::uint64_t>(st.st_size);
}

HOOKFORGE_INLINE void unique_fd::fsync() const {
  int rc;
  do rc = ::fsync(fd_);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) throw_file_error("fsync failed", path_, errno);
}

HOOKFORGE_INLINE void unique_fd::close() {
  const int rc = ::close(std::exchange(fd_, -1));
  if (rc != 0 && errno != EINTR) throw_file_error("close failed", path_, errno);
}

}  // namespace hookforge::detail
