// `hookforge-run export` (src/run/export.hpp): the model of a run's best or last checkpoint,
// or of a named checkpoint, written as safetensors or as a .pth state_dict
// (hookforge/torch/weights/weights_file.hpp).
#include "export.hpp"
#include "run_checkpoints.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "hookforge/hooks/latest_checkpoint.hpp"
#include "hookforge/torch/weights/weights_file.hpp"

namespace hookforge::run::detail {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view export_usage = R"(usage: hookforge-run export RUN_OR_CHECKPOINT [options]

Writes the model weights of a checkpoint as a file Python reads: safetensors
(safetensors.torch.load_file) or a .pth state_dict (torch.load, weights-only).
RUN_OR_CHECKPOINT is a run's work directory (its best checkpoint, or its last
when it has no best) or a checkpoint file.

options:
  --format F     safetensors or pth (default: from --output's suffix, else safetensors)
  --output FILE  where to write (default: beside the checkpoint, its suffix replaced)
  --which W      best or last: which checkpoint of a run (default: best, else last)
  --section S    the checkpoint's module section (default: model)
)";

struct export_args {
  fs::path source, output;
  std::optional<weights_format> format;
  std::string which, section = "model";
};

struct usage_problem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

export_args parse(int argc, char** argv) {
  export_args out;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw usage_problem(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--format") {
      const auto name = value();
      out.format = parse_weights_format(name);
      if (!out.format)
        throw usage_problem("--format must be safetensors or pth, got '" + name + "'");
    } else if (arg == "--output") {
      out.output = value();
    } else if (arg == "--which") {
      out.which = value();
      if (out.which != "best" && out.which != "last")
        throw usage_problem("--which must be best or last, got '" + out.which + "'");
    } else if (arg == "--section") {
      out.section = value();
    } else if (arg.starts_with("-")) {
      throw usage_problem("unknown option '" + arg + "' (--format, --output, --which, --section)");
    } else if (out.source.empty()) {
      out.source = arg;
    } else {
      throw usage_problem("a second RUN_OR_CHECKPOINT '" + arg + "'");
    }
  }
  if (out.source.empty()) throw usage_problem("give a run's directory or a checkpoint");
  if (!out.format && !out.output.empty()) {
    const auto suffix = out.output.extension().string();
    out.format =
        suffix == ".pth" || suffix == ".pt" ? weights_format::pth : weights_format::safetensors;
  }
  if (!out.format) out.format = weights_format::safetensors;
  return out;
}

// The checkpoint a run's directory names: its last_checkpoint's folder is the run's or
// its `checkpoints` folder.
fs::path checkpoint_of_run(const fs::path& run, const std::string& which) {
  for (const auto& dir : {run, run / "checkpoints"}) {
    const auto last = latest_checkpoint(dir);
    if (!last) continue;
    if (which != "last")
      if (auto best = best_checkpoint(dir, *last)) return *best;
    if (which == "best")
      throw std::runtime_error("'" + dir.string() + "' holds no best checkpoint (best_*.pt)");
    return *last;
  }
  throw std::runtime_error("'" + run.string() +
                           "' is no run's directory: neither it nor its checkpoints/ has a "
                           "last_checkpoint");
}

}  // namespace

int export_main(int argc, char** argv) {
  export_args args;
  try {
    args = parse(argc, argv);
  } catch (const usage_problem& e) {
    fmt::print(stderr, "hookforge-run export: {}\n{}", e.what(), export_usage);
    return 2;
  }
  try {
    const fs::path checkpoint =
        fs::is_directory(args.source) ? checkpoint_of_run(args.source, args.which) : args.source;
    const auto weights = read_weights(checkpoint, {.section = args.section});
    const fs::path output =
        args.output.empty() ? fs::path(checkpoint).replace_extension(weights_suffix(*args.format))
                            : args.output;
    write_weights(output, weights.tensors, *args.format);
    fmt::print("hookforge-run export: {} tensors of '{}' ({}) to '{}' ({}, {} bytes)\n",
               weights.tensors.size(), checkpoint.string(), weights.describe(), output.string(),
               args.format == weights_format::safetensors ? "safetensors" : "pth",
               fs::file_size(output));
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "hookforge-run export: {}\n", e.what());
    return 1;
  }
}

}  // namespace hookforge::run::detail
