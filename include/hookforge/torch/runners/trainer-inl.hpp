// hookforge/torch/runners/trainer-inl.hpp — the Trainer's bookkeeping that depends on
// none of its template arguments, and TrainerContext's actions: included by trainer.hpp
// header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge {

HOOKFORGE_INLINE void TrainerContext::request_stop(std::string reason) {
  stop_training = true;
  stop_reason = std::move(reason);
}

HOOKFORGE_INLINE void TrainerContext::save_checkpoint(const std::filesystem::path& path,
                                                      checkpoint_content content) const {
  if (trainer == nullptr)
    throw std::logic_error(
        "TrainerContext::save_checkpoint: this context was not made by a Trainer");
  trainer->save_checkpoint(path, content);
}

namespace detail {

HOOKFORGE_INLINE module_snapshot::module_snapshot(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& t : module.parameters(true)) keep(t);
  for (auto& t : module.buffers(true)) keep(t);
}

HOOKFORGE_INLINE void module_snapshot::restore() {
  torch::NoGradGuard no_grad;
  for (auto& [into, copy] : saved_) into.copy_(copy);
}

HOOKFORGE_INLINE void module_snapshot::keep(const torch::Tensor& t) {
  if (t.defined()) saved_.emplace_back(t, t.to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true));
}

HOOKFORGE_INLINE TrainerContext trainer_context(const trainer_options& options,
                                                std::int64_t completed_epochs,
                                                std::int64_t global_step,
                                                const epoch_scores& last_val_scores) {
  TrainerContext ctx;
  ctx.work_dir = options.work_dir;
  ctx.monitor = options.monitor;
  ctx.epoch = completed_epochs;
  ctx.completed_epochs = completed_epochs;
  ctx.total_epochs = options.epochs;
  ctx.global_step = global_step;
  ctx.val_scores = last_val_scores;
  return ctx;
}

HOOKFORGE_INLINE std::vector<double> learning_rates(
    const std::vector<named_optimizer>& optimizers) {
  std::vector<double> lrs;
  for (const auto& o : optimizers)
    for (const auto& group : o.optimizer->param_groups())
      lrs.push_back(group.has_options() ? group.options().get_lr() : 0.0);
  return lrs;
}

HOOKFORGE_INLINE double monitored_score(const trainer_options& options,
                                        const epoch_scores& scores) {
  auto it = scores.find(options.monitor);
  if (it == scores.end()) {
    std::string names;
    for (const auto& [name, value] : scores) names += (names.empty() ? "" : ", ") + name;
    throw std::invalid_argument("Trainer: monitor '" + options.monitor +
                                "' is not a validation score (scores: " + names + ")");
  }
  return it->second;
}

HOOKFORGE_INLINE void step_scheduler(const trainer_options& options, const TrainerContext& ctx) {
  if (!options.scheduler) return;
  if (!options.scheduler->wants_metric())
    options.scheduler->step();
  else if (ctx.validated)
    options.scheduler->step(monitored_score(options, ctx.val_scores));
}

HOOKFORGE_INLINE void check_stop(const trainer_options& options, TrainerContext& ctx,
                                 bool runner_stop) {
  if (ctx.validated && options.stop &&
      options.stop->should_stop(monitored_score(options, ctx.val_scores)))
    ctx.request_stop("stop condition");
  if (runner_stop && ctx.stop_reason.empty()) ctx.request_stop("requested by a runner hook");
}

HOOKFORGE_INLINE double seconds_since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

HOOKFORGE_INLINE void record_epoch(fit_result& result, const TrainerContext& ctx,
                                   std::int64_t epoch,
                                   std::chrono::steady_clock::time_point started) {
  result.train_scores = ctx.train_scores;
  result.val_scores = ctx.val_scores;
  result.history.push_back({epoch, ctx.train_scores,
                            ctx.validated ? ctx.val_scores : epoch_scores{}, ctx.validated,
                            ctx.learning_rates, seconds_since(started)});
}

HOOKFORGE_INLINE state_map scores_state(const epoch_scores& scores) {
  state_map state;
  for (const auto& [name, value] : scores) state[name] = value;
  return state;
}

HOOKFORGE_INLINE epoch_scores scores_of_state(const state_map& state) {
  epoch_scores scores;
  for (const auto& [name, value] : state) scores[name] = value.toDouble();
  return scores;
}

HOOKFORGE_INLINE checkpoint_parts::checkpoint_parts(named_modules modules_to_save)
    : modules(std::move(modules_to_save)) {}
HOOKFORGE_INLINE checkpoint_parts::~checkpoint_parts() = default;
HOOKFORGE_INLINE void checkpoint_parts::add_state(const std::string& section, state_map state) {
  states.emplace_back(section, std::move(state));
}

HOOKFORGE_INLINE void write_checkpoint(const std::filesystem::path& path,
                                       const checkpoint_parts& parts) {
  checkpoint_writer out;
  for (const auto& [name, module] : parts.modules) out.add_module(name, *module);
  for (const auto& o : parts.optimizers) out.add_optimizer(o.name, *o.optimizer);
  for (const auto& [name, state] : parts.states) out.add_state(name, state);
  out.add_rng();
  out.save(path);
}

HOOKFORGE_INLINE void check_sections(const named_modules& modules,
                                     const std::vector<named_optimizer>& optimizers,
                                     std::vector<std::string> names) {
  auto add = [&](const std::string& name, std::string_view what) {
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw std::invalid_argument("Trainer: " + std::string(what) + " '" + name +
                                  "' would share its checkpoint section with another section "
                                  "of that name; give it another name");
    names.push_back(name);
  };
  for (const auto& [name, module] : modules) add(name, "the module");
  for (const auto& o : optimizers) {
    if (o.optimizer == nullptr)
      throw std::invalid_argument("Trainer: the training runner's optimizer '" + o.name +
                                  "' is null");
    add(o.name, "the optimizer");
  }
}

}  // namespace detail

}  // namespace hookforge
