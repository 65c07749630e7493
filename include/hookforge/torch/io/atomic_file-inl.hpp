// hookforge/torch/io/atomic_file-inl.hpp — atomic_file's definitions: included by
// atomic_file.hpp header-only, compiled into hookforge::torch_compiled otherwise.
#pragma once

#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include "hookforge/torch/io/atomic_file.hpp"

namespace hookforge {

namespace detail {

HOOKFORGE_INLINE std::filesystem::path atomic_temp_path(const std::filesystem::path& target) {
  std::filesystem::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  return tmp;
}

HOOKFORGE_INLINE std::filesystem::path directory_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

HOOKFORGE_INLINE bool process_exists(pid_t pid) noexcept {
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

HOOKFORGE_INLINE pid_t temp_owner(std::string_view name, std::string_view target_name) noexcept {
  const std::string prefix = std::string(target_name) + ".tmp.";
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return 0;
  const auto digits = name.substr(prefix.size());
  long long pid = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0 || pid > INT_MAX)
    return 0;  // pid 0 or negative would make kill() address process groups
  return static_cast<pid_t>(pid);
}

HOOKFORGE_INLINE void remove_stale_temps(const std::filesystem::path& target) noexcept {
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

HOOKFORGE_INLINE void fsync_directory(const std::filesystem::path& dir) noexcept {
  auto fd = unique_fd::open(dir, O_RDONLY | O_DIRECTORY);
  if (fd) (void)::fsync(fd.get());
}

HOOKFORGE_INLINE void fsync_path(const std::filesystem::path& file) {
  auto fd = unique_fd::open(file, O_RDONLY);
  if (!fd)
    throw_file_error(errno == ENOENT ? "the writer did not create the temporary file"
                                     : "cannot open the temporary file to fsync it",
                     file, errno);
  fd.fsync();
  fd.close();
}

HOOKFORGE_INLINE void check_directory(const std::filesystem::path& target) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory_of(target), ec))
    throw_file_error("cannot write '" + target.string() + "': its directory does not exist", target,
                     ENOENT);
}

HOOKFORGE_INLINE void rename_over(const std::filesystem::path& tmp,
                                  const std::filesystem::path& target) {
  if (::rename(tmp.c_str(), target.c_str()) != 0)
    throw std::filesystem::filesystem_error(
        "hookforge: cannot write '" + target.string() + "': renaming the temporary file failed",
        tmp, target, std::error_code(errno, std::generic_category()));
}

}  // namespace detail

template <class F>
void atomic_file::checked(const std::string& step, F&& body) {
  if (!fd_) fail(step + " (already committed or failed)", EBADF);
  try {
    body();
  } catch (const std::filesystem::filesystem_error& e) {
    fd_ = {};
    fail(step, e.code().value());
  }
}

HOOKFORGE_INLINE atomic_file::atomic_file(std::filesystem::path target)
    : target_(std::move(target)), tmp_(detail::atomic_temp_path(target_)) {
  detail::check_directory(target_);
  detail::remove_stale_temps(target_);
  (void)::unlink(tmp_.c_str());  // left by an earlier process that had our pid
  fd_ = detail::unique_fd::open(tmp_, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd_) fail("cannot create the temporary file", errno);
  (void)::flock(fd_.get(), LOCK_EX | LOCK_NB);  // tells cleaners it is in use
}

HOOKFORGE_INLINE atomic_file::~atomic_file() {
  if (!committed_) {
    fd_ = {};
    (void)::unlink(tmp_.c_str());
  }
}

HOOKFORGE_INLINE void atomic_file::write(const void* data, std::size_t size) {
  checked("writing the temporary file", [&] { fd_.write_all(data, size); });
}

HOOKFORGE_INLINE void atomic_file::write_at(std::uint64_t offset, const void* data,
                                            std::size_t size) {
  checked("writing the temporary file",
          [&] { fd_.write_all(data, size, static_cast<std::int64_t>(offset)); });
}

HOOKFORGE_INLINE void atomic_file::commit() {
  checked("flushing the temporary file", [&] {
    fd_.fsync();
    fd_.close();
  });
  detail::rename_over(tmp_, target_);
  committed_ = true;
  detail::fsync_directory(detail::directory_of(target_));
}

HOOKFORGE_INLINE void atomic_file::fail(const std::string& step, int err) const {
  throw std::filesystem::filesystem_error(
      "hookforge: cannot write '" + target_.string() + "': " + step + " failed", tmp_,
      std::error_code(err, std::generic_category()));
}

HOOKFORGE_INLINE void write_file_atomically(const std::filesystem::path& path,
                                            std::string_view contents) {
  atomic_file out(path);
  out.write(contents.data(), contents.size());
  out.commit();
}

}  // namespace hookforge
