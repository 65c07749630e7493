// hookforge/torch/io/file_descriptor.hpp — POSIX file descriptors with every result
// checked: the machinery under atomic_file.hpp and the checkpoint reader.
//
// Why not std::ofstream: a stream may drop an error on its last flush (LibTorch's own
// writer ignores ENOSPC on its final write), and a file that looks written but is
// truncated must never be renamed over a good one. Here every write, pwrite, fsync and
// close is checked; EINTR and partial writes are retried until all bytes are out.
#pragma once

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hookforge::detail {

[[noreturn]] inline void throw_file_error(const std::string& what, const std::filesystem::path& p,
                                          int err) {
  throw std::filesystem::filesystem_error("hookforge: " + what, p,
                                          std::error_code(err, std::generic_category()));
}

// Owns one descriptor; the path is kept for error messages.
class unique_fd {
 public:
  unique_fd() = default;
  unique_fd(int fd, std::filesystem::path path) noexcept : fd_(fd), path_(std::move(path)) {}
  unique_fd(unique_fd&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
      path_ = std::move(other.path_);
    }
    return *this;
  }
  ~unique_fd() { reset(); }

  // Opens `path`; returns an invalid descriptor (errno set) when that fails.
  static unique_fd open(const std::filesystem::path& path, int flags, mode_t mode = 0666) {
    int fd;
    do fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    while (fd < 0 && errno == EINTR);
    return unique_fd(fd, path);
  }

  explicit operator bool() const noexcept { return fd_ >= 0; }
  int get() const noexcept { return fd_; }
  const std::filesystem::path& path() const noexcept { return path_; }

  // Writes all `size` bytes at the current position (offset < 0) or at `offset`.
  void write_all(const void* data, std::size_t size, std::int64_t offset = -1) const {
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

  // Reads up to `size` bytes at `offset`; fewer only at the end of the file.
  std::size_t read_at(void* data, std::size_t size, std::uint64_t offset) const {
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

  std::uint64_t size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw_file_error("fstat failed", path_, errno);
    return static_cast<std::uint64_t>(st.st_size);
  }

  void fsync() const {
    int rc;
    do rc = ::fsync(fd_);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) throw_file_error("fsync failed", path_, errno);
  }

  // Closes and reports the error (NFS, for one, reports failed writes here). EINTR is
  // not an error: Linux has closed the descriptor by then, and retrying could close
  // another thread's new one.
  void close() {
    const int rc = ::close(std::exchange(fd_, -1));
    if (rc != 0 && errno != EINTR) throw_file_error("close failed", path_, errno);
  }

 private:
  void reset() noexcept {
    if (fd_ >= 0) (void)::close(std::exchange(fd_, -1));
  }

  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace hookforge::detail
