// src/run/export.hpp — `hookforge-run export`: a run's model weights as a file Python reads.
// Private to hookforge::run.
#pragma once

namespace hookforge::run::detail {

/// `hookforge-run export RUN_OR_CHECKPOINT [--format F] [--output FILE] [--which W]
/// [--section S]`: argv[0] is "export". Returns the exit code (0, 1 failed, 2 usage).
int export_main(int argc, char** argv);

}  // namespace hookforge::run::detail
