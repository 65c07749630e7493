// hookforge/torch/optim/sequential_lr.hpp — SequentialLR, with PyTorch's Python semantics (see
// lr_scheduler.hpp): one schedule after another, each from its start at its milestone.
//
//   auto warmup = std::make_shared<hookforge::LinearLR>(opt, 0.1, 1.0, 5);
//   auto cosine = std::make_shared<hookforge::CosineAnnealingLR>(opt, 95);
//   hookforge::SequentialLR schedule(opt, {warmup, cosine}, {5});
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/composite_scheduler.hpp"

namespace hookforge {

/// Before milestones[0] the first schedule runs; from milestones[i - 1] on, schedule i runs
/// from its own epoch 0, every schedule on the first one's base rates. Needs one milestone
/// fewer than schedules, increasing.
class SequentialLR : public detail::composite_scheduler {
 public:
  SequentialLR(torch::optim::Optimizer& optimizer, const schedule_list& schedules,
               std::vector<std::int64_t> milestones);

  /// The last schedule's limit, from its milestone.
  std::optional<std::int64_t> step_limit() const override {
    const auto last = schedules_.back()->step_limit();
    if (!last) return std::nullopt;
    return milestones_.empty() ? *last : milestones_.back() + *last;
  }

 private:
  /// The schedule that runs at `epoch`, and the epoch it is at.
  HOOKFORGE_INLINE std::pair<closed_form_scheduler*, std::int64_t> running(
      std::int64_t epoch) const;
  HOOKFORGE_INLINE double lr_at(double base_lr, std::int64_t epoch) const override;
  HOOKFORGE_INLINE void set_extras(std::int64_t epoch) override;
  HOOKFORGE_INLINE parameter_list saved_parameters() override;

  std::vector<std::int64_t> milestones_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/sequential_lr-inl.hpp"
#endif
