// hookforge/distributed/score_allreduce.hpp — ScoreAllReduce: an epoch's scores over every rank's
// samples.
//
//   hookforge::TrainingEpochRunner train(optimizer, {}, hookforge::distributed::ScoreAllReduce(pg),
//   …); hookforge::ValidationEpochRunner validate({}, hookforge::distributed::ScoreAllReduce(pg));
//
// Each rank's runner averages its scores over its own samples. At on_epoch_end, first of
// the hooks there (priority HIGHEST), this hook replaces ctx.scores by the means over the
// samples of every rank: each score's weighted sum and sample count are added up across
// the ranks (one all-reduce of doubles) and divided, so a rank that saw more samples
// weighs more, as if one process had seen them all. The runner returns these scores, so
// everything after it sees global values: the other on_epoch_end hooks, the Trainer's
// train_scores and val_scores, its LR scheduler and stop condition, every hook at
// on_trainer_epoch_finished (EarlyStopping, CheckpointSaver's save_best, LossLogger's
// metrics.csv) and fit_result. A decision taken from them is the same on every rank.
//
// It also ORs ctx.stop_training over the ranks, so a runner hook that asked one rank to
// stop stops them all after this epoch. The ranks must record the same score names (the
// same criterion and metrics); otherwise every rank throws hookforge::distributed::error.
// Padding by sharded_sampler (a dataset whose size does not divide by the world size)
// counts the repeated samples, as PyTorch's DistributedSampler does.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/distributed/process_group.hpp"

namespace hookforge::distributed {

namespace detail {

/// FNV-1a over the names (each followed by a 0), in 62 bits: the same on every rank that
/// has the same names, and negatable without overflow.
template <class Map>
std::int64_t names_fingerprint(const Map& totals) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const auto& [name, total] : totals) {
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0u) * 1099511628211ULL;
  }
  return static_cast<std::int64_t>(h >> 2);
}

}  // namespace detail

class ScoreAllReduce {
 public:
  /// First at on_epoch_end: the hooks after it see the global scores.
  static constexpr int priority = priority::HIGHEST;

  explicit ScoreAllReduce(process_group group) : group_(std::move(group)) {}

  template <class C>
    requires requires(C& c) {
      c.running_scores.totals();
      c.scores;
    }
  void reduce(C& ctx) {
    if (!group_.distributed()) return;
    const auto totals = ctx.running_scores.totals();
    const std::int64_t fingerprint = detail::names_fingerprint(totals);
    bool stop = false;
    if constexpr (requires { ctx.stop_training; }) stop = ctx.stop_training;
    // One small collective checks the names and ORs the stop requests; one adds the scores.
    auto check =
        torch::tensor({fingerprint, -fingerprint, static_cast<std::int64_t>(stop)}, torch::kLong);
    group_.allreduce(check, reduce_op::max);
    const auto* c = check.data_ptr<std::int64_t>();
    if (c[0] != fingerprint || -c[1] != fingerprint) {
      std::vector<std::string> names;
      for (const auto& [name, total] : totals) names.push_back(name);
      throw error(fmt::format(
          "ScoreAllReduce: the ranks recorded different scores this epoch (rank {} has: {}); "
          "every rank must use the same criterion and metrics",
          group_.rank(), fmt::join(names, ", ")));
    }
    std::vector<double> flat;
    flat.reserve(2 * totals.size());
    for (const auto& [name, total] : totals) {
      flat.push_back(total.sum);
      flat.push_back(total.weight);
    }
    if (!flat.empty()) {
      auto sums = torch::tensor(flat, torch::kDouble);
      group_.allreduce(sums);
      const auto* s = sums.data_ptr<double>();
      std::size_t i = 0;
      for (const auto& [name, total] : totals) {
        const double sum = s[2 * i], weight = s[2 * i + 1];
        ctx.scores[name] = weight > 0 ? sum / weight : 0.0;
        ++i;
      }
    }
    if constexpr (requires { ctx.stop_training = true; })
      if (c[2] != 0) ctx.stop_training = true;
    ++epochs_;
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(reduce, points::on_epoch_end));

  /// Epochs whose scores were reduced.
  std::int64_t epochs() const noexcept { return epochs_; }
  const process_group& group() const noexcept { return group_; }

 private:
  process_group group_;
  std::int64_t epochs_ = 0;
};

}  // namespace hookforge::distributed
