// hookforge/hooks/mlflow_logger.hpp — MLflowLogger: the run in an MLflow tracking server,
// sent from a background thread so that logging never waits on the network.
//
//   hookforge::MLflowLogger mlflow({.tracking_uri = "http://127.0.0.1:5000",
//                                   .experiment = "sr", .run_name = "espcn-x2", .interval = 50});
//   hookforge::TrainingEpochRunner train(adam, {}, hookforge::ref(mlflow));    // step scalars
//   hookforge::Trainer trainer(model, train, validate, {.work_dir = "runs/a"},
//                              hookforge::ref(mlflow));                        // the rest
//
// What the run gets, metrics on one x axis, the global step (as TensorBoardLogger's):
//   params     `params` (hookforge-run: the config, flattened to dotted keys), once
//   tags       mlflow.runName, mlflow.source.name, mlflow.user, mlflow.source.git.commit
//              (the working directory's checkout, when there is one), hookforge.version,
//              and `tags`
//   metrics    train/<score>, val/<score> (each validation, between batches too), lr
//              (lr/0, lr/1, … for several groups), epoch_seconds, epoch, the epoch's figures
//              (HookProfiler's hook_ms/…), and with interval > 0 step/loss and step/lr every
//              `interval` training batches
//   status     FINISHED; KILLED when a signal stopped the run (hookforge-run: SIGINT,
//              SIGTERM, Slurm's requeue signal); FAILED, with the error as the tag
//              hookforge.error, when an exception ended fit()
//   artifacts  at the end, when the server stores them (mlflow server --serve-artifacts):
//              metrics.csv and metrics.jsonl of the work_dir, `config_text` as config.yaml,
//              and with log_checkpoint the best checkpoint (CheckpointSaver's best_*.pt)
// MLflow allows letters, digits, and _ - . / : and space in names: other characters of a
// metric's name become '_' (hook_ms/EMA.handle@on_post_step is hook_ms/EMA.handle_on_post_step).
// A param value longer than MLflow's 6000 characters is cut, and said.
//
// The server: `tracking_uri`, else $MLFLOW_TRACKING_URI (http:// or https://), with the
// environment MLflow's clients read: MLFLOW_TRACKING_TOKEN (a bearer token),
// MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD (basic auth),
// MLFLOW_TRACKING_INSECURE_TLS, MLFLOW_TRACKING_SERVER_CERT_PATH; the experiment:
// `experiment`, else $MLFLOW_EXPERIMENT_NAME, else "Default" (created when missing).
//
// Never in the step's way: handlers only queue (detail/mlflow_sender.hpp); a thread sends
// batches of up to 1000 metrics over one kept-alive connection. A server that does not
// answer at the start is a warning (strict: an error) and training goes on; while it is down
// metrics wait in a bounded queue (`queue_capacity`), and what does not fit is dropped,
// counted and said. At the end the logger waits up to `finish_timeout_seconds` for the queue.
//
// Resume: the run's id is the hook's state (saved in the trainer's checkpoints), and a resumed
// run continues it, skipping the steps it already logged. Before each checkpoint is written,
// the queue is sent (up to 10 s; not while the server is down): the steps before a
// checkpoint, which a resumed run does not repeat, are then on the server.
// Priority BELOW_NORMAL, as the other loggers: after the hooks that change scores.
#pragma once

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/hooks/detail/git_commit.hpp"
#include "hookforge/hooks/detail/mlflow_sender.hpp"
#include "hookforge/torch/data/host_read.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/torch/runners/trainer_types.hpp"
#include "hookforge/core/version.hpp"

namespace hookforge {

struct mlflow_logger_options {
  std::string tracking_uri = {};  ///< empty: $MLFLOW_TRACKING_URI
  std::string experiment = {};    ///< empty: $MLFLOW_EXPERIMENT_NAME, else "Default"
  std::string run_name = {};      ///< empty: the server names the run
  std::int64_t interval = 0;      ///< step/loss and step/lr every N training batches; 0: none
  std::vector<std::pair<std::string, std::string>> params = {};  ///< the run's params
  std::vector<std::pair<std::string, std::string>> tags = {};    ///< tags beside the usual
  std::string config_text = {};          ///< uploaded as the artifact config.yaml (empty: none)
  bool log_checkpoint = false;           ///< upload the work_dir's best_*.pt at the end
  std::size_t queue_capacity = 100'000;  ///< metrics waiting for the server at most
  double finish_timeout_seconds = 30;    ///< how long the end waits for the queue to drain
  bool strict = false;  ///< a server that does not answer at the start fails the run
};

class MLflowLogger {
 public:
  static constexpr int priority = priority::BELOW_NORMAL;

