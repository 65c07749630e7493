// hookforge/torch/runners/epoch_progress-inl.hpp — epoch_progress's state, resume and ends:
// included by epoch_progress.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "hookforge/torch/runners/epoch_progress.hpp"

namespace hookforge {

HOOKFORGE_INLINE void epoch_progress::end_epoch() {
  if (gradients_pending_)
    throw std::logic_error(
        "epoch_progress: an epoch cannot end after a batch whose "
        "gradients wait for an update");
  ending_ = true;
}

HOOKFORGE_INLINE state_map epoch_progress::state() const {
  state_map state{{"epoch", epoch_}, {"batches", batches_}};
  if (scores_) nest_state(state, "scores", scores_->state_dict());
  return state;
}

HOOKFORGE_INLINE void epoch_progress::resume(const state_map& state) {
  constexpr const char* owner = "epoch_in_progress";
  resume_ =
      resumption{state_value<std::int64_t>(state, owner, "epoch"),
                 state_value<std::int64_t>(state, owner, "batches"), nested_state(state, "scores")};
}

HOOKFORGE_INLINE std::int64_t epoch_progress::start(std::int64_t epoch, score_accumulator& scores) {
  if (!resume_) return 0;
  const resumption r = std::move(*resume_);
  resume_.reset();
  if (r.epoch != epoch)
    throw std::logic_error("epoch_progress: the checkpoint goes on with epoch " +
                           std::to_string(r.epoch) + ", but the runner was asked to run epoch " +
                           std::to_string(epoch));
  scores.load_state_dict(r.scores);
  return r.batches;
}

}  // namespace hookforge
