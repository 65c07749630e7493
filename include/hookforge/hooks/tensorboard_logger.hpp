// hookforge/hooks/tensorboard_logger.hpp — TensorBoardLogger: the run's scores, losses and
// learning rates, validation images and the config, in TensorBoard event files.
//
//   hookforge::TensorBoardLogger board({.interval = 50, .images = 4});  // one instance, by ref
//   hookforge::TrainingEpochRunner train(adam, {}, hookforge::ref(board));     // step losses
//   hookforge::ValidationEpochRunner validate({}, hookforge::ref(board));      // images
//   hookforge::Trainer trainer(model, train, validate, {.work_dir = "runs/a"},
//                              hookforge::ref(board));                         // epoch scalars
//   // then: tensorboard --logdir runs/a/tensorboard
//
// What it writes, in out_dir (default: <the trainer's work_dir>/tensorboard), all on one
// x axis, the global step (training batches done), as Lightning and MMEngine plot:
//   train/<score>, val/<score>   each epoch's means (val: epochs that validated), at the
//                                step the epoch ended; the names of metrics.csv's columns
//                                with "/" for the first "_"; val also at each validation
//                                between batches (trainer_options::val_interval_steps), at
//                                its step
//   lr (lr/0, lr/1, ... for several parameter groups), epoch_seconds, epoch, and the
//                                epoch's figures other hooks report (HookProfiler's
//                                hook_ms/<hook>.<method>@<point>: mean ms per call)
//   step/loss, step/lr           with interval > 0: every `interval` training batches, the
//                                batch's loss and learning rates (steps.csv's rows)
//   val/<field>/<i>              with images > 0: the first `images` validation samples'
//                                `image_fields` (SR: input, output, target), each validation
//   config                       the run's config, in the Text tab (hookforge-run gives it)
// The step rows read the loss on the host (hookforge::host_read) only on those batches;
// images cost one host copy per field of the batches that hold the shown samples.
//
// Files: each run (and each resume) appends to a new event file, named to load after
// the folder's earlier ones. It begins with TensorBoard's restart marker (a SessionLog
// START at the first step this run writes), on which TensorBoard's reader discards what
// earlier files logged from that step on: a run resumed from a checkpoint shows each step
// once, whatever the crashed run wrote after its checkpoint; a fresh run over an old
// folder replaces it. Records are appended with one write(2) each and never rewritten; a
// crash in the middle of one leaves it cut short at the file's end, where the reader
// stops reading that file (detail/tensorboard_events.hpp).
// Asked for step scalars or images but never fired by a training or validation runner, it
// says so once, at the first epoch's end (hookforge::warn): the usual slip is attaching it
// to the Trainer alone.
// Priority BELOW_NORMAL, as LossLogger: after the hooks that change scores.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/hooks/detail/image_pixels.hpp"
#include "hookforge/hooks/detail/tensorboard_events.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/host_read.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/torch/runners/trainer_types.hpp"

namespace hookforge {

struct tensorboard_logger_options {
  std::int64_t interval = 0;           ///< step/loss and step/lr every N training batches; 0: none
  std::filesystem::path out_dir = {};  ///< empty: <the trainer's work_dir>/tensorboard
  std::int64_t images = 0;             ///< validation samples shown at each validation; 0: none
  std::vector<std::string> image_fields = {"input", "output", "target"};  ///< the entry's fields
  std::pair<double, double> value_range = {0.0, 1.0};  ///< [low, high] of the images: 0…255
  std::string config_text = {};  ///< shown in the Text tab under "config" (empty: none)
};

class TensorBoardLogger {
 public:
  static constexpr int priority = priority::BELOW_NORMAL;

