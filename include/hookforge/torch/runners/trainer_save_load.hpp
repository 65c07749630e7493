// hookforge/torch/runners/trainer_save_load.hpp — Trainer::write_checkpoint and
// load_checkpoint: what a checkpoint gathers (the model's modules, the optimisers, the
// section table of trainer_checkpoint.hpp, the hooks' extra entries), and a load that is all
// or nothing. Definitions of members trainer.hpp declares; include trainer.hpp.
#pragma once

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "hookforge/core/points.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/trainer_checkpoint.hpp"

namespace hookforge {

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
void Trainer<Model, TrainRunner, ValRunner, Hooks...>::load_checkpoint(
    const std::filesystem::path& path)
  requires runners_ok
{
  checkpoint_reader in(path);
  load_plan plan(in);
  // Read and check: nothing changes until plan.apply().
  for (const auto& section : checkpoint_sections::table())
    section.plan(*this, plan, std::string(section.name));
  state_map extra = plan.read(std::string(checkpoint_sections::extra));
  auto require = [&](const std::string& section, std::string_view kind) {
    if (in.kind(section) != kind) plan.fail(section, "is not of kind '" + std::string(kind) + "'");
  };  // kind() names the file and the sections it has when one is missing
  const auto modules = detail::checkpoint_modules(*model_);
  for (const auto& [name, module] : modules) require(name, "module");
  // The optimisers' sections are there together, or not at all (saved with
  // checkpoint_content::optimizer = false: loading keeps the optimisers as they are).
  const auto optimizers = optimizers_of(*train_);
  const bool has_optimizers =
      std::any_of(optimizers.begin(), optimizers.end(),
                  [&](const named_optimizer& o) { return in.contains(o.name); });
  if (has_optimizers)
    for (const auto& o : optimizers) require(o.name, "optimizer");
  require("rng", "rng");

  // The reader checks a module before it copies anything. An optimiser cannot be put
  // back, so every optimiser is checked (type, groups, shapes) before any is loaded, and
  // they go last of what can fail; after them, only the RNG, whose section was checked above.
  for (const auto& [name, module] : modules) {
    auto before = std::make_shared<detail::module_snapshot>(*module);
    plan.add_step(
        name, [&in, name = name, module = module] { in.load_module(name, *module); },
        [before] { before->restore(); });
  }
  if (has_optimizers) {
    for (const auto& o : optimizers)
      plan.add_step(o.name, [&in, o] { in.check_optimizer(o.name, *o.optimizer); });
    for (const auto& o : optimizers)
      plan.add_step(o.name, [&in, o] { in.load_optimizer(o.name, *o.optimizer); });
  }
  plan.add_step("rng", [&] { in.load_rng(); });
  plan.apply();

  Ctx ctx = context();
  ctx.checkpoint_extra = &extra;
  hooks_.template fire<points::on_after_load_checkpoint>(ctx);
}

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
void Trainer<Model, TrainRunner, ValRunner, Hooks...>::write_checkpoint(
    const std::filesystem::path& path, checkpoint_content content) {
  // What cannot be saved is refused before the hooks prepare the model for saving. A
  // checkpoint without a module would resume with the weights it was not given: refused.
  if (detail::checkpoint_modules(*model_).empty())
    throw std::logic_error(
        "Trainer::save_checkpoint: the model is a callable without a torch::nn::Module, so "
        "the checkpoint would hold none of its weights; give the Trainer the module itself");
  saving_progress_ = progress_state();
  state_map extra;
  Ctx ctx = context();
  ctx.checkpoint_extra = &extra;
  hooks_.template fire<points::on_before_save_checkpoint>(ctx);

  detail::checkpoint_parts out(detail::checkpoint_modules(*model_));
  if (content.optimizer) out.optimizers = optimizers_of(*train_);
  for (const auto& section : checkpoint_sections::table())
    section.save(*this, out, std::string(section.name));
  out.add_state(std::string(checkpoint_sections::extra), extra);
  detail::write_checkpoint(path, out);
  ++checkpoints_written_;
  ctx.checkpoint_extra = nullptr;
  hooks_.template fire<points::on_after_save_checkpoint>(ctx);
}

}  // namespace hookforge
