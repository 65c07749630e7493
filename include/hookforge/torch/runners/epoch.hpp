// hookforge/torch/runners/epoch.hpp — what every epoch runner shares: its counters, its
// result, moving a batch to the device, recording scores, and the end of an epoch.
//
// Counters are explicit so no hook has to guess whether one was already advanced:
// `epoch` is the epoch being run (0-based), `completed_epochs` the epochs finished
// before it, `batch_idx` the batch within the epoch, `global_step` the training
// batches processed before this one over the whole run. Each runner's context
// (TrainingContext, InferenceContext, GANContext) lives beside its runner; a hook
// that reads a field a context lacks does not compile against that component.
//
// `runner_base` is the kit a runner is written with (the built-in ones use it): it holds
// the hook pack, answers hooks(), keeps total_epochs and global_step, and runs the epoch's
// frame — counters and on_epoch_start, the batch loop, the scores' means and
// on_epoch_end — so a runner is its loop body and its points (see docs/runners.md).
// `training_runner_base` adds what the Trainer needs from a runner that trains with one
// optimiser: optimizer(), named_optimizers() and the global step in state_dict(), so such
// a runner meets hookforge::training_runner (runner_concepts.hpp) with its run_epoch alone.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/core/hook_pack.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/torch/data/batches.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/profiling/range.hpp"
#include "hookforge/torch/runners/epoch_progress.hpp"

namespace hookforge {

/// The counters every epoch runner's context carries.
struct epoch_counters {
  std::int64_t epoch = 0;             ///< the epoch being run, 0-based
  std::int64_t batch_idx = 0;         ///< the batch within the epoch, 0-based
  std::int64_t global_step = 0;       ///< training batches processed before this one (whole run)
  std::int64_t completed_epochs = 0;  ///< epochs finished before this one
  std::int64_t total_epochs = 0;      ///< epochs planned for the run (0 when not known)
  std::int64_t num_batches = -1;      ///< batches in this epoch (-1 when the loader cannot tell)
  /// The validation set this epoch runs over, when the Trainer validates several
  /// (validation_sets.hpp); "" otherwise.
  std::string_view dataset;

  /// The counters at the start of `epoch` (of `total_epochs`) over `loader`: num_batches
  /// from the loader's size when it has one; batch_idx and global_step are set per batch.
  template <class Loader>
  static epoch_counters starting(std::int64_t epoch, std::int64_t total_epochs, Loader& loader) {
    epoch_counters c;
    c.epoch = epoch;
    c.completed_epochs = epoch;
    c.total_epochs = total_epochs;
    c.num_batches = batch_count(loader);
    return c;
  }
};

/// What the parameters of a context's optimiser are, flattened.
HOOKFORGE_INLINE std::vector<torch::Tensor> optimizer_parameters(
    const torch::optim::Optimizer& optimizer);

/// One of a training runner's optimisers, under the name of its checkpoint section.
struct named_optimizer {
  std::string name;                              ///< "optimizer", "d_optimizer", …
  torch::optim::Optimizer* optimizer = nullptr;  ///< not owned
};

/// What an epoch runner returns.
struct epoch_result {
  epoch_scores scores;         ///< mean of each score over the epoch's samples
  std::int64_t batches = 0;    ///< batches seen
  bool stop_training = false;  ///< a hook asked the trainer to stop
};

/// The batch on `device`; a batch already there is passed through untouched. Copies to a
/// CUDA device are `non_blocking`: asynchronous for pinned batches (loader_options::
/// pin_memory), as synchronous as a plain copy for the others.
HOOKFORGE_INLINE Entry on_device(Entry&& batch, torch::Device device);

/// A batch's scores: each loss term detached under its name, and "loss", always the total.
HOOKFORGE_INLINE void record_scores(const loss_terms& terms, const torch::Tensor& total,
                                    std::map<std::string, torch::Tensor>& scores);

/// A transform applied to the batch after the model's output is merged in.
using postprocessor = std::function<void(Entry&)>;

/// The base of an epoch runner `Derived` over `Hooks...`. Derived declares `hook_points`
/// (with on_epoch_start and on_epoch_end) and `Ctx` (an `epoch_counters` with
/// `running_scores`, `scores` and `stop_training`), and writes run_epoch with
///   start_epoch(ctx, epoch, loader)      counters, then on_epoch_start
///   training_batches / batches(ctx, loader, body)
///   return finish_epoch(ctx, batches)    scores' means, then on_epoch_end
/// C++20 does not deduce template arguments through inherited constructors, so Derived
/// still writes its constructor and deduction guide.
template <class Derived, class... Hooks>
class runner_base {
 public:
  explicit runner_base(Hooks... hooks) : hooks_(std::move(hooks)...) {}

