// hookforge/torch/runners/trainer_checkpoint.hpp — what a Trainer's checkpoint is made of:
// its table of sections (trainer_sections: how each is saved and how a load plans it), the
// modules it holds, the parts it gathers and writes, the undo of a module's load, and the
// check that no two sections share a name.
//
// A checkpoint of the Trainer (trainer.hpp) holds, in file order: its modules (the model as
// "model", or the model's checkpoint_modules()), the training runner's optimisers, the table's
// sections (trainer, last_val_scores, scheduler, stop_condition, training_runner,
// validation_runner: each with its hooks' sections, io/persistence.hpp; epoch_in_progress
// when taken between two batches: trainer.hpp), "extra" and "rng".
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/nn/module.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/io/persistence.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/runners/epoch.hpp"

namespace hookforge::detail {

/// A module's parameters and buffers, copied (to the CPU, to spare the device's memory),
/// and put back: the undo of loading a module.
class module_snapshot {
 public:
  explicit module_snapshot(torch::nn::Module& module);
  void restore();

 private:
  void keep(const torch::Tensor& t);
  std::vector<std::pair<torch::Tensor, torch::Tensor>> saved_;
};

/// A checkpoint's modules, by section (checkpoint_modules below).
using named_modules = std::vector<std::pair<std::string, torch::nn::Module*>>;

/// Scores as a state section, and back.
HOOKFORGE_INLINE state_map scores_state(const epoch_scores& scores);
HOOKFORGE_INLINE epoch_scores scores_of_state(const state_map& state);
/// The checkpoint's module and optimiser sections are distinct from each other and from
/// the trainer's own sections; no optimiser is null. std::invalid_argument otherwise.
HOOKFORGE_INLINE void check_sections(const named_modules& modules,
                                     const std::vector<named_optimizer>& optimizers,
                                     std::vector<std::string> reserved);

/// A Trainer's checkpoint as the Trainer gathers it, sections in file order, for
/// write_checkpoint below. Its members are compiled once (the checkpoint writer, the state
/// maps' copies), not generated again in every TU that instantiates a Trainer.
struct checkpoint_parts {
  named_modules modules;
  std::vector<named_optimizer> optimizers;  ///< empty when the optimisers are left out
  std::vector<std::pair<std::string, state_map>> states;

  explicit checkpoint_parts(named_modules modules_to_save);
  checkpoint_parts(const checkpoint_parts&) = delete;
  ~checkpoint_parts();
  void add_state(const std::string& section, state_map state);
};
/// The modules, the optimisers, the states and the RNG, atomically to `path`
/// (checkpoint_writer::save: the previous file stays as it was if this throws).
HOOKFORGE_INLINE void write_checkpoint(const std::filesystem::path& path,
                                       const checkpoint_parts& parts);

/// The modules a trainer checkpoint holds, by section: the model's checkpoint_modules()
/// (gan_models: "generator", "discriminator"), else the model as "model" when it is a module.
template <class Model>
named_modules checkpoint_modules(Model& model) {
  if constexpr (requires { model.checkpoint_modules(); }) {
    return model.checkpoint_modules();
  } else {
    if (auto* module = module_of(model)) return {{"model", module}};
    return {};
  }
}

/// The checkpoint's sections beside the modules, the optimisers, "extra" (what hooks add
/// at on_before_save_checkpoint) and the RNG, in the order they are written and loaded:
/// saving, loading and the check that no module or optimiser takes one's name all read
/// this one table. The Trainer befriends it: each entry reaches the part it saves.
template <class Trainer>
struct trainer_sections {
  struct section {
    std::string_view name;
    void (*save)(Trainer&, checkpoint_parts&, const std::string& name);
    void (*plan)(Trainer&, load_plan&, const std::string& name);
  };
  static constexpr std::string_view extra = "extra";

  static std::span<const section> table() {
    static constexpr section entries[] = {
        {"trainer",
         [](Trainer& t, checkpoint_parts& out, const std::string& name) {
           out.add_state(name, t.state_dict());
           save_hooks(out, name, t.hooks_);
         },
         [](Trainer& t, load_plan& plan, const std::string& name) {
           plan.add_state(
               name, plan.read(name, {"completed_epochs"}), [&t] { return t.state_dict(); },
               [&t](const state_map& s) { t.load_state_dict(s); });
           plan.add_hooks(t.hooks_, name);
         }},
        {"last_val_scores",  // only once a validation ran
         [](Trainer& t, checkpoint_parts& out, const std::string& name) {
           if (!t.last_val_scores_.empty()) out.add_state(name, scores_state(t.last_val_scores_));
         },
         [](Trainer& t, load_plan& plan, const std::string& name) {
           plan.add_state(
               name, plan.reader().contains(name) ? plan.read(name) : state_map{},
               [&t] { return scores_state(t.last_val_scores_); },
               [&t](const state_map& s) { t.last_val_scores_ = scores_of_state(s); });
         }},
        {"scheduler",
         [](Trainer& t, checkpoint_parts& out, const std::string& name) {
           if (t.options_.scheduler) out.add_state(name, t.options_.scheduler->state_dict());
         },
         [](Trainer& t, load_plan& plan, const std::string& name) {
           if (t.options_.scheduler) plan.add_component_state(name, *t.options_.scheduler);
         }},
        {"stop_condition",
         [](Trainer& t, checkpoint_parts& out, const std::string& name) {
           if (t.options_.stop) out.add_state(name, t.options_.stop->state_dict());
         },
         [](Trainer& t, load_plan& plan, const std::string& name) {
           if (t.options_.stop) plan.add_component_state(name, *t.options_.stop);
         }},
        {"training_runner",
         [](Trainer& t, checkpoint_parts& out, const std::string& name) {
           save_component(out, name, *t.train_);
         },
         [](Trainer& t, load_plan& plan, const std::string& name) {
           plan_component(plan, name, *t.train_);
         }},
        {"validation_runner",
         [](Trainer& t, checkpoint_parts& out, const std::string& name) {
           if constexpr (Trainer::validates) save_component(out, name, *t.val_);
         },
         [](Trainer& t, load_plan& plan, const std::string& name) {
           if constexpr (Trainer::validates) plan_component(plan, name, *t.val_);
         }},
        {"epoch_in_progress",  // only in a checkpoint taken between two batches
         [](Trainer& t, checkpoint_parts& out, const std::string& name) {
           if (!t.saving_progress_.empty()) out.add_state(name, t.saving_progress_);
         },
         [](Trainer& t, load_plan& plan, const std::string& name) {
           plan.add_state(
               name,
               plan.reader().contains(name)
                   ? plan.read(name, {"epoch", "batches", "learning_rates"})
                   : state_map{},
               [&t] { return t.resume_state_; }, [&t](const state_map& s) { t.resume_state_ = s; });
         }},
    };
    return entries;
  }

  /// The names no module or optimiser may take: "extra", "rng" and the table's.
  static std::vector<std::string> reserved() {
    std::vector<std::string> names{std::string(extra), "rng"};
    for (const auto& s : table()) names.emplace_back(s.name);
    return names;
  }
};

}  // namespace hookforge::detail

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/trainer_checkpoint-inl.hpp"
#endif
