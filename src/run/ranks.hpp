// src/run/ranks.hpp — which rank of how many this hookforge-run is, read once from the
// command line and the environment: --nproc N makes it a launcher of N ranks (copies of
// itself); WORLD_SIZE > 1 (set by --nproc, by torchrun, srun, or by hand on each machine)
// makes it rank RANK of them; a launcher's restart (torchrun, a requeued Slurm job) names
// why it goes on with an earlier attempt's run (cluster.hpp). Private to hookforge::run; no
// LibTorch.
#pragma once

#include <optional>
#include <string>

#include "command_line.hpp"

#include "hookforge/distributed/environment.hpp"

namespace hookforge::run::detail {

struct rank_setup {
  int rank = 0;
  int world_size = 1;
  distributed::rank_environment env;
  std::optional<std::string> job;      ///< the launcher's job this process runs in
  std::optional<std::string> restart;  ///< why this start goes on with an earlier one's run
  bool rank_mode = false;              ///< one of several ranks (not the --nproc launcher)
};

/// The ranks of `cli` (--nproc 1 is dropped from it: one rank is this process);
/// usage_error for a malformed rank environment, or several ranks where `have_dist` is
/// false (a hookforge-run built without hookforge::distributed).
rank_setup resolve_ranks(command_line& cli, bool have_dist);

}  // namespace hookforge::run::detail
