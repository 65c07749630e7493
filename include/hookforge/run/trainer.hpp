// hookforge/run/trainer.hpp — the Trainer component of a config: the epoch loop over the
// configured runners, loaders and losses, with its own hooks.
//
//   trainer:
//     _target: Trainer
//     params:
//       model: ${ref:model}
//       training_runner: ${ref:training_runner}
//       validation_runner: ${ref:validation_runner}     # optional
//       train_loader: ${ref:loaders.train}
//       val_loader: ${ref:loaders.val}                   # with a validation runner, or
//       val_loaders: {set5: "${ref:loaders.set5}", urban: "${ref:loaders.urban}"}  # several,
//                                                         # scores "set5/PSNR", ...
//       loss: ${ref:loss}                                # training (TrainingEpochRunner) and
//       validation val_loss: ${ref:val_loss}                        # optional: validation's own
//       epochs: 10
//       scheduler: ${ref:scheduler}                      # optional
//       stop: {_target: ValidationLossDidNotImprove, params: {patience: 5}}   # optional
//       monitor: loss
//       hooks: [{_target: CheckpointSaver, params: {max_keep_ckpts: 3}}]
//
// Built, it holds a hookforge::Trainer over the training runner's concrete type (made by
// TrainingRunner::make_session, trainer_session.hpp), with its hooks attached: everything is
// checked before anything runs. fit() trains; load_checkpoint() restores a run that a
// CheckpointSaver saved, and fit() then continues it exactly. The work directory is
// settings().work_dir (hookforge-run: system.work_dir or --output).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/builder.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/hooks.hpp"
#include "hookforge/config/register.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/runtime/closest_names.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/core/runtime/runtime_hooks.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/hooks/checkpoint_saver.hpp"
#include "hookforge/hooks/hook_profiler.hpp"
#include "hookforge/hooks/sync_audit.hpp"
#include "hookforge/run/data_checks.hpp"
#include "hookforge/run/distributed.hpp"
#include "hookforge/run/field_flow.hpp"
#include "hookforge/run/loader.hpp"
#include "hookforge/run/loss.hpp"
#include "hookforge/run/model.hpp"
#include "hookforge/run/runners.hpp"
#include "hookforge/run/scheduler.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/run/trainer_session.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge::run {

struct trainer_config {
  std::shared_ptr<Model> model{};
  std::shared_ptr<TrainingRunner> training_runner{};
  std::shared_ptr<ValidationRunner> validation_runner{};
  std::shared_ptr<Loader> train_loader{};
  std::shared_ptr<Loader> val_loader{};
  std::map<std::string, std::shared_ptr<Loader>> val_loaders{};
  std::shared_ptr<Loss> loss{};
  std::shared_ptr<Loss> val_loss{};
  std::int64_t epochs = 1;
  std::int64_t val_interval = 1;
  std::int64_t val_interval_steps = 0;
  std::int64_t max_steps = -1;
  std::shared_ptr<lr_scheduler> scheduler{};
  std::shared_ptr<stop_condition> stop{};
  std::string monitor = "loss";
  trainer_hook_list hooks{};
};

/// What a field marked `.naming(validation_score)` names: EarlyStopping's monitor,
/// CheckpointSaver's save_best, the trainer's monitor. TrainerComponent::check_score_names
/// checks them once the run is built.
inline constexpr std::string_view validation_score = "a validation score";

