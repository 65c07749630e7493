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
// A runner written by a user builds on the same pieces (see docs/runners.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include "hookforge/core/points.hpp"
#include "hookforge/torch/data/batches.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/scores.hpp"

namespace hookforge {

/// The counters every epoch runner's context carries.
struct epoch_counters {
  std::int64_t epoch = 0;             ///< the epoch being run, 0-based
  std::int64_t batch_idx = 0;         ///< the batch within the epoch, 0-based
  std::int64_t global_step = 0;       ///< training batches processed before this one (whole run)
  std::int64_t completed_epochs = 0;  ///< epochs finished before this one
  std::int64_t total_epochs = 0;      ///< epochs planned for the run (0 when not known)
  std::int64_t num_batches = -1;      ///< batches in this epoch (-1 when the loader cannot tell)

  /// The counters at the start of `epoch` over `loader` (batch_idx and global_step are
  /// set per batch by the runner).
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
inline std::vector<torch::Tensor> optimizer_parameters(const torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> params;
  for (const auto& group : optimizer.param_groups())
    params.insert(params.end(), group.params().begin(), group.params().end());
  return params;
}

/// What an epoch runner returns.
struct epoch_result {
  epoch_scores scores;        ///< mean of each score over the epoch's samples
  std::int64_t batches = 0;   ///< batches seen
  bool stop_training = false; ///< a hook asked the trainer to stop
};

/// The batch on `device`; a batch already there is passed through untouched.
inline Entry on_device(Entry&& batch, torch::Device device) {
  for (const auto& [name, tensor] : batch)
    if (tensor.defined() && tensor.device() != device) return batch.to(device);
  return std::move(batch);
}

/// A batch's scores: each loss term detached under its name, and "loss", always the total.
inline void record_scores(const loss_terms& terms, const torch::Tensor& total,
                          std::map<std::string, torch::Tensor>& scores) {
  for (const auto& [name, value] : terms)
    if (name != "loss") scores[name] = value.detach();
  scores["loss"] = total.detach();
}

/// A transform applied to the batch after the model's output is merged in.
using postprocessor = std::function<void(Entry&)>;

namespace detail {
/// The end of every runner's epoch: the scores' means, on_epoch_end, the result.
template <class Pack, class Ctx>
epoch_result finish_epoch(Pack& hooks, Ctx& ctx, std::int64_t batches) {
  ctx.scores = ctx.running_scores.means();
  hooks.template fire<points::on_epoch_end>(ctx);
  return {ctx.scores, batches, ctx.stop_training};
}
}  // namespace detail

}  // namespace hookforge
