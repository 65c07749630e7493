// hookforge/torch/runners/runner_concepts.hpp — what the Trainer needs from the runners it drives.
//
// A training runner (the Trainer's second argument) has
//   run_epoch(model, loader, epoch, criterion) -> epoch_result   one epoch of training
//   set_total_epochs(std::int64_t)                                the planned epochs
//   (ctx.total_epochs) global_step() -> an integer                                   training
//   batches so far, whole run hooks()                                                       its
//   hook pack (binding tables, checkpoints) named_optimizers() -> std::vector<named_optimizer> each
//   optimiser under its checkpoint
//     (or optimizer(), its one optimiser, named "optimizer")      section; the learning rates
//   state_dict() / load_state_dict(const state_map&)              optional: its counters, in
//   checkpoints
// A validation runner (the third argument, or no_validation{}) has run_epoch,
// set_total_epochs and hooks().
//
// runner_base gives hooks(), set_total_epochs and global_step(); training_runner_base adds
// one optimiser and the global step's state, so a runner written with it needs only its
// run_epoch. The Trainer checks both runners where it is constructed: a runner that lacks a
// member is one static_assert naming the runner type and the member, reported from the line
// that constructs the Trainer. Whether run_epoch takes the Trainer's model and fit()'s loader
// and criterion is checked in fit(), reported from the line that calls it.
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include <torch/optim/optimizer.h>

#include "hookforge/core/checks.hpp"  // detail::static_message
#include "hookforge/core/fixed_string.hpp"
#include "hookforge/core/runner.hpp"
#include "hookforge/core/type_name.hpp"
#include "hookforge/torch/runners/epoch.hpp"

// As in core/checks.hpp: C++26 static_assert messages can name the runner themselves.
#if defined(__cpp_static_assert) && __cpp_static_assert >= 202306L
#define HOOKFORGE_RUNNER_MESSAGES 1
#else
#define HOOKFORGE_RUNNER_MESSAGES 0
#endif

