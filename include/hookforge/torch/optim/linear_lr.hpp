// hookforge/torch/optim/linear_lr.hpp — LinearLR, with PyTorch's Python semantics (see lr_scheduler.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge {

/// Linear warm-up: lr = base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters).
class LinearLR : public detail::closed_form_scheduler {
 public:
  explicit LinearLR(torch::optim::Optimizer& optimizer, double start_factor = 1.0 / 3.0,
                    double end_factor = 1.0, std::int64_t total_iters = 5)
      : closed_form_scheduler(optimizer),
        start_factor_(start_factor),
        end_factor_(end_factor),
        total_iters_(total_iters) {
    if (!(start_factor > 0.0 && start_factor <= 1.0)) {
      throw std::invalid_argument("hookforge: LinearLR needs 0 < start_factor <= 1");
    }
    if (!(end_factor >= 0.0 && end_factor <= 1.0)) {
      throw std::invalid_argument("hookforge: LinearLR needs 0 <= end_factor <= 1");
    }
    if (total_iters <= 0) throw std::invalid_argument("hookforge: LinearLR needs total_iters > 0");
    step();
  }

  hookforge::state_map state_dict() const override {
    auto state = lr_scheduler::state_dict();
    state["start_factor"] = start_factor_;
    state["end_factor"] = end_factor_;
    state["total_iters"] = total_iters_;
    return state;
  }
  void load_state_dict(const hookforge::state_map& state) override {
    const auto start_factor = detail::lr_state::get_double(state, "start_factor", "LinearLR");
    const auto end_factor = detail::lr_state::get_double(state, "end_factor", "LinearLR");
    const auto total_iters = detail::lr_state::get_int(state, "total_iters", "LinearLR");
    lr_scheduler::load_state_dict(state);
    start_factor_ = start_factor;
    end_factor_ = end_factor;
    total_iters_ = total_iters;
  }

 private:
  double lr_at(double base_lr, std::int64_t epoch) const override {
    const auto done = static_cast<double>(std::min(total_iters_, epoch));
    return base_lr *
           (start_factor_ + (end_factor_ - start_factor_) * done / static_cast<double>(total_iters_));
  }

  double start_factor_;
  double end_factor_;
  std::int64_t total_iters_;
};

}  // namespace hookforge