  explicit TensorBoardLogger(tensorboard_logger_options options = {})
      : options_(std::move(options)) {
    if (options_.interval < 0)
      throw std::invalid_argument(
          fmt::format("TensorBoardLogger: interval must be >= 0 (0: no step scalars), got {}",
                      options_.interval));
    if (options_.images < 0)
      throw std::invalid_argument(
          fmt::format("TensorBoardLogger: images must be >= 0 (0: none), got {}", options_.images));
    if (options_.images > 0 && options_.image_fields.empty())
      throw std::invalid_argument(
          "TensorBoardLogger: image_fields must name at least one field when images > 0, got none");
    if (auto problem = detail::hooks::value_range_problem(options_.value_range); !problem.empty())
      throw std::invalid_argument("TensorBoardLogger: " + problem);
  }

  /// At on_training_began: the run's first step, where this run's file takes over.
  void log(TrainerContext& ctx, points::on_training_began) {
    trainer_dir_ = ctx.work_dir;
    open(ctx.global_step);
  }

  /// At on_trainer_epoch_finished: the epoch's scalars and the validation's images.
  void log(TrainerContext& ctx, points::on_trainer_epoch_finished) {
    trainer_dir_ = ctx.work_dir;
    open(ctx.global_step);
    const auto step = ctx.global_step;
    for (const auto& [name, value] : ctx.train_scores) scalar(step, "train/" + name, value);
    if (ctx.validated)
      for (const auto& [name, value] : ctx.val_scores) scalar(step, "val/" + name, value);
    learning_rates(step, "lr", ctx.learning_rates);
    scalar(step, "epoch_seconds", ctx.epoch_seconds);
    scalar(step, "epoch", static_cast<double>(ctx.completed_epochs));
    for (const auto& [name, value] : ctx.epoch_figures) scalar(step, name, value);
    if (!checked_attachment_) warn_if_unattached(ctx);
    for (const auto& image : pending_images_)
      file_->append(detail::tensorboard::image_event(now(), step, image.tag, image.height,
                                                     image.width, image.channels, image.png));
    pending_images_.clear();
  }

  /// At on_trainer_validation_finished (a validation between batches): its scores.
  void log(TrainerContext& ctx, points::on_trainer_validation_finished) {
    trainer_dir_ = ctx.work_dir;
    open(ctx.global_step);
    for (const auto& [name, value] : ctx.val_scores) scalar(ctx.global_step, "val/" + name, value);
  }

  /// What the runner handlers read from a context: the epoch counters, and on a training
  /// context the step's `loss`, on another the batch's `entry` (the first it lacks).
  template <class C>
  static consteval std::string_view context_lacks() {
    if constexpr (std::is_same_v<C, TrainerContext>) return "";
    if (auto lacks = epoch_counters_lacks<C>(); !lacks.empty()) return lacks;
    if constexpr (updates_parameters<C>) {
      if constexpr (!requires(C& c) { torch::Tensor(c.loss); }) return "loss (a tensor)";
    } else if constexpr (!requires(C& c) { static_cast<const Entry&>(c.entry); }) {
      return "entry (an Entry)";
    }
    return "";
  }

  /// At a runner's on_post_step: a training runner's step scalars every `interval` batches;
  /// an evaluating runner's first `images` samples, written with the epoch's scalars.
  template <context_for<TensorBoardLogger> C>
    requires(!std::is_same_v<C, TrainerContext>)
  void log(C& ctx) {
    if constexpr (updates_parameters<C>)
      log_step(ctx);
    else
      collect_images(ctx);
  }

  /// The folder the event files go to.
  std::filesystem::path directory() const {
    if (!options_.out_dir.empty()) return options_.out_dir;
    return (trainer_dir_.empty() ? std::filesystem::path(".") : trainer_dir_) / "tensorboard";
  }
  /// This run's event file (empty before the first write).
  std::filesystem::path file() const { return file_ ? file_->path() : std::filesystem::path(); }
  const tensorboard_logger_options& options() const { return options_; }

  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(log, points::on_training_began, points::on_trainer_validation_finished,
                           points::on_trainer_epoch_finished, points::on_post_step));

 private:
  struct image {
    std::string tag;
    std::int64_t height, width, channels;
    std::string png;
  };

