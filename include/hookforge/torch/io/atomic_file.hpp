// hookforge/torch/io/atomic_file.hpp — replace a file so readers see the old or the new
// contents, never a half-written one (POSIX).
//
//   hookforge::atomic_file out("run/last.ckpt");      // creates run/last.ckpt.tmp.<pid>
//   out.write(bytes.data(), bytes.size());             // checked; may be called many times
//   out.commit();                                      // fsync, rename over the target
//
//   hookforge::write_file_atomically("metrics.json", json_text);   // contents at once
//   hookforge::write_file_atomically(path, [&](const std::filesystem::path& tmp) {
//     archive.save_to(tmp.string());        // a writer that creates the file at `tmp`
//   });
//
// The temp file `<path>.tmp.<pid>` is in the target's directory (a rename cannot cross
// file systems); it is fsync'ed, then renamed over `path`, which POSIX makes atomic, then
// the directory is fsync'ed (best effort: some file systems refuse it). Until commit()
// `path` keeps its previous contents; an atomic_file destroyed uncommitted (an exception)
// removes its temp file. Every write, fsync and close is checked (disk full, quota,
// RLIMIT_FSIZE, I/O errors throw std::filesystem::filesystem_error naming the target).
//
// A process killed mid-write leaves its temp file behind; the next write of the same
// path removes such stale temps: those of processes that no longer exist, or untouched
// for stale_temp_age. A temp that another process holds open for writing is never
// removed, as each writer keeps an flock on its temp (this also protects writers in
// other PID namespaces that share the directory).
//
// One writer per target path per process at a time (threads would share the temp name).
#pragma once

#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include "hookforge/torch/io/file_descriptor.hpp"

namespace hookforge {

// A temp file of a dead writer is removed at once; one whose writer's pid is alive (or
// reused by another process) once it has not been modified for this long.
inline constexpr std::chrono::hours stale_temp_age{24};

namespace detail {

inline std::filesystem::path atomic_temp_path(const std::filesystem::path& target) {
  std::filesystem::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  return tmp;
}

inline std::filesystem::path directory_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

// kill(pid, 0) fails with ESRCH only when no such process exists (EPERM: it exists).
inline bool process_exists(pid_t pid) noexcept { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// The writer's pid of `name` when it is a temp of `target_name`, else 0.
inline pid_t temp_owner(std::string_view name, std::string_view target_name) noexcept {
  const std::string prefix = std::string(target_name) + ".tmp.";
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return 0;
  const auto digits = name.substr(prefix.size());
  long long pid = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0 || pid > INT_MAX)
    return 0;  // pid 0 or negative would make kill() address process groups
  return static_cast<pid_t>(pid);
}

// Removes the stale temp files of `target` (see the top of this file). Best effort: never
// throws, leaves alone whatever it cannot check.
inline void remove_stale_temps(const std::filesystem::path& target) noexcept {
  namespace fs = std::filesystem;
  try {
    const auto target_name = target.filename().string();
    std::vector<fs::path> stale;
    std::error_code ec;
    for (fs::directory_iterator it(directory_of(target), ec), end; !ec && it != end;
         it.increment(ec)) {
      const pid_t pid = temp_owner(it->path().filename().string(), target_name);
      if (pid == 0 || pid == ::getpid()) continue;  // our own is the caller's business
      std::error_code time_ec;
      const auto modified = fs::last_write_time(it->path(), time_ec);
      const bool old = !time_ec && fs::file_time_type::clock::now() - modified > stale_temp_age;
      if (old || !process_exists(pid)) stale.push_back(it->path());
    }
    for (const auto& path : stale) {
      auto fd = unique_fd::open(path, O_RDONLY | O_NOFOLLOW);
      if (fd && ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) (void)::unlink(path.c_str());
    }
  } catch (...) {  // allocation failures: leave the temps for the next save
  }
}

// Makes a completed rename durable. Best effort: never throws.
inline void fsync_directory(const std::filesystem::path& dir) noexcept {
  auto fd = unique_fd::open(dir, O_RDONLY | O_DIRECTORY);
  if (fd) (void)::fsync(fd.get());
}

// Flushes the file at `file` (written by someone else) to stable storage.
inline void fsync_path(const std::filesystem::path& file) {
  auto fd = unique_fd::open(file, O_RDONLY);
  if (!fd)
    throw_file_error(errno == ENOENT ? "the writer did not create the temporary file"
                                     : "cannot open the temporary file to fsync it",
                     file, errno);
  fd.fsync();
  fd.close();
}

inline void check_directory(const std::filesystem::path& target) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory_of(target), ec))
    throw_file_error("cannot write '" + target.string() + "': its directory does not exist", target,
                     ENOENT);
}

