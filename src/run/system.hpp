// src/run/system.hpp — the config's `system` section and --device: which device the run uses
// (each rank of several on its own GPU), mixed precision, the work directory, threads and
// the seed, put into settings() before anything is built. Private to hookforge::run.
#pragma once

#include <optional>

#include "command_line.hpp"
#include "ranks.hpp"

#include "hookforge/config/builder.hpp"

namespace hookforge::run::detail {

enum class device_choice { automatic, cpu, cuda };

/// --device, checked (usage_error: not cpu, cuda or auto, or cuda where CUDA is not
/// available); nullopt where it is not given.
std::optional<device_choice> device_option(const command_line& cli);

/// The config's system section into settings(): its device, or `cli_device` over it (a
/// config_error at system.device asking for CUDA where there is none), mixed precision, the
/// work directory, threads and the seed (torch::manual_seed).
void apply_system(config::builder& b, std::optional<device_choice> cli_device,
                  const rank_setup& ranks);

}  // namespace hookforge::run::detail
