// hookforge/hooks/ema.hpp — EMA: an exponential moving average of the model's weights.
//
//   hookforge::EMA ema{*model, {.momentum = 0.0002}};
//   TrainingEpochRunner train{optimizer, {}, hookforge::ref(ema)};   // updates after each step
//   ValidationEpochRunner val{{}, hookforge::ref(ema)};             // validates the average
//   Trainer trainer{model, train, val, options, hookforge::ref(ema)}; // checkpoints hold it
//
// One instance, shared by ref. Training always runs on the raw weights; the average is
// swapped into the model where it is used, and swapped back after:
//   training runner     on_post_step: after an optimiser update (ctx.optimizer_stepped;
//                       on the GAN runner ctx.g_stepped: the EMA of the generator)
//                       the average moves towards the weights; on_epoch_start: makes
//                       sure the model holds the raw weights
//   validation, inference runners
//                       on_epoch_start: the average into the model; on_epoch_end: back
//   Trainer             on_before_save_checkpoint: the average into the model, so the
//                       checkpoint's "model" section holds it (what one deploys);
//                       on_after_save_checkpoint: back; on_after_load_checkpoint: the raw
//                       weights, kept in the hook's state, back into the model
//
// The update (MMEngine's ExponentialMovingAverage convention, momentum is the weight of
// the new value):  ema = (1 - momentum) * ema + momentum * param.  PyTorch's AveragedModel
// and timm call `decay` what is 1 - momentum here. The first update copies the parameters
// exactly, and averaging starts with the optimiser update that brings the run's count of
// updates to `begin_iter` (MMEngine's EMAHook: `iter + 1 >= begin_iter`, so 0 and 1 both
// start at the first; before it the model's own weights are used everywhere). With update_buffers
// the floating buffers (BatchNorm statistics) are averaged too and integer buffers copied; without
// it the model's current buffers are used with the average.
//
// State (state_dict, saved under the key "EMA" by every component it is attached to; the
// tensors are the hook's own, not copies, as in PyTorch, so a checkpoint stores each once):
//   steps          updates averaged so far (0: not started, no tensors)
//   swapped        the checkpoint's model holds the average
//   averaged.<n>   the average of parameter (or buffer) <n>
//   raw.<n>        when swapped: the raw weights, which a resume puts back into the model
// The state lives in checkpoints, so a resumed run continues the same average (MMEngine
// loses it unless the checkpoint carries its ema_state_dict).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

struct ema_options {
  double momentum = 0.0002;  ///< ema = (1 - momentum) * ema + momentum * param, in (0, 1]
  std::int64_t begin_iter =
      0;  ///< averaging starts at the begin_iter-th update (0 or 1: the first)
  bool update_buffers = false;  ///< average floating buffers too (else the model's are used)
};

class EMA {
 public:
  static constexpr std::string_view state_key = "EMA";
  static constexpr int priority = priority::NORMAL;

  explicit EMA(torch::nn::Module& model, ema_options options = {}) : options_(options) {
    if (!(options_.momentum > 0 && options_.momentum <= 1))
      throw std::invalid_argument(
          fmt::format("EMA: momentum must be in (0, 1], got {}", options_.momentum));
    if (options_.begin_iter < 0)
      throw std::invalid_argument("EMA: begin_iter must be >= 0, got " +
                                  std::to_string(options_.begin_iter));
    for (auto& item : model.named_parameters(true)) track(item.key(), item.value());
    if (options_.update_buffers)
      for (auto& item : model.named_buffers(true)) track(item.key(), item.value());
    if (targets_.empty()) throw std::invalid_argument("EMA: model has no parameters to average");
  }
  /// A module holder (`torch::nn::Linear`, a TORCH_MODULE): its module.
  template <class M>
  explicit EMA(torch::nn::ModuleHolder<M>& model, ema_options options = {})
      : EMA(*model, options) {}

  EMA(EMA&&) = default;
  EMA& operator=(EMA&&) = default;
  EMA(const EMA&) = delete;  // one average per model: share it with hookforge::ref
  EMA& operator=(const EMA&) = delete;

