// hookforge/hooks/checkpoint_saver_options.hpp — CheckpointSaver's options and the checks its
// constructor makes of them (checkpoint_saver.hpp has the hook).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hookforge/hooks/detail/checkpoint_files.hpp"
#include "hookforge/torch/metrics/metric_rule.hpp"
#include "hookforge/torch/weights/weights_file.hpp"

namespace hookforge {

/// CheckpointSaver's options (MMEngine CheckpointHook's, by epoch).
struct checkpoint_saver_options {
  std::int64_t interval = 1;  ///< a checkpoint every N epochs (steps without by_epoch); 0: none
  bool by_epoch = true;       ///< interval and save_begin count epochs; false: training steps
  std::int64_t max_keep_ckpts = -1;  ///< epoch checkpoints kept, newest first; -1: all
  bool save_last = true;             ///< also save the run's last epoch, whatever the interval
  std::int64_t save_begin = 0;       ///< first epoch (step) saved on the interval (N >= save_begin)
  std::string save_best = "";  ///< a validation score, "auto" (the trainer's monitor), or "" (none)
  std::string rule = "";       ///< "greater" or "less"; empty: inferred from save_best's name
  std::int64_t save_top_k = 1;  ///< best checkpoints kept, by save_best; -1: every one scored
  /// Their names: {metric}, {score} (a format spec may follow: {score:.4f}), {epoch} (epochs
  /// done), {step} (training steps done); numbered by {epoch} or {step}. Empty:
  /// "best_{metric}_" and filename_tmpl numbered as it is.
  std::string best_filename_tmpl = "";
  std::filesystem::path out_dir = {};  ///< empty: the trainer's work_dir
  std::string filename_tmpl = "";  ///< one {} for N; empty: "epoch_{}.pt" ("iter_{}.pt" by step)
  bool save_optimizer = true;      ///< with the optimiser's state (needed for an exact resume)
  std::vector<std::string> published_keys = {};  ///< sections of the published copies; empty: none
  /// "safetensors" or "pth": beside each checkpoint, its model's weights in that format for
  /// Python (epoch_3.pt and epoch_3.safetensors), kept and removed with it; "": none.
  std::string weights_format = "";
  std::string weights_section = "model";  ///< the checkpoint's module section they come from
};

namespace detail::saver {

/// The epoch checkpoints' name template: filename_tmpl, or its default for by_epoch.
inline std::string file_template(const checkpoint_saver_options& o) {
  if (!o.filename_tmpl.empty()) return o.filename_tmpl;
  return o.by_epoch ? "epoch_{}.pt" : "iter_{}.pt";
}

/// Throws std::invalid_argument naming the first option out of its range.
inline void check_options(const checkpoint_saver_options& o) {
  if (o.interval < 0)
    throw std::invalid_argument(fmt::format(
        "CheckpointSaver: interval must be >= 0 (0: no checkpoints on an interval), got {}",
        o.interval));
  if (o.max_keep_ckpts == 0 || o.max_keep_ckpts < -1)
    throw std::invalid_argument(fmt::format(
        "CheckpointSaver: max_keep_ckpts must be -1 (keep all) or >= 1, got {}", o.max_keep_ckpts));
  if (o.save_begin < 0)
    throw std::invalid_argument(
        fmt::format("CheckpointSaver: save_begin must be >= 0, got {}", o.save_begin));
  check_template(file_template(o));
  if (o.save_top_k == 0 || o.save_top_k < -1)
    throw std::invalid_argument(fmt::format(
        "CheckpointSaver: save_top_k must be -1 (every scored checkpoint) or >= 1, got {}",
        o.save_top_k));
  if (!o.best_filename_tmpl.empty()) check_best_template(o.best_filename_tmpl);
  // Without a score there is nothing to rank: options that would do nothing are refused.
  if (o.save_best.empty() && o.save_top_k != 1)
    throw std::invalid_argument(fmt::format(
        "CheckpointSaver: save_top_k keeps the k best by save_best, which is empty; set "
        "save_best (a score, or \"auto\"), or leave save_top_k at 1 (max_keep_ckpts keeps the "
        "newest epoch files), got {}",
        o.save_top_k));
  if (o.save_best.empty() && !o.best_filename_tmpl.empty())
    throw std::invalid_argument(fmt::format(
        "CheckpointSaver: best_filename_tmpl names the best checkpoints, and save_best is "
        "empty (no best checkpoint); set save_best or leave best_filename_tmpl out, got \"{}\"",
        o.best_filename_tmpl));
  if (o.save_best.empty() && !o.rule.empty())
    throw std::invalid_argument(
        fmt::format("CheckpointSaver: rule must be empty when save_best is (no best "
                    "checkpoint), got \"{}\"",
                    o.rule));
  if (o.save_best == "auto") check_rule_text("CheckpointSaver", o.rule);
  for (std::size_t i = 0; i < o.published_keys.size(); ++i) {
    const auto before = o.published_keys.begin() + static_cast<std::ptrdiff_t>(i);
    if (o.published_keys[i].empty())
      throw std::invalid_argument(
          "CheckpointSaver: published_keys must name sections, got an empty name");
    if (std::find(o.published_keys.begin(), before, o.published_keys[i]) != before)
      throw std::invalid_argument(fmt::format(
          "CheckpointSaver: published_keys must be distinct, got '{}' twice", o.published_keys[i]));
  }
  if (!o.weights_format.empty() && !parse_weights_format(o.weights_format))
    throw std::invalid_argument(fmt::format(
        "CheckpointSaver: weights_format must be \"safetensors\", \"pth\" or empty, got \"{}\"",
        o.weights_format));
  if (!o.published_keys.empty() && !o.save_last && o.save_best.empty())
    throw std::invalid_argument(
        "CheckpointSaver: published_keys needs save_last or save_best (they name the files "
        "published)");
}

}  // namespace detail::saver
}  // namespace hookforge
