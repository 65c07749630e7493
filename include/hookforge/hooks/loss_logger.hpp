// hookforge/hooks/loss_logger.hpp — LossLogger: a console line per epoch, and the epoch's
// scores in metrics.csv and metrics.jsonl; optionally a row every `interval` training steps.
//
//   hookforge::LossLogger logger({.interval = 50});   // one instance, shared by ref
//   hookforge::TrainingEpochRunner train(sgd, {}, hookforge::ref(logger));   // step rows
//   hookforge::Trainer trainer(model, train, val, {.epochs = 10, .work_dir = "runs/a"},
//                              hookforge::ref(logger));                      // epoch rows
//
//   epoch 3/10 | train loss 0.01234 | val loss 0.02345 psnr 28.13 | lr 0.001 | 1.52 s
//
// Files, in out_dir (default: the trainer's work_dir):
//   metrics.csv / metrics.jsonl  one row per epoch: epoch (1-based), train_<score> for every
//                                training score, val_<score> for every validation score of
//                                an epoch that validated, lr (lr_0, lr_1, ... for several
//                                parameter groups: the rates used in the epoch), epoch_seconds
//   steps.csv / steps.jsonl      with interval > 0: every `interval` training batches, epoch,
//                                batch (1-based in the epoch), step (1-based over the run),
//                                loss (the batch's total) and the learning rates
// The step rows read the loss on the host (hookforge::host_read) only on those batches.
//
// Resume: the first write of a LossLogger drops the rows of epochs after the epochs
// completed when its run started (rewriting the files atomically), so a run resumed from
// a checkpoint has each epoch once; a fresh run (0 epochs completed) starts the files
// anew. A row cut short by a crash is dropped too.
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
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/data/host_read.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/runners/epoch.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/training_runner.hpp"

