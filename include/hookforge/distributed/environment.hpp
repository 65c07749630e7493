// hookforge/distributed/environment.hpp — what the environment says of this process's rank: the
// variables torchrun, Slurm's srun and hookforge-run --nproc set, each read and checked in one
// place.
//
//   auto env = hookforge::distributed::read_rank_environment();  // RANK, WORLD_SIZE, LOCAL_RANK,
//                                                          // MASTER_ADDR, MASTER_PORT
//   int world = env.world_size.value_or(1);
//   hookforge::distributed::check_rank(env.rank.value_or(0), world);
//
// The launcher is told by its variables: torchrun sets TORCHELASTIC_RUN_ID beside RANK (and
// TORCHELASTIC_RESTART_COUNT, the attempt: an elastic restart starts every rank again);
// srun sets SLURM_PROCID and SLURM_STEP_NUM_TASKS, from which the rank variables follow
// (slurm.hpp) where RANK is not set; a requeued Slurm job has SLURM_RESTART_COUNT > 0.
//
// A malformed variable is std::invalid_argument naming it ("hookforge::distributed: MASTER_PORT
// must be an integer in [1, 65535], got 'http'"). Needs no c10d: hookforge-run reads it
// whether or not it was built with hookforge::distributed.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "hookforge/distributed/slurm.hpp"

namespace hookforge::distributed {

/// How a variable is looked up: std::getenv, unless a test gives another.
using getenv_function = std::function<const char*(const char*)>;

inline const char* process_getenv(const char* name) { return std::getenv(name); }

/// An environment variable as an integer in [low, high]; nullopt when unset or empty.
inline std::optional<long long> env_int(const char* name, long long low, long long high,
                                        const getenv_function& getenv = process_getenv) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high)
    throw std::invalid_argument(
        fmt::format("hookforge::distributed: {} must be an integer in [{}, {}], got '{}'", name,
                    low, high, text));
  return value;
}

/// Who started this process, as its variables tell.
enum class launcher {
  none,       ///< no rank variables: one process
  variables,  ///< RANK and WORLD_SIZE, set by hand or by hookforge-run --nproc
  torchrun,   ///< torchrun (TORCHELASTIC_RUN_ID)
  slurm,      ///< a task of an srun step (SLURM_PROCID, SLURM_STEP_NUM_TASKS), RANK unset
};

/// The rank variables as set (each nullopt when unset or empty), each range-checked alone.
struct rank_environment {
  std::optional<int> world_size;  ///< WORLD_SIZE, >= 1
  std::optional<int> rank;        ///< RANK, >= 0
  std::optional<int> local_rank;  ///< LOCAL_RANK, >= 0: the GPU of this process on its machine
  std::optional<std::string> master_addr;  ///< MASTER_ADDR
  std::optional<int> master_port;          ///< MASTER_PORT, in [1, 65535]
  enum launcher launcher = launcher::none;
  /// TORCHELASTIC_RESTART_COUNT: torchrun's attempt, from 0 (the ranks of each attempt meet
  /// apart from the earlier ones' in the agent's store).
  int elastic_restarts = 0;
  /// SLURM_RESTART_COUNT: how often the Slurm job was requeued.
  int slurm_restarts = 0;
  /// TORCHELASTIC_USE_AGENT_STORE=True: torchrun's agent serves the store at
  /// MASTER_ADDR:MASTER_PORT, and every rank, rank 0 too, is its client.
  bool agent_store = false;
  /// SLURM_JOB_ID: this process runs in a Slurm job (torchrun or not).
  std::optional<std::string> slurm_job;

  /// A launcher started this process again for a run it had started before: the run goes on.
  bool restarted() const noexcept { return elastic_restarts > 0 || slurm_restarts > 0; }
};

/// Where RANK is not set: a task of an srun step takes its rank variables from Slurm's
/// (slurm.hpp); the user's MASTER_ADDR and MASTER_PORT win over the derived ones.
inline void read_slurm_step(rank_environment& env, const getenv_function& getenv) {
  constexpr long long max_int = std::numeric_limits<int>::max();
  const auto tasks = env_int("SLURM_STEP_NUM_TASKS", 1, max_int, getenv);
  const auto procid = env_int("SLURM_PROCID", 0, max_int, getenv);
  if (!tasks || !procid) return;  // an sbatch script's shell, or no Slurm: one process
  env.launcher = launcher::slurm;
  env.world_size = static_cast<int>(*tasks);
  env.rank = static_cast<int>(*procid);
  if (!env.local_rank)
    if (auto local = env_int("SLURM_LOCALID", 0, max_int, getenv))
      env.local_rank = static_cast<int>(*local);
  if (!env.master_addr) {
    for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"})
      if (const char* list = getenv(name); list && *list) {
        const auto hosts = expand_hostlist(list);
        if (!hosts.empty()) env.master_addr = hosts.front();
        break;
      }
    if (!env.master_addr)
      throw std::invalid_argument(
          "hookforge::distributed: an srun task without SLURM_STEP_NODELIST: set MASTER_ADDR");
  }
  if (!env.master_port) {
    const auto job = env_int("SLURM_JOB_ID", 0, std::numeric_limits<long long>::max(), getenv);
    if (!job)
      throw std::invalid_argument(
          "hookforge::distributed: an srun task without SLURM_JOB_ID: set MASTER_PORT");
    env.master_port = slurm_master_port(*job);
  }
}

inline rank_environment read_rank_environment(const getenv_function& getenv = process_getenv) {
  constexpr long long max_int = std::numeric_limits<int>::max();
  auto as_int = [](std::optional<long long> v) {
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  auto text = [&](const char* name) {
    const char* value = getenv(name);
    return value && *value ? std::optional<std::string>(value) : std::nullopt;
  };
  rank_environment env;
  env.world_size = as_int(env_int("WORLD_SIZE", 1, max_int, getenv));
  env.rank = as_int(env_int("RANK", 0, max_int, getenv));
  env.master_addr = text("MASTER_ADDR");
  env.master_port = as_int(env_int("MASTER_PORT", 1, 65535, getenv));
  env.local_rank = as_int(env_int("LOCAL_RANK", 0, max_int, getenv));
  if (env.rank || env.world_size) env.launcher = launcher::variables;
  if (env.launcher != launcher::none && text("TORCHELASTIC_RUN_ID")) {
    env.launcher = launcher::torchrun;
    env.elastic_restarts =
        as_int(env_int("TORCHELASTIC_RESTART_COUNT", 0, max_int, getenv)).value_or(0);
    env.agent_store = text("TORCHELASTIC_USE_AGENT_STORE") == "True";
  } else if (env.launcher == launcher::none) {
    read_slurm_step(env, getenv);
  }
  if ((env.slurm_job = text("SLURM_JOB_ID"))) {  // torchrun inside a Slurm job too
    env.slurm_restarts = as_int(env_int("SLURM_RESTART_COUNT", 0, max_int, getenv)).value_or(0);
  }
  return env;
}

/// "torchrun", "srun" or "" (the launcher's name in messages).
inline std::string_view launcher_name(enum launcher l) {
  return l == launcher::torchrun ? "torchrun" : l == launcher::slurm ? "srun" : "";
}

/// Throws std::invalid_argument unless `rank` is in [0, world_size).
inline void check_rank(int rank, int world_size) {
  if (rank < 0 || rank >= world_size)
    throw std::invalid_argument(fmt::format(
        "hookforge::distributed: RANK must be in [0, WORLD_SIZE = {}), got {}", world_size, rank));
}

}  // namespace hookforge::distributed
