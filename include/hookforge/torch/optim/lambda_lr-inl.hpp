// hookforge/torch/optim/lambda_lr-inl.hpp — LambdaLR's definitions: included by lambda_lr.hpp
// header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>

#include "hookforge/torch/optim/lambda_lr.hpp"

namespace hookforge {

HOOKFORGE_INLINE LambdaLR::LambdaLR(torch::optim::Optimizer& optimizer,
                                    std::function<double(std::int64_t)> lambda)
    : closed_form_scheduler(optimizer), lambda_(std::move(lambda)) {
  if (!lambda_) throw std::invalid_argument("hookforge: LambdaLR needs a callable");
  step();
}

HOOKFORGE_INLINE double LambdaLR::lr_at(double base_lr, std::int64_t epoch) const {
  return base_lr * lambda_(epoch);
}

HOOKFORGE_INLINE LambdaLR::parameter_list LambdaLR::saved_parameters() { return {"LambdaLR", {}}; }

}  // namespace hookforge
