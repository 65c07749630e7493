// src/run/ranks.cpp — see ranks.hpp.
#include "ranks.hpp"

#include <stdexcept>

#include <fmt/core.h>

#include "cluster.hpp"

namespace hookforge::run::detail {

rank_setup resolve_ranks(command_line& cli, bool have_dist) {
  namespace dist = hookforge::distributed;
  if (cli.nproc && *cli.nproc == 1) cli.nproc.reset();  // one rank: this process
  rank_setup r;
  try {
    r.env = dist::read_rank_environment();
    if (!cli.nproc) {
      r.world_size = r.env.world_size.value_or(1);
      r.rank = r.env.rank.value_or(0);
      if (r.world_size > 1) dist::check_rank(r.rank, r.world_size);
    }
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
  if (cli.nproc) r.world_size = *cli.nproc;
  r.job = job_identity(r.env);
  if (!cli.check && r.job) r.restart = restart_reason(r.env);
  r.rank_mode = !cli.nproc && r.world_size > 1;
  if (r.world_size > 1 && !have_dist)
    throw usage_error(fmt::format(
        "{} ranks: this hookforge-run was built without hookforge::distributed (LibTorch's c10d "
        "and Gloo's headers, Debian: libgloo-dev); it runs one rank only",
        r.world_size));
  return r;
}

}  // namespace hookforge::run::detail
