// hookforge/torch/optim/multi_step_lr-inl.hpp — MultiStepLR's definitions: included by
// multi_step_lr.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "hookforge/torch/optim/multi_step_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE MultiStepLR::MultiStepLR(torch::optim::Optimizer& optimizer,
                                          std::vector<std::int64_t> milestones, double gamma)
    : closed_form_scheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  step();
}

HOOKFORGE_INLINE double MultiStepLR::lr_at(double base_lr, std::int64_t epoch) const {
  auto passed =
      std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lr * std::pow(gamma_, static_cast<double>(passed));
}

HOOKFORGE_INLINE MultiStepLR::parameter_list MultiStepLR::saved_parameters() {
  return {"MultiStepLR", {{"milestones", &milestones_}, {"gamma", &gamma_}}};
}

}  // namespace hookforge
