// hookforge-run's command line (src/run/command_line.hpp).
#include "command_line.hpp"

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/registry.hpp"
#include "hookforge/core/runtime/closest_names.hpp"
#include "hookforge/core/runtime/join.hpp"
#include "hookforge/run/main.hpp"

namespace hookforge::run::detail {

const std::string_view usage_text = R"(usage: hookforge-run [CONFIG] [options]

Builds the run a YAML config describes and trains it. Without CONFIG, the config
embedded at build time (configs/default.yaml) runs.

options:
  --set KEY=VALUE    replace the value at KEY (dotted path) before anything is read;
                     VALUE is YAML (3, true, abc, [1, 2], ${ref:x}); repeatable
  --strict           every warning is an error
  --audit-syncs      count the operators that make the host wait for a GPU (item(), a
                     boolean mask, nonzero, a blocking copy), by step, phase, point and
                     hook, and print the table after training; on a CPU as on CUDA (an
                     audited run is slower: docs/hooks.md, SyncAudit)
  --check            build everything, print each component's binding table and the
                     warnings, train nothing, create no file
  --output DIR       the work directory (checkpoints, metrics); replaces system.work_dir
  --resume [CKPT]    continue from CKPT, or from the checkpoint the work directory's
                     last_checkpoint names (a new run where there is none and no
                     checkpoint); also --resume=CKPT
  --overwrite        discard the earlier run in the work directory and start anew (a
                     new run never writes over an earlier one's files otherwise)
  --test-only        with --resume: train nothing, run the config's test section (its
                     loader scored by the validation runner's metrics, on the run's best
                     or last checkpoint) and write test_metrics.json; without it, a test
                     section runs once training ends
  --allow-outside-output
                     let the config's output paths (a hook's out_dir) lead out of the
                     work directory; without it, a relative one is taken under the work
                     directory and one that leaves it is a config error
  --device DEVICE    cpu, cuda or auto (cuda when available); replaces system.device
  --nproc N          run N ranks on this machine (data-parallel, over 127.0.0.1): the
                     config is checked once, then N copies of this program train it, their
                     output prefixed [rank K]; one failing stops them all (exit 1).
                     Without --nproc, WORLD_SIZE > 1 in the environment makes this process
                     rank RANK of a multi-machine run (docs/distributed.md)
  --list             print every registered class of every kind with its parameters
  --print-default    print the embedded default config
  --help             this text

hookforge-run export RUN_OR_CHECKPOINT [--format safetensors|pth] [--output FILE]
                     writes the model weights of a run's best (or last) checkpoint, or
                     of a checkpoint, as a file Python reads (docs/weights.md)

exit codes: 0 done; 1 the run failed; 2 a config or command-line error.
See docs/config.md.
)";

namespace {

bool looks_like_config(std::string_view arg) {
  return arg.ends_with(".yaml") || arg.ends_with(".yml");
}

}  // namespace

command_line parse_command_line(int argc, char** argv) {
  static constexpr std::string_view options[] = {
      "--set",           "--strict",     "--check",  "--output",
      "--resume",        "--overwrite",  "--device", "--list",
      "--print-default", "--help",       "--nproc",  "--allow-outside-output",
      "--test-only",     "--audit-syncs"};
  command_line out;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::size_t first = i;
    std::string arg = args[i];
    if (arg == "-h") arg = "--help";
    if (!arg.starts_with("-") || arg == "-") {
      if (out.config)
        throw usage_error(
            fmt::format("a second config '{}' (the first is '{}')", arg, *out.config));
      out.config = arg;
      out.rank_args.push_back(args[i]);
      continue;
    }
    std::string name = arg, inline_value;
    bool has_inline = false;
    if (auto eq = arg.find('='); eq != std::string::npos && arg.starts_with("--")) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
      has_inline = true;
    }
    auto value = [&]() -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= args.size() || args[i + 1].starts_with("--"))
        throw usage_error(fmt::format("{} needs a value", name));
      return args[++i];
    };
    auto flag = [&](bool& f) {
      if (has_inline) throw usage_error(fmt::format("{} takes no value, got '{}'", name, arg));
      f = true;
    };
    if (name == "--nproc") {
      const std::string text = value();
      int n = 0;
      std::size_t used = 0;
      try {
        n = std::stoi(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size() || n < 1 || n > 1024)
        throw usage_error(
            fmt::format("--nproc needs a number of ranks in [1, 1024], got '{}'", text));
      out.nproc = n;
      continue;  // not passed on to the ranks
    } else if (name == "--set") {
      out.sets.push_back(value());
    } else if (name == "--output") {
      out.output = value();
      if (out.output->empty()) throw usage_error("--output needs a directory, got ''");
    } else if (name == "--device") {
      out.device = value();
    } else if (name == "--resume") {
      out.resume = true;
      if (has_inline) {
        out.resume_path = inline_value;
      } else if (i + 1 < args.size() && !args[i + 1].starts_with("-") &&
                 !looks_like_config(args[i + 1])) {
        out.resume_path = args[++i];
      }
    } else if (name == "--overwrite") {
      flag(out.overwrite);
    } else if (name == "--allow-outside-output") {
      flag(out.paths_outside_output);
    } else if (name == "--strict") {
      flag(out.strict);
    } else if (name == "--audit-syncs") {
      flag(out.audit_syncs);
    } else if (name == "--check") {
      flag(out.check);
    } else if (name == "--test-only") {
      flag(out.test_only);
    } else if (name == "--list") {
      flag(out.list);
    } else if (name == "--print-default") {
      flag(out.print_default);
    } else if (name == "--help") {
      flag(out.help);
    } else {
      auto closest = hookforge::closest_names(name, options).first;
      throw usage_error(fmt::format(
          "unknown option '{}'{}", name,
          closest.empty() ? std::string()
                          : fmt::format(" (closest: {})", hookforge::join_names(closest, ", "))));
    }
    out.rank_args.insert(out.rank_args.end(), args.begin() + static_cast<std::ptrdiff_t>(first),
                         args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  if (out.resume && out.overwrite)
    throw usage_error("--resume continues the earlier run and --overwrite discards it: give one");
  if (out.test_only && !out.resume)
    throw usage_error(
        "--test-only tests a run that trained: give --resume (with --output RUN_DIR, or the "
        "config's work_dir), or --resume=CHECKPOINT");
  return out;
}

namespace {

void print_registry() {
  for (const auto* reg : config::registries()) {
    fmt::print("{}\n", reg->kind());
    for (const auto& e : reg->list()) {
      fmt::print("  {}  ({})\n", e.name, e.type);
      for (const auto& p : e.params)
        fmt::print("    {}: {}{}\n", p.name, p.type,
                   p.required ? std::string(", required") : fmt::format(" = {}", p.fallback));
    }
  }
}

}  // namespace

std::optional<int> info_command(const command_line& cli) {
  if (cli.help)
    fmt::print("{}", usage_text);
  else if (cli.print_default)
    fmt::print("{}", default_config());
  else if (cli.list)
    print_registry();
  else
    return std::nullopt;
  return 0;
}

}  // namespace hookforge::run::detail
