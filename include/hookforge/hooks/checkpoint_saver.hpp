// hookforge/hooks/checkpoint_saver.hpp — CheckpointSaver: the trainer's checkpoints on an
// epoch interval, the last one, the best one by a validation score, with retention; its
// bookkeeping is in the checkpoints it writes, so a resumed run keeps and removes exactly
// the files the uninterrupted run would.
//
//   hookforge::CheckpointSaver saver({.interval = 2, .max_keep_ckpts = 3, .save_best = "psnr"});
//   hookforge::Trainer trainer(model, train, val, {.epochs = 100, .work_dir = "runs/a"},
//                              hookforge::ref(saver));
//   if (auto last = hookforge::latest_checkpoint("runs/a")) trainer.load_checkpoint(*last);
//   trainer.fit(train_loader, val_loader, criterion);
//
// At on_trainer_epoch_finished (N = completed epochs, counting from 1, as MMEngine does):
//   epoch_{N}.pt                every `interval` epochs from `save_begin`, and at the last
//                               epoch (`save_last`; a run that stops early ends there too);
//                               the newest `max_keep_ckpts` are kept
//   best_{metric}_epoch_{N}.pt  when the validation score `save_best` enters the `save_top_k`
//                               best (1: the best one; ties as Lightning's ModelCheckpoint:
//                               detail/top_k.hpp); named by `best_filename_tmpl` if given
//                               ("best_{metric}_{score:.4f}_epoch_{epoch}.pt")
//   last_checkpoint             a text file naming the file written last (in the same folder)
// At on_trainer_validation_finished (a validation between batches, trainer_options::
// val_interval_steps), the best by `save_best` as at an epoch's end, in a checkpoint that
// resumes between those batches: best_{metric}_iter_{S}.pt (S = steps done), or
// `best_filename_tmpl` when it is numbered by {step}.
// With by_epoch = false (MMEngine's by_epoch=False), `interval` and `save_begin` count training
// steps and the files are iter_{N}.pt (N = steps done): at on_trainer_step_finished, in the
// middle of an epoch (the checkpoint resumes there, trainer.hpp), or at the epoch's end when
// the step due was its last batch; save_last and save_best stay at the epoch's end, named by
// the steps done. With gradient accumulation a save due is taken at the next batch that
// updates. Either way, a stop requested during an epoch (SIGINT, SIGTERM; trainer_options::
// stop_mid_epoch) is saved at the next batch, as iter_{N}.pt (`save_last`), and the run ends
// there.
// With `weights_format` ("safetensors" or "pth"), each checkpoint gets its model's weights
// beside it (epoch_3.pt, epoch_3.safetensors: weights/weights_file.hpp), written atomically
// after the checkpoint, read back from it, and removed with it.
// At on_training_finished, with `published_keys`: a copy of the last and the best checkpoint
// holding only those sections, named `<stem>-<first 8 hex digits of its SHA-256>.pt`.
//
// Every file is written atomically (temporary file, fsync, rename), and a file is removed
// only after the file replacing it is on disk. The bookkeeping (files kept, best score,
// best file, files due for removal) is updated before the checkpoint is written, so the
// checkpoint holds the state that names it. MMEngine keeps it in its message hub and, to
// keep that current, saves the epoch checkpoint again when the best improves, even off
// the interval, where the extra file counts in max_keep_ckpts; hookforge writes only the
// best file there (tests/peers/parity.py checks both). Priority VERY_LOW: the other trainer
// hooks of the epoch (EarlyStopping, LossLogger, ...) have updated their state when it saves.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/hooks/detail/file_name.hpp"
#include "hookforge/hooks/latest_checkpoint.hpp"
#include "hookforge/hooks/checkpoint_saver_options.hpp"
#include "hookforge/hooks/detail/checkpoint_files.hpp"
#include "hookforge/hooks/detail/top_k.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/metrics/metric_rule.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/weights/weights_file.hpp"

namespace hookforge {

class CheckpointSaver {
 public:
  static constexpr int priority = priority::VERY_LOW;
  static constexpr std::string_view state_key = "CheckpointSaver";

  explicit CheckpointSaver(checkpoint_saver_options options = {}) : options_(std::move(options)) {
    detail::saver::check_options(options_);
    if (!options_.save_best.empty() && options_.save_best != "auto")
      rule_ = metric_rule_for("CheckpointSaver", options_.save_best, options_.rule);
  }

