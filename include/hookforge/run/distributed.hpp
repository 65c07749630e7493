// hookforge/run/distributed.hpp — a config-driven run on several ranks (data parallelism).
//
//   distributed:                # optional; these are the defaults
//     backend: gloo             # gloo (CPU) or nccl (CUDA builds of LibTorch)
//     data_parallel: true       # add the data-parallel hooks to the components
//     bucket_mb: 25             # GradientAllReduce's bucket size
//     buffers: off              # off, broadcast or average (the model's buffers, per epoch)
//     join_timeout: 300         # seconds a rank waits for the others to join
//     timeout: 1800             # seconds a collective waits for the other ranks
//     requeue_signal: USR1      # in a Slurm job: save and requeue on it (USR2, HUP, none)
//
// The section is read by every run and used when the run has more than one rank (but
// requeue_signal, used by every run inside a Slurm job: src/run/cluster.hpp)
// (hookforge-run --nproc N, or WORLD_SIZE > 1 in the environment): settings().rank and
// settings().world_size are set, each rank joins the process group (hookforge::distributed, c10d)
// and builds the same config, and with data_parallel the components get
//   the training runner     GradientAllReduce (the gradients averaged on on_post_backward,
//                           the model broadcast from rank 0 at the start), ScoreAllReduce
//   the validation runner   ScoreAllReduce (every hook sees the global scores)
//   the Trainer             StopAgreement (every rank stops at the same epoch)
// unless its hook list already has one of that class (listed explicitly, with options of
// its own). Loaders shard their data (loader.hpp); hooks that write files or print act on
// rank 0 only (config/hooks.hpp: rank_zero_only). The hooks are registered for configs
// too (GradientAllReduce, ScoreAllReduce, StopAgreement) when hookforge::run was built
// with hookforge::distributed; in a run of one rank they do nothing.
//
// data_parallel_hooks() is what the components read while they are built: empty (no hook
// added) unless hookforge-run set it up for a run of several ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hookforge/config/hooks.hpp"
#include "hookforge/core/runtime/any_hook.hpp"
#include "hookforge/distributed/buffer_sync.hpp"
#include "hookforge/run/values.hpp"
#include "hookforge/torch/runners/inference_runner.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/training_epoch_runner.hpp"

template <>
struct hookforge::run::enum_names<hookforge::distributed::buffer_sync> {
  static constexpr std::pair<std::string_view, hookforge::distributed::buffer_sync> values[] = {
      {"off", hookforge::distributed::buffer_sync::off},
      {"broadcast", hookforge::distributed::buffer_sync::broadcast},
      {"average", hookforge::distributed::buffer_sync::average}};
};

namespace hookforge::run {

/// The process group's backend: gloo (CPU), nccl (CUDA builds of LibTorch).
enum class backend_choice { gloo, nccl };

template <>
struct enum_names<backend_choice> {
  static constexpr std::pair<std::string_view, backend_choice> values[] = {
      {"gloo", backend_choice::gloo}, {"nccl", backend_choice::nccl}};
};

/// The signal on which a Slurm job saves and requeues itself (sbatch --signal=SIG@T).
enum class requeue_signal_choice { usr1, usr2, hup, none };

template <>
struct enum_names<requeue_signal_choice> {
  static constexpr std::pair<std::string_view, requeue_signal_choice> values[] = {
      {"USR1", requeue_signal_choice::usr1},
      {"USR2", requeue_signal_choice::usr2},
      {"HUP", requeue_signal_choice::hup},
      {"none", requeue_signal_choice::none}};
};

/// The `distributed:` section (see the top of this header), read by read_distributed.
struct distributed_settings {
  backend_choice backend = backend_choice::gloo;
  bool data_parallel = true;
  double bucket_mb = 25;
  distributed::buffer_sync buffers = distributed::buffer_sync::off;
  double join_timeout_s = 300;
  double timeout_s = 1800;
  requeue_signal_choice requeue_signal = requeue_signal_choice::usr1;
};

/// The config's `distributed:` section; its defaults when absent. Errors are config_errors
/// at the value (an unknown key with the closest names, a size or time that is not > 0).
distributed_settings read_distributed(config::builder& b);

/// The hooks a data-parallel run adds to its components (each call makes new instances).
struct data_parallel_makers {
  std::function<std::vector<any_hook<TrainingContext>>()> training;
  std::function<std::vector<any_hook<InferenceContext>>()> validation;
  std::function<std::vector<any_hook<TrainerContext>>()> trainer;
};

/// Set by hookforge-run for a run of several ranks; empty otherwise.
inline data_parallel_makers& data_parallel_hooks() {
  static data_parallel_makers makers;
  return makers;
}

/// Attach the hooks `make` gives to `pack`, but for a class `listed` already has.
template <class Pack, class Runner, class Ctx>
void attach_data_parallel(Pack& pack, const config::hook_list<Runner>& listed,
                          const std::function<std::vector<any_hook<Ctx>>()>& make) {
  if (!make) return;
  for (auto& hook : make()) {
    bool present = false;
    for (const auto& item : listed.items)
      present = present || item.hook.type_name() == hook.type_name();
    if (!present) pack.attach(std::move(hook));
  }
}

namespace detail {
/// Whether this hookforge::run was built with hookforge::distributed (src/run/distributed.cpp).
bool have_dist();
/// Join the run the environment describes (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
/// LOCAL_RANK) with `s`'s backend and timeouts: the group the data-parallel hooks built
/// afterwards use. Throws std::invalid_argument for a bad variable or setting,
/// hookforge::distributed::error (a std::runtime_error) when the ranks cannot meet.
void join_from_env(const distributed_settings& s);
/// With s.data_parallel, set data_parallel_hooks() up (else clear it): the components built
/// afterwards get the hooks, over the group of this process at that time (a single process
/// before join_from_env: a build that only checks the config shows them, inert).
void set_up_data_parallel(const distributed_settings& s);
/// Whether `mine` holds on any rank of the run's group, once every rank got here (one
/// process: `mine`).
bool on_any_rank(bool mine);
/// After a run: the time in the gradient all-reduce (empty when none ran).
std::string data_parallel_summary();
}  // namespace detail

}  // namespace hookforge::run
