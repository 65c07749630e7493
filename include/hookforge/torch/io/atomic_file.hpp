// hookforge/torch/io/atomic_file.hpp — replace a file so readers see the old or the new
// contents, never a half-written one.
//
//   hookforge::write_file_atomically(path, [&](const std::filesystem::path& tmp) {
//     archive.save_to(tmp.string());        // anything that writes a whole file at `tmp`
//   });
//   hookforge::write_file_atomically("metrics.json", json_text);   // or plain contents
//
// The writer fills `<path>.tmp.<pid>` in the same directory (so the rename cannot cross
// file systems); the temp file is fsync'ed and then renamed over `path`, which POSIX
// makes atomic. If the writer throws, or any step fails, the temp file is removed and
// `path` keeps its previous contents. A crash mid-write leaves at most a stray
// `*.tmp.<pid>` file, never a truncated `path`. The directory is fsync'ed after the
// rename on a best-effort basis (some file systems refuse it; the rename has happened).
//
// One writer per target path at a time: two threads of one process writing the same
// path concurrently would share the temp name.
#pragma once

#include <cerrno>
#include <concepts>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>

#if defined(_WIN32)
#include <process.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

namespace hookforge {
namespace detail {

inline std::filesystem::path atomic_temp_path(const std::filesystem::path& target) {
#if defined(_WIN32)
  const auto pid = ::_getpid();
#else
  const auto pid = ::getpid();
#endif
  std::filesystem::path tmp = target;
  tmp += ".tmp." + std::to_string(pid);
  return tmp;
}

[[noreturn]] inline void throw_file_error(const std::string& what, const std::filesystem::path& p,
                                          int err) {
  throw std::filesystem::filesystem_error("hookforge: " + what, p,
                                          std::error_code(err, std::generic_category()));
}

// Flushes `file` to stable storage; throws filesystem_error when it cannot.
inline void fsync_file(const std::filesystem::path& file) {
#if !defined(_WIN32)
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw_file_error(err == ENOENT ? "the writer did not create the temporary file"
                                   : "cannot open the temporary file to fsync it",
                     file, err);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    throw_file_error("fsync failed", file, err);
  }
  if (::close(fd) != 0) throw_file_error("close after fsync failed", file, errno);
#else
  if (!std::filesystem::exists(file))
    throw_file_error("the writer did not create the temporary file", file, ENOENT);
#endif
}

// Makes a completed rename durable. Best effort: never throws.
inline void fsync_directory(const std::filesystem::path& dir) noexcept {
#if !defined(_WIN32)
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  (void)::close(fd);
#else
  (void)dir;
#endif
}

}  // namespace detail

// Calls `write_to_temp_path(tmp)`, which must create the complete file at `tmp`, then
// atomically replaces `path` by it. Rethrows the writer's exception (after removing the
// temp file); throws std::filesystem::filesystem_error when the directory is missing or
// fsync/rename fail.
template <class Fn>
  requires std::invocable<Fn&, const std::filesystem::path&>
void write_file_atomically(const std::filesystem::path& path, Fn&& write_to_temp_path) {
  const std::filesystem::path dir =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(dir))
    detail::throw_file_error("the target's directory does not exist", path, ENOENT);

  const std::filesystem::path tmp = detail::atomic_temp_path(path);
  std::error_code ignored;
  std::filesystem::remove(tmp, ignored);  // a stale temp from an earlier crash of this pid
  try {
    std::invoke(write_to_temp_path, static_cast<const std::filesystem::path&>(tmp));
    detail::fsync_file(tmp);
    std::filesystem::rename(tmp, path);
  } catch (...) {
    std::filesystem::remove(tmp, ignored);
    throw;
  }
  detail::fsync_directory(dir);
}

// Atomically replaces `path` by `contents` (binary, as is).
inline void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  write_file_atomically(path, [contents](const std::filesystem::path& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) detail::throw_file_error("cannot create the temporary file", tmp, errno);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) detail::throw_file_error("writing the temporary file failed", tmp, errno);
  });
}

}  // namespace hookforge