  /// At on_trainer_step_finished: a checkpoint in the middle of the epoch when the step
  /// interval (by_epoch = false) says so, or when the run is stopping (save_last).
  void save_step(TrainerContext& ctx) {
    step_due_ = step_due_ || on_interval(ctx.global_step, !options_.by_epoch);
    const bool stopping = ctx.stop_training && options_.save_last;
    if ((!step_due_ && !stopping) || ctx.gradients_pending) return;
    step_due_ = false;
    const auto dir = directory(ctx);
    std::filesystem::create_directories(dir);
    remove_stale(dir);
    const auto name =
        fmt::format(fmt::runtime(options_.by_epoch ? std::string("iter_{}.pt") : file_template()),
                    ctx.global_step);
    store(ctx, dir, name, "", std::numeric_limits<double>::quiet_NaN());
  }

  /// At on_trainer_epoch_finished: write this epoch's checkpoint(s), then remove old ones.
  void save_epoch(TrainerContext& ctx) {
    const auto dir = directory(ctx);
    std::filesystem::create_directories(dir);
    remove_stale(dir);  // left by a run that stopped between a save and its removals

    const std::int64_t n = options_.by_epoch ? ctx.completed_epochs : ctx.global_step;
    const bool last = ctx.completed_epochs == ctx.total_epochs || ctx.stop_training;
    // By step: a save due at the epoch's last batch (no step point there) is taken here.
    const bool due = options_.by_epoch ? on_interval(n, true) : step_due_ || on_interval(n, true);
    step_due_ = false;
    const bool write_epoch = due || (options_.save_last && last);
    const std::string epoch_name = fmt::format(fmt::runtime(file_template()), n);

    auto [best_name, score] = best_candidate(ctx, best_template());
    if (!write_epoch && best_name.empty()) return;
    store(ctx, dir, write_epoch ? epoch_name : std::string(), best_name, score);
  }

  /// At on_trainer_validation_finished: the best by save_best, between two batches.
  void save_best_between(TrainerContext& ctx) {
    if (options_.save_best.empty()) return;
    const bool by_step = options_.best_filename_tmpl.find("{step") != std::string::npos;
    auto [best_name, score] =
        best_candidate(ctx, by_step ? options_.best_filename_tmpl : "best_{metric}_iter_{step}.pt");
    if (best_name.empty()) return;
    const auto dir = directory(ctx);
    std::filesystem::create_directories(dir);
    remove_stale(dir);
    store(ctx, dir, "", best_name, score);
  }

  /// At on_training_finished: the published copies of the last and the best checkpoint.
  void publish(TrainerContext& ctx) {
    if (options_.published_keys.empty()) return;
    const auto dir = directory(ctx);
    std::vector<std::string> sources;
    if (options_.save_last && !books_.kept.empty()) sources.push_back(books_.kept.back());
    if (!books_.best_file.empty() &&
        std::find(sources.begin(), sources.end(), books_.best_file) == sources.end())
      sources.push_back(books_.best_file);
    for (const auto& name : sources) {
      const auto source = dir / name;
      if (!std::filesystem::exists(source)) {
        warn(
            fmt::format("CheckpointSaver: cannot publish '{}': the file is gone", source.string()));
        continue;
      }
      published_.push_back(detail::saver::publish_file(source, options_.published_keys));
    }
  }

  /// Bookkeeping, saved in the trainer's checkpoints (section "hooks.trainer.CheckpointSaver").
  state_map state_dict() const {
    return {{"kept", string_list(books_.kept)},  {"last", books_.last},
            {"best_metric", books_.best_metric}, {"best_score", best_score_},
            {"best_file", books_.best_file},     {"top_k_files", string_list(top_k_.files())},
            {"top_k_scores", top_k_.scores()},   {"stale", string_list(books_.stale)}};
  }

  void load_state_dict(const state_map& state) {
    constexpr const char* hook = "CheckpointSaver";
    bookkeeping books{state_value<std::vector<std::string>>(state, hook, "kept"),
                      state_value<std::string>(state, hook, "last"),
                      state_value<std::string>(state, hook, "best_metric"),
                      state_value<std::string>(state, hook, "best_file"),
                      state_value<std::vector<std::string>>(state, hook, "stale")};
    // Read into locals: a checkpoint refused below leaves the hook as it was.
    const auto best_score = state_value<double>(state, hook, "best_score");
    detail::saver::top_k top;
    if (state.count("top_k_files")) {
      const auto files = state_value<std::vector<std::string>>(state, hook, "top_k_files");
      const auto scores = state_value<std::vector<double>>(state, hook, "top_k_scores");
      if (files.size() != scores.size())
        throw std::invalid_argument(
            fmt::format("CheckpointSaver: the checkpoint's top_k_files ({}) and top_k_scores "
                        "({}) differ in length",
                        files.size(), scores.size()));
      top.assign(files, scores);
    } else if (!books.best_file.empty()) {  // written before save_top_k: its one best file
      top.assign({books.best_file}, {best_score});
    }
    best_score_ = best_score;
    books_ = std::move(books);
    top_k_ = std::move(top);
  }

