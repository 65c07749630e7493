// hookforge-run: see include/hookforge/run/main.hpp and docs/config.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <stdexcept>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/core.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "cluster.hpp"
#include "command_line.hpp"
#include "export.hpp"
#include "malloc_tuning.hpp"
#include "output_lock.hpp"
#include "report.hpp"
#include "signal_stop.hpp"
#include "test_stage.hpp"
#include "work_dir.hpp"

#include "hookforge/config/builder.hpp"
#include "hookforge/config/document.hpp"
#include "hookforge/config/error.hpp"
#include "hookforge/config/section.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/distributed/environment.hpp"
#include "hookforge/hooks/checkpoint_saver.hpp"
#include "hookforge/run/default_config.hpp"  // generated from configs/default.yaml
#include "hookforge/run/distributed.hpp"
#include "hookforge/run/launch.hpp"
#include "hookforge/run/machine.hpp"
#include "hookforge/run/main.hpp"
#include "hookforge/run/registrations.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/run/trainer.hpp"
#include "hookforge/run/values.hpp"

namespace hookforge::run {

namespace detail {
enum class device_choice { automatic, cpu, cuda };
}  // namespace detail

template <>
struct enum_names<detail::device_choice> {
  static constexpr std::pair<std::string_view, detail::device_choice> values[] = {
      {"auto", detail::device_choice::automatic},
      {"cpu", detail::device_choice::cpu},
      {"cuda", detail::device_choice::cuda}};
};

std::string_view default_config() {
  return std::string_view(hookforge_run_default_config, sizeof hookforge_run_default_config);
}

namespace {

namespace cfg = hookforge::config;
namespace dist = hookforge::distributed;
using detail::closing_line;
using detail::command_line;
using detail::device_choice;
using detail::parse_command_line;
using detail::stopped_line;
using detail::usage_error;
using detail::usage_text;

constexpr std::string_view embedded_name = "configs/default.yaml (embedded)";
// For a `_target` no class is registered under: the stock hookforge-run knows only the
// built-ins, and a user's own class often reaches it by mistake.
constexpr std::string_view unregistered_note =
    "a class of your own needs a program built on hookforge::run::main (docs/config.md, "
    "\"Your own classes in a run\")";

/// The message on one line (the config error format is one line; a YAML parser's may not be).
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

/// A YAML single-quoted scalar holding `text` exactly.
std::string yaml_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    out.push_back(c);
    if (c == '\'') out.push_back('\'');
  }
  out.push_back('\'');
  return out;
}

