// See cluster.hpp.
#include "cluster.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace hookforge::run::detail {

std::optional<std::string> restart_reason(const distributed::rank_environment& env) {
  std::string reason;
  if (env.elastic_restarts > 0) reason = fmt::format("torchrun restart {}", env.elastic_restarts);
  if (env.slurm_restarts > 0)
    reason += fmt::format("{}Slurm requeue {}", reason.empty() ? "" : ", ", env.slurm_restarts);
  if (reason.empty()) return std::nullopt;
  return reason;
}

std::optional<std::string> job_identity(const distributed::rank_environment& env) {
  if (env.slurm_job) return "slurm job " + *env.slurm_job;
  if (env.launcher != distributed::launcher::torchrun) return std::nullopt;
  // torchrun's default run id ("none", or what --rdzv-id repeats across jobs) names no job;
  // the agent that restarts the ranks, their parent, does.
  const char* run_id = std::getenv("TORCHELASTIC_RUN_ID");
  if (run_id && *run_id && std::string_view(run_id) != "none")
    return fmt::format("torchrun run {}", run_id);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  return fmt::format("torchrun agent {} pid {}", host, ::getppid());
}

bool written_by_job(const std::filesystem::path& dir, const std::string& job) {
  std::ifstream in(dir / job_file);
  std::string line;
  return in && std::getline(in, line) && line == job;
}

std::optional<std::string> record_job(const std::filesystem::path& dir, const std::string& job) {
  const auto path = dir / job_file;
  auto temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << job << '\n';
    if (!out.flush()) return fmt::format("cannot write {}", temporary.string());
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) return fmt::format("cannot write {}: {}", path.string(), error.message());
  return std::nullopt;
}

int signal_number(std::string_view name) {
  if (name == "USR1") return SIGUSR1;
  if (name == "USR2") return SIGUSR2;
  if (name == "HUP") return SIGHUP;
  return 0;
}

std::optional<std::string> requeue_slurm_job(const std::string& job_id) {
  // scontrol's own output (an error) reaches the job's log; its exit code decides here.
  std::string program = "scontrol", verb = "requeue", job = job_id;
  char* argv[] = {program.data(), verb.data(), job.data(), nullptr};
  pid_t pid = 0;
  if (const int error = ::posix_spawnp(&pid, "scontrol", nullptr, nullptr, argv, environ))
    return fmt::format(
        "cannot run scontrol ({}): requeue job {} yourself, or submit it again "
        "with --resume",
        std::strerror(error), job_id);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  return fmt::format(
      "scontrol requeue {} failed ({}): is the job requeueable (sbatch --requeue, "
      "JobRequeue=1)? Submit it again with --resume",
      job_id,
      WIFEXITED(status) ? fmt::format("exit code {}", WEXITSTATUS(status))
                        : fmt::format("signal {}", WTERMSIG(status)));
}

}  // namespace hookforge::run::detail
