// hookforge/run/launch.hpp — hookforge-run --nproc N: N local ranks of this program
// (src/run/launch.cpp describes what the launcher does).
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace hookforge::run::detail {

struct launch_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct launch_options {
  /// How long the other ranks get between SIGTERM and SIGKILL when one failed.
  std::chrono::milliseconds grace = std::chrono::seconds(5);
};

/// Run `nproc` ranks of this executable with `args` (its arguments but --nproc), over
/// 127.0.0.1; returns the launcher's exit code (0: every rank exited 0; 1: one failed or
/// the launcher was interrupted). Throws launch_error when the ranks cannot be started.
int launch_local(int nproc, const std::vector<std::string>& args,
                 const launch_options& options = {});

}  // namespace hookforge::run::detail