  explicit MLflowLogger(mlflow_logger_options options = {}) : options_(std::move(options)) {
    if (options_.tracking_uri.empty()) options_.tracking_uri = environment("MLFLOW_TRACKING_URI");
    const auto& uri = options_.tracking_uri;
    if (!uri.starts_with("http://") && !uri.starts_with("https://"))
      throw std::invalid_argument(fmt::format(
          "MLflowLogger: tracking_uri must be a tracking server's http:// or https:// address "
          "(or set MLFLOW_TRACKING_URI), got '{}'",
          uri));
    if (options_.experiment.empty()) options_.experiment = environment("MLFLOW_EXPERIMENT_NAME");
    if (options_.experiment.empty()) options_.experiment = "Default";
    if (options_.interval < 0)
      throw std::invalid_argument(fmt::format(
          "MLflowLogger: interval must be >= 0 (0: no step scalars), got {}", options_.interval));
    if (options_.queue_capacity == 0)
      throw std::invalid_argument("MLflowLogger: queue_capacity must be > 0");
  }

  /// A logger attached switched off (default_hooks without `.mlflow`): it is never fired,
  /// so it needs no server.
  static MLflowLogger switched_off() { return MLflowLogger(off_tag{}); }

  /// At on_training_began: the run created (or, resumed, taken up again) by the thread.
  void log(TrainerContext& ctx, points::on_training_began) {
    work_dir_ = ctx.work_dir;
    auto& s = shared();
    if (s.out) return;
    s.out = std::make_unique<detail::mlflow::sender>(
        detail::mlflow::sender_options{.tracking_uri = options_.tracking_uri,
                                       .http = http_options(),
                                       .experiment = options_.experiment,
                                       .run_name = options_.run_name,
                                       .user = environment("USER"),
                                       .capacity = options_.queue_capacity});
    const bool resuming = !s.run_id.empty();
    auto problem =
        s.out->start(s.run_id, tags(), resuming ? decltype(params()){} : params(), now_ms());
    if (problem.empty()) {
      s.run_id = s.out->run_id();
    } else {
      auto text = fmt::format("MLflowLogger: {}", problem);
      if (options_.strict) throw std::runtime_error(text + " (strict: the run stops)");
      warn(text + (s.out->gave_up() ? "; training goes on without MLflow"
                                    : "; training goes on, metrics wait for the server"));
      s.out->take_notes();  // the same, in the thread's words
    }
    say_notes();
  }

  /// At on_trainer_epoch_finished: the epoch's scores, learning rates and figures.
  void log(TrainerContext& ctx, points::on_trainer_epoch_finished) {
    const auto step = ctx.global_step;
    for (const auto& [name, value] : ctx.train_scores) queue("train/" + name, value, step);
    if (ctx.validated)
      for (const auto& [name, value] : ctx.val_scores) queue("val/" + name, value, step);
    learning_rates("lr", ctx.learning_rates, step);
    queue("epoch_seconds", ctx.epoch_seconds, step);
    queue("epoch", static_cast<double>(ctx.completed_epochs), step);
    for (const auto& [name, value] : ctx.epoch_figures) queue(name, value, step);
    say_notes();
  }

  /// At on_trainer_validation_finished (a validation between batches): its scores.
  void log(TrainerContext& ctx, points::on_trainer_validation_finished) {
    for (const auto& [name, value] : ctx.val_scores) queue("val/" + name, value, ctx.global_step);
  }

  /// At on_before_save_checkpoint: what was queued before the checkpoint reaches the server
  /// first (up to 10 s, and not while it is not answering), so that a run resumed from the
  /// checkpoint, which does not log those steps again, misses none of them.
  void log(TrainerContext&, points::on_before_save_checkpoint) {
    if (auto& out = shared().out) out->flush(10);
  }

