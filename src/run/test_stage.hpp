// src/run/test_stage.hpp — the config's `test:` section: once training ends (or alone, with
// --test-only), the validation runner's metrics over a held-out loader, on the run's best
// checkpoint (or its last weights); printed, and written to test_metrics.json in the work
// directory. Private to hookforge::run.
//
//   test:
//     loader: ${ref:loaders.test}
//     checkpoint: best          # best (default: the last where the run kept no best) or last
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "hookforge/config/builder.hpp"
#include "hookforge/run/loader.hpp"
#include "hookforge/run/trainer.hpp"

namespace hookforge::run::detail {

struct test_settings {
  std::shared_ptr<Loader> loader;
  std::string checkpoint = "best";
};

/// The `test` section, checked (a config_error at its key), or nothing when the config has
/// none. A test scores with the validation runner's metrics: a trainer without one is refused.
std::optional<test_settings> read_test_settings(config::builder& b,
                                                const TrainerComponent& trainer);

/// Loads the checkpoint `test.checkpoint` names (from `checkpoint_dir`), runs the test and, on
/// rank 0 (`speaks`), prints its line and writes `work_dir`/test_metrics.json (atomically):
///   {"checkpoint": "best_psnr_epoch_17.pt", "epochs": 20, "scores": {"psnr": 33.05, ...}}
/// "checkpoint" is the file tested, or "" for the weights as training left them.
void run_test_stage(TrainerComponent& trainer, const test_settings& test,
                    const std::filesystem::path& checkpoint_dir,
                    const std::filesystem::path& work_dir, bool speaks);

}  // namespace hookforge::run::detail