/// The config's text (the file, read whole once it has parsed, or the embedded default),
/// then a comment line per --set: what TensorBoardLogger shows.
std::string config_as_run(const std::optional<std::string>& file,
                          const std::vector<std::string>& sets) {
  std::string text(default_config());
  if (file) {
    std::ifstream in(*file, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  for (const auto& s : sets) text += "# --set " + s + "\n";
  return text;
}

bool cuda_available() { return torch::cuda::is_available(); }

torch::Device resolve_device(device_choice choice) {
  switch (choice) {
    case device_choice::cpu:
      return torch::kCPU;
    case device_choice::cuda:
      return torch::kCUDA;
    case device_choice::automatic:
      break;
  }
  return cuda_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

/// The config's `system` section.
struct system_options {
  device_choice device = device_choice::automatic;
  std::int64_t seed = 0;
  std::int64_t threads = 0;  ///< 0: LibTorch's default
  std::optional<std::filesystem::path> work_dir;
  bool mixed_precision = false;
};

system_options read_system(cfg::builder& b) {
  using s = system_options;
  return cfg::read_section<s>(
      b, "system", cfg::field("device", &s::device), cfg::field("seed", &s::seed),
      cfg::field("threads", &s::threads)
          .check(within_cores,
                 fmt::format("a number of threads from 0 to {} (this machine's cores; 0: "
                             "LibTorch's default)",
                             machine_cores())),
      cfg::field("work_dir", &s::work_dir), cfg::field("mixed_precision", &s::mixed_precision));
}

void print_registry() {
  for (const auto* reg : cfg::registries()) {
    fmt::print("{}\n", reg->kind());
    for (const auto& e : reg->list()) {
      fmt::print("  {}  ({})\n", e.name, e.type);
      for (const auto& p : e.params)
        fmt::print("    {}: {}{}\n", p.name, p.type,
                   p.required ? std::string(", required") : fmt::format(" = {}", p.fallback));
    }
  }
}

int config_failure(const std::exception& e) {
  fmt::print(stderr, "{}\n", one_line(e.what()));
  return 2;
}

int usage_failure(const std::string& text) {
  fmt::print(stderr, "hookforge-run: {} (see hookforge-run --help)\n", one_line(text));
  return 2;
}

/// Exit 2 without touching the run: the output directory is another run's.
int refusal(const std::string& text) {
  fmt::print(stderr, "hookforge-run: {}\n", one_line(text));
  return 2;
}

int run_failure(const std::string& text) {
  fmt::print(stderr, "hookforge-run: {}\n", one_line(text));
  return 1;
}

int run_main(int argc, char** argv) {
  detail::tune_malloc();
  link_registrations();
  const auto started = std::chrono::steady_clock::now();

  if (argc > 1 && std::string_view(argv[1]) == "export")
    return detail::export_main(argc - 1, argv + 1);

  command_line cli;
  try {
    cli = parse_command_line(argc, argv);
  } catch (const usage_error& e) {
    return usage_failure(e.what());
  }
  if (cli.help) {
    fmt::print("{}", usage_text);
    return 0;
  }
  if (cli.print_default) {
    fmt::print("{}", default_config());
    return 0;
  }
  if (cli.list) {
    print_registry();
    return 0;
  }

  // SIGINT and SIGTERM stop the training after its current epoch (signal_stop.hpp); the
  // Trainer is built with the token, the handlers come just before it trains.
  detail::signal_stop stopper;
  settings().stop_token = stopper.token();

  std::optional<device_choice> cli_device;
  if (cli.device) {
    const auto& names = enum_names<device_choice>::values;
    for (const auto& [name, choice] : names)
      if (name == *cli.device) cli_device = choice;
    if (!cli_device)
      return usage_failure(
          fmt::format("--device must be cpu, cuda or auto, got '{}'", *cli.device));
    if (*cli_device == device_choice::cuda && !cuda_available())
      return usage_failure(
          "--device cuda: CUDA is not available on this machine (torch::cuda::is_available() is "
          "false); "
          "use --device cpu or --device auto");
  }
  if (cli.resume_path && !std::filesystem::is_regular_file(*cli.resume_path))
    return usage_failure(fmt::format("--resume: no checkpoint file at '{}'", *cli.resume_path));

  // Several ranks. --nproc N: this process checks the config, then launches N ranks (copies of
  // itself) and follows them. WORLD_SIZE > 1 in the environment (set by --nproc, or by hand on
  // each machine of a multi-machine run): this process is rank RANK of them.
  // torchrun's and srun's variables say the same (environment.hpp).
  if (cli.nproc && *cli.nproc == 1) cli.nproc.reset();  // one rank: this process
  int rank = 0, world_size = 1;
  dist::rank_environment env;
  try {
    env = dist::read_rank_environment();
    if (!cli.nproc) {
      world_size = env.world_size.value_or(1);
      rank = env.rank.value_or(0);
      if (world_size > 1) dist::check_rank(rank, world_size);
    }
  } catch (const std::invalid_argument& e) {
    return usage_failure(e.what());
  }
  if (cli.nproc) world_size = *cli.nproc;
  // A launcher's restart (torchrun, a requeued Slurm job) goes on with its job's run
  // (cluster.hpp), once the output directory is known to hold it.
  const auto job = detail::job_identity(env);
  auto restart = cli.check || !job ? std::nullopt : detail::restart_reason(env);
  const bool rank_mode = !cli.nproc && world_size > 1;
  if (world_size > 1 && !detail::have_dist())
    return usage_failure(fmt::format(
        "{} ranks: this hookforge-run was built without hookforge::distributed (LibTorch's c10d "
        "and Gloo's headers, Debian: libgloo-dev); it runs one rank only",
        world_size));
  if (rank_mode)
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the launcher as they are written
  settings().rank = rank;
  settings().world_size = world_size;

  // Read and build everything; nothing is written before this succeeds. With several ranks
  // the first build only checks the config (before any rank waits for another); each rank
  // builds again once it has joined, and only rank 0 reports warnings.
  std::unique_ptr<cfg::builder> b;
  std::shared_ptr<TrainerComponent> trainer;
  std::optional<detail::test_settings> test;
  system_options system;
  distributed_settings distributed;
  std::vector<std::string> warnings;
  auto mode = restart         ? detail::start_mode::resume  // its run's directory
              : cli.overwrite ? detail::start_mode::overwrite
              : cli.resume    ? detail::start_mode::resume
                              : detail::start_mode::fresh;
  std::optional<std::filesystem::path> default_base;  // runs/<config>, where no directory is given
  bool print_warnings = !cli.check && !cli.nproc && !rank_mode;
  auto forward = set_warning_sink([&](std::string_view text) {
    warnings.emplace_back(text);
    if (print_warnings) fmt::print(stderr, "hookforge warning: {}\n", text);
  });
  struct restore_sink {
    warning_sink& previous;
    ~restore_sink() { set_warning_sink(std::move(previous)); }
  } restore{forward};
  auto build = [&]() -> std::optional<int> {
    trainer.reset();
    b.reset();
    warnings.clear();
    try {
      auto doc = cli.config ? cfg::document::load_file(*cli.config)
                            : cfg::document::parse(default_config(), std::string(embedded_name));
      for (const auto& s : cli.sets) doc.set(s);
      settings().config_text = config_as_run(cli.config, cli.sets);
      // --output is system.work_dir: a config's ${system.work_dir} sees it. Without it, the
      // config's work_dir (or runs/<config>) is a base: a new run goes to the first of it,
      // it-2, it-3 ... that holds no run (work_dir.hpp), and ${system.work_dir} sees that one.
      // A system that is no mapping is left as it is, for read_system to report.
      default_base.reset();
      std::optional<std::string> work_dir = cli.output;
      auto system_value = doc.root().find("system");
      if (!work_dir && (!system_value || system_value->is_map())) {
        auto configured = system_value ? system_value->find("work_dir") : std::nullopt;
        auto base = configured ? doc.resolve(*configured) : cfg::value{};
        if (!configured)
          default_base = std::filesystem::path("runs") /
                         (cli.config ? std::filesystem::path(*cli.config).stem() : "default");
        else if (base.is_scalar() && !base.scalar().empty())  // else read_system reports it
          default_base = std::filesystem::path(base.scalar());
        if (default_base) work_dir = detail::default_work_dir(*default_base, mode).string();
      }
      if (work_dir && (!system_value || system_value->is_map())) {
        if (!system_value) doc.set("system={}");
        doc.set("system.work_dir=" + yaml_quoted(*work_dir));
      }
      b = std::make_unique<cfg::builder>(
          std::move(doc), cfg::build_options{.strict = cli.strict,
                                             .rank = rank,
                                             .output_dir = work_dir.value_or(std::string()),
                                             .paths_outside_output = cli.paths_outside_output,
                                             .unregistered_note = std::string(unregistered_note)});
      system = read_system(*b);
      distributed = read_distributed(*b);
      if (world_size > 1) detail::set_up_data_parallel(distributed);
      if (cli_device) system.device = *cli_device;
      if (!cli_device && system.device == device_choice::cuda && !cuda_available()) {
        const auto v = *cfg::section_value(*b, "system")->find("device");
        throw cfg::config_error(v.where(), v.key(),
                                "a device this machine has (cpu or auto: CUDA is not available, "
                                "torch::cuda::is_available() is false)",
                                v.describe());
      }
      auto& s = settings();
      s.device = resolve_device(system.device);
      if (s.device.is_cuda() && world_size > 1) {
        // Each rank on its own GPU: LOCAL_RANK's, else rank modulo the GPUs (as
        // hookforge::distributed's NCCL backend picks it).
        const int gpus = static_cast<int>(torch::cuda::device_count());
        const auto local = dist::read_rank_environment().local_rank;
        s.device = torch::Device(torch::kCUDA,
                                 static_cast<c10::DeviceIndex>(local ? *local : rank % gpus));
      }
      s.mixed_precision = system.mixed_precision;
      s.work_dir = system.work_dir ? *system.work_dir : std::filesystem::path("runs") / "default";
      if (system.threads > 0) torch::set_num_threads(static_cast<int>(system.threads));
      torch::manual_seed(static_cast<std::uint64_t>(system.seed));

      if (!b->doc().root().find("trainer"))
        throw cfg::config_error(
            cfg::location{cli.config ? *cli.config : std::string(embedded_name), 1, 1}, "trainer",
            "a trainer entry at the top level (trainer: {_target: Trainer, params: {...}})",
            "no such key");
      trainer = b->get<std::shared_ptr<TrainerComponent>>("trainer");
      trainer->check_built_run(*b, cli.strict);
      test = detail::read_test_settings(*b, *trainer);
      if (cli.test_only && !test)
        throw cfg::config_error(
            cfg::location{cli.config ? *cli.config : std::string(embedded_name), 1, 1}, "test",
            "a test section for --test-only (test: {loader: ${ref:loaders.test}})", "no such key");
    } catch (const cfg::config_error& e) {
      return config_failure(e);
    } catch (const std::exception& e) {
      // Not expected: the builder reports what a class refuses as config_errors.
      return run_failure(fmt::format("building the run failed: {}", e.what()));
    }

    return std::nullopt;
  };
  if (auto failed = build()) return *failed;
  if (rank_mode && !cli.check) {
    try {
      detail::join_from_env(distributed);
    } catch (const std::invalid_argument& e) {
      return usage_failure(e.what());
    } catch (const std::exception& e) {
      return run_failure(e.what());
    }
    print_warnings = rank == 0;
    if (auto failed = build()) return *failed;
  }
  const auto& work_dir = settings().work_dir;
  const auto checkpoint_dir = trainer->checkpoint_dir();
  // A restart goes on with its newest checkpoint (before a --resume file), never --overwrite.
  if (restart && detail::written_by_job(work_dir, *job)) {
    cli.resume = true;
    cli.overwrite = false;
    mode = detail::start_mode::resume;
  } else if (restart) {
    if (rank == 0)
      fmt::print("hookforge-run: {}, but {} holds no run of {}: starting as its first attempt\n",
                 *restart, work_dir.string(), *job);
    restart.reset();
    mode = cli.overwrite ? detail::start_mode::overwrite
           : cli.resume  ? detail::start_mode::resume
                         : detail::start_mode::fresh;
  }
  if (cli.check) {
    fmt::print("{}: the config builds (device {}, work_dir {})\n\n",
               cli.config ? *cli.config : std::string(embedded_name), settings().device.str(),
               work_dir.string());
    fmt::print("{}", trainer->format_bindings());
    fmt::print("\n{}", trainer->batch_fields().format());
    if (warnings.empty()) {
      fmt::print("\nwarnings: none\n");
    } else {
      fmt::print("\nwarnings: {}\n", warnings.size());
      for (const auto& w : warnings) fmt::print("  {}\n", w);
    }
    return 0;
  }
  // --test-only on a directory without a run: refused before anything is created there.
  if (cli.test_only && !cli.resume_path &&
      !std::filesystem::exists(std::filesystem::symlink_status(checkpoint_dir / "last_checkpoint")))
    return refusal(fmt::format("--test-only: {} holds no run to test (no last_checkpoint)",
                               checkpoint_dir.string()));
  // One run per output directory: the lock is taken before the first file is written and held
  // until exit, and the earlier run's files there are kept unless the command line said
  // otherwise (work_dir.hpp); --nproc does both once, here in the launcher, for its ranks.
  // With several ranks, rank 0 alone creates the work directory and prints; every rank
  // resumes from the same checkpoint.
  std::optional<detail::output_lock> lock;
  const bool speaks = rank == 0;
  const bool claims = speaks && !detail::output_lock::held_by_parent();
  if (claims) {
    const bool written_by_run = std::filesystem::exists(work_dir / detail::output_lock::file_name);
    if (auto problem = detail::prepare_work_dir(work_dir)) return run_failure(*problem);
    auto taken = detail::output_lock::take(work_dir);
    if (auto* busy = std::get_if<std::string>(&taken)) return refusal(*busy);
    lock.emplace(std::move(std::get<detail::output_lock>(taken)));
    if (!(cli.resume && (cli.resume_path || std::filesystem::exists(std::filesystem::symlink_status(
                                                checkpoint_dir / "last_checkpoint")))))
      if (auto problem = detail::claim_work_dir(work_dir, mode, written_by_run, checkpoint_dir)) {
        if (!written_by_run) lock->remove(work_dir);
        return refusal(*problem);
      }
    if (job)
      if (auto problem = detail::record_job(work_dir, *job)) return run_failure(*problem);
    if (default_base && work_dir != *default_base && mode != detail::start_mode::resume)
      fmt::print("hookforge-run: {} holds an earlier run; this one writes to {}\n",
                 default_base->string(), work_dir.string());
  }
  std::optional<std::filesystem::path> from;
  if (cli.resume) {
    try {
      if (!cli.resume_path || restart) from = latest_checkpoint(checkpoint_dir);
      if (!from && cli.resume_path) from = std::filesystem::path(*cli.resume_path);
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
      detail::run_test_stage(*trainer, *test, checkpoint_dir, work_dir, speaks);
    } catch (const std::exception& e) {
      return run_failure(fmt::format("the test failed: {}", e.what()));
    }
    return 0;
  };
  if (cli.test_only && !from)
    return refusal(fmt::format("--test-only: {} holds no checkpoint of a run to test",
                               checkpoint_dir.string()));
  if (cli.resume) {
    if (!from) {
      if (speaks)
        fmt::print("hookforge-run: {}: no last_checkpoint in {}; starting a new run\n",
                   restart.value_or("--resume"), checkpoint_dir.string());
    } else {
      std::vector<std::string> schedule_changes;
      try {
        schedule_changes = trainer->load_checkpoint(*from);
      } catch (const std::exception& e) {
        return run_failure(fmt::format("cannot resume from '{}': {}", from->string(), e.what()));
      }
      if (speaks) {
        fmt::print("hookforge-run: {}resumed from {} ({} epochs done)\n",
                   restart ? *restart + ": " : "", from->string(), trainer->completed_epochs());
        if (!schedule_changes.empty())
          fmt::print(
              "hookforge-run: the scheduler goes on with the config's settings from epoch {}: "
              "{}\n",
              trainer->completed_epochs() + 1, hookforge::join_names(schedule_changes, ", "));
      }
      if (cli.test_only) return test_stage();
      if (trainer->completed_epochs() >= trainer->config().epochs) {
        if (speaks)
          fmt::print(
              "hookforge-run: the run has done its {} epochs: nothing to train "
              "(--set trainer.params.epochs=N trains it further)\n",
              trainer->config().epochs);
        return 0;
      }
    }
  }

  fit_result result;
  const int requeue_signal =
      env.slurm_job ? detail::signal_number(name_of(distributed.requeue_signal)) : 0;
  stopper.arm(trainer->stops_mid_epoch()
                  ? ": stopping after this batch, to save it (a second signal stops now)"
                  : ": stopping after this epoch, to save it (a second signal stops now)",
              requeue_signal);
  try {
    result = trainer->fit();
  } catch (const std::exception& e) {
    return run_failure(fmt::format("the run failed: {}", e.what()));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (speaks) {
    fmt::print("{}\n", closing_line(result, seconds));
    if (auto summary = detail::data_parallel_summary(); !summary.empty())
      fmt::print("hookforge-run: {}\n", summary);
  }
  std::fflush(stdout);
  const int signal = stopper.received();
  bool requeue = false;
  try {  // every rank, once rank 0 has saved: a requeue signal to any rank requeues the job
    requeue = detail::on_any_rank(requeue_signal != 0 && signal == requeue_signal);
  } catch (const std::exception& e) {
    return run_failure(fmt::format("after the run: {}", e.what()));
  }
  if (requeue) {
    if (speaks) {
      fmt::print(stderr, "{}\n", stopped_line(requeue_signal, result, checkpoint_dir));
      if (auto why_not = detail::requeue_slurm_job(*env.slurm_job))
        fmt::print(stderr, "hookforge-run: {}\n", *why_not);
      else
        fmt::print(stderr, "hookforge-run: Slurm job {} requeued: it goes on from there\n",
                   *env.slurm_job);
    }
    return 128 + requeue_signal;
  }
  if (signal) {
    if (speaks) fmt::print(stderr, "{}\n", stopped_line(signal, result, checkpoint_dir));
    return 128 + signal;
  }
  return test ? test_stage() : 0;
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