  /// At on_training_finished: FINISHED, or KILLED when a signal stopped the run.
  void log(TrainerContext& ctx, points::on_training_finished) {
    end(ctx.stop_reason == "stop requested" ? "KILLED" : "FINISHED", {});
  }

  /// At on_training_failed: FAILED, with the error.
  void log(TrainerContext& ctx, points::on_training_failed) { end("FAILED", ctx.error); }

  /// What the runner handler reads from a context: the epoch counters and the step's loss.
  template <class C>
  static consteval std::string_view context_lacks() {
    if constexpr (std::is_same_v<C, TrainerContext>)
      return "";
    else if constexpr (!updates_parameters<C>)
      return "optimizer (MLflowLogger's step metrics come from the training runner: attach it "
             "there and to the Trainer)";
    else
      return step_row_lacks<C>();
  }

  /// At a training runner's on_post_step: step/loss and step/lr every `interval` batches.
  template <context_for<MLflowLogger> C>
    requires(!std::is_same_v<C, TrainerContext> && updates_parameters<C>)
  void log(C& ctx) {
    if (options_.interval == 0 || (ctx.global_step + 1) % options_.interval != 0 ||
        !ctx.loss.defined())
      return;
    const auto step = ctx.global_step + 1;
    queue("step/loss", host_read(ctx.loss), step);
    learning_rates("step/lr", step_learning_rates(ctx), step);
  }

  /// The MLflow run's id (empty until the server has created it); saved in checkpoints.
  std::string run_id() const { return state_->run_id; }
  const mlflow_logger_options& options() const { return options_; }

  state_map state_dict() const { return {{"run_id", state_->run_id}}; }
  void load_state_dict(const state_map& state) {
    state_->run_id = state_value<std::string>(state, "MLflowLogger", "run_id");
  }

  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(
      log, points::on_training_began, points::on_trainer_validation_finished,
      points::on_trainer_epoch_finished, points::on_before_save_checkpoint,
      points::on_training_finished, points::on_training_failed, points::on_post_step));

 private:
  struct off_tag {};
  explicit MLflowLogger(off_tag) {}

  // Shared by copies (a hook is copied before it is attached): one run, one thread.
  struct shared_state {
    std::string run_id;
    std::unique_ptr<detail::mlflow::sender> out;
  };
  shared_state& shared() { return *state_; }

