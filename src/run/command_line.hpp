// src/run/command_line.hpp — hookforge-run's command line: its options, the usage text,
// and the parse (src/run/command_line.cpp). Private to hookforge::run; no LibTorch.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hookforge::run::detail {

/// The text of --help.
extern const std::string_view usage_text;

/// A mistake on the command line (exit code 2).
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct command_line {
  std::optional<std::string> config;
  std::vector<std::string> sets;
  bool strict = false, check = false, list = false, print_default = false, help = false;
  std::optional<std::string> output;
  bool resume = false, overwrite = false;
  bool test_only = false;             ///< --test-only: the config's test section on the resumed run
  bool audit_syncs = false;           ///< --audit-syncs: a SyncAudit's table after training
  bool paths_outside_output = false;  ///< --allow-outside-output
  std::optional<std::string> resume_path;
  std::optional<std::string> device;
  std::optional<int> nproc;
  std::vector<std::string> rank_args;  ///< the arguments but --nproc (what each rank gets)
};

/// The options of `argv`; usage_error for an unknown option (with the closest), a missing
/// or malformed value, or a second config.
command_line parse_command_line(int argc, char** argv);

/// --help (the usage), --print-default (the embedded default config) and --list (every
/// registered class and its parameters) print and give exit code 0; nullopt for a run.
std::optional<int> info_command(const command_line& cli);

}  // namespace hookforge::run::detail
