// hookforge/hooks/loss_logger.hpp — LossLogger: a console line per epoch, and the epoch's
// scores in metrics.csv and metrics.jsonl; optionally a row every `interval` training steps.
//
//   hookforge::LossLogger logger({.interval = 50});   // one instance, shared by ref
//   hookforge::TrainingEpochRunner train(sgd, {}, hookforge::ref(logger));   // step rows
//   hookforge::Trainer trainer(model, train, val, {.epochs = 10, .work_dir = "runs/a"},
//                              hookforge::ref(logger));                      // epoch rows
//
//   epoch 3/10 | train loss 0.01234 | val loss 0.02345 psnr 28.13 | lr 0.001 | 1.52 s
//   epoch 4/10 step 3500 | val loss 0.02311 psnr 28.19      (a validation between batches:
//                                                           trainer_options::val_interval_steps;
//                                                           its scores are in the files at the
//                                                           epoch's end only if it validates)
//
// Files, in out_dir (default: the trainer's work_dir):
//   metrics.csv / metrics.jsonl  one row per epoch: epoch (1-based), train_<score> for every
//                                training score, val_<score> for every validation score of
//                                an epoch that validated, lr (lr_0, lr_1, ... for several
//                                parameter groups: the rates used in the epoch), epoch_seconds;
//                                metrics.jsonl also the epoch's figures other hooks report
//                                (TrainerContext::epoch_figures: HookProfiler's hook_ms/...)
//   steps.csv / steps.jsonl      with interval > 0: every `interval` training batches, epoch,
//                                batch (1-based in the epoch), step (1-based over the run),
//                                loss (the batch's total) and the learning rates
// The step rows read the loss on the host (hookforge::host_read) only on those batches.
//
// Resume: the first write of a LossLogger drops the rows of epochs after the epochs
// completed when its run started, and the step rows after the steps done then (rewriting
// the files atomically), so a run resumed from a checkpoint — at an epoch's end or between
// two batches — has each epoch and step once; a fresh run starts the files anew. A row cut
// short by a crash is dropped too.
// Columns: the CSV header is written once, from the first row. A row with a column the
// header lacks (validation every N epochs: no val_ columns before the first validation)
// rewrites the file, atomically, with the widened header, earlier rows keeping empty
// cells; the file stays one rectangular table. JSONL rows hold the columns they have.
// Non-finite values are nan/inf in the CSV and null in the JSONL (JSON has no NaN).
// Priority BELOW_NORMAL: after the hooks that change scores, before EarlyStopping and
// CheckpointSaver, so an epoch's row is on disk before its checkpoint.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/hooks/detail/metrics_table.hpp"
#include "hookforge/torch/data/host_read.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/torch/runners/epoch.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

namespace hookforge {

/// LossLogger's options.
struct loss_logger_options {
  std::int64_t interval = 0;           ///< a step row every N training batches; 0: none
  std::filesystem::path out_dir = {};  ///< empty: the trainer's work_dir ("." without a trainer)
  std::ostream* stream = &std::cout;   ///< the console summary; nullptr: none
};

namespace detail::logger {

/// Learning rates as cells: "lr" for one parameter group, "lr_0", "lr_1", ... for several.
inline void add_learning_rates(metrics_table::row& r, const std::vector<double>& lrs) {
  for (std::size_t i = 0; i < lrs.size(); ++i)
    r.push_back({lrs.size() == 1 ? std::string("lr") : fmt::format("lr_{}", i), lrs[i]});
}

}  // namespace detail::logger

class LossLogger {
 public:
  static constexpr int priority = priority::BELOW_NORMAL;

  explicit LossLogger(loss_logger_options options = {}) : options_(std::move(options)) {
    if (options_.interval < 0)
      throw std::invalid_argument(fmt::format(
          "LossLogger: interval must be >= 0 (0: no step rows), got {}", options_.interval));
  }

  /// At on_training_began: the trainer's work_dir is the default folder.
  void log(TrainerContext& ctx, points::on_training_began) { trainer_dir_ = ctx.work_dir; }

  /// At on_trainer_epoch_finished: the console line, and the epoch's row.
  void log(TrainerContext& ctx, points::on_trainer_epoch_finished) {
    trainer_dir_ = ctx.work_dir;
    if (options_.stream) *options_.stream << summary(ctx) << std::endl;
    detail::metrics_table::row r{{"epoch", static_cast<double>(ctx.completed_epochs), true}};
    for (const auto& [name, value] : ctx.train_scores) r.push_back({"train_" + name, value});
    if (ctx.validated)
      for (const auto& [name, value] : ctx.val_scores) r.push_back({"val_" + name, value});
    detail::logger::add_learning_rates(r, ctx.learning_rates);
    r.push_back({"epoch_seconds", ctx.epoch_seconds});
    for (const auto& [name, value] : ctx.epoch_figures)
      r.push_back({.name = name, .value = value, .in_csv = false});
    write(epochs_, r, ctx.epoch, ctx.global_step);
  }