  /// Every point EMA acts at goes through this one handler, so that each component it is
  /// attached to (trainer, training runner, validation runner) has a point of it.
  /// What handle reads from a context: nothing from one that does not update parameters;
  /// from one that does (it has an optimizer), the update counts of a training context, so
  /// that the average follows the updates. The first field it lacks ("" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    if constexpr (updates_parameters<C>)
      return training_lacks<C>();
    else
      return "";
  }

  template <context_for<EMA> C, class P>
    requires one_of_points<P, points::on_post_step, points::on_epoch_start, points::on_epoch_end,
                           points::on_before_save_checkpoint, points::on_after_save_checkpoint,
                           points::on_after_load_checkpoint>
  void handle(C& ctx, P) {
    constexpr bool training = training_context<C>;
    if constexpr (std::is_same_v<P, points::on_post_step>) {
      if constexpr (training) update_after_step(ctx);
    } else if constexpr (std::is_same_v<P, points::on_epoch_start>) {
      if constexpr (training)
        use_raw();
      else
        use_averaged();
    } else if constexpr (std::is_same_v<P, points::on_epoch_end>) {
      if constexpr (!training) use_raw();
    } else if constexpr (std::is_same_v<P, points::on_before_save_checkpoint>) {
      use_averaged();
    } else {  // after saving, after loading
      use_raw();
    }
  }

  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(handle, points::on_post_step, points::on_epoch_start,
                           points::on_epoch_end, points::on_before_save_checkpoint,
                           points::on_after_save_checkpoint, points::on_after_load_checkpoint));

  /// Move the average towards the model's weights (the first time: copy them).
  void update() {
    use_raw();
    torch::NoGradGuard no_grad;
    if (steps_ == 0) {
      held_.clear();
      for (const auto& t : targets_) held_.push_back(t.detach().clone());
    } else {
      for (std::size_t i = 0; i < targets_.size(); ++i) {
        if (held_[i].is_floating_point())
          held_[i].lerp_(targets_[i].detach(), options_.momentum);
        else
          held_[i].copy_(targets_[i].detach());
      }
    }
    ++steps_;
  }

  /// Put the average into the model (nothing before the first update, or when it is there).
  void use_averaged() {
    use_raw();  // a loaded checkpoint's raw weights first
    if (steps_ == 0 || swapped_) return;
    exchange();
  }

  /// Put the raw weights back into the model (from a swap, or from a loaded checkpoint).
  void use_raw() {
    if (swapped_) exchange();
    if (!pending_raw_.empty()) {
      torch::NoGradGuard no_grad;
      for (std::size_t i = 0; i < targets_.size(); ++i) targets_[i].detach().copy_(pending_raw_[i]);
      pending_raw_.clear();
    }
  }

  /// Updates averaged so far.
  std::int64_t steps() const { return steps_; }
  /// Whether the model holds the average now.
  bool swapped() const { return swapped_; }
  /// The average of each tracked tensor, by name (empty before the first update).
  std::map<std::string, torch::Tensor> averaged() const {
    std::map<std::string, torch::Tensor> out;
    if (steps_ == 0) return out;
    for (std::size_t i = 0; i < targets_.size(); ++i) out[names_[i]] = average(i);
    return out;
  }
  const ema_options& options() const { return options_; }

  state_map state_dict() const {
    state_map state{{"steps", steps_}, {"swapped", swapped_ || !pending_raw_.empty()}};
    if (steps_ > 0)
      for (std::size_t i = 0; i < targets_.size(); ++i) state["averaged." + names_[i]] = average(i);
    if (swapped_)
      for (std::size_t i = 0; i < targets_.size(); ++i) state["raw." + names_[i]] = held_[i];
    else if (!pending_raw_.empty())
      for (std::size_t i = 0; i < targets_.size(); ++i) state["raw." + names_[i]] = pending_raw_[i];
    return state;
  }

  /// Take a state_dict back. Raw weights in it go back into the model at
  /// on_after_load_checkpoint (after the trainer loaded the model section), or at the
  /// next training epoch's start, or with use_raw().
  void load_state_dict(const state_map& state) {
    const auto steps = state_value<std::int64_t>(state, "EMA", "steps");
    const bool swapped = state_value<bool>(state, "EMA", "swapped");
    if (steps < 0) throw std::invalid_argument("EMA: state has steps " + std::to_string(steps));
    std::vector<torch::Tensor> held, raw;
    if (steps > 0) held = tensors(state, "averaged.");
    if (swapped) raw = tensors(state, "raw.");
    if (swapped_) exchange();  // the live model gets its raw weights back before they are replaced
    steps_ = steps;
    held_ = std::move(held);
    pending_raw_ = std::move(raw);
  }

 private:
  template <class C>
  void update_after_step(const C& ctx) {
    std::int64_t updates;  // the run's updates, this one included
    if constexpr (single_training_context<C>) {
      if (!ctx.optimizer_stepped) return;
      updates = ctx.optimizer_steps;
    } else {
      if (!ctx.g_stepped) return;
      updates = ctx.g_steps;
    }
    if (updates >= options_.begin_iter) update();
  }

  void track(const std::string& name, const torch::Tensor& tensor) {
    if (!tensor.defined()) return;
    names_.push_back(name);
    targets_.push_back(tensor);
  }

  // The average of tensor i: the model holds it while swapped in, the hook otherwise.
  torch::Tensor average(std::size_t i) const { return swapped_ ? targets_[i].detach() : held_[i]; }

  // The model's tensors and the held ones trade values.
  void exchange() {
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      auto model_values = targets_[i].detach().clone();
      targets_[i].detach().copy_(held_[i]);
      held_[i] = std::move(model_values);
    }
    swapped_ = !swapped_;
  }

  static std::string shape(const torch::Tensor& t) {
    std::string text = "[";
    for (auto size : t.sizes()) text += (text.size() > 1 ? ", " : "") + std::to_string(size);
    return text + "]";
  }

  // One tensor per tracked name from "<prefix><name>", copied to the model tensor's device
  // and dtype; the state must hold exactly the tracked names, with their shapes.
  std::vector<torch::Tensor> tensors(const state_map& state, const std::string& prefix) const {
    std::vector<torch::Tensor> out;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      const auto t = state_value<torch::Tensor>(state, "EMA", prefix + names_[i]);
      if (t.sizes() != targets_[i].sizes())
        throw std::invalid_argument(
            fmt::format("EMA: state entry '{}{}' has shape {}, the model's tensor {}", prefix,
                        names_[i], shape(t), shape(targets_[i])));
      out.push_back(t.to(targets_[i].device(), targets_[i].scalar_type(), /*non_blocking=*/false,
                         /*copy=*/true));
    }
    std::size_t stored = 0;
    for (auto it = state.lower_bound(prefix);
         it != state.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
      ++stored;
    if (stored != targets_.size())
      throw std::invalid_argument(fmt::format("EMA: state holds {} '{}' tensors, the model {}",
                                              stored, prefix, targets_.size()));
    return out;
  }

  ema_options options_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> targets_;      // the model's parameters (and buffers)
  std::vector<torch::Tensor> held_;         // the averages; the raw weights while swapped
  std::vector<torch::Tensor> pending_raw_;  // raw weights from a loaded state, not yet in the model
  std::int64_t steps_ = 0;
  bool swapped_ = false;
};

}  // namespace hookforge
