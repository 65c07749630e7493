// hookforge/config/output_path.hpp — where a path a run writes to goes.
//
// A config's output paths (a hook's out_dir) are relative to the run's output directory,
// and stay inside it: `checkpoints` is <output>/checkpoints, while `/tmp/x`, `../x`, or a
// symlink inside the output directory that leads out of it is refused unless the command
// line allows it (build_options::paths_outside_output). The rule is written here once;
// field_spec::output_path and arg::output_path mark the parameters it applies to.
#pragma once

#include <filesystem>
#include <system_error>

namespace hookforge::config {

/// `written` placed under `output_dir`: as it is when absolute, joined to `output_dir`
/// otherwise, and lexically normal ("a/../b" is "b").
inline std::filesystem::path place_under(const std::filesystem::path& output_dir,
                                         const std::filesystem::path& written) {
  return (written.is_absolute() ? written : output_dir / written).lexically_normal();
}

/// Whether `path` (placed by place_under) is `output_dir` or below it, once what exists of
/// both is resolved through its symlinks.
inline bool stays_inside(const std::filesystem::path& output_dir,
                         const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto root = fs::weakly_canonical(fs::absolute(output_dir, ec), ec);
  if (ec) return false;
  const auto real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return false;
  const auto below = real.lexically_relative(root);
  return !below.empty() && *below.begin() != "..";
}

}  // namespace hookforge::config