/// What a trainer entry builds (see the top of this header).
class TrainerComponent {
 public:
  explicit TrainerComponent(trainer_config c) : config_(std::move(c)) {
    auto& c0 = config_;
    if (!c0.model) throw std::invalid_argument("Trainer: model must be given");
    if (!c0.training_runner) throw std::invalid_argument("Trainer: training_runner must be given");
    if (!c0.train_loader) throw std::invalid_argument("Trainer: train_loader must be given");
    const bool val_data = c0.val_loader || !c0.val_loaders.empty();
    if (c0.val_loader && !c0.val_loaders.empty())
      throw std::invalid_argument(
          "Trainer: val_loader and val_loaders are both given; give one (val_loaders: several, "
          "by name)");
    if (c0.validation_runner && !val_data)
      throw std::invalid_argument(
          "Trainer: val_loader (or val_loaders) must be given with a validation_runner");
    if (!c0.validation_runner && val_data)
      throw std::invalid_argument(std::string("Trainer: ") +
                                  (c0.val_loader ? "val_loader" : "val_loaders") +
                                  " is given but no validation_runner");
    // A metric that cannot score the smallest validation image fails now, not after an epoch.
    for (const auto& [name, loader] : validation_loaders())
      check_metrics_fit(loader->loader().dataset().underlying(), c0.validation_runner->metrics());
    session_inputs in;
    in.model = c0.model;
    in.validation = c0.validation_runner.get();
    in.train_loader = c0.train_loader;
    in.val_loader = c0.val_loader;
    in.val_loaders = c0.val_loaders;
    in.loss = c0.loss;
    in.val_loss = c0.val_loss ? c0.val_loss : c0.loss;
    if (c0.validation_runner && !in.val_loss)
      throw std::invalid_argument("Trainer: validation needs a loss (loss or val_loss)");
    in.options = trainer_options{
        .epochs = c0.epochs,
        .val_interval = c0.val_interval,
        .val_interval_steps = c0.val_interval_steps,
        .max_steps = c0.max_steps,
        .scheduler = c0.scheduler.get(),
        .stop = c0.stop.get(),
        .monitor = c0.monitor,
        .work_dir = settings().work_dir,
        .stop_token = settings().stop_token,
        // ranks stop at the same batch, agreed, where rank 0 saves it; else at the epoch's end
        .stop_mid_epoch = settings().world_size == 1 || stops_mid_epoch(),
        .agreement = stops_mid_epoch() ? settings().agreement : rank_agreement{}};
    session_ = c0.training_runner->make_session(in);
    session_->check_scheduler_length();  // a OneCycleLR too short for the run: now, not mid-run
    session_->attach(c0.hooks);
    // A HookProfiler or SyncAudit in the list times (names) the config-loaded hooks of the
    // components it names; --audit-syncs adds an audit of its own, printed after fit().
    auto audits = c0.hooks.instances_of<SyncAudit>();
    if (settings().audit_syncs && audits.empty()) {
      own_audit_ = std::make_unique<SyncAudit>(sync_audit_options{.print_at_end = false});
      time_hooks(*own_audit_, own_audit_->options().components);
    }
    for (const auto& profiler : c0.hooks.instances_of<HookProfiler>())
      time_hooks(*profiler, profiler->options().components);
    for (const auto& audit : audits) time_hooks(*audit, audit->options().components);
  }
  TrainerComponent(const TrainerComponent&) = delete;
  TrainerComponent& operator=(const TrainerComponent&) = delete;

  fit_result fit() {
    auto result = session_->fit();
    if (own_audit_ && settings().rank == 0) own_audit_->print();
    return result;
  }
  /// Restores the checkpoint at `path`. The scheduler goes on with the config's settings
  /// where the checkpoint's differ (a longer run's T_max: keep_configured_settings); each
  /// such setting is returned ("T_max 3 (the checkpoint's: 2)") for the run to say so.
  std::vector<std::string> load_checkpoint(const std::filesystem::path& path) {
    const state_map configured = config_.scheduler ? config_.scheduler->settings() : state_map{};
    session_->load_checkpoint(path);
    if (!config_.scheduler) return {};
    return keep_configured_settings(*config_.scheduler, configured);
  }
  void save_checkpoint(const std::filesystem::path& path) { session_->save_checkpoint(path); }
  std::string format_bindings() const { return session_->format_bindings(); }
  std::int64_t completed_epochs() const { return session_->completed_epochs(); }
  const trainer_config& config() const { return config_; }
  /// The test stage's scores: the validation runner over `loader` (the config's test section
  /// checks that there is one).
  epoch_scores test(Loader& loader) { return session_->test(loader); }

  /// Where this run's checkpoints and last_checkpoint are: its first CheckpointSaver's
  /// out_dir, else the work directory (where --resume looks).
  std::filesystem::path checkpoint_dir() const {
    for (const auto& saver : config_.hooks.instances_of<CheckpointSaver>())
      if (!saver->options().out_dir.empty()) return saver->options().out_dir;
    return settings().work_dir;
  }

  /// Whether a stop request ends the run at the next batch, saved there (a CheckpointSaver
  /// with save_last; several ranks, agreeing on the batch), rather than at the epoch's end.
  bool stops_mid_epoch() const {
    if (settings().world_size != 1 && !settings().agreement.stop) return false;  // not joined
    for (const auto& saver : config_.hooks.instances_of<CheckpointSaver>())
      if (saver->options().save_last) return true;
    return false;
  }

  /// The validation scores of this run: "loss", the validation loss's terms and the
  /// validation runner's metrics; none without a validation runner; nullopt where a loss
  /// says its terms only when it runs.
  std::optional<std::vector<std::string>> validation_scores() const {
    if (!config_.validation_runner) return std::vector<std::string>{};
    const auto& loss = config_.val_loss ? config_.val_loss : config_.loss;
    auto terms = loss ? loss->term_names() : std::nullopt;
    if (!terms) return std::nullopt;
    std::vector<std::string> scores{"loss"};
    scores.insert(scores.end(), terms->begin(), terms->end());
    for (auto& m : config_.validation_runner->metric_names()) scores.push_back(std::move(m));
    if (config_.val_loaders.empty()) return scores;
    std::vector<std::string> named;  // each set's, "set5/PSNR"
    for (const auto& [set, loader] : config_.val_loaders)
      for (const auto& score : scores) named.push_back(set + "/" + score);
    return named;
  }