  /// Epoch checkpoints kept (file names in the output folder), oldest first.
  const std::vector<std::string>& kept() const { return books_.kept; }
  /// The best checkpoint's file name ("" before the first).
  const std::string& best_file() const { return books_.best_file; }
  /// The save_top_k best checkpoints' file names, in the order they were written.
  std::vector<std::string> best_files() const { return top_k_.files(); }
  /// Its score (NaN before the first).
  double best_score() const { return best_score_; }
  /// The file last_checkpoint names.
  const std::string& last_file() const { return books_.last; }
  /// The copies publish() wrote in this process.
  const std::vector<std::filesystem::path>& published() const { return published_; }
  const checkpoint_saver_options& options() const { return options_; }

  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(save_step, points::on_trainer_step_finished),
      HOOKFORGE_HOOKS_INTO(save_best_between, points::on_trainer_validation_finished),
      HOOKFORGE_HOOKS_INTO(save_epoch, points::on_trainer_epoch_finished),
      HOOKFORGE_HOOKS_INTO(publish, points::on_training_finished));

 private:
  struct bookkeeping {
    std::vector<std::string> kept;  ///< epoch checkpoints, oldest first
    std::string last;               ///< what last_checkpoint names
    std::string best_metric;        ///< the score save_best resolved to
    std::string best_file;
    std::vector<std::string> stale;  ///< to remove once the checkpoint naming them is written
  };

  /// Write `epoch_name` (unless empty) and `best_name` (unless empty; with its `score`),
  /// last_checkpoint naming the first, then remove the files they replace.
  void store(TrainerContext& ctx, const std::filesystem::path& dir, const std::string& epoch_name,
             const std::string& best_name, double score) {
    const bool write_epoch = !epoch_name.empty();
    // Bookkeeping first: the checkpoint written below holds the state that names it.
    const bookkeeping before = books_;
    const double best_score_before = best_score_;
    std::vector<std::string> stale;
    if (write_epoch) {
      if (std::find(books_.kept.begin(), books_.kept.end(), epoch_name) == books_.kept.end())
        books_.kept.push_back(epoch_name);
      while (options_.max_keep_ckpts > 0 &&
             static_cast<std::int64_t>(books_.kept.size()) > options_.max_keep_ckpts) {
        stale.push_back(books_.kept.front());
        books_.kept.erase(books_.kept.begin());
      }
    }
    const detail::saver::top_k top_before = top_k_;
    if (!best_name.empty()) {
      if (auto left = top_k_.add(best_name, score, options_.save_top_k, *rule_))
        stale.push_back(std::move(*left));
      const auto* best = top_k_.best(*rule_);
      books_.best_file = best->file;
      best_score_ = best->score;
    }
    books_.last = write_epoch ? epoch_name : best_name;
    books_.stale = std::move(stale);
    try {
      const checkpoint_content content{.optimizer = options_.save_optimizer};
      if (write_epoch) ctx.save_checkpoint(dir / epoch_name, content);
      if (!best_name.empty()) {
        if (write_epoch)  // the same checkpoint: copy the file rather than serialise it again
          write_file_atomically(dir / best_name, [&](const std::filesystem::path& tmp) {
            std::filesystem::copy_file(dir / epoch_name, tmp);
          });
        else
          ctx.save_checkpoint(dir / best_name, content);
      }
      if (write_epoch) write_weights_beside(dir / epoch_name);
      if (!best_name.empty()) write_weights_beside(dir / best_name);
      write_file_atomically(dir / "last_checkpoint", books_.last + "\n");
    } catch (...) {
      books_ = before;
      best_score_ = best_score_before;
      top_k_ = top_before;
      throw;
    }
    // The replacements are on disk: now the old files go.
    if (!best_name.empty()) remove_other_best_files(dir);
    remove_stale(dir);
  }

  std::string file_template() const { return detail::saver::file_template(options_); }