inline void rename_over(const std::filesystem::path& tmp, const std::filesystem::path& target) {
  if (::rename(tmp.c_str(), target.c_str()) != 0)
    throw std::filesystem::filesystem_error(
        "hookforge: cannot write '" + target.string() + "': renaming the temporary file failed",
        tmp, target, std::error_code(errno, std::generic_category()));
}

}  // namespace detail

// A file written under a temporary name and renamed over the target on commit().
class atomic_file {
 public:
  // Removes the target's stale temps, then creates (exclusively) and locks this
  // process's temp. Throws filesystem_error when the directory is missing or the temp
  // cannot be created.
  explicit atomic_file(std::filesystem::path target)
      : target_(std::move(target)), tmp_(detail::atomic_temp_path(target_)) {
    detail::check_directory(target_);
    detail::remove_stale_temps(target_);
    (void)::unlink(tmp_.c_str());  // left by an earlier process that had our pid
    fd_ = detail::unique_fd::open(tmp_, O_WRONLY | O_CREAT | O_EXCL);
    if (!fd_) fail("cannot create the temporary file", errno);
    (void)::flock(fd_.get(), LOCK_EX | LOCK_NB);  // tells cleaners it is in use
  }
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;
  ~atomic_file() {
    if (!committed_) {
      fd_ = {};
      (void)::unlink(tmp_.c_str());
    }
  }

  const std::filesystem::path& path() const noexcept { return target_; }
  const std::filesystem::path& temp_path() const noexcept { return tmp_; }

  // Appends all `size` bytes; throws filesystem_error (ENOSPC, EFBIG, EIO, ...).
  void write(const void* data, std::size_t size) {
    checked("writing the temporary file", [&] { fd_.write_all(data, size); });
  }
  // Overwrites bytes already written (a header completed last).
  void write_at(std::uint64_t offset, const void* data, std::size_t size) {
    checked("writing the temporary file",
            [&] { fd_.write_all(data, size, static_cast<std::int64_t>(offset)); });
  }

  // fsync, close, rename over the target, fsync the directory. After an exception the
  // target is as it was and the destructor removes the temp.
  void commit() {
    checked("flushing the temporary file", [&] {
      fd_.fsync();
      fd_.close();
    });
    detail::rename_over(tmp_, target_);
    committed_ = true;
    detail::fsync_directory(detail::directory_of(target_));
  }

 private:
  [[noreturn]] void fail(const std::string& step, int err) const {
    throw std::filesystem::filesystem_error(
        "hookforge: cannot write '" + target_.string() + "': " + step + " failed", tmp_,
        std::error_code(err, std::generic_category()));
  }

  // Rethrows unique_fd's errors with the target's name and the step.
  template <class F>
  void checked(const std::string& step, F&& body) {
    if (!fd_) fail(step + " (already committed or failed)", EBADF);
    try {
      body();
    } catch (const std::filesystem::filesystem_error& e) {
      fd_ = {};
      fail(step, e.code().value());
    }
  }

  std::filesystem::path target_, tmp_;
  detail::unique_fd fd_;
  bool committed_ = false;
};

// Calls `write_to_temp_path(tmp)`, which must create the complete file at `tmp`, then
// atomically replaces `path` by it. Rethrows the writer's exception (after removing the
// temp file); throws std::filesystem::filesystem_error when the directory is missing or
// fsync/rename fail. The writer's own write errors are its business: prefer atomic_file
// (or the overload below) when a stream might drop them.
template <class Fn>
  requires std::invocable<Fn&, const std::filesystem::path&>
void write_file_atomically(const std::filesystem::path& path, Fn&& write_to_temp_path) {
  detail::check_directory(path);
  detail::remove_stale_temps(path);
  const std::filesystem::path tmp = detail::atomic_temp_path(path);
  (void)::unlink(tmp.c_str());
  try {
    std::invoke(write_to_temp_path, static_cast<const std::filesystem::path&>(tmp));
    detail::fsync_path(tmp);
    detail::rename_over(tmp, path);
  } catch (...) {
    (void)::unlink(tmp.c_str());
    throw;
  }
  detail::fsync_directory(detail::directory_of(path));
}

// Atomically replaces `path` by `contents` (binary, as is), every write checked.
inline void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  atomic_file out(path);
  out.write(contents.data(), contents.size());
  out.commit();
}

}  // namespace hookforge
