// hookforge/distributed/stop_agreement.hpp — StopAgreement: a run stops on every rank or on none.
//
//   hookforge::Trainer trainer(model, train, validate, {.epochs = 50},
//   hookforge::distributed::StopAgreement(pg),
//                              hookforge::EarlyStopping({.monitor = "loss"}));
//
// A rank that stops while another goes on into the next epoch would leave that one waiting
// in its first collective until the timeout. Decisions taken from the global scores
// (ScoreAllReduce: EarlyStopping, the stop condition) are the same on every rank already;
// this hook covers the others: last at on_trainer_epoch_finished (priority LOWEST), it ORs
// ctx.stop_training over the ranks (one all-reduce of one integer per epoch). A rank that
// did not ask to stop gets the reason "requested on rank N" (N, the lowest rank that asked).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/distributed/process_group.hpp"

namespace hookforge::distributed {

class StopAgreement {
 public:
  /// Last at on_trainer_epoch_finished: after every hook that may ask to stop.
  static constexpr int priority = priority::LOWEST;

  explicit StopAgreement(process_group group) : group_(std::move(group)) {}

  template <class C>
    requires requires(C& c) {
      c.stop_training;
      c.request_stop(std::string());
    }
  void agree(C& ctx) {
    if (!group_.distributed()) return;
    // The lowest rank that asked to stop, or world_size when none did.
    auto first = torch::tensor(
        {static_cast<std::int64_t>(ctx.stop_training ? group_.rank() : group_.world_size())},
        torch::kLong);
    group_.allreduce(first, reduce_op::min);
    const std::int64_t rank = first.item<std::int64_t>();
    if (rank < group_.world_size() && !ctx.stop_training)
      ctx.request_stop(fmt::format("requested on rank {}", rank));
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(agree, points::on_trainer_epoch_finished));

  const process_group& group() const noexcept { return group_; }

 private:
  process_group group_;
};

}  // namespace hookforge::distributed
