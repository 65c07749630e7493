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
#include <vector>

#include <torch/optim/optimizer.h>

namespace hookforge {

/// A context with epoch counters (every epoch runner's).
template <class C>
concept epoch_context = requires(const C& c) {
  c.epoch;
  c.batch_idx;
  c.global_step;
  c.num_batches;
  c.total_epochs;
};

/// A context that trains one network with one optimiser (TrainingContext's shape).
template <class C>
concept single_training_context = requires(C& c) {
  { c.optimizer } -> std::convertible_to<torch::optim::Optimizer*>;
  { c.optimizer_steps } -> std::convertible_to<std::int64_t>;
  { c.optimizer_stepped } -> std::convertible_to<bool>;
  { c.optimizer_step_due } -> std::convertible_to<bool>;
};

/// A context that trains a generator and a discriminator (GANContext's shape).
template <class C>
concept gan_training_context = requires(C& c) {
  { c.d_optimizer } -> std::convertible_to<torch::optim::Optimizer*>;
  { c.g_optimizer } -> std::convertible_to<torch::optim::Optimizer*>;
  { c.d_steps } -> std::convertible_to<std::int64_t>;
  { c.g_steps } -> std::convertible_to<std::int64_t>;
  { c.g_stepped } -> std::convertible_to<bool>;
  c.phase;
};

/// A context of a runner that updates parameters.
template <class C>
concept training_context = single_training_context<C> || gan_training_context<C>;

/// A context of a runner that updates parameters, built-in or not: a training context, or
/// any context that carries an `optimizer` (a custom runner's, like examples/adversarial_runner).
template <class C>
concept updates_parameters = training_context<C> || requires(C& c) {
  { c.optimizer } -> std::convertible_to<torch::optim::Optimizer*>;
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

/// "epoch 2, batch 7 (0-based; global step 41)": where a message comes from.
template <class C>
std::string context_position(const C& ctx) {
  if constexpr (epoch_context<C>)
    return "epoch " + std::to_string(ctx.epoch) + ", batch " + std::to_string(ctx.batch_idx) +
           " (0-based; global step " + std::to_string(ctx.global_step) + ")";
  else
    return "this step";
}

}  // namespace hookforge