  /// What hookforge-run checks once the run is built, before training: the score names
  /// (check_score_names) and, under `strict`, that no loader's dataset warned while it was
  /// built (a dangling link in an ImageFolder, ...): a config_error at that loader.
  void check_built_run(const config::builder& b, bool strict) {
    check_score_names(b, strict);
    if (strict) refuse_loader_warnings(b);
    fields_ = check_fields(b);
  }
  /// The batch fields check_built_run followed (hookforge-run --check prints them).
  const field_report& batch_fields() const { return fields_; }

  /// Every value of `b` that names a validation score (see validation_score) is one of
  /// validation_scores(): otherwise a warning at its key, which never happens silently at
  /// run time (EarlyStopping would skip stopping), or under `strict` a config_error.
  /// "auto" (the trainer's monitor, checked itself) and "" (none) pass.
  void check_score_names(const config::builder& b, bool strict) const {
    const auto scores = validation_scores();
    if (!scores) return;
    const std::string listed = scores->empty() ? std::string("none: the run does not validate")
                                               : hookforge::join_names(*scores, ", ");
    for (const auto& r : b.named_references()) {
      // a default is the class's own concern ("loss" without validation is no mistake)
      if (r.what != validation_score || !r.written || r.name.empty() || r.name == "auto") continue;
      if (std::find(scores->begin(), scores->end(), r.name) != scores->end()) continue;
      if (strict) {
        const std::vector<std::string_view> candidates(scores->begin(), scores->end());
        const auto closest = hookforge::closest_names(r.name, candidates).first;
        throw config::config_error(
            r.where, r.key, fmt::format("a validation score ({})", listed),
            fmt::format("'{}'", r.name),
            closest.empty() ? std::string() : "closest: " + hookforge::join_names(closest, ", "));
      }
      warn(
          fmt::format("{}:{}:{}: {}: '{}' is not a validation score of this run (scores: {}); "
                      "what it names is never found",
                      r.where.file, r.where.line, r.where.column, r.key, r.name, listed));
    }
  }

 private:
  void time_hooks(handler_timer& timer, const std::vector<std::string>& components) {
    for (const auto& component : components) session_->time_hooks(timer, component);
  }

  /// check_batch_fields over the training and the validation phase (field_flow.hpp).
  field_report check_fields(const config::builder& b) const {
    const auto trainer = b.doc().root().find("trainer");
    const auto params = trainer ? b.doc().resolve(*trainer).find("params") : std::nullopt;
    if (!params) return {};
    auto data = [](const std::shared_ptr<Loader>& l) -> const Dataset* {
      return l ? &l->loader().dataset().underlying() : nullptr;
    };
    const auto& c = config_;
    const std::string_view loss = c.val_loss ? "val_loss" : "loss";
    std::vector<phase_inputs> phases{{"training",
                                      {"train_loader", "training_runner", "model", "loss"},
                                      data(c.train_loader),
                                      c.model.get(),
                                      c.training_runner->name(),
                                      session_->batch_stages(true)}};
    std::vector<std::string> keys;  // "val_loader", or "val_loaders.<set>" for each set
    keys.reserve(std::max<std::size_t>(1, c.val_loaders.size()));
    for (const auto& [key, loader] : validation_loaders()) {
      keys.push_back(key);
      phases.push_back({key == "val_loader" ? "validation" : "validation on " + key.substr(12),
                        {keys.back(), "validation_runner", "model", loss},
                        c.validation_runner ? data(loader) : nullptr,
                        c.model.get(),
                        "ValidationEpochRunner",
                        session_->batch_stages(false)});
    }
    return check_batch_fields(b, b.doc().resolve(*params), phases);
  }

  /// A config_error at the trainer's train_loader or val_loader whose dataset warned.
  void refuse_loader_warnings(const config::builder& b) const {
    const auto trainer = b.doc().root().find("trainer");
    const auto params = trainer ? b.doc().resolve(*trainer).find("params") : std::nullopt;
    auto loaders = validation_loaders();
    loaders.emplace_back("train_loader", config_.train_loader);
    for (const auto& [key, loader] : loaders) {
      if (!loader) continue;
      const auto at = params ? detail::find_path(b.doc(), *params, key) : std::nullopt;
      refuse_dataset_warnings(loader->loader().dataset().underlying(),
                              at ? *at : (trainer ? *trainer : b.doc().root()));
    }
  }

  /// The validation loaders by their key under the trainer's params: "val_loader", or
  /// "val_loaders.<set>" for each of several.
  std::vector<std::pair<std::string, std::shared_ptr<Loader>>> validation_loaders() const {
    std::vector<std::pair<std::string, std::shared_ptr<Loader>>> out;
    if (config_.val_loader) out.emplace_back("val_loader", config_.val_loader);
    for (const auto& [set, loader] : config_.val_loaders)
      out.emplace_back("val_loaders." + set, loader);
    return out;
  }

  trainer_config config_;
  std::unique_ptr<SyncAudit> own_audit_;  // --audit-syncs; before session_, which times with it
  std::unique_ptr<session> session_;
  field_report fields_;
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(trainer, hookforge::run::TrainerComponent);
