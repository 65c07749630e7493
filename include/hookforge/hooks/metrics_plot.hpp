// hookforge/hooks/metrics_plot.hpp — MetricsPlot: the run's metrics.csv (LossLogger's) drawn
// per epoch to metrics.png with gnuplot: one panel of losses, one of PSNRs.
//
//   hookforge::LossLogger logger;
//   hookforge::MetricsPlot plot;                        // or ({.interval = 5})
//   hookforge::Trainer trainer(model, train, val, {.epochs = 30, .work_dir = "runs/a"},
//                              hookforge::ref(logger), hookforge::ref(plot));
//
// At on_trainer_epoch_finished (every `interval` epochs, once the epochs since the drawing
// before, or since the start, took `min_seconds`) and at on_training_finished (when the last
// epoch was not drawn yet) it reads `<dir>/metrics.csv` and draws `<dir>/metrics.png`
// (dir: `out_dir`, default the trainer's work_dir): x is the `epoch` column; a panel per
// word of `panels` (default "loss" and "psnr") holds every column whose name has the word
// as a whole word, ignoring case (train_loss and val_loss; val_psnr and val_bicubic_psnr;
// not "closs"), as metric_rule.hpp reads names. A panel
// with no such column is left out; a panel whose values are all positive and span a
// factor of 10 or more has a logarithmic y axis. Empty, NaN and infinite cells are skipped,
// so a score validated every N epochs is one line through its points.
//
// gnuplot (Debian: gnuplot-nox) runs as a child process (posix_spawnp, no shell) on a script
// in a temporary file, and draws into the temporary file of an atomic write
// (torch/io/atomic_file.hpp: `metrics.png.tmp.<pid>`, renamed over metrics.png), so a reader
// never sees half a PNG. Nothing it does stops training: gnuplot missing from PATH is one
// warning (hookforge::warn) and no more attempts; gnuplot failing (its exit status and last
// line of output), running past `timeout_seconds` (killed), a missing CSV or one without
// an `epoch` column are warnings, each said once while it repeats.
// gnuplot draws in the background (a std::async thread): the training thread reads the CSV
// and goes on, the image appears some tens of milliseconds later, and the next drawing, the
// end of training (on_training_finished) and the hook's destruction wait for it. A drawing's
// warning is therefore said at the next epoch's drawing or at the end. draw(dir) waits.
// `min_seconds` (30) bounds what drawing costs a run of short epochs: a drawing takes about
// 50 ms of CPU (gnuplot's start and its PNG), 1.6 % of a 3-second epoch, while an image at
// most half a minute old serves a reader as well as one per epoch. The epochs' time is
// their epoch_seconds, so a run's drawings do not depend on how long its hooks waited.
// Priority LOWEST: LossLogger (BELOW_NORMAL) has written the epoch's row, and
// CheckpointSaver (VERY_LOW) the epoch's checkpoint, before it draws.
#pragma once

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
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
#include "hookforge/hooks/detail/metrics_table.hpp"
#include "hookforge/hooks/detail/subprocess.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/metrics/metric_rule.hpp"
#include "hookforge/torch/runners/trainer.hpp"

