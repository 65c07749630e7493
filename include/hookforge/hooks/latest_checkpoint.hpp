// hookforge/hooks/latest_checkpoint.hpp — where to resume: the checkpoint a CheckpointSaver's
// last_checkpoint file names.
//
//   if (auto last = hookforge::latest_checkpoint("runs/a")) trainer.load_checkpoint(*last);
#pragma once

#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "hookforge/hooks/detail/file_name.hpp"

namespace hookforge {

/// The checkpoint that `dir`/last_checkpoint names, or nullopt when `dir` has no
/// last_checkpoint: where to resume a run that a CheckpointSaver wrote to `dir`. A
/// last_checkpoint that is empty, garbled (not one file name) or names no regular file in
/// `dir` (a path elsewhere, a symlink, a missing file) is a std::runtime_error naming it: a
/// resumed run never silently starts over on top of the run it was meant to continue.
inline std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const auto file = dir / "last_checkpoint";
  const auto fail = [&](std::string what) {
    return std::runtime_error(fmt::format("{} {}", file.string(), what));
  };
  std::error_code ec;
  const auto status = fs::symlink_status(file, ec);
  if (!fs::exists(status)) return std::nullopt;
  if (!fs::is_regular_file(status)) throw fail("is not a regular file (a symlink or a directory)");
  std::ifstream in(file, std::ios::binary);
  char buffer[4096];
  in.read(buffer, sizeof buffer);
  if (in.bad() || (!in && !in.eof())) throw fail("cannot be read");
  std::string name(buffer, static_cast<std::size_t>(in.gcount()));
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  if (name.empty())
    throw fail("is empty: it should name the checkpoint to resume from (epoch_N.pt)");
  if (!detail::is_file_name(name))
    throw fail(fmt::format("should hold the name of a checkpoint file in {}, got '{}'",
                           dir.string(), name.substr(0, 80)));
  const auto target = dir / name;
  const auto target_status = fs::symlink_status(target, ec);
  if (!fs::exists(target_status)) throw fail(fmt::format("names '{}', which does not exist", name));
  if (!fs::is_regular_file(target_status))
    throw fail(
        fmt::format("names '{}', which is not a regular file (a symlink or a directory)", name));
  return target;
}

}  // namespace hookforge
