// hookforge/torch/metrics/accuracy.hpp — classification accuracy, top-1 or top-k.
//
// The output holds class scores (logits or probabilities) along dimension 1: (N, K) or
// (N, K, d1, ...) for per-position classes (segmentation); the target holds integer class
// indices, (N) or (N, d1, ...). Classes are ranked by score, ties broken by the lower
// index first (as argmax, which returns the first maximum), and a prediction is correct
// when its target class ranks among the first `top_k`:
//   rank_i = #{c : s_ic > s_it} + #{c < t : s_ic = s_it},  correct_i = rank_i < top_k
// (a NaN target score is never correct). A sample's accuracy is the fraction of its
// positions that are correct (0 or 1 for (N, K)); the batch's value is the mean over samples.
// Target indices outside [0, K) are not checked on the host (that would read the device):
// on CUDA they fail in the gather kernel.
#pragma once

#include <cstdint>
#include <string>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge {

struct Accuracy {
  std::int64_t top_k =
      1;  ///< a prediction is correct when the target is among the k best-scored classes
  HOOKFORGE_METRIC_FIELDS("accuracy")

  /// std::invalid_argument for top_k < 1.
  void validate() const;

  /// The batch's mean accuracy, a 0-dim float32 tensor on its device.
  torch::Tensor operator()(const Entry& entry) const;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/metrics/accuracy-inl.hpp"
#endif
