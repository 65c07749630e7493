// hookforge/hooks/progress_bar.hpp — ProgressBar: a live bar per epoch runner.
//
//   hookforge::ProgressBar bar;                           // refresh every 10 batches, stdout
//   TrainingEpochRunner train{optimizer, {}, hookforge::ref(bar)};
//   ValidationEpochRunner val{{}, hookforge::ref(bar)};  // one bar object, both runners
//
// On a terminal the bar is redrawn in place ('\r'):
//   train epoch 3/10  45% |###########.............|  45/100 [0:03<0:04, 12.31 it/s] loss 0.1234
// and otherwise (a log file, a pipe) it writes one plain line per refresh:
//   train epoch 3/10 batch 45/100 | 12.31 it/s | eta 0:04 | loss 0.1234
// At on_epoch_end the bar ends with the epoch's mean scores (ctx.scores), one line:
//   train epoch 3/10 done: 100 batches in 0:08 (12.40 it/s) | loss 0.1201
//
// Cost per batch: a counter; no tensor is touched. Every `refresh` batches and at the last
// batch of the epoch, the batch's losses are read on the host once each
// (hookforge::host_read): "loss" for training and validation runners, "d_loss" and
// "g_loss" for the GAN runner (a loss whose phase did not run on that batch keeps the
// value shown before). So an epoch of N batches reads ceil(N / refresh) values per loss,
// and an epoch whose loader cannot tell its size reads floor(N / refresh). The value
// shown is that batch's loss; the epoch's mean is on the end-of-epoch line, which reads
// nothing: the runner has already computed ctx.scores.
//
// The label is "train" for a runner that updates parameters and "val" for the others
// (options train_label / eval_label); epochs show 1-based as "epoch e/total" on both, so
// a validation after training epoch 3 says "epoch 3" too.
#pragma once

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/hooks/iter_timer.hpp"
#include "hookforge/torch/data/host_read.hpp"
#include "hookforge/hooks/detail/text_output.hpp"

namespace hookforge {

struct progress_bar_options {
  std::int64_t refresh = 10;         ///< redraw (and read the loss) every N batches and at the last
  std::FILE* file = stdout;          ///< where to write, unless `stream` is set
  std::ostream* stream = nullptr;    ///< write here instead of `file` (a log, a test's buffer)
  bool force_terminal = false;       ///< redraw in place even when the output is no terminal
  int width = 24;                    ///< characters of the bar (terminal mode); 0: no bar
  const IterTimer* timer = nullptr;  ///< when set, also show its mean data and step times
  std::string train_label = "train";  ///< label of runners that train
  std::string eval_label = "val";     ///< label of the others (validation, inference)
};

class ProgressBar {
  using clock = std::chrono::steady_clock;

 public:
  /// After IterTimer (NORMAL), so the figures it shows include this batch.
  static constexpr int priority = priority::BELOW_NORMAL;

  explicit ProgressBar(progress_bar_options options = {}) : options_(std::move(options)) {
    if (options_.refresh < 1)
      throw std::invalid_argument("ProgressBar: refresh must be >= 1, got " +
                                  std::to_string(options_.refresh));
    if (options_.width < 0)
      throw std::invalid_argument("ProgressBar: width must be >= 0, got " +
                                  std::to_string(options_.width));
    if (options_.stream == nullptr && options_.file == nullptr)
      throw std::invalid_argument("ProgressBar: file must not be null when no stream is given");
    terminal_ = options_.force_terminal ||
                (options_.stream == nullptr && ::isatty(::fileno(options_.file)) == 1);
  }

  /// Whether the bar is redrawn in place (a terminal, or force_terminal).
  bool terminal() const { return terminal_; }
  const progress_bar_options& options() const { return options_; }

  /// What the handlers read from a context: the epoch counters (the first one it lacks; ""
  /// for none). The losses and `scores` are shown when the context has them.
  template <class C>
  static consteval std::string_view context_lacks() {
    return epoch_counters_lacks<C>();
  }

  template <context_for<ProgressBar> C>
  void start(C&) {
    select<C>();
    begin();
  }

