// See run_checkpoints.hpp.
#include "run_checkpoints.hpp"

#include <filesystem>
#include <optional>
#include <string>

#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/checkpoint_error.hpp"

namespace hookforge::run::detail {

namespace fs = std::filesystem;

namespace {

// The best checkpoint that CheckpointSaver's bookkeeping in `last` names (its best_file), when
// it has one and that file is in `dir`: with save_top_k, the newest best file need not be the
// best.
std::optional<fs::path> best_named_in(const fs::path& last, const fs::path& dir) {
  const std::string section = "hooks.trainer.CheckpointSaver";
  try {
    const checkpoint_reader checkpoint(last);
    if (!checkpoint.contains(section)) return std::nullopt;
    // One file name in `dir`, naming a regular file there (not a path, not a symlink): the
    // checkpoint may come from elsewhere.
    const fs::path name = checkpoint.load_state_value<std::string>(section, "best_file");
    if (name.empty() || name.filename() != name || name == "." || name == ".." ||
        fs::symlink_status(dir / name).type() != fs::file_type::regular)
      return std::nullopt;
    return dir / name;
  } catch (const checkpoint_error&) {
    return std::nullopt;  // not a trainer's checkpoint: the file names decide
  }
}

}  // namespace

std::optional<fs::path> best_checkpoint(const fs::path& dir, const fs::path& last) {
  if (auto named = best_named_in(last, dir)) return named;
  std::optional<fs::path> best;
  for (const auto& item : fs::directory_iterator(dir)) {
    const auto name = item.path().filename().string();
    if (!item.is_regular_file() || !name.starts_with("best_") || item.path().extension() != ".pt")
      continue;
    if (!best || fs::last_write_time(item.path()) > fs::last_write_time(*best)) best = item.path();
  }
  return best;
}

}  // namespace hookforge::run::detail
