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

#include "hookforge/core/build_mode.hpp"

namespace hookforge::detail {

// Throws std::filesystem::filesystem_error "hookforge: <what>" for `p` and errno `err`.
[[noreturn]] HOOKFORGE_INLINE void throw_file_error(const std::string& what,
                                                    const std::filesystem::path& p, int err);

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
  static unique_fd open(const std::filesystem::path& path, int flags, mode_t mode = 0666);

  explicit operator bool() const noexcept { return fd_ >= 0; }
  int get() const noexcept { return fd_; }
  const std::filesystem::path& path() const noexcept { return path_; }

  // Writes all `size` bytes at the current position (offset < 0) or at `offset`.
  void write_all(const void* data, std::size_t size, std::int64_t offset = -1) const;

  // Reads up to `size` bytes at `offset`; fewer only at the end of the file.
  std::size_t read_at(void* data, std::size_t size, std::uint64_t offset) const;

  std::uint64_t size() const;

  void fsync() const;

  // Closes and reports the error (NFS, for one, reports failed writes here). EINTR is
  // not an error: Linux has closed the descriptor by then, and retrying could close
  // another thread's new one.
  void close();

 private:
  void reset() noexcept {
    if (fd_ >= 0) (void)::close(std::exchange(fd_, -1));
  }

  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace hookforge::detail

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/file_descriptor-inl.hpp"
#endif
