// hookforge/torch/amp/grad_scaler.hpp — dynamic loss scaling for mixed-precision training.
//
// LibTorch has no C++ GradScaler, so this is Python's `torch.amp.GradScaler`:
// multiply the loss by `scale` before backward, divide the gradients by it
// before the optimizer step, skip steps whose gradients hold inf/NaN and then
// halve the scale, double it after `growth_interval` clean steps.
//
// The scale, growth tracker and found-inf flags live in tensors on the
// device, so scale(), unscale_() and update() never wait for it. step() reads
// the found-inf flag of each device once (one sync per device, as Python's
// `found_inf.item()`), to decide whether to call optimizer.step(). get_scale()
// and state_dict() also read the device, as in Python.
//
// The work is done by ATen's fused `_amp_foreach_non_finite_check_and_unscale_`
// and `_amp_update_scale_` where the dispatcher has a kernel for the tensor's
// device (CUDA; CPU from PyTorch 2.3), else by plain tensor ops with the same
// results (what runs on CPU with LibTorch 1.13). See docs/schedulers.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/optim/optimizer.h>

#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

/// GradScaler's settings; the defaults are Python's.
struct grad_scaler_options {
  double init_scale = 65536.0;          // the scale before any update
  double growth_factor = 2.0;           // scale *= growth_factor after growth_interval clean steps (> 1)
  double backoff_factor = 0.5;          // scale *= backoff_factor after a step with inf/NaN grads (< 1)
  std::int64_t growth_interval = 2000;  // clean steps in a row before the scale grows
  bool enabled = true;                  // false: every method passes straight through
};

namespace detail::amp {

/// Whether ATen has a kernel of operator `name` for tensors on `device`.
inline bool has_fused_kernel(const char* name, c10::Device device) {
  const auto key = c10::TensorOptions().dtype(c10::kFloat).device(device).computeDispatchKey();
  const auto op = c10::Dispatcher::singleton().findSchema(c10::OperatorName(name, ""));
  return op.has_value() && op->hasKernelForDispatchKey(key);
}

inline bool fused_unscale_runs_on(c10::Device device) {
  return has_fused_kernel("aten::_amp_foreach_non_finite_check_and_unscale_", device);
}
inline bool fused_update_runs_on(c10::Device device) {
  return has_fused_kernel("aten::_amp_update_scale_", device);
}

/// Plain tensor ops doing what `_amp_foreach_non_finite_check_and_unscale_` does:
/// for each grad, found_inf = 1 if it holds inf/NaN, and grad *= inv_scale.
/// All tensors on one device; no sync.
inline void non_finite_check_and_unscale_fallback_(std::vector<::at::Tensor>& grads, ::at::Tensor& found_inf,
                                                   const ::at::Tensor& inv_scale) {
  for (auto& grad : grads) {
    found_inf.logical_or_(grad.isfinite().logical_not().any());
    grad.mul_(inv_scale);
  }
}

/// The fused kernel where the grads' device has one, else the fallback.
inline void non_finite_check_and_unscale_(std::vector<::at::Tensor>& grads, ::at::Tensor& found_inf,
                                          const ::at::Tensor& inv_scale) {
  if (grads.empty()) return;
  if (fused_unscale_runs_on(found_inf.device())) {
    ::at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);
  } else {
    non_finite_check_and_unscale_fallback_(grads, found_inf, inv_scale);
  }
}

/// Python's `_amp_update_scale_`, in place and without a sync:
///   found_inf: scale *= backoff, tracker = 0;
///   else tracker + 1 == interval: scale *= growth (if that stays finite), tracker = 0;
///   else tracker += 1.
/// The products are taken in double and rounded to float, as the kernels do.
inline void update_scale_fallback_(::at::Tensor& scale, ::at::Tensor& growth_tracker,
                                   const ::at::Tensor& found_inf, double growth_factor, double backoff_factor,
                                   std::int64_t growth_interval) {
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

/// The fused kernel where the scale's device has one, else the fallback.
inline void update_scale_(::at::Tensor& scale, ::at::Tensor& growth_tracker, const ::at::Tensor& found_inf,
                          double growth_factor, double backoff_factor, std::int64_t growth_interval) {
  if (fused_update_runs_on(scale.device())) {
    ::at::_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                             growth_interval);
  } else {
    update_scale_fallback_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
  }
}

enum class optimizer_stage { ready, unscaled, stepped };