namespace hookforge {

namespace detail {

// A member named run_epoch, template or not: looked up in a class deriving from R and from
// a class that has one, the name is ambiguous exactly when R has one too.
struct run_epoch_decoy {
  void run_epoch();
};
template <class R>
struct run_epoch_probe : R, run_epoch_decoy {};
template <class R>
concept declares_run_epoch =
    std::is_class_v<R> && (std::is_final_v<R> || !requires { &run_epoch_probe<R>::run_epoch; });

template <class R>
concept has_set_total_epochs = requires(R& r, std::int64_t epochs) { r.set_total_epochs(epochs); };
template <class R>
concept has_global_step = requires(R& r) {
  { r.global_step() } -> std::convertible_to<std::int64_t>;
};
template <class R>
concept has_hooks = requires(R& r) { r.hooks(); };
template <class R>
concept has_named_optimizers = requires(R& r) {
  { r.named_optimizers() } -> std::convertible_to<std::vector<named_optimizer>>;
};
template <class R>
concept has_optimizer = requires(R& r) {
  { r.optimizer() } -> std::convertible_to<torch::optim::Optimizer&>;
};

}  // namespace detail

/// What the Trainer needs from its training runner (see the top of this header).
template <class R>
concept training_runner = detail::declares_run_epoch<R> && detail::has_set_total_epochs<R> &&
                          detail::has_global_step<R> && detail::has_hooks<R> &&
                          (detail::has_named_optimizers<R> || detail::has_optimizer<R>);

/// What the Trainer needs from its validation runner.
template <class R>
concept validation_runner =
    detail::declares_run_epoch<R> && detail::has_set_total_epochs<R> && detail::has_hooks<R>;

/// Can `runner.run_epoch(model, loader, epoch, criterion)` run, returning an epoch_result?
template <class R, class Model, class Loader, class Criterion>
concept runs_epoch_of =
    requires(R& r, Model& model, Loader& loader, std::int64_t epoch, Criterion& criterion) {
      { r.run_epoch(model, loader, epoch, criterion) } -> std::convertible_to<epoch_result>;
    };

/// A training runner's optimisers: its named_optimizers(), else {{"optimizer", &optimizer()}}.
template <class R>
std::vector<named_optimizer> optimizers_of(R& runner) {
  if constexpr (detail::has_named_optimizers<R>)
    return runner.named_optimizers();
  else
    return {{"optimizer", &runner.optimizer()}};
}

namespace detail {

/// The first member R lacks as the Trainer's training runner ("" when none).
template <class R>
consteval auto training_runner_lacks() {
  if constexpr (!declares_run_epoch<R>)
    return fixed_string("run_epoch(model, loader, epoch, criterion)");
  else if constexpr (!has_set_total_epochs<R>)
    return fixed_string("set_total_epochs(std::int64_t)");
  else if constexpr (!has_global_step<R>)
    return fixed_string("global_step()");
  else if constexpr (!has_hooks<R>)
    return fixed_string("hooks()");
  else if constexpr (!has_named_optimizers<R> && !has_optimizer<R>)
    return fixed_string("named_optimizers() (or optimizer())");
  else
    return fixed_string("");
}

/// The first member R lacks as the Trainer's validation runner ("" when none).
template <class R>
consteval auto validation_runner_lacks() {
  if constexpr (!declares_run_epoch<R>)
    return fixed_string("run_epoch(model, loader, epoch, criterion)");
  else if constexpr (!has_set_total_epochs<R>)
    return fixed_string("set_total_epochs(std::int64_t)");
  else if constexpr (!has_hooks<R>)
    return fixed_string("hooks()");
  else
    return fixed_string("");
}

}  // namespace detail

namespace check {

// Called from the Trainer's constructor and fit() with what they report on as template
// arguments, so GCC prints them (runner, role, member) in the "In instantiation of" line
// right above the message, and the user's line two lines below it.

template <class Runner, fixed_string Role, fixed_string Lacks, bool Satisfied>
constexpr void trainer_runner_complete() {
#if HOOKFORGE_RUNNER_MESSAGES
  static_assert(Satisfied, detail::static_message{}
                               << "hookforge: " << type_name<Runner>()
                               << " cannot be the Trainer's " << Role.view() << ": it has no "
                               << Lacks.view()
                               << ". See 'The runner concepts' in docs/runners.md; runner_base and "
                               << "training_runner_base give all but run_epoch");
#else
  static_assert(Satisfied,
                "hookforge: Runner cannot be the Trainer's Role: it has no Lacks. See 'The runner "
                "concepts' in docs/runners.md; runner_base and training_runner_base give all but "
                "run_epoch [Runner, Role, Lacks: see 'with' above]");
#endif
}

template <class Runner, fixed_string Role, class Model, class Loader, class Criterion, bool Runs>
constexpr void trainer_runner_runs_epoch() {
#if HOOKFORGE_RUNNER_MESSAGES
  static_assert(
      Runs, detail::static_message{}
                << "hookforge: the Trainer's " << Role.view() << " " << type_name<Runner>()
                << " has no run_epoch(model, loader, epoch, criterion) returning "
                << "hookforge::epoch_result for the model " << type_name<Model>() << ", the loader "
                << type_name<Loader>() << " and the criterion " << type_name<Criterion>()
                << " (a GAN runner takes hookforge::gan_models and hookforge::gan_criteria)");
#else
  static_assert(
      Runs,
      "hookforge: the Trainer's Role (Runner) has no run_epoch(model, loader, epoch, criterion) "
      "returning hookforge::epoch_result for this Model, Loader and Criterion (a GAN runner "
      "takes hookforge::gan_models and hookforge::gan_criteria) [see 'with' above]");
#endif
}

}  // namespace check
}  // namespace hookforge

#undef HOOKFORGE_RUNNER_MESSAGES
