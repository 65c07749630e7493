// src/run/exits.hpp — how hookforge-run ends when it cannot go on: each kind of failure, its
// exit code and its message, printed on one line to stderr (a config error's format is one
// line; a YAML parser's message may not be). Private to hookforge::run; no LibTorch.
#pragma once

#include <exception>
#include <string>

namespace hookforge::run::detail {

/// The config is wrong (exit 2): the error's own text, which names file, line and key.
int config_failure(const std::exception& e);
/// The command line is wrong (exit 2), with a pointer to --help.
int usage_failure(const std::string& text);
/// Exit 2 without touching the run: the output directory is another run's, or holds none.
int refusal(const std::string& text);
/// The run itself failed (exit 1).
int run_failure(const std::string& text);

}  // namespace hookforge::run::detail
