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

namespace hookforge {

/// Mean score per name for one epoch (what runners return and the trainer logs).
using epoch_scores = std::map<std::string, double>;

class score_accumulator {
 public:
  static constexpr std::size_t fold_every = 256;

  /// Add one batch's scores for `batch_size` samples. Scores should be detached;
  /// a score with elements is reduced to its mean.
  void add(const std::map<std::string, torch::Tensor>& scores, std::int64_t batch_size) {
    for (const auto& [name, value] : scores) {
      auto& s = series_[name];
      s.values.push_back(value.dim() == 0 ? value : value.mean());
      s.weights.push_back(static_cast<double>(batch_size));
      if (s.values.size() == fold_every) fold(s);
    }
  }

  /// The weighted means so far; reads one value per name on the host.
  epoch_scores means() const {
    epoch_scores out;
    for (auto [name, s] : series_) {  // a copy: folding must not change *this
      fold(s);
      out[name] = s.weight > 0 ? s.sum.item<double>() / s.weight : 0.0;
    }
    return out;
  }

  /// Per name, the weighted sum of the scores and the sum of the weights (the samples)
  /// so far: means() is sum / weight. Reads one value per name on the host. Distributed
  /// training adds these up across ranks to get the global means (dist/score_allreduce.hpp).
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

 private:
  struct series {
    std::vector<torch::Tensor> values;
    std::vector<double> weights;
    torch::Tensor sum;  // double, on the scores' device
    double weight = 0;
  };

  static void fold(series& s) {
    if (s.values.empty()) return;
    auto values = torch::stack(s.values).to(torch::kDouble).flatten();
    auto weights = torch::tensor(s.weights, torch::kDouble).to(values.device());
    auto partial = (values * weights).sum();
    s.sum = s.sum.defined() ? s.sum + partial : partial;
    for (double w : s.weights) s.weight += w;
    s.values.clear();
    s.weights.clear();
  }

  std::map<std::string, series> series_;
};

}  // namespace hookforge
