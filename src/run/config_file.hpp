// src/run/config_file.hpp — the config a run reads: the file named on the command line, or
// configs/default.yaml as embedded at build time, with each --set applied and
// system.work_dir set to where the run writes. Private to hookforge::run; no LibTorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "command_line.hpp"
#include "work_dir.hpp"

#include "hookforge/config/document.hpp"

namespace hookforge::run::detail {

/// The embedded default's name in messages.
inline constexpr std::string_view embedded_config_name = "configs/default.yaml (embedded)";

/// The config file's name in messages: its path, or the embedded default's name.
std::string config_name(const command_line& cli);

/// The config with system.work_dir where the run writes (`work_dir`, nullopt when the
/// config's system section is no mapping, left for its reader to report): --output; else
/// the config's work_dir (or runs/<config>) is a base, `default_base`, and a new run goes to
/// the first of it, it-2, it-3 ... that holds no run (work_dir.hpp). A config's
/// ${system.work_dir} sees that.
struct placed_config {
  config::document doc;
  std::optional<std::string> work_dir;
  std::optional<std::filesystem::path> default_base;
};
placed_config load_config(const command_line& cli, start_mode mode);

/// The config's text (the file, read whole once it has parsed, or the embedded default),
/// then a comment line per --set: what TensorBoardLogger shows.
std::string config_as_run(const std::optional<std::string>& file,
                          const std::vector<std::string>& sets);

/// The config's values as dotted keys and their text, in document order (a sequence's items
/// by index: hooks.0._target), --set applied: what MLflowLogger logs as the run's params.
/// `root` must have been validated (config::document::validate: bounded depth and nodes).
std::vector<std::pair<std::string, std::string>> config_params(const YAML::Node& root);

}  // namespace hookforge::run::detail
