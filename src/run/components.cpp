// The components a run's config can name: the training runners (TrainingEpochRunner,
// GANTrainingRunner), the validation runner and the Trainer, each taking its hooks from
// the config. Instantiates the hookforge::Trainer for each pair of runner types.
// link_components() is called by hookforge::run::main (see registrations.hpp).
#include <algorithm>

#include "hookforge/run/field_flow.hpp"
#include "hookforge/run/registrations.hpp"
#include "hookforge/run/runners.hpp"
#include "hookforge/run/trainer.hpp"
#include "hookforge/run/values.hpp"
#include "hookforge/torch/data/validation_sets.hpp"

namespace cfg = hookforge::config;
namespace run = hookforge::run;

HOOKFORGE_REGISTER_AS(training_runner, "TrainingEpochRunner", run::epoch_training_component<>,
                      cfg::options<run::training_config>(
                          cfg::field("optimizer", &run::training_config::optimizer, cfg::required),
                          cfg::field("gradient_accumulation_steps",
                                     &run::training_config::gradient_accumulation_steps),
                          cfg::field("mixed_precision", &run::training_config::mixed_precision),
                          cfg::field("metrics", &run::training_config::metrics),
                          cfg::field("hooks", &run::training_config::hooks)));

#define HOOKFORGE_RUN_GAN_FIELDS                                                       \
  cfg::options<run::gan_config>(                                                       \
      cfg::field("discriminator", &run::gan_config::discriminator, cfg::required),     \
      cfg::field("d_optimizer", &run::gan_config::d_optimizer, cfg::required),         \
      cfg::field("g_optimizer", &run::gan_config::g_optimizer, cfg::required),         \
      cfg::field("d_loss", &run::gan_config::d_loss, cfg::required),                   \
      cfg::field("g_loss", &run::gan_config::g_loss, cfg::required),                   \
      cfg::field("step_ratio", &run::gan_config::step_ratio),                          \
      cfg::field("mixed_precision", &run::gan_config::mixed_precision),                \
      cfg::field("real_field", &run::gan_config::real_field).naming(run::batch_field), \
      cfg::field("fake_field", &run::gan_config::fake_field).naming(run::batch_field), \
      cfg::field("discriminator_fields", &run::gan_config::discriminator_fields)       \
          .naming(run::batch_field),                                                   \
      cfg::field("d_real_for_g", &run::gan_config::d_real_for_g),                      \
      cfg::field("metrics", &run::gan_config::metrics),                                \
      cfg::field("hooks", &run::gan_config::hooks))
HOOKFORGE_REGISTER_AS(training_runner, "GANTrainingRunner", run::GANRunnerComponent,
                      HOOKFORGE_RUN_GAN_FIELDS);
HOOKFORGE_REGISTER_AS(training_runner, "GANRunner", run::GANRunnerComponent,
                      HOOKFORGE_RUN_GAN_FIELDS);
#undef HOOKFORGE_RUN_GAN_FIELDS

HOOKFORGE_REGISTER_AS(validation_runner, "ValidationEpochRunner", run::ValidationRunner,
                      cfg::options<run::validation_config>(
                          cfg::field("mixed_precision", &run::validation_config::mixed_precision),
                          cfg::field("metrics", &run::validation_config::metrics),
                          cfg::field("hooks", &run::validation_config::hooks)));

HOOKFORGE_REGISTER_AS(
    trainer, "Trainer", run::TrainerComponent,
    cfg::options<run::trainer_config>(
        cfg::field("model", &run::trainer_config::model, cfg::required),
        cfg::field("training_runner", &run::trainer_config::training_runner, cfg::required),
        cfg::field("validation_runner", &run::trainer_config::validation_runner),
        cfg::field("train_loader", &run::trainer_config::train_loader, cfg::required),
        cfg::field("val_loader", &run::trainer_config::val_loader),
        cfg::field("val_loaders", &run::trainer_config::val_loaders)
            .check(
                [](const decltype(run::trainer_config::val_loaders)& sets) {
                  return std::ranges::all_of(
                      sets, [](const auto& set) { return hookforge::is_set_name(set.first); });
                },
                "loaders by set name, each name non-empty and without '/' (its scores are "
                "\"<name>/<score>\")"),
        cfg::field("loss", &run::trainer_config::loss),
        cfg::field("val_loss", &run::trainer_config::val_loss),
        // Checked here, before a scheduler built later reads it through ${trainer.params.epochs}
        // and is blamed for it (CosineAnnealingLR's T_max).
        cfg::field("epochs", &run::trainer_config::epochs)
            .check([](const std::int64_t& n) { return n >= 0; }, "a number of epochs >= 0"),
        cfg::field("val_interval", &run::trainer_config::val_interval)
            .check([](const std::int64_t& n) { return n >= 0; }, "a number of epochs >= 0"),
        cfg::field("val_interval_steps", &run::trainer_config::val_interval_steps)
            .check([](const std::int64_t& n) { return n >= 0; },
                   "a number of optimiser updates >= 0 (0: validate at epochs' ends only)"),
        cfg::field("max_steps", &run::trainer_config::max_steps)
            .check([](const std::int64_t& n) { return n >= -1; },
                   "-1 (no limit) or a number of optimiser updates >= 0"),
        cfg::field("scheduler", &run::trainer_config::scheduler),
        cfg::field("stop", &run::trainer_config::stop),
        cfg::field("monitor", &run::trainer_config::monitor).naming(run::validation_score),
        cfg::field("hooks", &run::trainer_config::hooks)));

void hookforge::run::detail::link_components() {}
