// hookforge/torch/contexts.hpp — what handlers receive: one typed, mutable context per component.
//
// Counters are explicit so no hook has to guess whether one was already advanced:
// `epoch` is the epoch being run (0-based), `completed_epochs` the epochs finished
// before it, `batch_idx` the batch within the epoch, `global_step` the training
// batches processed before this one over the whole run. A hook that reads a field
// a context lacks does not compile against that component.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "hookforge/torch/batches.hpp"
#include "hookforge/torch/criterion.hpp"
#include "hookforge/torch/entry.hpp"
#include "hookforge/torch/grad_scaler.hpp"
#include "hookforge/torch/scores.hpp"
#include "hookforge/torch/state_dict.hpp"

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

/// TrainingEpochRunner's context. Fields marked "hooks set" are requests the runner honours.
struct TrainingContext : epoch_counters {
  Entry entry;                               ///< the batch; the model's output is merged in after forward
  torch::nn::Module* model = nullptr;        ///< the model, when it is a torch module (else null)
  torch::optim::Optimizer* optimizer = nullptr;
  GradScaler* scaler = nullptr;              ///< the gradient scaler (disabled without mixed precision)
  torch::Device device = torch::kCPU;
  std::int64_t gradient_accumulation_steps = 1;
  std::int64_t optimizer_steps = 0;          ///< optimiser updates taken so far (whole run)

  // hooks set
  bool skip_batch = false;         ///< at on_pre_step: no forward, backward or update for this batch
  loss_terms extra_losses;         ///< at on_post_forward: added to the loss before backward
  bool skip_optimizer_step = false;///< up to on_post_backward: do not apply this batch's update
  bool stop_training = false;      ///< anywhere: the trainer stops after this epoch

  // the runner sets
  loss_terms losses;               ///< criterion terms plus extra losses (from after on_post_forward)
  torch::Tensor loss;              ///< their sum, before division by the accumulation steps
  bool optimizer_step_due = false; ///< an update follows this batch's backward (unless vetoed)
  bool optimizer_stepped = false;  ///< an update was applied (seen at on_post_step)
  std::map<std::string, torch::Tensor> batch_scores;  ///< this batch's scores (detached, on device)
  score_accumulator running_scores;///< the epoch's scores so far
  epoch_scores scores;             ///< at on_epoch_end: the epoch's mean scores

  std::vector<torch::Tensor> parameters() const {
    return optimizer ? optimizer_parameters(*optimizer) : std::vector<torch::Tensor>{};
  }
};

/// The context of InferenceRunner, ValidationEpochRunner and BenchmarkRunner.
struct InferenceContext : epoch_counters {
  Entry entry;
  torch::nn::Module* model = nullptr;
  torch::Device device = torch::kCPU;
  loss_terms losses;               ///< empty when the runner has no criterion
  torch::Tensor loss;
  std::map<std::string, torch::Tensor> batch_scores;
  score_accumulator running_scores;
  epoch_scores scores;             ///< at on_epoch_end
  bool stop_training = false;
};

/// The Trainer's context.
struct TrainerContext {
  std::int64_t epoch = 0;             ///< the epoch just run (at on_trainer_epoch_finished)
  std::int64_t completed_epochs = 0;  ///< epochs finished, this one included once it finished
  std::int64_t total_epochs = 0;
  std::int64_t global_step = 0;       ///< training batches processed so far
  epoch_scores train_scores;          ///< this epoch's training means
  epoch_scores val_scores;            ///< the last validation's means (empty before any)
  bool validated = false;             ///< validation ran this epoch
  std::vector<double> learning_rates; ///< per param group, as used this epoch
  bool stop_training = false;         ///< hooks set: stop after this epoch
  std::string stop_reason;            ///< why training stopped (set by the trainer or a hook)
  /// At on_before_save_checkpoint: extra entries hooks add to the checkpoint;
  /// at on_after_load_checkpoint: the entries read back.
  state_dict* checkpoint_extra = nullptr;
};

}  // namespace hookforge