  template <context_for<ProgressBar> C>
  void step(C& ctx) {
    select<C>();
    if (!current().active) begin();  // attached in the middle of an epoch
    ++current().seen;
    const std::int64_t done = ctx.batch_idx + 1;
    const bool last = ctx.num_batches >= 0 && done >= ctx.num_batches;
    if (done % options_.refresh != 0 && !last) return;
    read_losses(ctx);
    write(terminal_ ? bar_line(ctx, done) : plain_line(ctx, done));
  }

  template <context_for<ProgressBar> C>
  void finish(C& ctx) {
    select<C>();
    if (!current().active) begin();
    const double elapsed = seconds_since(current().started);
    std::string scores;
    if constexpr (requires { ctx.scores; })
      for (const auto& [name, value] : ctx.scores)
        scores += fmt::format(" | {} {:.4g}", name, value);
    std::string text;
    if (terminal_) {
      const std::int64_t total = ctx.num_batches >= 0 ? ctx.num_batches : current().seen;
      text = fmt::format("{} {} 100% {}{}/{} [{}, {}]{}", label<C>(), epoch_text(ctx), bar(1.0),
                         current().seen, total, duration(elapsed), rate(current().seen, elapsed),
                         scores);
      text = "\r" + padded(std::move(text)) + "\n";
      drawn_ = 0;
    } else {
      text = fmt::format("{} {} done: {} batches in {} ({}){}\n", label<C>(), epoch_text(ctx),
                         current().seen, duration(elapsed), rate(current().seen, elapsed), scores);
    }
    write(text);
    current().active = false;
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(start, points::on_epoch_start),
                          HOOKFORGE_HOOKS_INTO(step, points::on_post_step),
                          HOOKFORGE_HOOKS_INTO(finish, points::on_epoch_end));

 private:
  struct shown_loss {
    std::string name;
    double shown = std::numeric_limits<double>::quiet_NaN();
  };

  // What one runner's epoch shows. A bar shared by the training and the validation runner
  // keeps one for each: a validation between two training batches (the Trainer's
  // val_interval_steps) runs its epoch inside the training epoch.
  struct runner_state {
    clock::time_point started{};
    std::int64_t seen = 0;  // batches this epoch
    std::vector<shown_loss> losses;
    bool active = false;
  };

  template <class C>
  void select() {
    current_ = updates_parameters<C> ? 0 : 1;
  }
  runner_state& current() { return states_[current_]; }
  const runner_state& current() const { return states_[current_]; }

  void begin() {
    current().started = clock::now();
    current().seen = 0;
    current().losses.clear();
    current().active = true;
  }

  // The batch's losses, by name: "loss" (training, validation), "d_loss"/"g_loss" (GAN).
  template <class C>
  void read_losses(const C& ctx) {
    if constexpr (gan_training_context<C>) {
      read("d_loss", ctx.d_loss);
      read("g_loss", ctx.g_loss);
    } else if constexpr (requires { ctx.loss; }) {
      read("loss", ctx.loss);
    }
  }
  void read(const char* name, const torch::Tensor& loss) {
    if (!loss.defined()) return;
    const double value = host_read(loss.dim() == 0 ? loss.detach() : loss.detach().mean());
    for (auto& l : current().losses) {
      if (l.name == name) {
        l.shown = value;
        return;
      }
    }
    current().losses.push_back({name, value});
  }

  template <class C>
  const std::string& label() const {
    return updates_parameters<C> ? options_.train_label : options_.eval_label;
  }

  /// "epoch 3/10", after the validation set's name when there are several ("set5 epoch 3/10").
  template <class C>
  static std::string epoch_text(const C& ctx) {
    const std::string_view dataset = validation_set_of(ctx);
    const std::string set = dataset.empty() ? "" : std::string(dataset) + " ";
    return ctx.total_epochs > 0 ? fmt::format("{}epoch {}/{}", set, ctx.epoch + 1, ctx.total_epochs)
                                : fmt::format("{}epoch {}", set, ctx.epoch + 1);
  }