/// What the scaler knows about one optimizer between two update() calls.
struct optimizer_state {
  optimizer_stage stage = optimizer_stage::ready;
  std::vector<::at::Tensor> found_inf_per_device;  // float 0-dim, one per device that had grads
};

/// The grads of every param group, on one device, split by dtype.
struct device_grads {
  c10::Device device;
  std::vector<std::pair<c10::ScalarType, std::vector<::at::Tensor>>> by_dtype;

  std::vector<::at::Tensor>& of(c10::ScalarType dtype) {
    for (auto& [type, grads] : by_dtype) {
      if (type == dtype) return grads;
    }
    return by_dtype.emplace_back(dtype, std::vector<::at::Tensor>{}).second;
  }
};

inline std::vector<device_grads> grads_by_device(const torch::optim::Optimizer& optimizer) {
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

/// Dynamic loss scaler with Python's semantics. Typical use, once per iteration:
///   scaler.scale(loss).backward();
///   scaler.unscale_(optimizer);   // optional: only to clip or inspect real grads
///   scaler.step(optimizer);       // skips the step if a grad is inf/NaN
///   scaler.update();
class GradScaler {
 public:
  explicit GradScaler(grad_scaler_options options = {})
      : init_scale_(options.init_scale),
        growth_factor_(options.growth_factor),
        backoff_factor_(options.backoff_factor),
        growth_interval_(options.growth_interval),
        enabled_(options.enabled) {
    if (!enabled_) return;
    if (!(growth_factor_ > 1.0)) throw std::invalid_argument("hookforge: GradScaler needs growth_factor > 1");
    if (!(backoff_factor_ < 1.0))
      throw std::invalid_argument("hookforge: GradScaler needs backoff_factor < 1");
    if (growth_interval_ < 1) throw std::invalid_argument("hookforge: GradScaler needs growth_interval >= 1");
  }
  // A copy would share the scale tensor with the original.
  GradScaler(const GradScaler&) = delete;
  GradScaler& operator=(const GradScaler&) = delete;
  GradScaler(GradScaler&&) = default;
  GradScaler& operator=(GradScaler&&) = default;

  /// loss * scale, on the loss's device. The first call puts the scale on that device.
  torch::Tensor scale(const torch::Tensor& loss) {
    if (!enabled_) return loss;
    if (!scale_.defined()) {
      const auto options = ::at::TensorOptions().device(loss.device());
      scale_ = ::at::full(::at::IntArrayRef{}, init_scale_, options.dtype(::at::kFloat));
      growth_tracker_ = ::at::full(::at::IntArrayRef{}, init_growth_tracker_, options.dtype(::at::kInt));
    }
    return loss * scale_.to(loss.device(), scale_.scalar_type(), /*non_blocking=*/true);
  }

  /// Divides the grads of `optimizer`'s params by the scale and records whether
  /// any of them holds inf/NaN. At most once per optimizer between two update()s,
  /// and before step().
  void unscale_(torch::optim::Optimizer& optimizer) {
    if (!enabled_) return;
    require_scale("unscale_");
    auto& state = states_[&optimizer];
    if (state.stage == detail::amp::optimizer_stage::unscaled) {
      throw std::logic_error(
          "hookforge: GradScaler::unscale_() was already called on this optimizer since the last update()");
    }
    if (state.stage == detail::amp::optimizer_stage::stepped) {
      throw std::logic_error("hookforge: GradScaler::unscale_() is being called after step()");
    }
    // As Python: reciprocal in double, then float.
    const auto inv_scale = scale_.to(::at::kDouble).reciprocal().to(::at::kFloat);
    ::at::NoGradGuard no_grad;
    state.found_inf_per_device.clear();
    for (auto& device : detail::amp::grads_by_device(optimizer)) {
      auto found_inf =
          ::at::zeros(::at::IntArrayRef{}, ::at::TensorOptions().dtype(::at::kFloat).device(device.device));
      const auto local_inv_scale = inv_scale.to(device.device, ::at::kFloat, /*non_blocking=*/true);
      for (auto& [dtype, grads] : device.by_dtype) {
        detail::amp::non_finite_check_and_unscale_(grads, found_inf, local_inv_scale);
      }
      state.found_inf_per_device.push_back(found_inf);
    }
    state.stage = detail::amp::optimizer_stage::unscaled;
  }

  /// Unscales (if unscale_ was not called) and calls optimizer.step() unless a
  /// grad holds inf/NaN. Returns whether the optimizer stepped. Syncs once per
  /// device holding grads, to read its found-inf flag (as Python does).
  bool step(torch::optim::Optimizer& optimizer) {
    if (!enabled_) {
      optimizer.step();
      return true;
    }
    require_scale("step");
    auto& state = states_[&optimizer];
    if (state.stage == detail::amp::optimizer_stage::stepped) {
      throw std::logic_error("hookforge: GradScaler::step() was already called since the last update()");
    }
    if (state.stage == detail::amp::optimizer_stage::ready) unscale_(optimizer);
    if (state.found_inf_per_device.empty()) {
      throw std::logic_error(
          "hookforge: GradScaler::step(): no inf checks were recorded for this optimizer "
          "(none of its params has a grad)");
    }
    double found_inf = 0.0;
    for (const auto& flag : state.found_inf_per_device) found_inf += flag.item<double>();
    state.stage = detail::amp::optimizer_stage::stepped;
    if (found_inf != 0.0) return false;
    optimizer.step();
    return true;
  }

  /// Once per iteration, after step(): backs the scale off if any optimizer
  /// saw inf/NaN, grows it after growth_interval clean steps. No sync.
  void update() {
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

  /// Sets the scale to `new_scale` (the growth tracker is left alone), as Python's update(new_scale).
  void update(double new_scale) {
    if (!enabled_) return;
    require_scale("update");
    scale_.fill_(new_scale);
    states_.clear();
  }

  /// The current scale (reads the device); init_scale before the first scale(), 1 when disabled.
  double get_scale() const {
    if (!enabled_) return 1.0;
    return scale_.defined() ? scale_.item<double>() : init_scale_;
  }
  /// Clean steps since the scale last changed (reads the device); 0 when disabled.
  std::int64_t get_growth_tracker() const {
    if (!enabled_) return 0;
    return growth_tracker_.defined() ? growth_tracker_.item<std::int64_t>() : init_growth_tracker_;
  }
  double get_growth_factor() const { return growth_factor_; }
  double get_backoff_factor() const { return backoff_factor_; }
  std::int64_t get_growth_interval() const { return growth_interval_; }
  bool is_enabled() const { return enabled_; }

  /// scale, growth_factor, backoff_factor, growth_interval, growth_tracker; empty when disabled.
  hookforge::state_map state_dict() const {
    if (!enabled_) return {};
    return {{"scale", get_scale()},
            {"growth_factor", growth_factor_},
            {"backoff_factor", backoff_factor_},
            {"growth_interval", growth_interval_},
            {"growth_tracker", get_growth_tracker()}};
  }

  /// Restores what state_dict() saved; does nothing when disabled.
  void load_state_dict(const hookforge::state_map& state) {
    if (!enabled_) return;
    if (state.empty()) {
      throw std::invalid_argument(
          "hookforge: GradScaler state_dict is empty, possibly because it was saved "
          "from a disabled GradScaler");
    }
    const double scale = entry(state, "scale").toDouble();
    const double growth_factor = entry(state, "growth_factor").toDouble();
    const double backoff_factor = entry(state, "backoff_factor").toDouble();
    const auto growth_interval = entry(state, "growth_interval").toInt();
    const auto growth_tracker = entry(state, "growth_tracker").toInt();
    init_scale_ = scale;
    growth_factor_ = growth_factor;
    backoff_factor_ = backoff_factor;
    growth_interval_ = growth_interval;
    init_growth_tracker_ = growth_tracker;
    if (scale_.defined()) scale_.fill_(scale);
    if (growth_tracker_.defined()) growth_tracker_.fill_(growth_tracker);
  }

 private:
  void require_scale(const char* method) const {
    if (!scale_.defined()) {
      throw std::logic_error(
          std::string("hookforge: GradScaler::") + method +
          "() before scale(): scale the loss with scaler.scale(loss) earlier in the iteration");
    }
  }

  static const c10::IValue& entry(const hookforge::state_map& state, const std::string& key) {
    auto found = state.find(key);
    if (found == state.end())
      throw std::invalid_argument("hookforge: GradScaler state_dict has no '" + key + "'");
    return found->second;
  }

  double init_scale_;
  double growth_factor_;
  double backoff_factor_;
  std::int64_t growth_interval_;
  bool enabled_;
  std::int64_t init_growth_tracker_ = 0;
  ::at::Tensor scale_;           // float32, 0-dim, on the device of the first scaled loss
  ::at::Tensor growth_tracker_;  // int32, 0-dim, same device
  std::unordered_map<const torch::optim::Optimizer*, detail::amp::optimizer_state> states_;
};

}  // namespace hookforge