  auto& hooks() { return hooks_; }
  const auto& hooks() const { return hooks_; }
  /// The planned number of epochs, shown to hooks as ctx.total_epochs (the trainer sets it).
  void set_total_epochs(std::int64_t epochs) { total_epochs_ = epochs; }
  std::int64_t total_epochs() const { return total_epochs_; }
  /// The validation set the next epochs run over, shown to hooks as ctx.dataset (the Trainer
  /// sets it when it validates several; "" for none).
  void set_dataset(std::string name) { dataset_ = std::move(name); }
  /// Training batches processed so far (whole run); 0 for a runner that does not train.
  std::int64_t global_step() const { return global_step_; }
  /// Where the training loop is within its epoch, for checkpoints taken between batches and
  /// the run resumed from one (epoch_progress.hpp; the Trainer uses it).
  epoch_progress& progress() { return progress_; }

 protected:
  /// Set ctx's counters for `epoch` over `loader`, then fire on_epoch_start. An epoch resumed
  /// from a checkpoint taken between its batches starts at the next batch (ctx.batch_idx,
  /// also at on_epoch_start) with the epoch's partial scores in ctx.running_scores.
  template <class Ctx, class Loader>
  void start_epoch(Ctx& ctx, std::int64_t epoch, Loader& loader) {
    static_cast<epoch_counters&>(ctx) = epoch_counters::starting(epoch, total_epochs_, loader);
    ctx.dataset = dataset_;
    ctx.batch_idx = progress_.start(epoch, ctx.running_scores);
    detail::fire_in_range<points::on_epoch_start>(hooks_, ctx);
  }

  /// Call `body(Entry&& batch, bool last)` for each batch with ctx.batch_idx and
  /// ctx.global_step set; each batch is a training step (global_step advances after it).
  /// Returns the number of batches.
  template <class Ctx, class Loader, class F>
  std::int64_t training_batches(Ctx& ctx, Loader& loader, F&& body) {
    return loop(ctx, loader, body, /*training=*/true);
  }

  /// As training_batches, for a runner that does not train (global_step stays as it is).
  template <class Ctx, class Loader, class F>
  std::int64_t batches(Ctx& ctx, Loader& loader, F&& body) {
    return loop(ctx, loader, body, /*training=*/false);
  }

  /// ctx.scores from ctx.running_scores, on_epoch_end, and the epoch's result.
  template <class Ctx>
  epoch_result finish_epoch(Ctx& ctx, std::int64_t batches) {
    {
      const detail::step_range phase(range_kind::phase, "epoch scores");
      ctx.scores = ctx.running_scores.means();
    }
    detail::fire_in_range<points::on_epoch_end>(hooks_, ctx);
    return {ctx.scores, batches, ctx.stop_training};
  }

  hook_pack<Derived, Hooks...> hooks_;
  std::int64_t total_epochs_ = 0;
  std::int64_t global_step_ = 0;
  std::string dataset_;
  epoch_progress progress_;

 private:
  template <class Ctx, class Loader, class F>
  std::int64_t loop(Ctx& ctx, Loader& loader, F& body, bool training) {
    std::int64_t batch = ctx.batch_idx;  // 0, or where a resumed epoch goes on
    epoch_progress::watch watching(progress_, ctx.epoch, batch, ctx.running_scores);
    for_each_batch(loader, [&](Entry&& input, bool last) {
      ctx.batch_idx = batch++;
      ctx.global_step = global_step_;
      body(std::move(input), last);
      if (!training) return true;
      ++global_step_;
      return progress_.step(batch, last);  // false: the Trainer ended the epoch here
    });
    return batch;
  }
};

/// runner_base for a runner that trains with one optimiser: everything the Trainer needs
/// from a training runner (runner_concepts.hpp) but run_epoch. Adds
///   optimizer()                        the optimiser, not owned (also `optimizer_`, protected)
///   named_optimizers()                 {{"optimizer", &optimizer()}}: its checkpoint section
///   state_dict() / load_state_dict()   {"global_step"}, for exact resume; a runner with
///                                      more counters extends them (call these, add its own)
template <class Derived, class... Hooks>
class training_runner_base : public runner_base<Derived, Hooks...> {
 public:
  explicit training_runner_base(torch::optim::Optimizer& optimizer, Hooks... hooks)
      : runner_base<Derived, Hooks...>(std::move(hooks)...), optimizer_(&optimizer) {}

  torch::optim::Optimizer& optimizer() { return *optimizer_; }
  std::vector<named_optimizer> named_optimizers() { return {{"optimizer", optimizer_}}; }

  state_map state_dict() const { return {{"global_step", this->global_step_}}; }
  void load_state_dict(const state_map& state) {
    this->global_step_ = state.at("global_step").toInt();
  }

 protected:
  torch::optim::Optimizer* optimizer_;
};

namespace detail {
/// The end of an epoch for a runner that does not derive from runner_base.
template <class Pack, class Ctx>
epoch_result finish_epoch(Pack& hooks, Ctx& ctx, std::int64_t batches) {
  {
    const step_range phase(range_kind::phase, "epoch scores");
    ctx.scores = ctx.running_scores.means();
  }
  fire_in_range<points::on_epoch_end>(hooks, ctx);
  return {ctx.scores, batches, ctx.stop_training};
}
}  // namespace detail

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/runners/epoch-inl.hpp"
#endif
