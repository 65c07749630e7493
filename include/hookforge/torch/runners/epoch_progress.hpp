// hookforge/torch/runners/epoch_progress.hpp — where a training runner is within its epoch:
// what a checkpoint taken between two batches keeps of it, and how a run resumed from such a
// checkpoint goes on with the epoch instead of starting it again.
//
// runner_base holds one (epoch.hpp) and keeps it current; the Trainer
//   - watches it: on_step(f) calls f after every training batch but the epoch's last (the
//     epoch's end comes next, and is where epoch checkpoints are taken); f may end the epoch
//     there (end_epoch(): max_steps);
//   - saves state() in its checkpoint, section "epoch_in_progress": the epoch, the batches
//     done, the epoch's partial scores (score_accumulator::state_dict, exact), and whether
//     gradients wait for an update (such a checkpoint is refused: they are not saved);
//   - gives a loaded one back with resume(): the runner's next start of that epoch begins at
//     the saved batch, with the saved partial scores (runner_base::start_epoch).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

class epoch_progress {
 public:
  // ---- the Trainer's side

  /// Call `observer` after each training batch that is not the epoch's last (none: empty).
  void on_step(std::function<void()> observer) { observer_ = std::move(observer); }
  /// Between two batches of an epoch (inside the observer).
  bool in_epoch() const noexcept { return scores_ != nullptr; }
  std::int64_t epoch() const noexcept { return epoch_; }
  /// Batches of the epoch done so far.
  std::int64_t batches() const noexcept { return batches_; }
  /// Gradients of the batches done wait for an update (gradient accumulation).
  bool gradients_pending() const noexcept { return gradients_pending_; }
  /// Inside the observer: the epoch ends after this batch (the Trainer's max_steps). The
  /// runner finishes it as after its last batch; its gradients must not wait for an update.
  void end_epoch();

  /// {"epoch", "batches", "scores.*"}: what resume() takes back.
  state_map state() const;

  /// The next start of `state`'s epoch goes on after its batches, with its scores.
  void resume(const state_map& state);
  /// Forget a resume() not yet taken up.
  void cancel_resume() { resume_.reset(); }

  // ---- the runner's side (runner_base)

  /// At the start of `epoch`: the batch it starts at (0, or where a resumed epoch goes on),
  /// with `scores` holding the epoch's partial scores when it is resumed.
  std::int64_t start(std::int64_t epoch, score_accumulator& scores);

  /// While a training loop runs: what state() reports (cleared when the loop ends, also by
  /// an exception).
  class watch {
   public:
    watch(epoch_progress& p, std::int64_t epoch, std::int64_t batches,
          const score_accumulator& scores)
        : p_(p) {
      p_.epoch_ = epoch;
      p_.batches_ = batches;
      p_.scores_ = &scores;
      p_.gradients_pending_ = false;
      p_.ending_ = false;
    }
    watch(const watch&) = delete;
    watch& operator=(const watch&) = delete;
    ~watch() { p_.scores_ = nullptr; }

   private:
    epoch_progress& p_;
  };

  /// After a training batch: `batches` done; the observer runs unless it was the last.
  /// False when the epoch ends here (end_epoch()): the runner takes no further batch.
  bool step(std::int64_t batches, bool last) {
    batches_ = batches;
    if (observer_ && !last) observer_();
    return !ending_;
  }
  void set_gradients_pending(bool pending) noexcept { gradients_pending_ = pending; }

 private:
  struct resumption {
    std::int64_t epoch = 0;
    std::int64_t batches = 0;
    state_map scores;
  };

  std::function<void()> observer_;
  std::optional<resumption> resume_;
  const score_accumulator* scores_ = nullptr;
  std::int64_t epoch_ = 0;
  std::int64_t batches_ = 0;
  bool gradients_pending_ = false;
  bool ending_ = false;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/epoch_progress-inl.hpp"
#endif