namespace hookforge {

/// MetricsPlot's options.
struct metrics_plot_options {
  std::int64_t interval = 1;  ///< draw every N epochs; 0: only at on_training_finished
  double min_seconds = 30;    ///< epoch seconds between two drawings during training, at least
                              ///< (the end of training always draws); 0: every `interval`
  std::filesystem::path out_dir =
      {};  ///< folder of metrics.csv and the image; empty: the trainer's work_dir
  std::string csv = "metrics.csv";  ///< the table read, in out_dir
  std::string filename = "metrics.png";
  std::vector<std::string> panels = {"loss", "psnr"};  ///< a panel per word: the columns holding it
  std::int64_t width = 960;                            ///< pixels
  std::int64_t panel_height = 360;                     ///< pixels per panel
  std::string gnuplot = "gnuplot";                     ///< the program, looked up in PATH
  double timeout_seconds = 60;                         ///< gnuplot is killed past this
};

namespace detail::plot {

/// One curve: a column's finite values by epoch.
struct series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

struct panel {
  std::string word;
  std::vector<series> curves;
};

inline std::optional<double> number(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

/// The panels of a CSV table (header first) with `epoch` as x; nullopt without an epoch column.
inline std::optional<std::vector<panel>> panels_of(
    const std::vector<std::vector<std::string>>& records, const std::vector<std::string>& words) {
  if (records.empty()) return std::nullopt;
  const auto& header = records.front();
  const auto epoch_at = std::find(header.begin(), header.end(), "epoch");
  if (epoch_at == header.end()) return std::nullopt;
  const auto x = static_cast<std::size_t>(epoch_at - header.begin());
  std::vector<panel> out;
  for (const auto& word : words) {
    panel p{word, {}};
    for (std::size_t column = 0; column < header.size(); ++column) {
      if (column == x || !metric_has_word(header[column], word)) continue;
      series s{header[column], {}};
      for (std::size_t i = 1; i < records.size(); ++i) {
        const auto& r = records[i];
        if (r.size() <= std::max(x, column)) continue;
        auto ex = number(r[x]), ey = number(r[column]);
        if (ex && ey) s.points.emplace_back(*ex, *ey);
      }
      if (!s.points.empty()) p.curves.push_back(std::move(s));
    }
    if (!p.curves.empty()) out.push_back(std::move(p));
  }
  return out;
}

/// A gnuplot string literal: single quotes (where only '' is special), no control characters.
inline std::string quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "''";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "'";
}

/// The gnuplot script drawing `panels` into `output`.
inline std::string script(const std::vector<panel>& panels, const std::filesystem::path& output,
                          const metrics_plot_options& o) {
  std::string s = fmt::format(
      "set terminal pngcairo size {},{} noenhanced font ',10'\nset output {}\n", o.width,
      o.panel_height * static_cast<std::int64_t>(panels.size()), quote(output.string()));
  std::size_t block = 0;
  for (const auto& p : panels)
    for (const auto& c : p.curves) {
      s += fmt::format("$s{} << EOD\n", block++);
      for (const auto& [x, y] : c.points) s += fmt::format("{} {}\n", x, y);
      s += "EOD\n";
    }
  if (panels.size() > 1) s += fmt::format("set multiplot layout {},1\n", panels.size());
  // Fixed margins line the panels' x axes up whatever their tick labels and keys.
  s += "set grid\nset lmargin 10\nset rmargin 24\nset key outside right top\nset xlabel 'epoch'\n";
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const auto& p : panels)
    for (const auto& c : p.curves)
      for (const auto& [x, y] : c.points) first = std::min(first, x), last = std::max(last, x);
  s += last - first <= 15 ? "set xtics 1 nomirror\n" : "set xtics nomirror\n";  // whole epochs
  block = 0;
  for (const auto& p : panels) {
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (const auto& c : p.curves)
      for (const auto& [x, y] : c.points) low = std::min(low, y), high = std::max(high, y);
    s += low > 0 && high >= 10 * low ? "set logscale y\n" : "unset logscale y\n";
    s += fmt::format("set ylabel {}\nset title {}\nplot ", quote(p.word), quote(p.word));
    for (std::size_t i = 0; i < p.curves.size(); ++i)
      s += fmt::format("{}$s{} using 1:2 with linespoints pointtype 7 pointsize 0.6 title {}",
                       i ? ", " : "", block++, quote(p.curves[i].name));
    s += "\n";
  }
  if (panels.size() > 1) s += "unset multiplot\n";
  return s + "unset output\n";
}

/// The last non-empty line of `text`.
inline std::string last_line(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  const auto start = text.find_last_of('\n');
  return std::string(start == std::string_view::npos ? text : text.substr(start + 1));
}

}  // namespace detail::plot

class MetricsPlot {
 public:
  static constexpr int priority = priority::LOWEST;

