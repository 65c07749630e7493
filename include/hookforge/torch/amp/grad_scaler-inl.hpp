// hookforge/torch/amp/grad_scaler-inl.hpp — GradScaler's definitions: included by
// grad_scaler.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include "hookforge/torch/amp/grad_scaler.hpp"
#include "hookforge/torch/compat.hpp"

namespace hookforge {

namespace detail::amp {

HOOKFORGE_INLINE bool fused_unscale_runs_on(c10::Device device) {
  return compat::has_kernel("aten::_amp_foreach_non_finite_check_and_unscale_", device);
}

HOOKFORGE_INLINE bool fused_update_runs_on(c10::Device device) {
  return compat::has_kernel("aten::_amp_update_scale_", device);
}

HOOKFORGE_INLINE void non_finite_check_and_unscale_fallback_(std::vector<::at::Tensor>& grads,
                                                             ::at::Tensor& found_inf,
                                                             const ::at::Tensor& inv_scale) {
  for (auto& grad : grads) {
    found_inf.logical_or_(grad.isfinite().logical_not().any());
    grad.mul_(inv_scale);
  }
}

HOOKFORGE_INLINE void non_finite_check_and_unscale_(std::vector<::at::Tensor>& grads,
                                                    ::at::Tensor& found_inf,
                                                    const ::at::Tensor& inv_scale) {
  if (grads.empty()) return;
  if (fused_unscale_runs_on(found_inf.device())) {
    ::at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);
  } else {
    non_finite_check_and_unscale_fallback_(grads, found_inf, inv_scale);
  }
}

HOOKFORGE_INLINE void update_scale_fallback_(::at::Tensor& scale, ::at::Tensor& growth_tracker,
                                             const ::at::Tensor& found_inf, double growth_factor,
                                             double backoff_factor, std::int64_t growth_interval) {
  const auto had_inf = found_inf.ne(0);
  const auto successful = growth_tracker + 1;
  const auto grows = successful.eq(growth_interval).logical_and(had_inf.logical_not());
  const auto as_double = scale.to(::at::kDouble);
  const auto grown = (as_double * growth_factor).to(::at::kFloat);
  const auto backed_off = (as_double * backoff_factor).to(::at::kFloat);
  auto new_scale = ::at::where(grows.logical_and(grown.isfinite()), grown, scale);
  new_scale = ::at::where(had_inf, backed_off, new_scale);
  scale.copy_(new_scale);
  growth_tracker.copy_(successful.masked_fill(had_inf.logical_or(grows), 0));
}

HOOKFORGE_INLINE void update_scale_(::at::Tensor& scale, ::at::Tensor& growth_tracker,
                                    const ::at::Tensor& found_inf, double growth_factor,
                                    double backoff_factor, std::int64_t growth_interval) {
  if (fused_update_runs_on(scale.device())) {
    ::at::_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                             growth_interval);
  } else {
    update_scale_fallback_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                           growth_interval);
  }
}

HOOKFORGE_INLINE std::vector<::at::Tensor>& device_grads::of(c10::ScalarType dtype) {
  for (auto& [type, grads] : by_dtype) {
    if (type == dtype) return grads;
  }
  return by_dtype.emplace_back(dtype, std::vector<::at::Tensor>{}).second;
}

HOOKFORGE_INLINE std::vector<device_grads> grads_by_device(
    const torch::optim::Optimizer& optimizer) {
  std::vector<device_grads> devices;
  for (const auto& group : optimizer.param_groups()) {
    for (const auto& param : group.params()) {
      const auto& grad = param.grad();
      if (!grad.defined()) continue;
      if (grad.scalar_type() == ::at::kHalf) {
        throw std::logic_error(
            "hookforge: GradScaler: attempting to unscale FP16 gradients (keep params in FP32)");
      }
      ::at::Tensor to_unscale = grad.is_sparse() ? grad._values() : grad;
      device_grads* slot = nullptr;
      for (auto& d : devices) {
        if (d.device == to_unscale.device()) slot = &d;
      }
      if (slot == nullptr) slot = &devices.emplace_back(device_grads{to_unscale.device(), {}});
      slot->of(to_unscale.scalar_type()).push_back(to_unscale);
    }
  }
  return devices;
}

}  // namespace detail::amp

