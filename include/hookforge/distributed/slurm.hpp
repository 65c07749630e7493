// hookforge/distributed/slurm.hpp — a rank of an `srun` step: what Slurm's variables say of it.
//
//   srun hookforge-run cfg.yaml --output DIR      # in an sbatch script, one task per rank
//
// Slurm starts every task of a step itself and sets SLURM_PROCID (the task's rank),
// SLURM_STEP_NUM_TASKS (the step's tasks), SLURM_LOCALID (the task on its node) and
// SLURM_STEP_NODELIST (the step's nodes, compressed: "gpu[01-03,07],login2"). The rank
// variables hookforge reads (environment.hpp) follow from them: RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR the first node of the list (expanded as `scontrol show hostnames`
// does), MASTER_PORT 15000 + the job id modulo 10000 — the same on every task of a job, so
// nothing needs to be passed between them. A variable the user set wins over Slurm's.
//
// An sbatch script's own shell is no step: it has SLURM_PROCID=0 but no
// SLURM_STEP_NUM_TASKS, and a run started there without srun is one process.
// Needs no c10d.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace hookforge::distributed {

namespace detail {

/// "07-10" in a bracket: each number, zero-padded to the width of the first ("07") when it
/// starts with a zero.
inline void expand_range(std::string_view range, std::string_view list,
                         std::vector<std::string>& out, std::size_t limit) {
  auto number = [&](std::string_view digits) {
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos)
      throw std::invalid_argument(fmt::format(
          "hookforge::distributed: SLURM_STEP_NODELIST '{}': '{}' is not a number", list, digits));
    return std::stoll(std::string(digits));
  };
  const auto dash = range.find('-');
  const std::string_view first = range.substr(0, dash);
  const long long low = number(first);
  const long long high = dash == std::string_view::npos ? low : number(range.substr(dash + 1));
  if (high < low || static_cast<std::size_t>(high - low) >= limit - out.size())
    throw std::invalid_argument(
        fmt::format("hookforge::distributed: SLURM_STEP_NODELIST '{}': the range '{}' is {}", list,
                    range, high < low ? "descending" : "larger than a node list holds"));
  const int width = first.size() > 1 && first[0] == '0' ? static_cast<int>(first.size()) : 0;
  for (long long n = low; n <= high; ++n) out.push_back(fmt::format("{:0{}}", n, width));
}

}  // namespace detail

/// The host names of a Slurm node list ("a[1-2]b[07,9],c" → a1b07, a1b9, a2b07, a2b9, c), in
/// order. A malformed list (an unclosed bracket, a range that is no number) is
/// std::invalid_argument naming it; `limit` bounds the names.
inline std::vector<std::string> expand_hostlist(std::string_view list, std::size_t limit = 65536) {
  auto malformed = [&](std::string_view why) {
    return std::invalid_argument(
        fmt::format("hookforge::distributed: SLURM_STEP_NODELIST '{}': {}", list, why));
  };
  std::vector<std::string> hosts;
  std::size_t at = 0;
  while (at < list.size()) {
    // One host pattern: text and bracket groups, up to a comma outside the brackets.
    std::vector<std::string> names{""};
    while (at < list.size() && list[at] != ',') {
      if (list[at] == ']') throw malformed("a ']' without its '['");
      if (list[at] != '[') {
        const auto end = list.find_first_of("[],", at);
        const auto text = list.substr(at, end - at);
        for (auto& name : names) name += text;
        at = end == std::string_view::npos ? list.size() : end;
        continue;
      }
      const auto close = list.find(']', at);
      if (close == std::string_view::npos) throw malformed("a '[' without its ']'");
      std::vector<std::string> suffixes;
      const auto group = list.substr(at + 1, close - at - 1);
      for (std::size_t from = 0; from <= group.size();) {
        const auto comma = std::min(group.find(',', from), group.size());
        detail::expand_range(group.substr(from, comma - from), list, suffixes, limit);
        from = comma + 1;
      }
      if (names.size() * suffixes.size() > limit) throw malformed("more names than a list holds");
      std::vector<std::string> product;
      for (const auto& name : names)
        for (const auto& suffix : suffixes) product.push_back(name + suffix);
      names = std::move(product);
      at = close + 1;
    }
    for (auto& name : names)
      if (!name.empty()) hosts.push_back(std::move(name));
    if (hosts.size() > limit) throw malformed("more names than a list holds");
    ++at;  // the comma
  }
  return hosts;
}

/// The port every task of Slurm job `job_id` derives alike: 15000 + job_id % 10000.
inline int slurm_master_port(long long job_id) { return 15000 + static_cast<int>(job_id % 10000); }

}  // namespace hookforge::distributed