  /// At on_trainer_validation_finished (a validation between batches): its console line.
  void log(TrainerContext& ctx, points::on_trainer_validation_finished) {
    if (!options_.stream) return;
    std::string line = ctx.total_epochs > 0
                           ? fmt::format("epoch {}/{}", ctx.epoch + 1, ctx.total_epochs)
                           : fmt::format("epoch {}", ctx.epoch + 1);
    line += fmt::format(" step {} | val", ctx.global_step);
    for (const auto& [name, value] : ctx.val_scores) line += fmt::format(" {} {:.4g}", name, value);
    *options_.stream << line << std::endl;
  }

  /// At a training runner's on_post_step: every `interval` batches, the step's row. Any
  /// runner whose context has the counters (epoch_counters) and the step's `loss` tensor
  /// gets these rows; the learning rates come from its `optimizer`, when it has one.
  /// What the step rows read from a context: the epoch counters and the step's `loss`
  /// (the first it lacks; "" for none). The Trainer's rows take TrainerContext itself.
  template <class C>
  static consteval std::string_view context_lacks() {
    if constexpr (std::is_same_v<C, TrainerContext>)
      return "";
    else
      return step_row_lacks<C>();
  }

  template <context_for<LossLogger> C>
    requires(!std::is_same_v<C, TrainerContext>)
  void log(C& ctx) {
    if (options_.interval == 0 || (ctx.global_step + 1) % options_.interval != 0 ||
        !ctx.loss.defined())
      return;
    detail::metrics_table::row r{{"epoch", static_cast<double>(ctx.epoch + 1), true},
                                 {"batch", static_cast<double>(ctx.batch_idx + 1), true},
                                 {"step", static_cast<double>(ctx.global_step + 1), true},
                                 {"loss", host_read(ctx.loss)}};
    detail::logger::add_learning_rates(r, step_learning_rates(ctx));
    write(steps_, r, ctx.epoch, ctx.global_step);
  }

  /// The folder the files go to.
  std::filesystem::path directory() const {
    if (!options_.out_dir.empty()) return options_.out_dir;
    return trainer_dir_.empty() ? std::filesystem::path(".") : trainer_dir_;
  }

  /// The console line for an epoch.
  static std::string summary(const TrainerContext& ctx) {
    std::string line = ctx.total_epochs > 0
                           ? fmt::format("epoch {}/{}", ctx.completed_epochs, ctx.total_epochs)
                           : fmt::format("epoch {}", ctx.completed_epochs);
    auto scores = [](std::string_view label, const epoch_scores& s) {
      std::string out = fmt::format(" | {}", label);
      for (const auto& [name, value] : s) out += fmt::format(" {} {:.4g}", name, value);
      return out;
    };
    if (!ctx.train_scores.empty()) line += scores("train", ctx.train_scores);
    if (ctx.validated && !ctx.val_scores.empty()) line += scores("val", ctx.val_scores);
    if (!ctx.learning_rates.empty()) {
      line += " | lr";
      for (std::size_t i = 0; i < ctx.learning_rates.size(); ++i)
        line += fmt::format("{}{:.4g}", i ? ", " : " ", ctx.learning_rates[i]);
    }
    return line + fmt::format(" | {:.2f} s", ctx.epoch_seconds);
  }

  const loss_logger_options& options() const { return options_; }

  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(log, points::on_training_began, points::on_trainer_validation_finished,
                           points::on_trainer_epoch_finished, points::on_post_step));

 private:
  /// The first write drops what a resumed run is about to write again: the rows of
  /// epochs after `completed` (the epochs completed when this run started) and the step
  /// rows after `steps` (the steps done before the one being written).
  void write(detail::metrics_table::table& t, const detail::metrics_table::row& r,
             std::int64_t completed, std::int64_t steps) {
    const auto dir = directory();
    if (!started_) {
      std::filesystem::create_directories(dir);
      epochs_.trim(dir, "epoch", completed);
      steps_.trim(dir, "step", steps);
      started_ = true;
    }
    t.append(dir, r);
  }

  loss_logger_options options_;
  std::filesystem::path trainer_dir_;
  detail::metrics_table::table epochs_{"metrics"};
  detail::metrics_table::table steps_{"steps"};
  bool started_ = false;
};

}  // namespace hookforge