HOOKFORGE_INLINE GradScaler::GradScaler(grad_scaler_options options)
    : init_scale_(options.init_scale),
      growth_factor_(options.growth_factor),
      backoff_factor_(options.backoff_factor),
      growth_interval_(options.growth_interval),
      enabled_(options.enabled) {
  if (!enabled_) return;
  if (!(growth_factor_ > 1.0))
    throw std::invalid_argument("hookforge: GradScaler needs growth_factor > 1");
  if (!(backoff_factor_ < 1.0))
    throw std::invalid_argument("hookforge: GradScaler needs backoff_factor < 1");
  if (growth_interval_ < 1)
    throw std::invalid_argument("hookforge: GradScaler needs growth_interval >= 1");
}

HOOKFORGE_INLINE torch::Tensor GradScaler::scale(const torch::Tensor& loss) {
  if (!enabled_) return loss;
  if (!scale_.defined()) {
    const auto options = ::at::TensorOptions().device(loss.device());
    scale_ = ::at::full(::at::IntArrayRef{}, init_scale_, options.dtype(::at::kFloat));
    growth_tracker_ =
        ::at::full(::at::IntArrayRef{}, init_growth_tracker_, options.dtype(::at::kInt));
  }
  return loss * scale_.to(loss.device(), scale_.scalar_type(), /*non_blocking=*/true);
}

HOOKFORGE_INLINE void GradScaler::unscale_(torch::optim::Optimizer& optimizer) {
  if (!enabled_) return;
  require_scale("unscale_");
  auto& state = states_[&optimizer];
  if (state.stage == detail::amp::optimizer_stage::unscaled) {
    throw std::logic_error(
        "hookforge: GradScaler::unscale_() was already called on this optimizer since the last "
        "update()");
  }
  if (state.stage == detail::amp::optimizer_stage::stepped) {
    throw std::logic_error("hookforge: GradScaler::unscale_() is being called after step()");
  }
  // As Python: reciprocal in double, then float.
  const auto inv_scale = scale_.to(::at::kDouble).reciprocal().to(::at::kFloat);
  ::at::NoGradGuard no_grad;
  state.found_inf_per_device.clear();
  for (auto& device : detail::amp::grads_by_device(optimizer)) {
    auto found_inf = ::at::zeros(::at::IntArrayRef{},
                                 ::at::TensorOptions().dtype(::at::kFloat).device(device.device));
    const auto local_inv_scale = inv_scale.to(device.device, ::at::kFloat, /*non_blocking=*/true);
    for (auto& [dtype, grads] : device.by_dtype) {
      detail::amp::non_finite_check_and_unscale_(grads, found_inf, local_inv_scale);
    }
    state.found_inf_per_device.push_back(found_inf);
  }
  state.stage = detail::amp::optimizer_stage::unscaled;
}

HOOKFORGE_INLINE bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  if (!enabled_) {
    optimizer.step();
    return true;
  }
  require_scale("step");
  auto& state = states_[&optimizer];
  if (state.stage == detail::amp::optimizer_stage::stepped) {
    throw std::logic_error(
        "hookforge: GradScaler::step() was already called since the last update()");
  }
  if (state.stage == detail::amp::optimizer_stage::ready) unscale_(optimizer);
  if (state.found_inf_per_device.empty()) {
    throw std::logic_error(
        "hookforge: GradScaler::step(): no inf checks were recorded for this optimizer "
        "(none of its params has a grad)");
  }
  state.stage = detail::amp::optimizer_stage::stepped;
  if (auto* on_device = dynamic_cast<supports_amp_scaling*>(&optimizer)) {
    // The optimizer skips the update itself where the flag is set: nothing is read.
    auto found_inf = state.found_inf_per_device.front();
    for (std::size_t i = 1; i < state.found_inf_per_device.size(); ++i)
      found_inf = found_inf + state.found_inf_per_device[i].to(found_inf.device(), ::at::kFloat,
                                                               /*non_blocking=*/true);
    on_device->step_unless_inf(found_inf);
    return true;
  }
  double found_inf = 0.0;
  for (const auto& flag : state.found_inf_per_device) found_inf += flag.item<double>();
  if (found_inf != 0.0) return false;
  optimizer.step();
  return true;
}