  explicit MetricsPlot(metrics_plot_options options = {}) : options_(std::move(options)) {
    const auto& o = options_;
    if (o.interval < 0)
      throw std::invalid_argument(
          fmt::format("MetricsPlot: interval must be >= 0 (0: only at the end of training), got {}",
                      o.interval));
    if (!detail::is_file_name(o.csv))
      throw std::invalid_argument(fmt::format(
          "MetricsPlot: csv must be a file name in out_dir (no '/'), got \"{}\"", o.csv));
    if (!detail::is_file_name(o.filename))
      throw std::invalid_argument(fmt::format(
          "MetricsPlot: filename must be a file name in out_dir (no '/'), got \"{}\"", o.filename));
    if (o.panels.empty())
      throw std::invalid_argument("MetricsPlot: panels must name at least one word, got none");
    for (const auto& word : o.panels)
      if (word.empty())
        throw std::invalid_argument("MetricsPlot: panels must be words, got an empty one");
    if (o.width < 16 || o.width > 10000 || o.panel_height < 16 || o.panel_height > 10000)
      throw std::invalid_argument(fmt::format(
          "MetricsPlot: width and panel_height must be in [16, 10000] pixels, got {} and {}",
          o.width, o.panel_height));
    if (o.gnuplot.empty())
      throw std::invalid_argument("MetricsPlot: gnuplot must name a program, got an empty name");
    if (!(o.min_seconds >= 0) || !std::isfinite(o.min_seconds))
      throw std::invalid_argument(fmt::format(
          "MetricsPlot: min_seconds must be a finite number >= 0, got {}", o.min_seconds));
    if (!(o.timeout_seconds > 0))
      throw std::invalid_argument(
          fmt::format("MetricsPlot: timeout_seconds must be > 0, got {}", o.timeout_seconds));
  }

  /// At on_trainer_epoch_finished: draw every `interval` epochs, once `min_seconds` of epochs
  /// passed since the last drawing, in the background.
  void plot(TrainerContext& ctx, points::on_trainer_epoch_finished) {
    undrawn_seconds_ += ctx.epoch_seconds;
    if (options_.interval > 0 && ctx.completed_epochs % options_.interval == 0 &&
        undrawn_seconds_ >= options_.min_seconds)
      start_epoch(ctx);
  }
  /// At on_training_finished: draw the last epoch, unless it was, and wait for the image.
  void plot(TrainerContext& ctx, points::on_training_finished) {
    if (ctx.completed_epochs > 0 && drawn_epochs_ != ctx.completed_epochs) start_epoch(ctx);
    (void)finish();
  }

  /// Draw the image now from `dir`'s CSV, and wait for it. True when the image was written;
  /// otherwise a warning said why (once while the reason repeats).
  bool draw(const std::filesystem::path& dir) { return start(dir) && finish(); }

  /// The folder the files are in for a trainer context.
  std::filesystem::path directory(const TrainerContext& ctx) const {
    if (!options_.out_dir.empty()) return options_.out_dir;
    return ctx.work_dir.empty() ? std::filesystem::path(".") : ctx.work_dir;
  }

