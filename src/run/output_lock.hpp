// src/run/output_lock.hpp — one run per output directory: hookforge-run holds an exclusive
// flock on <output>/.hookforge-run.lock from before its first file until it exits. The
// kernel drops the lock with the process, so a killed run never leaves a stale one; the
// file holds the pid of the run that has it, for the message a second run prints.
// Private to hookforge::run; no LibTorch.
#pragma once

#include <filesystem>
#include <string>
#include <variant>

namespace hookforge::run::detail {

class output_lock {
 public:
  /// The lock's file name inside the output directory.
  static constexpr const char* file_name = ".hookforge-run.lock";

  /// Take the lock of `dir`, which must exist. A string says why not (another run holds it,
  /// naming its pid; or the file cannot be made).
  static std::variant<output_lock, std::string> take(const std::filesystem::path& dir);

  /// Remove the lock file of `dir` and release the lock: a run refused in a directory that
  /// had no lock file leaves none (its presence says that a run wrote there).
  void remove(const std::filesystem::path& dir);
  /// --nproc: the ranks this process starts run under its lock (they do not take it again).
  void share_with_children() const;
  /// This process is a rank whose launcher holds the lock of its output directory.
  static bool held_by_parent();

  output_lock(output_lock&& other) noexcept;
  output_lock& operator=(output_lock&&) = delete;
  output_lock(const output_lock&) = delete;
  ~output_lock();

 private:
  explicit output_lock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace hookforge::run::detail
