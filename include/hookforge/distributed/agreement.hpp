// hookforge/distributed/agreement.hpp — the ranks stop at the same batch and save it together.
//
//   hookforge::trainer_options options{.stop_token = token,
//                                      .agreement = hookforge::distributed::agreement(pg)};
//
// A signal reaches the ranks at different moments (Slurm's USR1 ahead of a time limit, a
// launcher's SIGTERM), and a rank that stops at its own batch leaves the others waiting in
// their next gradient all-reduce. The Trainer asks the agreement's `stop` after every
// training batch with whether this process was asked to stop; it answers the same on every
// rank (hookforge::rank_agreement, trainer_types.hpp).
//
// Why one batch late: each call starts an all-reduce (max) of this batch's flag and
// finishes the one the previous call started, which has had a whole batch to complete, so
// the agreement adds no wait to the step (StopAgreement, which decides at an epoch's end,
// waits for its one all-reduce). A request is acted on at the batch after the one it
// arrived in, on every rank. A rank stopping finishes the all-reduce it has just started:
// every rank started it, so it completes. Under NCCL the flag's read is a host
// synchronisation per batch, on a step that has already ended.
//
// `gather` gives every rank each rank's epoch in progress through the group's store (one key
// per rank, pickled: torch::pickle_save), for rank 0's checkpoint: a rank's partial scores
// are its own, and a resumed epoch must end with the sums the run would have had.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <torch/serialize.h>
#include <torch/types.h>

#include "hookforge/distributed/process_group.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/runners/trainer_types.hpp"

namespace hookforge::distributed {

namespace detail {

class step_stop_state {
 public:
  explicit step_stop_state(process_group group) : group_(std::move(group)) {
    const auto on = torch::TensorOptions().dtype(torch::kInt).device(group_.device());
    flags_[0] = torch::zeros({1}, on);
    flags_[1] = torch::zeros({1}, on);
  }

  bool agree(bool asked) {
    if (!group_.distributed()) return asked;
    torch::Tensor& mine = flags_[turn_];
    mine.fill_(asked ? 1 : 0);
    auto started = group_.start_allreduce(mine, reduce_op::max);
    bool stop = false;
    if (pending_) {
      group_.finish(pending_);
      stop = flags_[1 - turn_].item<std::int32_t>() != 0;
    }
    pending_ = std::move(started);
    turn_ = 1 - turn_;
    if (stop) {
      group_.finish(pending_);
      pending_ = {};
    }
    return stop;
  }

 private:
  process_group group_;
  torch::Tensor flags_[2];  ///< this call's flag and the previous call's, alternating
  int turn_ = 0;
  c10::intrusive_ptr<c10d::Work> pending_;  ///< the previous call's all-reduce
};

}  // namespace detail

/// Each rank's `mine`, by rank, on every rank: through the group's store, under keys numbered
/// by `round` (the same on every rank: every rank gathers at the same batch).
inline std::vector<state_map> gather_states(const process_group& group, const state_map& mine,
                                            std::int64_t round) {
  if (!group.distributed()) return {mine};
  auto key = [&](int rank) { return fmt::format("hookforge/gather/{}/{}", round, rank); };
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [name, value] : mine) dict.insert(name, value);
  const std::vector<char> bytes = torch::pickle_save(dict);
  auto& store = *group.store();
  store.set(key(group.rank()), std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  std::vector<state_map> all;
  for (int r = 0; r < group.world_size(); ++r) {
    const auto got = store.get(key(r));  // waits for rank r, up to the store's timeout
    state_map state;
    for (const auto& entry :
         torch::pickle_load(std::vector<char>(got.begin(), got.end())).toGenericDict())
      state.emplace(entry.key().toStringRef(), entry.value());
    all.push_back(std::move(state));
  }
  return all;
}

/// The agreement for trainer_options::agreement over `group` (see the top of this file); in
/// a group of one process, none (each process decides alone).
inline rank_agreement agreement(process_group group) {
  if (!group.distributed()) return {};
  auto state = std::make_shared<detail::step_stop_state>(group);
  auto rounds = std::make_shared<std::int64_t>(0);
  return {.rank = group.rank(),
          .world_size = group.world_size(),
          .stop = [state](bool asked) { return state->agree(asked); },
          .gather = [group, rounds](
                        const state_map& mine) { return gather_states(group, mine, (*rounds)++); }};
}

}  // namespace hookforge::distributed