  /// Images written so far.
  std::int64_t drawn() const { return drawn_; }
  const metrics_plot_options& options() const { return options_; }

  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(plot, points::on_trainer_epoch_finished, points::on_training_finished));

 private:
  struct spawn_failure : std::exception {
    int error;
    explicit spawn_failure(int e) : error(e) {}
    const char* what() const noexcept override { return "spawn failure"; }
  };

  /// What a drawing gave: the image written, or why not.
  struct outcome {
    bool written = false;
    int spawn_error = 0;  ///< gnuplot could not be started (posix_spawnp's error)
    std::string failure;  ///< else what went wrong, for the warning
  };

  void start_epoch(const TrainerContext& ctx) {
    drawn_epochs_ = ctx.completed_epochs;
    undrawn_seconds_ = 0;
    (void)start(directory(ctx));
  }

  /// Reads `dir`'s CSV here and draws it in the background: gnuplot takes tens of
  /// milliseconds to start and draw, which the training thread need not wait for. The
  /// drawing before is finished first, so one at most is in flight. False when nothing was
  /// started (a warning said why, or there is nothing to draw yet).
  bool start(const std::filesystem::path& dir) {
    (void)finish();
    if (disabled_) return false;
    const auto csv = dir / options_.csv;
    if (!std::filesystem::exists(csv))
      return fail(fmt::format("MetricsPlot: no '{}' to draw (attach a LossLogger); no {}",
                              csv.string(), options_.filename));
    auto panels = detail::plot::panels_of(
        detail::metrics_table::parse_csv(detail::metrics_table::read_text(csv)), options_.panels);
    if (!panels)
      return fail(fmt::format("MetricsPlot: '{}' has no epoch column; no {}", csv.string(),
                              options_.filename));
    if (panels->empty()) return false;  // nothing to draw yet
    image_ = dir / options_.filename;
    pending_ = std::async(std::launch::async, [image = image_, panels = std::move(*panels),
                                               options = options_] {
                 return render(image, panels, options);
               }).share();
    return true;
  }

  /// Waits for the drawing in flight, if any, and says what went wrong with it. True when
  /// it wrote the image.
  bool finish() {
    if (!pending_.valid()) return false;
    const outcome done = pending_.get();
    pending_ = {};
    if (done.spawn_error != 0) {
      disabled_ = true;
      warn(done.spawn_error == ENOENT
               ? fmt::format(
                     "MetricsPlot: '{}' not found in PATH (Debian: gnuplot-nox); no {} is drawn",
                     options_.gnuplot, options_.filename)
               : fmt::format("MetricsPlot: cannot start '{}': {}; no {} is drawn", options_.gnuplot,
                             std::strerror(done.spawn_error), options_.filename));
      return false;
    }
    if (!done.written)
      return fail(fmt::format("MetricsPlot: no {}: {}", image_.string(), done.failure));
    last_warning_.clear();
    ++drawn_;
    return true;
  }

  /// gnuplot drawing `panels` into `image`, atomically (off the training thread: it touches
  /// nothing of the hook's).
  static outcome render(const std::filesystem::path& image,
                        const std::vector<detail::plot::panel>& panels,
                        const metrics_plot_options& options) {
    try {
      write_file_atomically(image, [&](const std::filesystem::path& tmp) {
        detail::subprocess::temp_file script("hookforge-plot-gp");
        {
          std::ofstream out(script.path(), std::ios::binary);
          out << detail::plot::script(panels, tmp, options);
          if (!out.flush()) throw std::runtime_error("cannot write the gnuplot script");
        }
        auto ran = detail::subprocess::run({options.gnuplot, script.path().string()},
                                           options.timeout_seconds);
        if (!ran.started) throw spawn_failure(ran.spawn_error);
        if (!ran.status.empty()) {
          auto last = detail::plot::last_line(ran.output);
          throw std::runtime_error(fmt::format("{} failed: {}{}", options.gnuplot, ran.status,
                                               last.empty() ? std::string() : ": " + last));
        }
        std::error_code ec;
        if (std::filesystem::file_size(tmp, ec) == 0 || ec)
          throw std::runtime_error(fmt::format("{} wrote no image", options.gnuplot));
      });
    } catch (const spawn_failure& e) {
      return {.written = false, .spawn_error = e.error, .failure = {}};
    } catch (const std::exception& e) {
      return {.written = false, .spawn_error = 0, .failure = e.what()};
    }
    return {.written = true, .spawn_error = 0, .failure = {}};
  }

  bool fail(std::string message) {
    if (message != last_warning_) warn(message);
    last_warning_ = std::move(message);
    return false;
  }

  metrics_plot_options options_;
  bool disabled_ = false;
  std::int64_t drawn_epochs_ = -1;
  double undrawn_seconds_ = 0;  ///< epoch seconds since the last epoch's drawing (or the start)
  std::int64_t drawn_ = 0;
  std::string last_warning_;
  std::filesystem::path image_;          ///< the image the drawing in flight writes
  std::shared_future<outcome> pending_;  ///< that drawing; waited for before the next, and at
                                         ///< the end (a std::async future waits when dropped)
};

}  // namespace hookforge
