// hookforge/torch/runners/trainer_checkpoint-inl.hpp — the Trainer's checkpoint parts, its
// module snapshots and its section check: included by trainer_checkpoint.hpp header-only,
// compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/utils.h>

#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/runners/trainer_checkpoint.hpp"

namespace hookforge::detail {

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

}  // namespace hookforge::detail
