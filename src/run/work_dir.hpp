// src/run/work_dir.hpp — where a run writes, and the rule that keeps an earlier run's files:
// a run never replaces or deletes files of an earlier run in its work directory unless the
// user said so (--resume continues it, --overwrite discards it). Without --output or
// system.work_dir a run writes to runs/<config>, or, when that holds a run, to the first of
// runs/<config>-2, -3, ... that does not. Private to hookforge::run; no LibTorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace hookforge::run::detail {

/// How the command line starts a run in its work directory.
enum class start_mode { fresh, resume, overwrite };

/// Whether `dir` holds files of a run: any entry but the lock file.
bool holds_run(const std::filesystem::path& dir);

/// The default work directory for `base` (runs/<config>): a new run's is the first of base,
/// base-2, base-3, ... that holds no run; a resumed run's the last of them that holds one
/// (base when none does).
std::filesystem::path default_work_dir(const std::filesystem::path& base, start_mode mode);

/// Creates `dir` and checks that it takes a file; the reason when not.
std::optional<std::string> prepare_work_dir(const std::filesystem::path& dir);

/// Why a run started as `mode` may not write to `dir`, which it has locked (exit 2), or
/// nullopt. `written_by_run`: the lock file was in `dir` before this run, so a hookforge-run
/// wrote there. --overwrite empties a run's directory (but for the lock) here; it refuses a
/// directory no run wrote. A fresh run refuses a directory that holds files; --resume
/// without last_checkpoint refuses one whose `checkpoints` folder (the CheckpointSaver's
/// out_dir, `dir` by default) holds checkpoints (*.pt).
std::optional<std::string> claim_work_dir(const std::filesystem::path& dir, start_mode mode,
                                          bool written_by_run,
                                          const std::filesystem::path& checkpoints);

}  // namespace hookforge::run::detail
