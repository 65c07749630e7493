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
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hookforge/core/batch_stages.hpp"
#include "hookforge/core/runtime/field_flow.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/torch/data/fields_of.hpp"
#include "hookforge/torch/data/validation_sets.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge {

namespace detail {

/// The message for `miss`, a read of a hook on `runner` that the `phase` batch lacks.
inline std::string missing_field_text(const missing_field& miss, std::string_view runner,
                                      std::string_view phase) {
  const auto& h = *miss.handler;
  const auto closest = closest_fields(miss.field, miss.present);
  std::string out = "Trainer: " + h.hook + "::" + h.method + " reads the batch field '" +
                    miss.field + "' at " + std::string(h.point) + " of " + std::string(runner) +
                    ", which the " + std::string(phase) + " batch does not have there (fields: " +
                    (miss.present.empty() ? std::string("none") : join_names(miss.present, ", ")) +
                    ")";
  if (!closest.empty()) out += "; closest: " + join_names(closest, ", ");
  return out +
         ". Provide it (the dataset, the model or an earlier hook's writes<>) or bind the "
         "handler later";
}

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
    const batch_flow flow(batch_stages_of<Runner>,
                          {dataset_fields_of(loader), output_fields_of(model)}, uses);
    if (const auto miss = first_missing_field(flow, uses))
      throw std::invalid_argument(missing_field_text(*miss, runner_name<Runner>(), phase));
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
