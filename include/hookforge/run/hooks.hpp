// hookforge/run/hooks.hpp — hooks in a run's config: the hook kinds of the torch components.
//
//   training_runner:
//     _target: TrainingEpochRunner
//     params:
//       optimizer: ${ref:optimizer}
//       hooks:
//         - {_target: GradientClip, params: {max_norm: 1.0}, priority: HIGH}
//
// `kinds::hook` is the kind for hooks a config may list under any torch component: its
// contexts are TrainingContext (TrainingEpochRunner), InferenceContext
// (ValidationEpochRunner), GANContext (GANTrainingRunner) and TrainerContext (Trainer).
// Register a hook of yours with it, in your own translation unit:
//
//   HOOKFORGE_REGISTER(hook, MyHook, hookforge::config::arg<int>("every", 10));
//
// A hook listed under a component whose context it was not registered for is a
// config_error naming the contexts it has; one whose handlers cannot take the component's
// context at a point it binds to is a config_error too; one whose handlers match no point
// of the component gets SR-Forge's warning (an error with --strict). The built-in hooks
// are registered for the contexts they serve (src/run/builtins.cpp), with the kinds below.
//
// A runner of yours has its own context: HOOKFORGE_BUILTIN_HOOKS_FOR(YourCtx) lets a config
// list every built-in runner hook under it that can take that context (the fields each
// reads: docs/runners.md, "What the built-in hooks need from your context"), in one line
// rather than one HOOKFORGE_HOOK_CONTEXTS line per hook (examples/runner_run/).
#pragma once

#include <string_view>
#include <utility>

#include "hookforge/config/hooks.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/hooks/batch_image_saver.hpp"
#include "hookforge/hooks/check_invalid_loss.hpp"
#include "hookforge/hooks/edge_enhanced_input.hpp"
#include "hookforge/hooks/ema.hpp"
#include "hookforge/hooks/empty_cache.hpp"
#include "hookforge/hooks/gradient_clip.hpp"
#include "hookforge/hooks/iter_timer.hpp"
#include "hookforge/hooks/loss_logger.hpp"
#include "hookforge/hooks/lr_warmup.hpp"
#include "hookforge/hooks/progress_bar.hpp"
#include "hookforge/hooks/r1_gradient_penalty.hpp"
#include "hookforge/hooks/tensorboard_logger.hpp"
#include "hookforge/run/values.hpp"
#include "hookforge/torch/runners/gan_runner.hpp"
#include "hookforge/torch/runners/inference_runner.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

namespace hookforge::config::kinds {
/// Hooks for any torch component.
using hook = hook_kind<TrainingContext, InferenceContext, GANContext, TrainerContext>;
/// Hooks for the epoch runners (training, validation, GAN).
using runner_hook = hook_kind<TrainingContext, InferenceContext, GANContext>;
/// Hooks for the runners that train (TrainingEpochRunner, GANTrainingRunner).
using training_hook = hook_kind<TrainingContext, GANContext>;
/// Hooks for GANTrainingRunner.
using gan_hook = hook_kind<GANContext>;
/// Hooks for the Trainer.
using trainer_hook = hook_kind<TrainerContext>;
}  // namespace hookforge::config::kinds

namespace hookforge::run {

/// Register each built-in runner hook whose handlers can take `Ctx` for it (the others
/// are left out, and a config listing one under such a runner says which contexts it has).
template <class Ctx>
void register_builtin_hooks_for() {
  auto add = []<class H>() {
    if constexpr (context_for<Ctx, H>) config::register_hook_contexts<H, Ctx>();
  };
  add.template operator()<BatchImageSaver>();
  add.template operator()<CheckInvalidLoss>();
  add.template operator()<EdgeEnhancedInput>();
  add.template operator()<EMA>();
  add.template operator()<EmptyCache>();
  add.template operator()<GradientClip>();
  add.template operator()<IterTimer>();
  add.template operator()<LossLogger>();
  add.template operator()<LRWarmup>();
  add.template operator()<ProgressBar>();
  add.template operator()<TensorBoardLogger>();
}

}  // namespace hookforge::run

/// Let configs list the built-in runner hooks under a runner of yours whose context is
/// `Ctx`: each one whose handlers can take it. At namespace scope, in any translation unit.
#define HOOKFORGE_BUILTIN_HOOKS_FOR(Ctx)                                                \
  [[maybe_unused]] static const bool HOOKFORGE_CONFIG_CAT(hookforge_run_builtin_hooks_, \
                                                          __COUNTER__) =                \
      (::hookforge::run::register_builtin_hooks_for<Ctx>(), true)

template <>
struct hookforge::run::enum_names<hookforge::nonfinite_grads> {
  static constexpr std::pair<std::string_view, hookforge::nonfinite_grads> values[] = {
      {"ignore", hookforge::nonfinite_grads::ignore},
      {"error", hookforge::nonfinite_grads::error},
      {"skip_step", hookforge::nonfinite_grads::skip_step}};
};
template <>
struct hookforge::run::enum_names<hookforge::invalid_loss_action> {
  static constexpr std::pair<std::string_view, hookforge::invalid_loss_action> values[] = {
      {"raise", hookforge::invalid_loss_action::raise},
      {"stop", hookforge::invalid_loss_action::stop}};
};
template <>
struct hookforge::run::enum_names<hookforge::warmup_mode> {
  static constexpr std::pair<std::string_view, hookforge::warmup_mode> values[] = {
      {"linear", hookforge::warmup_mode::linear},
      {"constant", hookforge::warmup_mode::constant},
      {"exponential", hookforge::warmup_mode::exponential}};
};
template <>
struct hookforge::run::enum_names<hookforge::r1_reduction> {
  static constexpr std::pair<std::string_view, hookforge::r1_reduction> values[] = {
      {"sum", hookforge::r1_reduction::sum}, {"mean", hookforge::r1_reduction::mean}};
};