namespace hookforge {

/// LossLogger's options.
struct loss_logger_options {
  std::int64_t interval = 0;           ///< a step row every N training batches; 0: none
  std::filesystem::path out_dir = {};  ///< empty: the trainer's work_dir ("." without a trainer)
  std::ostream* stream = &std::cout;   ///< the console summary; nullptr: none
};

namespace detail::logger {

/// One value of a row.
struct cell {
  std::string name;
  double value = 0;
  bool integer = false;
};
using row = std::vector<cell>;

inline std::string csv_value(const cell& c) {
  if (c.integer) return fmt::format("{}", static_cast<std::int64_t>(c.value));
  return fmt::format("{}", c.value);  // shortest round trip; nan, inf, -inf
}

inline std::string json_value(const cell& c) {
  if (c.integer) return fmt::format("{}", static_cast<std::int64_t>(c.value));
  return std::isfinite(c.value) ? fmt::format("{}", c.value) : std::string("null");
}

inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

inline std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

inline std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

/// Complete records of a CSV text (RFC 4180 quoting); a last record without its line
/// end (a write cut short) is left out.
inline std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  return records;
}

inline std::optional<std::int64_t> parse_int(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

/// The "epoch" of a JSONL row this hook wrote, if it has one.
inline std::optional<std::int64_t> json_epoch(std::string_view line) {
  constexpr std::string_view key = "\"epoch\":";
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return parse_int(line.substr(at + key.size()));
}

/// Where a column goes in the CSV: counters, training scores, validation scores,
/// learning rates, time.
inline int column_rank(std::string_view name) {
  if (name == "epoch") return 0;
  if (name == "batch") return 1;
  if (name == "step") return 2;
  if (name == "loss" || name.starts_with("train_")) return 3;
  if (name.starts_with("val_")) return 4;
  if (name == "lr" || name.starts_with("lr_")) return 5;
  if (name == "epoch_seconds") return 6;
  return 7;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void append_text(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("LossLogger: cannot write '{}'", path.string()));
}

/// A CSV file and a JSONL file of rows with an "epoch" column (`<stem>.csv`, `<stem>.jsonl`).
class table {
 public:
  explicit table(std::string stem) : stem_(std::move(stem)) {}

  /// Drop the rows of epochs after `completed`, and a row cut short.
  void trim(const std::filesystem::path& dir, std::int64_t completed) {
    const auto csv = csv_path(dir), jsonl = jsonl_path(dir);
    if (std::filesystem::exists(csv)) {
      const std::string text = read_text(csv);
      auto records = parse_csv(text);
      header_ = records.empty() ? std::vector<std::string>{} : records.front();
      const auto epoch_at = std::find(header_.begin(), header_.end(), "epoch") - header_.begin();
      std::string rows;
      for (std::size_t i = 1; i < records.size(); ++i) {
        const auto& r = records[i];
        auto epoch =
            static_cast<std::size_t>(epoch_at) < r.size() ? parse_int(r[epoch_at]) : std::nullopt;
        if (!epoch || *epoch <= completed) rows += csv_line(r);
      }
      if (rows.empty()) header_.clear();  // a new table: its header comes from its first row
      const std::string kept = rows.empty() ? std::string() : csv_line(header_) + rows;
      if (kept != text) write_file_atomically(csv, kept);
    }
    if (std::filesystem::exists(jsonl)) {
      const std::string text = read_text(jsonl);
      std::string kept;
      for (std::size_t start = 0; start < text.size();) {
        const auto end = text.find('\n', start);
        if (end == std::string::npos) break;  // cut short
        const auto line = std::string_view(text).substr(start, end + 1 - start);
        auto epoch = json_epoch(line);
        if (!epoch || *epoch <= completed) kept += line;
        start = end + 1;
      }
      if (kept != text) write_file_atomically(jsonl, kept);
    }
    loaded_ = true;
  }

  void append(const std::filesystem::path& dir, const row& r) {
    const auto csv = csv_path(dir);
    if (!loaded_) trim(dir, std::numeric_limits<std::int64_t>::max());
    std::vector<std::string> header = header_;
    for (const auto& c : r)
      if (std::find(header.begin(), header.end(), c.name) == header.end()) header.push_back(c.name);
    std::stable_sort(header.begin(), header.end(), [](const std::string& a, const std::string& b) {
      return column_rank(a) < column_rank(b);
    });
    if (header_.empty()) {
      header_ = header;
      write_file_atomically(csv, csv_line(header_) + csv_line(cells(header_, r)));
    } else if (header != header_) {
      std::string text = csv_line(header);
      auto records = parse_csv(read_text(csv));
      for (std::size_t i = 1; i < records.size(); ++i) {
        std::vector<std::string> widened(header.size());
        for (std::size_t j = 0; j < header_.size() && j < records[i].size(); ++j)
          widened[static_cast<std::size_t>(std::find(header.begin(), header.end(), header_[j]) -
                                           header.begin())] = records[i][j];
        text += csv_line(widened);
      }
      header_ = header;
      write_file_atomically(csv, text + csv_line(cells(header_, r)));
    } else {
      append_text(csv, csv_line(cells(header_, r)));
    }

    std::string json = "{";
    for (std::size_t i = 0; i < r.size(); ++i)
      json += fmt::format("{}{}: {}", i ? ", " : "", json_string(r[i].name), json_value(r[i]));
    append_text(jsonl_path(dir), json + "}\n");
  }

  const std::vector<std::string>& header() const { return header_; }

 private:
  static std::vector<std::string> cells(const std::vector<std::string>& header, const row& r) {
    std::vector<std::string> out(header.size());
    for (const auto& c : r)
      out[static_cast<std::size_t>(std::find(header.begin(), header.end(), c.name) -
                                   header.begin())] = csv_value(c);
    return out;
  }
  std::filesystem::path csv_path(const std::filesystem::path& dir) const {
    return dir / (stem_ + ".csv");
  }
  std::filesystem::path jsonl_path(const std::filesystem::path& dir) const {
    return dir / (stem_ + ".jsonl");
  }

  std::string stem_;
  std::vector<std::string> header_;
  bool loaded_ = false;
};

/// Learning rates as cells: "lr" for one parameter group, "lr_0", "lr_1", ... for several.
inline void add_learning_rates(row& r, const std::vector<double>& lrs) {
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
    detail::logger::row r{{"epoch", static_cast<double>(ctx.completed_epochs), true}};
    for (const auto& [name, value] : ctx.train_scores) r.push_back({"train_" + name, value});
    if (ctx.validated)
      for (const auto& [name, value] : ctx.val_scores) r.push_back({"val_" + name, value});
    detail::logger::add_learning_rates(r, ctx.learning_rates);
    r.push_back({"epoch_seconds", ctx.epoch_seconds});
    write(epochs_, r, ctx.epoch);
  }

  /// At a training runner's on_post_step: every `interval` batches, the step's row. Any
  /// runner whose context has the counters (epoch_counters) and the step's `loss` tensor
  /// gets these rows; the learning rates come from its `optimizer`, when it has one.
  template <class C>
    requires std::derived_from<C, epoch_counters> && requires(C& c) { { c.loss } -> std::convertible_to<torch::Tensor>; }
  void log(C& ctx) {
    if (options_.interval == 0 || (ctx.global_step + 1) % options_.interval != 0 ||
        !ctx.loss.defined())
      return;
    detail::logger::row r{{"epoch", static_cast<double>(ctx.epoch + 1), true},
                          {"batch", static_cast<double>(ctx.batch_idx + 1), true},
                          {"step", static_cast<double>(ctx.global_step + 1), true},
                          {"loss", host_read(ctx.loss)}};
    std::vector<double> lrs;
    if constexpr (requires { ctx.optimizer->param_groups(); })
      if (ctx.optimizer)
        for (const auto& group : ctx.optimizer->param_groups())
          lrs.push_back(group.has_options() ? group.options().get_lr() : 0.0);
    detail::logger::add_learning_rates(r, lrs);
    write(steps_, r, ctx.epoch);
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

  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
      log, points::on_training_began, points::on_trainer_epoch_finished, points::on_post_step));

 private:
  /// The first write drops what a resumed run is about to write again: the rows of
  /// epochs after `completed`, the epochs completed when this run started.
  void write(detail::logger::table& t, const detail::logger::row& r, std::int64_t completed) {
    const auto dir = directory();
    if (!started_) {
      std::filesystem::create_directories(dir);
      epochs_.trim(dir, completed);
      steps_.trim(dir, completed);
      started_ = true;
    }
    t.append(dir, r);
  }

  loss_logger_options options_;
  std::filesystem::path trainer_dir_;
  detail::logger::table epochs_{"metrics"};
  detail::logger::table steps_{"steps"};
  bool started_ = false;
};

}  // namespace hookforge
