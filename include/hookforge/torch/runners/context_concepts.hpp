// hookforge/torch/runners/context_concepts.hpp — the shapes of the runners' contexts, by
// their fields.
//
// A hook written once for every runner looks at which fields a context has rather than at
// its type, so it works on TrainingContext, GANContext, InferenceContext and on a custom
// runner's context with the same fields: the built-in hooks and hookforge::distributed do. These
// concepts name those shapes; the helpers below do what such hooks do on either training
// context (veto the update, list the optimisers), and context_position() is the one
// message format they share ("epoch 2, batch 7 (0-based; global step 41)").
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <torch/optim/optimizer.h>

namespace hookforge {

// What a context lacks, field by field: each `..._lacks<C>()` names the first field of a
// shape that C does not have ("" when it has them all). A hook's context_lacks() is made of
// these (see core/hook_traits.hpp), so the attach check names the field, and the concepts
// below are defined by them: the shape is written once.

/// The epoch counters (every epoch runner's context has them).
template <class C>
consteval std::string_view epoch_counters_lacks() {
  if constexpr (!requires(const C& c) { c.epoch; })
    return "epoch";
  else if constexpr (!requires(const C& c) { c.batch_idx; })
    return "batch_idx";
  else if constexpr (!requires(const C& c) { c.global_step; })
    return "global_step";
  else if constexpr (!requires(const C& c) { c.num_batches; })
    return "num_batches";
  else if constexpr (!requires(const C& c) { c.total_epochs; })
    return "total_epochs";
  else
    return "";
}

/// TrainingContext's shape: one network, one optimiser.
template <class C>
consteval std::string_view single_training_lacks() {
  using optimizer_ptr = torch::optim::Optimizer*;
  if constexpr (!requires(C& c) { optimizer_ptr(c.optimizer); })
    return "optimizer";
  else if constexpr (!requires(C& c) { std::int64_t(c.optimizer_steps); })
    return "optimizer_steps";
  else if constexpr (!requires(C& c) { bool(c.optimizer_stepped); })
    return "optimizer_stepped";
  else if constexpr (!requires(C& c) { bool(c.optimizer_step_due); })
    return "optimizer_step_due";
  else
    return "";
}

/// GANContext's shape: a generator and a discriminator, each with its optimiser.
template <class C>
consteval std::string_view gan_training_lacks() {
  using optimizer_ptr = torch::optim::Optimizer*;
  if constexpr (!requires(C& c) { optimizer_ptr(c.d_optimizer); })
    return "d_optimizer";
  else if constexpr (!requires(C& c) { optimizer_ptr(c.g_optimizer); })
    return "g_optimizer";
  else if constexpr (!requires(C& c) { std::int64_t(c.d_steps); })
    return "d_steps";
  else if constexpr (!requires(C& c) { std::int64_t(c.g_steps); })
    return "g_steps";
  else if constexpr (!requires(C& c) { bool(c.g_stepped); })
    return "g_stepped";
  else if constexpr (!requires(C& c) { c.phase; })
    return "phase";
  else
    return "";
}

/// Either training shape: GANContext's when C has a d_optimizer, else TrainingContext's.
template <class C>
consteval std::string_view training_lacks() {
  if constexpr (requires(C& c) { c.d_optimizer; })
    return gan_training_lacks<C>();
  else
    return single_training_lacks<C>();
}

/// The flags a GAN runner's pre-step hooks set: which networks this batch updates.
template <class C>
consteval std::string_view gan_phase_flags_lacks() {
  if constexpr (!requires(C& c) { c.run_d = bool(c.run_d); })
    return "run_d";
  else if constexpr (!requires(C& c) { c.run_g = bool(c.run_g); })
    return "run_g";
  else
    return "";
}

/// What a GAN runner's scheduling hooks (StepRatio, DWarmup) read and set: the flags and
/// the step they follow.
template <class C>
consteval std::string_view gan_schedule_lacks() {
  if (auto lacks = gan_phase_flags_lacks<C>(); !lacks.empty()) return lacks;
  if constexpr (!requires(C& c) { std::int64_t(c.global_step); }) return "global_step";
  return "";
}

/// What skip_update() needs: `skip_optimizer_step`, or on the GAN shape `run_d` and `run_g`.
template <class C>
consteval std::string_view update_veto_lacks() {
  if constexpr (requires(C& c) { c.d_optimizer; })
    return gan_phase_flags_lacks<C>();
  else if constexpr (!requires(C& c) { c.skip_optimizer_step = true; })
    return "skip_optimizer_step";
  else
    return "";
}

/// A context with epoch counters (every epoch runner's).
template <class C>
concept epoch_context = epoch_counters_lacks<C>().empty();

/// A context that trains one network with one optimiser (TrainingContext's shape).
template <class C>
concept single_training_context = single_training_lacks<C>().empty();

/// A context that trains a generator and a discriminator (GANContext's shape).
template <class C>
concept gan_training_context = gan_training_lacks<C>().empty();

/// A context of a runner that updates parameters.
template <class C>
concept training_context = single_training_context<C> || gan_training_context<C>;

/// A context of a runner that updates parameters, built-in or not: a training context, or
/// any context that carries an `optimizer` or a `d_optimizer` (a custom runner's, like
/// examples/adversarial_runner's). Hooks that only tell training from evaluation ask this;
/// hooks that follow the updates need training_context, and say which field is missing.
template <class C>
concept updates_parameters = training_context<C> || requires(C& c) {
  { c.optimizer } -> std::convertible_to<torch::optim::Optimizer*>;
} || requires(C& c) {
  { c.d_optimizer } -> std::convertible_to<torch::optim::Optimizer*>;
};

/// One optimiser of a training context and the updates it has taken so far.
struct optimizer_slot {
  torch::optim::Optimizer* optimizer;
  std::int64_t steps;
};

/// The optimisers of a training context: one for TrainingContext, D's then G's for GANContext.
template <training_context C>
std::vector<optimizer_slot> optimizer_slots(const C& ctx) {
  if constexpr (single_training_context<C>)
    return {{ctx.optimizer, ctx.optimizer_steps}};
  else
    return {{ctx.d_optimizer, ctx.d_steps}, {ctx.g_optimizer, ctx.g_steps}};
}

/// Veto the update that follows this backward: the one optimiser's step on TrainingContext,
/// the current phase's step on GANContext (D's in the D phase, G's in the G phase).
template <training_context C>
  requires(update_veto_lacks<C>().empty())
void skip_update(C& ctx) {
  if constexpr (single_training_context<C>)
    ctx.skip_optimizer_step = true;
  else if (ctx.phase == decltype(ctx.phase)::discriminator)
    ctx.run_d = false;
  else
    ctx.run_g = false;
}

/// Is a gradient scaler on for the gradients at hand (fp16 mixed precision on CUDA)?
/// It then checks them for inf/NaN itself and skips the update when it finds one.
template <class C>
bool scaler_enabled(const C& ctx) {
  if constexpr (requires { ctx.scaler->is_enabled(); }) {
    return ctx.scaler != nullptr && ctx.scaler->is_enabled();
  } else if constexpr (requires {
                         ctx.d_scaler->is_enabled();
                         ctx.g_scaler->is_enabled();
                       }) {
    const auto* scaler =
        ctx.phase == decltype(ctx.phase)::discriminator ? ctx.d_scaler : ctx.g_scaler;
    return scaler != nullptr && scaler->is_enabled();
  } else {
    return false;
  }
}

/// What a logger's step rows read from a runner's context (LossLogger's, MLflowLogger's): the
/// epoch counters and the step's `loss` tensor; the first it lacks, "" for none.
template <class C>
consteval std::string_view step_row_lacks() {
  if (auto lacks = epoch_counters_lacks<C>(); !lacks.empty()) return lacks;
  if constexpr (!requires(C& c) { torch::Tensor(c.loss); }) return "loss (a tensor)";
  return "";
}

/// The learning rate of each parameter group of the context's `optimizer`, as a step row
/// gives them (none for a context without one).
template <class C>
std::vector<double> step_learning_rates(const C& ctx) {
  std::vector<double> lrs;
  if constexpr (requires { ctx.optimizer->param_groups(); })
    if (ctx.optimizer)
      for (const auto& group : ctx.optimizer->param_groups())
        lrs.push_back(group.has_options() ? group.options().get_lr() : 0.0);
  return lrs;
}

/// "epoch 2, batch 7 (0-based; global step 41)": where a message comes from.
template <class C>
std::string context_position(const C& ctx) {
  if constexpr (epoch_context<C>)
    return "epoch " + std::to_string(ctx.epoch) + ", batch " + std::to_string(ctx.batch_idx) +
           " (0-based; global step " + std::to_string(ctx.global_step) + ")";
  else
    return "this step";
}

/// The validation set a context's epoch runs over (epoch_counters::dataset, set when the
/// Trainer validates several), or "" for one set or a context without the field: what a hook
/// that names its output by the set (a bar's label, an image's tag or folder) reads.
template <class C>
std::string_view validation_set_of(const C& ctx) {
  if constexpr (requires { std::string_view(ctx.dataset); })
    return std::string_view(ctx.dataset);
  else
    return {};
}

}  // namespace hookforge