  static double now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  /// The file, created at the first write; `steps_done`: the training steps before it.
  void open(std::int64_t steps_done) {
    if (file_) return;
    const double wall = now();
    file_ = std::make_shared<detail::tensorboard::event_file>(directory(), wall);
    file_->append(detail::tensorboard::session_start_event(wall, steps_done + 1));
    if (!options_.config_text.empty()) {
      std::string markdown;  // indented: a code block, shown as written
      std::string_view rest = options_.config_text;
      while (!rest.empty()) {
        const auto end = rest.find('\n');
        markdown += "    " + std::string(rest.substr(0, end)) + "\n";
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      }
      file_->append(detail::tensorboard::text_event(wall, steps_done, "config", markdown));
    }
  }

  void scalar(std::int64_t step, const std::string& tag, double value) {
    file_->append(detail::tensorboard::scalar_event(now(), step, tag, static_cast<float>(value)));
  }

  /// "<tag>" for one parameter group, "<tag>/0", "<tag>/1", ... for several.
  void learning_rates(std::int64_t step, std::string_view tag, const std::vector<double>& lrs) {
    for (std::size_t i = 0; i < lrs.size(); ++i)
      scalar(step, lrs.size() == 1 ? std::string(tag) : fmt::format("{}/{}", tag, i), lrs[i]);
  }

  /// Once, at the first epoch's end: asked for step scalars or images, but not attached
  /// where they come from (the same instance goes to the runners by hookforge::ref).
  void warn_if_unattached(const TrainerContext& ctx) {
    checked_attachment_ = true;
    if (options_.interval > 0 && !saw_training_)
      warn(
          fmt::format("TensorBoardLogger: interval is {}, but no training runner fired it, so "
                      "there are no step scalars: attach the same instance to the training "
                      "runner too (hookforge::ref)",
                      options_.interval));
    if (options_.images > 0 && ctx.validated && !saw_evaluation_)
      warn(
          fmt::format("TensorBoardLogger: images is {}, but no validation runner fired it, so "
                      "there are no images: attach the same instance to the validation runner "
                      "too (hookforge::ref)",
                      options_.images));
  }

  template <class C>
  void log_step(C& ctx) {
    saw_training_ = true;
    if (options_.interval == 0 || (ctx.global_step + 1) % options_.interval != 0 ||
        !ctx.loss.defined())
      return;
    open(ctx.global_step);
    const auto step = ctx.global_step + 1;
    scalar(step, "step/loss", host_read(ctx.loss));
    learning_rates(step, "step/lr", step_learning_rates(ctx));
  }

  template <class C>
  void collect_images(C& ctx) {
    saw_evaluation_ = true;
    const std::string_view set = validation_set_of(ctx);  // several validation sets: "val/<set>/"
    const std::string prefix = set.empty() ? "val/" : "val/" + std::string(set) + "/";
    if (ctx.batch_idx == 0) {  // a validation's images replace the last one's of its set
      std::erase_if(pending_images_, [&](const image& i) { return i.tag.starts_with(prefix); });
      shown_ = 0;
    }
    if (shown_ >= options_.images) return;
    const std::int64_t first = shown_;
    std::int64_t taken = 0;
    for (const auto& field : options_.image_fields) {
      const auto pixels =
          detail::hooks::host_pixels("TensorBoardLogger", field, ctx.entry.at(field),
                                     options_.images - first, options_.value_range);
      taken = pixels.size(0);
      for (std::int64_t i = 0; i < taken; ++i)
        pending_images_.push_back({fmt::format("{}{}/{}", prefix, field, first + i), pixels.size(1),
                                   pixels.size(2), pixels.size(3),
                                   detail::hooks::encode_png("TensorBoardLogger", pixels[i])});
    }
    shown_ = first + taken;
  }

  tensorboard_logger_options options_;
  std::filesystem::path trainer_dir_;
  // Shared by copies (a hook is copied before it is attached; only one of them writes).
  std::shared_ptr<detail::tensorboard::event_file> file_;
  std::vector<image> pending_images_;
  std::int64_t shown_ = 0;  // samples collected in the current validation
  bool saw_training_ = false, saw_evaluation_ = false, checked_attachment_ = false;
};

}  // namespace hookforge
