// hookforge/torch/amp/grad_scaler.hpp — dynamic loss scaling for mixed-precision training.
//
// LibTorch has no C++ GradScaler, so this is Python's `torch.amp.GradScaler`:
// multiply the loss by `scale` before backward, divide the gradients by it
// before the optimizer step, skip steps whose gradients hold inf/NaN and then
// halve the scale, double it after `growth_interval` clean steps.
//
// The scale, growth tracker and found-inf flags live in tensors on the
// device, so scale(), unscale_() and update() never wait for it. step() hands
// the flag to an optimizer that supports_amp_scaling (FusedAdam, FusedAdamW),
// which skips the update on the device: then no call reads the device. With any
// other optimizer step() reads the flag of each device once (one sync per
// device, as Python's `found_inf.item()`) to decide whether to call
// optimizer.step(). get_scale() and state_dict() also read the device, as in Python.
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

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/optim/optimizer.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/amp/supports_amp_scaling.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

/// GradScaler's settings; the defaults are Python's.
struct grad_scaler_options {
  double init_scale = 65536.0;  // the scale before any update
  double growth_factor = 2.0;   // scale *= growth_factor after growth_interval clean steps (> 1)
  double backoff_factor = 0.5;  // scale *= backoff_factor after a step with inf/NaN grads (< 1)
  std::int64_t growth_interval = 2000;  // clean steps in a row before the scale grows
  bool enabled = true;                  // false: every method passes straight through
};

namespace detail::amp {

HOOKFORGE_INLINE bool fused_unscale_runs_on(c10::Device device);
HOOKFORGE_INLINE bool fused_update_runs_on(c10::Device device);

/// Plain tensor ops doing what `_amp_foreach_non_finite_check_and_unscale_` does:
/// for each grad, found_inf = 1 if it holds inf/NaN, and grad *= inv_scale.
/// All tensors on one device; no sync.
HOOKFORGE_INLINE void non_finite_check_and_unscale_fallback_(std::vector<::at::Tensor>& grads,
                                                             ::at::Tensor& found_inf,
                                                             const ::at::Tensor& inv_scale);

/// The fused kernel where the grads' device has one, else the fallback.
HOOKFORGE_INLINE void non_finite_check_and_unscale_(std::vector<::at::Tensor>& grads,
                                                    ::at::Tensor& found_inf,
                                                    const ::at::Tensor& inv_scale);

/// Python's `_amp_update_scale_`, in place and without a sync:
///   found_inf: scale *= backoff, tracker = 0;
///   else tracker + 1 == interval: scale *= growth (if that stays finite), tracker = 0;
///   else tracker += 1.
/// The products are taken in double and rounded to float, as the kernels do.
HOOKFORGE_INLINE void update_scale_fallback_(::at::Tensor& scale, ::at::Tensor& growth_tracker,
                                             const ::at::Tensor& found_inf, double growth_factor,
                                             double backoff_factor, std::int64_t growth_interval);

/// The fused kernel where the scale's device has one, else the fallback.
HOOKFORGE_INLINE void update_scale_(::at::Tensor& scale, ::at::Tensor& growth_tracker,
                                    const ::at::Tensor& found_inf, double growth_factor,
                                    double backoff_factor, std::int64_t growth_interval);

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

  std::vector<::at::Tensor>& of(c10::ScalarType dtype);
};

/// The grads of every param group of `optimizer`, by device and dtype (sparse ones by
/// their values); throws std::logic_error for FP16 grads.
HOOKFORGE_INLINE std::vector<device_grads> grads_by_device(
    const torch::optim::Optimizer& optimizer);

}  // namespace detail::amp

/// Dynamic loss scaler with Python's semantics. Typical use, once per iteration:
///   scaler.scale(loss).backward();
///   scaler.unscale_(optimizer);   // optional: only to clip or inspect real grads
///   scaler.step(optimizer);       // skips the step if a grad is inf/NaN
///   scaler.update();
class GradScaler {
 public:
  explicit GradScaler(grad_scaler_options options = {});
  // A copy would share the scale tensor with the original.
  GradScaler(const GradScaler&) = delete;
  GradScaler& operator=(const GradScaler&) = delete;
  GradScaler(GradScaler&&) = default;
  GradScaler& operator=(GradScaler&&) = default;

  /// loss * scale, on the loss's device. The first call puts the scale on that device.
  torch::Tensor scale(const torch::Tensor& loss);

  /// Divides the grads of `optimizer`'s params by the scale and records whether
  /// any of them holds inf/NaN. At most once per optimizer between two update()s,
  /// and before step().
  void unscale_(torch::optim::Optimizer& optimizer);

  /// Unscales (if unscale_ was not called) and calls optimizer.step() unless a
  /// grad holds inf/NaN. Returns whether the optimizer stepped. Syncs once per
  /// device holding grads, to read its found-inf flag (as Python does), except for
  /// an optimizer that supports_amp_scaling: it gets the flag and skips on the
  /// device, nothing is read, and step() returns true (the step was handed over).
  bool step(torch::optim::Optimizer& optimizer);

  /// Once per iteration, after step(): backs the scale off if any optimizer
  /// saw inf/NaN, grows it after growth_interval clean steps. No sync.
  void update();

  /// Sets the scale to `new_scale` (the growth tracker is left alone), as Python's
  /// update(new_scale).
  void update(double new_scale);

  /// The current scale (reads the device); init_scale before the first scale(), 1 when disabled.
  double get_scale() const;
  /// Clean steps since the scale last changed (reads the device); 0 when disabled.
  std::int64_t get_growth_tracker() const;
  double get_growth_factor() const { return growth_factor_; }
  double get_backoff_factor() const { return backoff_factor_; }
  std::int64_t get_growth_interval() const { return growth_interval_; }
  bool is_enabled() const { return enabled_; }

  /// scale, growth_factor, backoff_factor, growth_interval, growth_tracker; empty when disabled.
  hookforge::state_map state_dict() const;

  /// Restores what state_dict() saved; does nothing when disabled.
  void load_state_dict(const hookforge::state_map& state);

 private:
  void require_scale(const char* method) const;

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

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/amp/grad_scaler-inl.hpp"
#endif
