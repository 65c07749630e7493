// hookforge/distributed/data_parallel.hpp — the distributed hooks in one object, one share per
// component.
//
//   auto pg = hookforge::distributed::init_from_env();
//   hookforge::distributed::data_parallel dp(pg);
//   hookforge::TrainingEpochRunner train(optimizer, {}, dp.training(), …);   // gradients, scores
//   hookforge::ValidationEpochRunner validate({}, dp.validation());          // scores
//   hookforge::Trainer trainer(model, train, validate, {…}, dp.trainer(), …); // stop agreement
//
// It owns a GradientAllReduce, a ScoreAllReduce and a StopAgreement over one process group
// and hands them out as hook_sets of references, as hookforge::default_hooks does. In a run
// that is not distributed (world size 1) every one of them returns at once. The object must
// outlive the components it was given to; it is neither copied nor moved.
#pragma once

#include <utility>

#include "hookforge/core/hook_set.hpp"
#include "hookforge/core/wrappers/ref.hpp"
#include "hookforge/distributed/gradient_allreduce.hpp"
#include "hookforge/distributed/process_group.hpp"
#include "hookforge/distributed/score_allreduce.hpp"
#include "hookforge/distributed/stop_agreement.hpp"

namespace hookforge::distributed {

struct data_parallel_options {
  gradient_allreduce_options gradients = {};
};

class data_parallel {
 public:
  explicit data_parallel(const process_group& group, data_parallel_options options = {})
      : gradients(group, options.gradients), scores(group), stop(group) {}
  data_parallel(const data_parallel&) = delete;
  data_parallel& operator=(const data_parallel&) = delete;

  GradientAllReduce gradients;
  ScoreAllReduce scores;
  StopAgreement stop;

  /// For the training runner: gradient averaging (and the start-up broadcast), global scores.
  auto training() { return hook_set(ref(gradients), ref(scores)); }
  /// For a validation or inference runner: global scores.
  auto validation() { return hook_set(ref(scores)); }
  /// For the Trainer: the same stop decision on every rank.
  auto trainer() { return hook_set(ref(stop)); }
};

}  // namespace hookforge::distributed
