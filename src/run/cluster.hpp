// src/run/cluster.hpp — hookforge-run under the launchers clusters use: a restarted attempt
// goes on with its run, and a Slurm job requeues itself on the signal sent ahead of its end.
//
// torchrun restarts every rank of a group when one fails (--max-restarts), and Slurm starts
// a requeued job again from its script; either way the new processes have the same
// command line, so the same --output, and a restart count above 0 (environment.hpp). Such
// a start resumes the run in its output directory by itself, as --resume would: from its
// newest complete checkpoint, mid-epoch ones included, or from the start when the first
// attempt saved none.
//
// Only a run of the same job: the attempt that claims an output directory names its job
// there (job_file: the Slurm job id, torchrun's run id, or its agent's host and pid when the
// run id is torchrun's default), and a restart goes on only where its job is named. A
// first attempt refused by a directory holding another run fails; torchrun starts it again,
// and the restart is refused the same way rather than continuing the other run.
//
// Requeue: the requeue signal (distributed.requeue_signal, USR1 by default) stops the run
// at a batch every rank agrees on, rank 0 saves it there, and once every rank has got that
// far rank 0 asks Slurm to requeue the job (`scontrol requeue $SLURM_JOB_ID`). Private to
// hookforge::run; no LibTorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "hookforge/distributed/environment.hpp"

namespace hookforge::run::detail {

/// "torchrun restart 1", "Slurm requeue 2" (both, where torchrun runs in a requeued job): why
/// this start goes on with an earlier one's run; nullopt for a first start.
std::optional<std::string> restart_reason(const distributed::rank_environment& env);

/// The job a launcher runs this process in ("slurm job 1234", "torchrun run 8f3c…",
/// "torchrun agent node7 pid 4242"); nullopt without one.
std::optional<std::string> job_identity(const distributed::rank_environment& env);

/// The file in an output directory that names the job writing there.
inline constexpr const char* job_file = ".hookforge-run.job";
/// Whether `dir`'s job file names `job`.
bool written_by_job(const std::filesystem::path& dir, const std::string& job);
/// Name `job` in `dir`'s job file (a temporary file renamed over it); the reason if it failed.
std::optional<std::string> record_job(const std::filesystem::path& dir, const std::string& job);

/// The signal number of a requeue_signal name ("USR1", "USR2", "HUP", "none": 0).
int signal_number(std::string_view name);

/// Asks Slurm to requeue `job_id` (scontrol requeue) and waits for the answer: nullopt when it
/// was requeued, else why not (scontrol missing, its exit code and message).
std::optional<std::string> requeue_slurm_job(const std::string& job_id);

}  // namespace hookforge::run::detail