  /// The file name of a best checkpoint for ctx's validation, by `tmpl`, when its score
  /// enters the save_top_k best (else ""), and the score (NaN when ctx did not validate).
  std::pair<std::string, double> best_candidate(TrainerContext& ctx, const std::string& tmpl) {
    if (options_.save_best.empty() || !ctx.validated)
      return {"", std::numeric_limits<double>::quiet_NaN()};
    const std::string& metric = resolve_metric(ctx);
    auto it = ctx.val_scores.find(metric);
    if (it == ctx.val_scores.end())
      throw std::invalid_argument(
          fmt::format("CheckpointSaver: save_best '{}' is not a validation score (scores: {})",
                      metric, score_names(ctx.val_scores)));
    const double score = it->second;
    if (!top_k_.admits(score, options_.save_top_k, *rule_)) return {"", score};
    return {detail::saver::best_name(tmpl, {metric, score, ctx.completed_epochs, ctx.global_step}),
            score};
  }

  std::string best_template() const {
    return options_.best_filename_tmpl.empty()
               ? detail::saver::default_best_template(file_template(), options_.by_epoch)
               : options_.best_filename_tmpl;
  }

  /// Whether count `n` (epochs, or steps) is on the interval, when `counting` that unit.
  bool on_interval(std::int64_t n, bool counting) const {
    return counting && options_.interval > 0 && n >= options_.save_begin &&
           (n - options_.save_begin) % options_.interval == 0;
  }

  std::filesystem::path directory(const TrainerContext& ctx) const {
    if (!options_.out_dir.empty()) return options_.out_dir;
    return ctx.work_dir.empty() ? std::filesystem::path(".") : ctx.work_dir;
  }

  /// The score save_best names ("auto": the trainer's monitor), and its rule.
  const std::string& resolve_metric(const TrainerContext& ctx) {
    const std::string metric = options_.save_best == "auto" ? ctx.monitor : options_.save_best;
    if (metric.empty())
      throw std::invalid_argument(
          "CheckpointSaver: save_best is \"auto\" but the trainer has no monitor");
    if (!rule_) rule_ = metric_rule_for("CheckpointSaver", metric, options_.rule);
    if (books_.best_metric != metric) {
      if (!books_.best_metric.empty()) {
        warn(fmt::format(
            "CheckpointSaver: the best checkpoint was chosen by '{}', now by '{}': best tracking "
            "starts again ('{}' stays)",
            books_.best_metric, metric, books_.best_file));
        books_.best_file.clear();
        top_k_.clear();
      }
      books_.best_metric = metric;
      best_score_ = std::numeric_limits<double>::quiet_NaN();
    }
    return books_.best_metric;
  }

  static std::string score_names(const epoch_scores& scores) {
    std::string out;
    for (const auto& [name, value] : scores) out += (out.empty() ? "" : ", ") + name;
    return out.empty() ? "none" : out;
  }

  bool referenced(const std::string& name) const {
    return name == books_.best_file || name == books_.last || top_k_.holds(name) ||
           std::find(books_.kept.begin(), books_.kept.end(), name) != books_.kept.end();
  }

  /// Removes a checkpoint and the weights beside it.
  void remove_file(const std::filesystem::path& path) const {
    std::vector<std::filesystem::path> files{path};
    if (const auto format = parse_weights_format(options_.weights_format))
      files.push_back(std::filesystem::path(path).replace_extension(weights_suffix(*format)));
    for (const auto& file : files) {
      std::error_code ec;
      std::filesystem::remove(file, ec);
      if (ec)
        warn(fmt::format("CheckpointSaver: cannot remove '{}': {}", file.string(), ec.message()));
    }
  }

  /// The model's weights of `checkpoint`, in weights_format beside it (epoch_3.safetensors).
  void write_weights_beside(const std::filesystem::path& checkpoint) const {
    const auto format = parse_weights_format(options_.weights_format);
    if (!format) return;
    const auto weights = read_weights(checkpoint, {.section = options_.weights_section});
    write_weights(std::filesystem::path(checkpoint).replace_extension(weights_suffix(*format)),
                  weights.tensors, *format);
  }

  void remove_stale(const std::filesystem::path& dir) {
    for (const auto& name : books_.stale)
      if (!referenced(name)) remove_file(dir / name);
    books_.stale.clear();
  }

  /// Only the save_top_k best checkpoints, also after a resume from an older checkpoint whose
  /// bookkeeping does not know a best file the interrupted run wrote later.
  void remove_other_best_files(const std::filesystem::path& dir) const {
    for (const auto& file :
         detail::saver::other_best_files(dir, best_template(), books_.best_metric, top_k_.files()))
      remove_file(file);
  }

  checkpoint_saver_options options_;
  std::optional<metric_rule> rule_;
  bookkeeping books_;
  detail::saver::top_k top_k_;
  double best_score_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::filesystem::path> published_;
  bool step_due_ = false;  ///< by step: a save is due at the next batch that updates
};

}  // namespace hookforge