  static std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
  }

  static std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  static detail::http::session_options http_options() {
    const auto insecure = environment("MLFLOW_TRACKING_INSECURE_TLS");
    return {.token = environment("MLFLOW_TRACKING_TOKEN"),
            .username = environment("MLFLOW_TRACKING_USERNAME"),
            .password = environment("MLFLOW_TRACKING_PASSWORD"),
            .insecure = insecure == "true" || insecure == "1",
            .ca_file = environment("MLFLOW_TRACKING_SERVER_CERT_PATH"),
            .timeout_seconds = 10};
  }

  /// MLflow's names: letters, digits, _ - . / : and space; anything else becomes '_'.
  static std::string mlflow_name(std::string name) {
    for (auto& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) &&
          std::string_view("_-./: ").find(c) == std::string_view::npos)
        c = '_';
    if (name.size() > detail::mlflow::batch_limits::key_length)
      name.resize(detail::mlflow::batch_limits::key_length);
    return name;
  }

  void queue(const std::string& name, double value, std::int64_t step) {
    if (auto& out = shared().out) out->log({mlflow_name(name), value, now_ms(), step});
  }

  /// "<tag>" for one parameter group, "<tag>/0", "<tag>/1", ... for several.
  void learning_rates(std::string_view tag, const std::vector<double>& lrs, std::int64_t step) {
    for (std::size_t i = 0; i < lrs.size(); ++i)
      queue(lrs.size() == 1 ? std::string(tag) : fmt::format("{}/{}", tag, i), lrs[i], step);
  }

  std::vector<detail::mlflow::key_value> tags() const {
    std::vector<detail::mlflow::key_value> out{{"mlflow.source.name", "hookforge"},
                                               {"mlflow.source.type", "LOCAL"},
                                               {"hookforge.version", HOOKFORGE_VERSION_STRING}};
    if (!options_.run_name.empty()) out.push_back({"mlflow.runName", options_.run_name});
    if (auto user = environment("USER"); !user.empty()) out.push_back({"mlflow.user", user});
    if (auto commit = detail::git_commit(std::filesystem::current_path()))
      out.push_back({"mlflow.source.git.commit", *commit});
    for (const auto& [key, value] : options_.tags) out.push_back({key, value});
    return out;
  }

  /// The params, within MLflow's limits: a key too long is left out, a value cut; said once.
  std::vector<detail::mlflow::key_value> params() const {
    using limits = detail::mlflow::batch_limits;
    std::vector<detail::mlflow::key_value> out;
    std::vector<std::string> cut, left_out;
    std::set<std::string> seen;  // MLflow refuses a batch naming a key twice
    for (const auto& [key, value] : options_.params) {
      if (key.size() > limits::key_length) {
        left_out.push_back(key.substr(0, 40) + "…");
        continue;
      }
      if (!seen.insert(mlflow_name(key)).second) continue;
      out.push_back({mlflow_name(key), value});
      if (value.size() > limits::param_value_length) {
        out.back().value.resize(limits::param_value_length);
        cut.push_back(key);
      }
    }
    if (!cut.empty())
      warn(fmt::format("MLflowLogger: {} param value(s) longer than MLflow's {} characters cut: {}",
                       cut.size(), limits::param_value_length, fmt::join(cut, ", ")));
    if (!left_out.empty())
      warn(
          fmt::format("MLflowLogger: {} param(s) with a key longer than MLflow's {} characters "
                      "left out: {}",
                      left_out.size(), limits::key_length, fmt::join(left_out, ", ")));
    return out;
  }

  /// The artifacts, the status, and what could not be sent.
  void end(std::string_view status, const std::string& error) {
    auto& s = shared();
    if (!s.out) return;
    if (s.out->gave_up()) {  // said at the start: "training goes on without MLflow"
      s.out.reset();
      return;
    }
    std::vector<detail::mlflow::artifact> files;
    for (const char* name : {"metrics.csv", "metrics.jsonl"})
      if (std::filesystem::is_regular_file(work_dir_ / name))
        files.push_back({name, work_dir_ / name});
    if (!options_.config_text.empty()) files.push_back({"config.yaml", {}, options_.config_text});
    if (options_.log_checkpoint) add_best_checkpoints(files);
    const auto report = s.out->finish(std::string(status), std::move(files),
                                      options_.finish_timeout_seconds, error);
    say_notes();
    std::vector<std::string> lost;
    if (report.dropped > 0)
      lost.push_back(fmt::format("{} dropped when the queue was full", report.dropped));
    if (report.refused > 0) lost.push_back(fmt::format("{} refused by the server", report.refused));
    if (report.unsent > 0)
      lost.push_back(fmt::format("{} still queued after {} s", report.unsent,
                                 options_.finish_timeout_seconds));
    if (!lost.empty())
      warn(fmt::format("MLflowLogger: {} metrics sent to {}; not sent: {}", report.sent,
                       s.out->uri(), fmt::join(lost, ", ")));
    if (!report.status_set)
      warn(fmt::format("MLflowLogger: the run's status ({}) did not reach {}", status,
                       s.out->uri()));
    s.out.reset();
  }

  void add_best_checkpoints(std::vector<detail::mlflow::artifact>& files) const {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(work_dir_, ec)) {
      const auto name = entry.path().filename().string();
      if (name.starts_with("best_") && name.ends_with(".pt"))
        files.push_back({"checkpoints/" + name, entry.path()});
    }
  }

  void say_notes() {
    if (auto& out = shared().out)
      for (const auto& note : out->take_notes()) warn("MLflowLogger: " + note);
  }

  mlflow_logger_options options_;
  std::filesystem::path work_dir_;
  std::shared_ptr<shared_state> state_ = std::make_shared<shared_state>();
};

}  // namespace hookforge
