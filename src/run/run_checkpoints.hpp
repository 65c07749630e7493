// src/run/run_checkpoints.hpp — which of a run's checkpoints is its best: what
// `hookforge-run export` and the test stage take. Private to hookforge::run.
#pragma once

#include <filesystem>
#include <optional>

namespace hookforge::run::detail {

/// The best checkpoint of the run whose checkpoints are in `dir`, `last` being its last: the
/// one the last checkpoint's CheckpointSaver bookkeeping names (with save_top_k, the newest
/// best file need not be the best), else the newest best_*.pt by modification; none when
/// there is neither.
std::optional<std::filesystem::path> best_checkpoint(const std::filesystem::path& dir,
                                                     const std::filesystem::path& last);

}  // namespace hookforge::run::detail
