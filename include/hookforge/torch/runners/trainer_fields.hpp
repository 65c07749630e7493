// hookforge/torch/runners/trainer_fields.hpp — fit()'s check before training that each runner's
// hooks read only batch fields their batch has: the fields the loaders' datasets and the model
// say, followed point by point through the runner's batch_stages and its hooks' writes
// (core/runtime/field_flow.hpp). A field that is not there is an error naming the hook, the
// handler, the field, the point and what the batch holds there, before the first batch
// rather than an epoch later. What the data or the model does not say is not checked; a runner
// that does not say what its batch holds where is warned of.
// Definitions of members trainer.hpp declares; include trainer.hpp.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/build_mode.hpp"
#include "hookforge/core/fields.hpp"
#include "hookforge/core/runtime/field_flow.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/torch/data/fields_of.hpp"
#include "hookforge/torch/data/validation_sets.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge {

namespace detail {

/// Throws for the first read in `uses` (handlers bound on `runner`) that the `phase` batch
/// lacks, the batch followed through `stages` from what `data` says (trainer_fields-inl.hpp).
HOOKFORGE_INLINE void check_field_reads(std::string_view phase, std::string_view runner,
                                        std::span<const point_batch> stages, phase_data data,
                                        std::span<const bound_fields> uses);

/// Throws for the first read of `runner`'s hooks that its batch over `loader` lacks.
template <class Runner, class Loader, class Model>
void check_phase_fields(std::string_view phase, Runner& runner, const Loader& loader,
                        Model& model) {
  if constexpr (requires { runner.hooks().field_uses(); }) {
    const auto uses = runner.hooks().field_uses();
    if (std::none_of(uses.begin(), uses.end(), [](const auto& u) { return !u.reads.empty(); }))
      return;
    if constexpr (!declares_batch_stages_v<Runner>) {
      warn("Trainer: " + std::string(runner_name<Runner>()) +
           " does not say what its batch holds where (batch_stages, docs/concepts.md), so the "
           "batch fields its hooks read are not checked before training");
      return;
    }
    check_field_reads(phase, runner_name<Runner>(), batch_stages_of<Runner>,
                      {dataset_fields_of(loader), output_fields_of(model)}, uses);
  }
}

}  // namespace detail

template <class Model, class TrainRunner, class ValRunner, class... Hooks>
template <class TrainLoader, class ValLoader>
void Trainer<Model, TrainRunner, ValRunner, Hooks...>::check_batch_fields(
    const TrainLoader& train_loader, const ValLoader& val_loader) {
  auto& model = detail::validation_model(*model_);  // a GAN's generator makes the output
  detail::check_phase_fields("training", *train_, train_loader, model);
  if constexpr (validates) {
    if constexpr (requires { val_loader.begin()->loader; }) {  // validation_sets
      for (const auto& set : val_loader)
        detail::check_phase_fields("validation on " + set.name, *val_, *set.loader, model);
    } else {
      detail::check_phase_fields("validation", *val_, val_loader, model);
    }
  }
}

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/trainer_fields-inl.hpp"
#endif
