// hookforge-run: see include/hookforge/run/main.hpp and docs/config.md.
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <stdexcept>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/core.h>
#include <torch/types.h>

#include "cluster.hpp"
#include "command_line.hpp"
#include "config_file.hpp"
#include "exits.hpp"
#include "export.hpp"
#include "output_lock.hpp"
#include "ranks.hpp"
#include "report.hpp"
#include "signal_stop.hpp"
#include "system.hpp"
#include "test_stage.hpp"
#include "work_dir.hpp"

#include "hookforge/config/builder.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/distributed/environment.hpp"
#include "hookforge/hooks/checkpoint_saver.hpp"
#include "hookforge/run/distributed.hpp"
#include "hookforge/run/launch.hpp"
#include "hookforge/run/main.hpp"
#include "hookforge/run/registrations.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/run/trainer.hpp"
#include "hookforge/torch/runners/malloc_tuning.hpp"

namespace hookforge::run {

namespace {

namespace cfg = hookforge::config;
namespace dist = hookforge::distributed;
namespace fs = std::filesystem;
using detail::closing_line;
using detail::command_line;
using detail::config_failure;
using detail::device_choice;
using detail::rank_setup;
using detail::refusal;
using detail::run_failure;
using detail::start_mode;
using detail::stopped_line;
using detail::usage_error;
using detail::usage_failure;

// For a `_target` no class is registered under: the stock hookforge-run knows only the
// built-ins, and a user's own class often reaches it by mistake.
constexpr std::string_view unregistered_note =
    "a class of your own needs a program built on hookforge::run::main (docs/config.md, "
    "\"Your own classes in a run\")";

start_mode mode_of(const command_line& cli) {
  return cli.overwrite ? start_mode::overwrite
         : cli.resume  ? start_mode::resume
                       : start_mode::fresh;
}

/// What building the config gives.
struct built_run {
  std::unique_ptr<cfg::builder> builder;
  std::shared_ptr<TrainerComponent> trainer;
  std::optional<detail::test_settings> test;
  distributed_settings distributed;
  std::optional<fs::path> default_base;  ///< runs/<config>, where no directory is given
};

/// Reads and builds everything; nothing is written. The exit code when it failed (the
/// error printed), else nullopt with `run` filled.
std::optional<int> build_run(const command_line& cli, start_mode mode,
                             std::optional<device_choice> cli_device, const rank_setup& ranks,
                             built_run& run) {
  run.trainer.reset();
  run.builder.reset();
  try {
    auto [doc, work_dir, default_base] = detail::load_config(cli, mode);
    run.default_base = std::move(default_base);
    settings().config_text = detail::config_as_run(cli.config, cli.sets);
    settings().strict = cli.strict;
    settings().audit_syncs = cli.audit_syncs;
    run.builder = std::make_unique<cfg::builder>(
        std::move(doc), cfg::build_options{.strict = cli.strict,
                                           .rank = ranks.rank,
                                           .output_dir = work_dir.value_or(std::string()),
                                           .paths_outside_output = cli.paths_outside_output,
                                           .unregistered_note = std::string(unregistered_note)});
    auto& b = *run.builder;
    // Once the builder has validated the document: its depth and node count are bounded (an
    // alias of itself would not end).
    settings().config_params = detail::config_params(b.doc().root().node());
    detail::apply_system(b, cli_device, ranks);
    run.distributed = read_distributed(b);
    if (ranks.world_size > 1) detail::set_up_data_parallel(run.distributed);
    if (!b.doc().root().find("trainer"))
      throw cfg::config_error(
          cfg::location{detail::config_name(cli), 1, 1}, "trainer",
          "a trainer entry at the top level (trainer: {_target: Trainer, params: {...}})",
          "no such key");
    run.trainer = b.get<std::shared_ptr<TrainerComponent>>("trainer");
    run.trainer->check_built_run(b, cli.strict);
    run.test = detail::read_test_settings(b, *run.trainer);
    if (cli.test_only && !run.test)
      throw cfg::config_error(
          cfg::location{detail::config_name(cli), 1, 1}, "test",
          "a test section for --test-only (test: {loader: ${ref:loaders.test}})", "no such key");
  } catch (const cfg::config_error& e) {
    return config_failure(e);
  } catch (const std::exception& e) {
    // Not expected: the builder reports what a class refuses as config_errors.
    return run_failure(fmt::format("building the run failed: {}", e.what()));
  }
  return std::nullopt;
}

/// --check: what the config builds, its bindings and fields, and the warnings.
void print_check(const command_line& cli, TrainerComponent& trainer,
                 const std::vector<std::string>& warnings) {
  fmt::print("{}: the config builds (device {}, work_dir {})\n\n", detail::config_name(cli),
             settings().device.str(), settings().work_dir.string());
  fmt::print("{}", trainer.format_bindings());
  fmt::print("\n{}", trainer.batch_fields().format());
  if (warnings.empty()) {
    fmt::print("\nwarnings: none\n");
  } else {
    fmt::print("\nwarnings: {}\n", warnings.size());
    for (const auto& w : warnings) fmt::print("  {}\n", w);
  }
}

/// The checkpoint --resume goes on from: a restart's newest one (before a --resume file),
/// else the file, else the work directory's newest; nullopt when there is none.
std::optional<fs::path> resume_source(const command_line& cli, const rank_setup& ranks,
                                      const fs::path& checkpoint_dir) {
  std::optional<fs::path> from;
  if (!cli.resume_path || ranks.restart) from = latest_checkpoint(checkpoint_dir);
  if (!from && cli.resume_path) from = fs::path(*cli.resume_path);
  return from;
}

/// Loads `from` into the trainer and says so; the exit code when that failed, else nullopt.
std::optional<int> resume_from(const fs::path& from, TrainerComponent& trainer,
                               const rank_setup& ranks, bool speaks) {
  std::vector<std::string> schedule_changes;
  try {
    schedule_changes = trainer.load_checkpoint(from);
  } catch (const std::exception& e) {
    return run_failure(fmt::format("cannot resume from '{}': {}", from.string(), e.what()));
  }
  if (!speaks) return std::nullopt;
  fmt::print("hookforge-run: {}resumed from {} ({} epochs done)\n",
             ranks.restart ? *ranks.restart + ": " : "", from.string(), trainer.completed_epochs());
  if (!schedule_changes.empty())
    fmt::print(
        "hookforge-run: the scheduler goes on with the config's settings from epoch {}: {}\n",
        trainer.completed_epochs() + 1, hookforge::join_names(schedule_changes, ", "));
  return std::nullopt;
}

/// The line a run prints as it ends: the closing line, or, for a resumed run whose
/// max_steps were spent before it trained anything, that there was nothing to train.
void print_end(const fit_result& result, TrainerComponent& trainer, double seconds) {
  if (result.history.empty() && result.stop_reason == "max_steps") {
    fmt::print(
        "hookforge-run: the run has taken its max_steps ({} updates): nothing to train (--set "
        "trainer.params.max_steps=N trains it further)\n",
        trainer.config().max_steps);
    return;
  }
  fmt::print("{}\n", closing_line(result, seconds));
  if (auto summary = detail::data_parallel_summary(); !summary.empty())
    fmt::print("hookforge-run: {}\n", summary);
}

/// After fit() returned on a signal: a requeue signal to any rank requeues the Slurm job
/// (once rank 0 has saved); any signal exits 128 + its number. nullopt when none came.
std::optional<int> after_signal(int signal, int requeue_signal, const rank_setup& ranks,
                                const fit_result& result, const fs::path& checkpoint_dir,
                                bool speaks) {
  bool requeue = false;
  try {
    requeue = detail::on_any_rank(requeue_signal != 0 && signal == requeue_signal);
  } catch (const std::exception& e) {
    return run_failure(fmt::format("after the run: {}", e.what()));
  }
  if (requeue) {
    if (speaks) {
      fmt::print(stderr, "{}\n", stopped_line(requeue_signal, result, checkpoint_dir));
      if (auto why_not = detail::requeue_slurm_job(*ranks.env.slurm_job))
        fmt::print(stderr, "hookforge-run: {}\n", *why_not);
      else
        fmt::print(stderr, "hookforge-run: Slurm job {} requeued: it goes on from there\n",
                   *ranks.env.slurm_job);
    }
    return 128 + requeue_signal;
  }
  if (signal) {
    if (speaks) fmt::print(stderr, "{}\n", stopped_line(signal, result, checkpoint_dir));
    return 128 + signal;
  }
  return std::nullopt;
}

int run_main(int argc, char** argv) {
  tune_malloc();  // before the datasets: their start-up allocations are a training's too
  link_registrations();
  const auto started = std::chrono::steady_clock::now();

  if (argc > 1 && std::string_view(argv[1]) == "export")
    return detail::export_main(argc - 1, argv + 1);

  command_line cli;
  std::optional<device_choice> cli_device;
  rank_setup ranks;
  try {
    cli = detail::parse_command_line(argc, argv);
    if (auto done = detail::info_command(cli)) return *done;
    cli_device = detail::device_option(cli);
    if (cli.resume_path && !fs::is_regular_file(*cli.resume_path))
      throw usage_error(fmt::format("--resume: no checkpoint file at '{}'", *cli.resume_path));
    ranks = detail::resolve_ranks(cli, detail::have_dist());
  } catch (const usage_error& e) {
    return usage_failure(e.what());
  }
  // SIGINT and SIGTERM stop the training after its current epoch (signal_stop.hpp); the
  // Trainer is built with the token, the handlers come just before it trains.
  detail::signal_stop stopper;
  settings().stop_token = stopper.token();
  if (ranks.rank_mode)
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the launcher as they are written
  settings().rank = ranks.rank;
  settings().world_size = ranks.world_size;

  // Read and build everything; nothing is written before this succeeds. With several ranks
  // the first build only checks the config (before any rank waits for another); each rank
  // builds again once it has joined, and only rank 0 reports warnings.
  built_run run;
  std::vector<std::string> warnings;
  auto mode = ranks.restart ? start_mode::resume : mode_of(cli);  // a restart: its run's directory
  bool print_warnings = !cli.check && !cli.nproc && !ranks.rank_mode;
  auto forward = set_warning_sink([&](std::string_view text) {
    warnings.emplace_back(text);
    if (print_warnings) fmt::print(stderr, "hookforge warning: {}\n", text);
  });
  struct restore_sink {
    warning_sink& previous;
    ~restore_sink() { set_warning_sink(std::move(previous)); }
  } restore{forward};
  if (auto failed = build_run(cli, mode, cli_device, ranks, run)) return *failed;
  if (ranks.rank_mode && !cli.check) {
    try {
      detail::join_from_env(run.distributed);
    } catch (const std::invalid_argument& e) {
      return usage_failure(e.what());
    } catch (const std::exception& e) {
      return run_failure(e.what());
    }
    print_warnings = ranks.rank == 0;
    warnings.clear();
    if (auto failed = build_run(cli, mode, cli_device, ranks, run)) return *failed;
  }
  auto& trainer = *run.trainer;
  const auto& work_dir = settings().work_dir;
  const auto checkpoint_dir = trainer.checkpoint_dir();
  // A restart goes on with its newest checkpoint (before a --resume file), never --overwrite.
  if (ranks.restart && detail::written_by_job(work_dir, *ranks.job)) {
    cli.resume = true;
    cli.overwrite = false;
  } else if (ranks.restart) {
    if (ranks.rank == 0)
      fmt::print("hookforge-run: {}, but {} holds no run of {}: starting as its first attempt\n",
                 *ranks.restart, work_dir.string(), *ranks.job);
    ranks.restart.reset();
  }
  mode = mode_of(cli);
  if (cli.check) {
    print_check(cli, trainer, warnings);
    return 0;
  }
  // --test-only on a directory without a run: refused before anything is created there.
  if (cli.test_only && !cli.resume_path &&
      !fs::exists(fs::symlink_status(checkpoint_dir / "last_checkpoint")))
    return refusal(fmt::format("--test-only: {} holds no run to test (no last_checkpoint)",
                               checkpoint_dir.string()));
  // One run per output directory: the lock is taken before the first file is written and held
  // until exit, and the earlier run's files there are kept unless the command line said
  // otherwise (work_dir.hpp); --nproc does both once, here in the launcher, for its ranks.
  // With several ranks, rank 0 alone creates the work directory and prints; every rank
  // resumes from the same checkpoint.
  std::optional<detail::output_lock> lock;
  const bool speaks = ranks.rank == 0;
  if (speaks && !detail::output_lock::held_by_parent()) {
    auto taken = detail::take_work_dir({.dir = work_dir,
                                        .checkpoints = checkpoint_dir,
                                        .mode = mode,
                                        .resume_file = cli.resume_path.has_value(),
                                        .job = ranks.job,
                                        .default_base = run.default_base});
    if (auto* code = std::get_if<int>(&taken)) return *code;
    lock.emplace(std::move(std::get<detail::output_lock>(taken)));
  }
  std::optional<fs::path> from;
  if (cli.resume) {
    try {
      from = resume_source(cli, ranks, checkpoint_dir);
    } catch (const std::runtime_error& e) {
      return refusal(fmt::format("--resume: {}", e.what()));
    }
  }
  if (cli.nproc) {
    if (lock) lock->share_with_children();
    if (!cli.output) {  // the ranks write where this process chose
      cli.rank_args.push_back("--output");
      cli.rank_args.push_back(work_dir.string());
    }
    try {
      return detail::launch_local(*cli.nproc, cli.rank_args);
    } catch (const detail::launch_error& e) {
      return run_failure(e.what());
    }
  }

  // The config's test section, once training ends or alone (--test-only).
  auto test_stage = [&]() -> int {
    try {
      detail::run_test_stage(trainer, *run.test, checkpoint_dir, work_dir, speaks);
    } catch (const std::exception& e) {
      return run_failure(fmt::format("the test failed: {}", e.what()));
    }
    return 0;
  };
  if (cli.test_only && !from)
    return refusal(fmt::format("--test-only: {} holds no checkpoint of a run to test",
                               checkpoint_dir.string()));
  if (from) {
    if (auto failed = resume_from(*from, trainer, ranks, speaks)) return *failed;
    if (cli.test_only) return test_stage();
    if (trainer.completed_epochs() >= trainer.config().epochs) {
      if (speaks)
        fmt::print(
            "hookforge-run: the run has done its {} epochs: nothing to train (--set "
            "trainer.params.epochs=N trains it further)\n",
            trainer.config().epochs);
      return 0;
    }
  } else if (cli.resume && speaks) {
    fmt::print("hookforge-run: {}: no last_checkpoint in {}; starting a new run\n",
               ranks.restart.value_or("--resume"), checkpoint_dir.string());
  }

  fit_result result;
  const int requeue_signal =
      ranks.env.slurm_job ? detail::signal_number(name_of(run.distributed.requeue_signal)) : 0;
  stopper.arm(trainer.stops_mid_epoch()
                  ? ": stopping after this batch, to save it (a second signal stops now)"
                  : ": stopping after this epoch, to save it (a second signal stops now)",
              requeue_signal);
  try {
    result = trainer.fit();
  } catch (const std::exception& e) {
    return run_failure(fmt::format("the run failed: {}", e.what()));
  }
  if (speaks)
    print_end(result, trainer,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  std::fflush(stdout);
  if (auto stopped =
          after_signal(stopper.received(), requeue_signal, ranks, result, checkpoint_dir, speaks))
    return *stopped;
  return run.test ? test_stage() : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    return run_failure(fmt::format("unexpected error: {}", e.what()));
  }
}

}  // namespace hookforge::run
