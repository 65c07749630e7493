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

#include <chrono>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <unistd.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/file_descriptor.hpp"

namespace hookforge {

// A temp file of a dead writer is removed at once; one whose writer's pid is alive (or
// reused by another process) once it has not been modified for this long.
inline constexpr std::chrono::hours stale_temp_age{24};

namespace detail {

// "<target>.tmp.<pid>", beside the target.
HOOKFORGE_INLINE std::filesystem::path atomic_temp_path(const std::filesystem::path& target);
// The target's directory ("." for a bare name).
HOOKFORGE_INLINE std::filesystem::path directory_of(const std::filesystem::path& target);
// kill(pid, 0) fails with ESRCH only when no such process exists (EPERM: it exists).
HOOKFORGE_INLINE bool process_exists(pid_t pid) noexcept;
// The writer's pid of `name` when it is a temp of `target_name`, else 0.
HOOKFORGE_INLINE pid_t temp_owner(std::string_view name, std::string_view target_name) noexcept;
// Removes the stale temp files of `target` (see the top of this file). Best effort: never
// throws, leaves alone whatever it cannot check.
HOOKFORGE_INLINE void remove_stale_temps(const std::filesystem::path& target) noexcept;
// Makes a completed rename durable. Best effort: never throws.
HOOKFORGE_INLINE void fsync_directory(const std::filesystem::path& dir) noexcept;
// Flushes the file at `file` (written by someone else) to stable storage.
HOOKFORGE_INLINE void fsync_path(const std::filesystem::path& file);
// Throws filesystem_error (ENOENT) when the target's directory does not exist.
HOOKFORGE_INLINE void check_directory(const std::filesystem::path& target);
// rename(2) of `tmp` over `target`; throws filesystem_error naming both.
HOOKFORGE_INLINE void rename_over(const std::filesystem::path& tmp,
                                  const std::filesystem::path& target);

}  // namespace detail

// A file written under a temporary name and renamed over the target on commit().
class atomic_file {
 public:
  // Removes the target's stale temps, then creates (exclusively) and locks this
  // process's temp. Throws filesystem_error when the directory is missing or the temp
  // cannot be created.
  explicit atomic_file(std::filesystem::path target);
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;
  ~atomic_file();

  const std::filesystem::path& path() const noexcept { return target_; }
  const std::filesystem::path& temp_path() const noexcept { return tmp_; }

  // Appends all `size` bytes; throws filesystem_error (ENOSPC, EFBIG, EIO, ...).
  void write(const void* data, std::size_t size);
  // Overwrites bytes already written (a header completed last).
  void write_at(std::uint64_t offset, const void* data, std::size_t size);

  // fsync, close, rename over the target, fsync the directory. After an exception the
  // target is as it was and the destructor removes the temp.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& step, int err) const;

  // Rethrows unique_fd's errors with the target's name and the step.
  template <class F>
  void checked(const std::string& step, F&& body);

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
HOOKFORGE_INLINE void write_file_atomically(const std::filesystem::path& path,
                                            std::string_view contents);

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/atomic_file-inl.hpp"
#endif