HOOKFORGE_INLINE void GradScaler::update() {
  if (!enabled_) return;
  require_scale("update");
  std::vector<::at::Tensor> found_infs;
  for (const auto& [optimizer, state] : states_) {
    for (const auto& flag : state.found_inf_per_device) {
      found_infs.push_back(flag.to(scale_.device(), ::at::kFloat, /*non_blocking=*/true));
    }
  }
  if (found_infs.empty()) {
    throw std::logic_error(
        "hookforge: GradScaler::update(): no inf checks were recorded (call step() first)");
  }
  auto found_inf = found_infs.front().clone();
  for (std::size_t i = 1; i < found_infs.size(); ++i) found_inf.add_(found_infs[i]);
  detail::amp::update_scale_(scale_, growth_tracker_, found_inf, growth_factor_, backoff_factor_,
                             growth_interval_);
  states_.clear();
}

HOOKFORGE_INLINE void GradScaler::update(double new_scale) {
  if (!enabled_) return;
  require_scale("update");
  scale_.fill_(new_scale);
  states_.clear();
}

HOOKFORGE_INLINE double GradScaler::get_scale() const {
  if (!enabled_) return 1.0;
  return scale_.defined() ? scale_.item<double>() : init_scale_;
}

HOOKFORGE_INLINE std::int64_t GradScaler::get_growth_tracker() const {
  if (!enabled_) return 0;
  return growth_tracker_.defined() ? growth_tracker_.item<std::int64_t>() : init_growth_tracker_;
}

HOOKFORGE_INLINE hookforge::state_map GradScaler::state_dict() const {
  if (!enabled_) return {};
  return {{"scale", get_scale()},
          {"growth_factor", growth_factor_},
          {"backoff_factor", backoff_factor_},
          {"growth_interval", growth_interval_},
          {"growth_tracker", get_growth_tracker()}};
}

HOOKFORGE_INLINE void GradScaler::load_state_dict(const hookforge::state_map& state) {
  if (!enabled_) return;
  if (state.empty()) {
    throw std::invalid_argument(
        "hookforge: GradScaler state_dict is empty, possibly because it was saved "
        "from a disabled GradScaler");
  }
  const double scale = state_value<double>(state, "GradScaler", "scale");
  const double growth_factor = state_value<double>(state, "GradScaler", "growth_factor");
  const double backoff_factor = state_value<double>(state, "GradScaler", "backoff_factor");
  const auto growth_interval = state_value<std::int64_t>(state, "GradScaler", "growth_interval");
  const auto growth_tracker = state_value<std::int64_t>(state, "GradScaler", "growth_tracker");
  init_scale_ = scale;
  growth_factor_ = growth_factor;
  backoff_factor_ = backoff_factor;
  growth_interval_ = growth_interval;
  init_growth_tracker_ = growth_tracker;
  if (scale_.defined()) scale_.fill_(scale);
  if (growth_tracker_.defined()) growth_tracker_.fill_(growth_tracker);
}

HOOKFORGE_INLINE void GradScaler::require_scale(const char* method) const {
  if (!scale_.defined()) {
    throw std::logic_error(
        std::string("hookforge: GradScaler::") + method +
        "() before scale(): scale the loss with scaler.scale(loss) earlier in the iteration");
  }
}

}  // namespace hookforge
