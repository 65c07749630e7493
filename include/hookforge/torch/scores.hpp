// hookforge/torch/scores.hpp — per-batch scores averaged over an epoch, without host syncs.
//
// Batch scores stay tensors on the device; the accumulator adds them weighted by
// batch size and reads them on the host once, when the epoch's means are asked for.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

namespace hookforge {

/// Mean score per name for one epoch (what runners return and the trainer logs).
using epoch_scores = std::map<std::string, double>;

class score_accumulator {
 public:
  /// Add one batch's scores (any shape; each is reduced to its mean) for `batch_size` samples.
  void add(const std::map<std::string, torch::Tensor>& scores, std::int64_t batch_size) {
    for (const auto& [name, value] : scores) {
      auto weighted = value.detach().to(torch::kDouble).mean() * static_cast<double>(batch_size);
      auto& sum = sums_[name];
      sum = sum.defined() ? sum + weighted : weighted;
    }
    samples_ += batch_size;
  }

  /// The means so far; reads the sums on the host (one sync per name).
  epoch_scores means() const {
    epoch_scores out;
    for (const auto& [name, sum] : sums_)
      out[name] = samples_ > 0 ? sum.item<double>() / static_cast<double>(samples_) : 0.0;
    return out;
  }

  std::int64_t samples() const { return samples_; }
  void reset() {
    sums_.clear();
    samples_ = 0;
  }

 private:
  std::map<std::string, torch::Tensor> sums_;
  std::int64_t samples_ = 0;
};

}  // namespace hookforge
