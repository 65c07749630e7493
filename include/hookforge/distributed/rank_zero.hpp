// hookforge/distributed/rank_zero.hpp — hooks with side effects on one rank only.
//
//   hookforge::default_hooks defaults;
//   hookforge::TrainingEpochRunner train(optimizer, {}, data_parallel.training(),
//                                        hookforge::distributed::rank_zero_only(defaults.training(),
//                                        pg));
//   hookforge::Trainer trainer(model, train, validate, {…}, data_parallel.trainer(),
//                              hookforge::EarlyStopping({}),                       // every rank
//                              hookforge::distributed::rank_zero_only(defaults.trainer(), pg));
//
// Hooks that write files, print or save checkpoints (LossLogger, ProgressBar,
// CheckpointSaver, BatchImageSaver, your own) should act once per run, not once per rank:
// rank_zero_only(hook, pg) runs every handler of `hook` on rank 0 and none elsewhere
// (hookforge::enabled_if, core/wrappers/gate.hpp), and rank_zero_only(set, pg) does so for
// each hook of a hook_set (default_hooks' training(), validation(), trainer()). The hooks
// keep their bindings, priorities and state keys on every rank, so binding tables and
// checkpoint layouts agree; a hook to run on every rank is simply attached unwrapped.
//
// Control hooks stay on every rank: EarlyStopping, CheckInvalidLoss, stop conditions. What
// they decide from global values (the scores ScoreAllReduce reduced, the gradients
// GradientAllReduce averaged) is the same on every rank by construction; what they decide
// from one rank's values is made common by GradientAllReduce (vetoed updates, stops during
// the epoch), ScoreAllReduce (stops at the epoch's end) and StopAgreement (trainer stops).
// A hook that must not run on any rank but 0 and still influences control (say, it calls
// ctx.request_stop) breaks that: keep such decisions on every rank.
#pragma once

#include <tuple>
#include <utility>

#include "hookforge/core/hook_set.hpp"
#include "hookforge/core/wrappers/gate.hpp"
#include "hookforge/distributed/process_group.hpp"

namespace hookforge::distributed {

/// `hook`, running on rank 0 only.
template <class H>
gated_hook<H> rank_zero_only(H hook, const process_group& group) {
  return enabled_if(std::move(hook), group.is_rank_zero());
}

/// Each hook of `set`, running on rank 0 only.
template <class... H>
hook_set<gated_hook<H>...> rank_zero_only(hook_set<H...> set, const process_group& group) {
  return std::apply(
      [&](H&... hooks) {
        return hook_set<gated_hook<H>...>(enabled_if(std::move(hooks), group.is_rank_zero())...);
      },
      set.hooks);
}

}  // namespace hookforge::distributed
