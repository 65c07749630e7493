// hookforge/torch/data/scores.hpp — per-batch scores averaged over an epoch, without host syncs.
//
// Adding a batch's scores launches no tensor operation: the detached score
// tensors are kept, and folded into one partial sum per name every
// `fold_every` batches (one stack and one dot product). The host reads the
// sums once, when the epoch's means are asked for. This keeps the training step
// free of both synchronisation and extra kernels.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

/// Mean score per name for one epoch (what runners return and the trainer logs).
using epoch_scores = std::map<std::string, double>;

class score_accumulator {
 public:
  static constexpr std::size_t fold_every = 256;

  /// Add one batch's scores for `batch_size` samples. Scores should be detached;
  /// a score with elements is reduced to its mean.
  void add(const std::map<std::string, torch::Tensor>& scores, std::int64_t batch_size);

  /// The weighted means so far; reads one value per name on the host.
  epoch_scores means() const;

  /// Per name, the weighted sum of the scores and the sum of the weights (the samples)
  /// so far: means() is sum / weight. Reads one value per name on the host. Distributed
  /// training adds these up across ranks to get the global means (distributed/score_allreduce.hpp).
  struct total {
    double sum = 0;
    double weight = 0;
  };
  std::map<std::string, total> totals() const {
    std::map<std::string, total> out;
    for (auto [name, s] : series_) {  // a copy: folding must not change *this
      fold(s);
      out[name] = {s.sum.defined() ? s.sum.item<double>() : 0.0, s.weight};
    }
    return out;
  }

  void reset() { series_.clear(); }

  /// Everything added so far, exactly (the kept scores, the partial sums, the weights), so
  /// an epoch resumed from a checkpoint taken between its batches ends with the same means,
  /// bit for bit, as the epoch that was not interrupted.
  state_map state_dict() const;
  /// Takes a state_dict back. The tensors stay where they were loaded (the CPU) until the
  /// next add(), which moves them to the device of the scores added.
  void load_state_dict(const state_map& state);

 private:
  struct series {
    std::vector<torch::Tensor> values;
    std::vector<double> weights;
    torch::Tensor sum;  // double, on the scores' device
    double weight = 0;
  };

  static void fold(series& s);
  static void move_to(series& s, torch::Device device);

  std::map<std::string, series> series_;
  bool loaded_ = false;  ///< series came from load_state_dict: add() moves them to its device
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/scores-inl.hpp"
#endif