  std::string loss_text() const {
    std::string text;
    for (const auto& l : current().losses) text += fmt::format(" {} {:.4g}", l.name, l.shown);
    return text;
  }

  template <class C>
  std::string timer_text(const C& ctx) const {
    if (options_.timer == nullptr) return {};
    const auto& t = options_.timer->of(ctx);
    return fmt::format(" data {:.1f}ms step {:.1f}ms", t.mean_data * 1e3, t.mean_step * 1e3);
  }

  template <class C>
  std::string bar_line(const C& ctx, std::int64_t done) {
    const double elapsed = seconds_since(current().started);
    std::string text;
    if (ctx.num_batches > 0) {
      const double fraction =
          std::min(1.0, static_cast<double>(done) / static_cast<double>(ctx.num_batches));
      text = fmt::format("{} {} {:3d}% {}{:{}d}/{} [{}<{}, {}]", label<C>(), epoch_text(ctx),
                         static_cast<int>(fraction * 100), bar(fraction), done,
                         digits(ctx.num_batches), ctx.num_batches, duration(elapsed),
                         duration(eta(ctx, done, elapsed)), rate(done, elapsed));
    } else {
      text = fmt::format("{} {} {}/? [{}, {}]", label<C>(), epoch_text(ctx), done,
                         duration(elapsed), rate(done, elapsed));
    }
    return "\r" + padded(text + loss_text() + timer_text(ctx));
  }

  template <class C>
  std::string plain_line(const C& ctx, std::int64_t done) const {
    const double elapsed = seconds_since(current().started);
    std::string text = fmt::format("{} {} batch {}/{} | {}", label<C>(), epoch_text(ctx), done,
                                   ctx.num_batches >= 0 ? std::to_string(ctx.num_batches) : "?",
                                   rate(done, elapsed));
    if (ctx.num_batches >= 0) text += " | eta " + duration(eta(ctx, done, elapsed));
    if (!current().losses.empty()) text += " |" + loss_text();
    if (options_.timer) text += " |" + timer_text(ctx);
    return text + "\n";
  }

  // The line, with spaces that clear what is left of a longer line drawn before it.
  std::string padded(std::string text) {
    const auto length = text.size();
    if (length < drawn_) text.append(drawn_ - length, ' ');
    drawn_ = length;
    return text;
  }

  std::string bar(double fraction) const {
    if (options_.width == 0) return {};
    const auto filled = static_cast<int>(fraction * options_.width + 1e-9);
    return "|" + std::string(static_cast<std::size_t>(filled), '#') +
           std::string(static_cast<std::size_t>(options_.width - filled), '.') + "| ";
  }

  template <class C>
  static double eta(const C& ctx, std::int64_t done, double elapsed) {
    return elapsed / static_cast<double>(done) *
           static_cast<double>(std::max<std::int64_t>(0, ctx.num_batches - done));
  }

  static int digits(std::int64_t n) { return static_cast<int>(std::to_string(n).size()); }

  static std::string rate(std::int64_t done, double elapsed) {
    if (done <= 0 || elapsed <= 0) return "? it/s";
    const double per_second = static_cast<double>(done) / elapsed;
    return per_second >= 1 ? fmt::format("{:.2f} it/s", per_second)
                           : fmt::format("{:.2f} s/it", 1 / per_second);
  }

  static std::string duration(double seconds) {
    const auto s = static_cast<std::int64_t>(seconds + 0.5);
    return s >= 3600 ? fmt::format("{}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60)
                     : fmt::format("{}:{:02d}", s / 60, s % 60);
  }

  static double seconds_since(clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  }

  void write(const std::string& text) const {
    detail::write_text(text, options_.stream, options_.file);
  }

  progress_bar_options options_;
  bool terminal_ = false;
  std::array<runner_state, 2> states_{};  // training, evaluating
  std::size_t current_ = 0;  // the state of the runner whose point fired last (an index: a
                             // hook is copied into the packs that hold it)
  std::size_t drawn_ = 0;    // length of the line last drawn in place
};

}  // namespace hookforge
