// hookforge/run/main.hpp — hookforge-run's command line, callable from a program of yours.
//
//   // my_run.cpp: a run with a hook of my own
//   #include <hookforge/run.hpp>
//   HOOKFORGE_REGISTER(hook, MyHook, hookforge::config::arg<int>("every", 10));
//   int main(int argc, char** argv) { return hookforge::run::main(argc, argv); }
//
//   hookforge-run [CONFIG] [--set KEY=VALUE]... [--strict] [--check] [--output DIR]
//                 [--resume [CKPT]] [--device cpu|cuda|auto] [--list] [--print-default] [--help]
//
// Without CONFIG, the config embedded at build time (configs/default.yaml) runs. The run
// reads `system` (device, seed, threads, work_dir, mixed_precision), seeds torch, builds
// the `trainer` entry and everything it references — every mistake is reported before
// anything is created on disk — then creates the work directory and trains. --check
// builds everything, prints each component's binding table and the warnings, and trains
// nothing. Exit codes: 0 done; 1 the run failed (the reason on stderr); 2 a config or
// command-line error (one line on stderr: FILE:LINE:COL: KEY: expected ..., got ...).
// See docs/config.md.
#pragma once

#include <string_view>

namespace hookforge::run {

/// hookforge-run (see the top of this header). Returns the exit code.
int main(int argc, char** argv);

/// The config hookforge-run runs without CONFIG (configs/default.yaml, embedded).
std::string_view default_config();

}  // namespace hookforge::run
