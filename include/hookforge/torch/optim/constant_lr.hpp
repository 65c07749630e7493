// hookforge/torch/optim/constant_lr.hpp — ConstantLR, with PyTorch's Python semantics (see lr_scheduler.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// lr = base_lr * factor for the first total_iters epochs, then base_lr.
///
/// total_iters must be >= 1. Python accepts 0 (and negatives), but there its two forms
/// disagree: step() scales epoch 0 by factor and never restores the base lr, while the
/// closed form (used here) runs at the base lr from epoch 0. Neither is a useful schedule.
class ConstantLR : public detail::closed_form_scheduler {
 public:
  explicit ConstantLR(torch::optim::Optimizer& optimizer, double factor = 1.0 / 3.0,
                      std::int64_t total_iters = 5)
      : closed_form_scheduler(optimizer), factor_(factor), total_iters_(total_iters) {
    if (!(factor >= 0.0 && factor <= 1.0))
      throw std::invalid_argument("hookforge: ConstantLR needs 0 <= factor <= 1");
    if (total_iters <= 0)
      throw std::invalid_argument("hookforge: ConstantLR needs total_iters >= 1, got " +
                                  std::to_string(total_iters));
    step();
  }

  hookforge::state_map state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["factor"] = factor_;
    state["total_iters"] = total_iters_;
    return state;
  }
  void load_state_dict(const hookforge::state_map& state) override {
    const auto factor = detail::lr_state::get_double(state, "factor", "ConstantLR");
    const auto total_iters = detail::lr_state::get_int(state, "total_iters", "ConstantLR");
    lr_scheduler::load_state_dict(state);
    factor_ = factor;
    total_iters_ = total_iters;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    // Python's closed form, term for term: factor + (epoch >= total_iters) * (1 - factor).
    const double done = epoch >= total_iters_ ? 1.0 : 0.0;
    return base_lr * (factor_ + done * (1.0 - factor_));
  }

  double factor_;
  std::int64_t total_iters_;
};

}  // namespace hookforge
