// hookforge/run/settings.hpp — what a config-driven run decides before anything is built.
//
// hookforge-run reads the config's `system` section (and --device, --output) first, then
// builds the run. What every component needs from it — the device models are moved to
// and batches are moved to, the work directory hooks write in, the default for mixed
// precision — is set here before the builder runs, and read by the registered classes
// while they are built:
//
//   hookforge::run::settings().device = torch::kCUDA;   // hookforge::run::main does this
//   auto trainer = builder.get<std::shared_ptr<hookforge::run::Trainer>>("trainer");
//
// A program that builds components itself (a test) may set them the same way; the
// defaults are the CPU, ".", no mixed precision and rank 0 of 1.
#pragma once

#include <filesystem>
#include <memory>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "hookforge/torch/runners/trainer_types.hpp"

namespace hookforge::run {

struct run_settings {
  torch::Device device = torch::kCPU;    ///< where models live and batches go
  std::filesystem::path work_dir = ".";  ///< the trainer's work_dir (checkpoints, metrics)
  bool mixed_precision = false;          ///< the runners' default for mixed_precision
  /// A data-parallel run (hookforge-run with --nproc, or WORLD_SIZE > 1): this process's
  /// rank and the number of ranks. Loaders take their shard from them (loader.hpp).
  int rank = 0;
  int world_size = 1;
  /// The Trainer's stop_token (hookforge-run: SIGINT, SIGTERM and the requeue signal request
  /// the stop).
  std::stop_token stop_token = {};
  /// Several ranks: how they stop at the same batch (trainer_options::agreement; hookforge-run
  /// sets it once the ranks have joined). Empty: a stop waits for the epoch's end.
  rank_agreement agreement = {};
  /// The config as run (hookforge-run: its text, then a line per --set), for hooks that
  /// record it (TensorBoardLogger's Text tab).
  std::string config_text = {};
  /// The config's values as dotted keys (hooks.0._target) and their text, --set applied, for
  /// hooks that record them (MLflowLogger's params).
  std::vector<std::pair<std::string, std::string>> config_params = {};
  /// hookforge-run --strict: a hook that would warn about what it finds at the start fails
  /// the run instead (MLflowLogger: a server that does not answer).
  bool strict = false;
  /// hookforge-run --audit-syncs: the trainer gets a SyncAudit (unless its hooks have one).
  bool audit_syncs = false;
};

/// The settings of the run being built (one per process).
inline run_settings& settings() {
  static run_settings s;
  return s;
}

/// `object`, keeping `owner` alive as long as it is held: an optimiser keeps its model,
/// a scheduler its optimiser. `owner` is released after `object` is destroyed.
template <class T, class Owner>
std::shared_ptr<T> keep_alive(std::shared_ptr<T> object, Owner owner) {
  struct both {
    Owner owner;  // destroyed last
    std::shared_ptr<T> object;
  };
  T* raw = object.get();
  auto holder = std::make_shared<both>(both{std::move(owner), std::move(object)});
  return std::shared_ptr<T>(std::move(holder), raw);
}

}  // namespace hookforge::run
