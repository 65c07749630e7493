// src/run/work_dir.hpp — where a run writes, and the rule that keeps an earlier run's files:
// a run never replaces or deletes files of an earlier run in its work directory unless the
// user said so (--resume continues it, --overwrite discards it). Without --output or
// system.work_dir a run writes to runs/<config>, or, when that holds a run, to the first of
// runs/<config>-2, -3, ... that does not. Private to hookforge::run; no LibTorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <variant>

#include "output_lock.hpp"

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

/// What taking an output directory needs to know of the run.
struct work_dir_request {
  std::filesystem::path dir;
  std::filesystem::path checkpoints;  ///< the CheckpointSaver's out_dir
  start_mode mode = start_mode::fresh;
  bool resume_file = false;        ///< --resume names a checkpoint file
  std::optional<std::string> job;  ///< the launcher's job, named in `dir` (cluster.hpp)
  std::optional<std::filesystem::path> default_base;  ///< runs/<config>, where none was given
};

/// Takes `r.dir` for this run before its first file: creates it, locks it, refuses it by
/// claim_work_dir's rule unless the run resumes a checkpoint (a --resume file, or the
/// directory's last_checkpoint), names the job there, and says when a new run went past an
/// earlier one's default directory. The lock, or the exit code with its message printed.
std::variant<output_lock, int> take_work_dir(const work_dir_request& r);

}  // namespace hookforge::run::detail
