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
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>

#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge {

struct Accuracy {
  std::int64_t top_k =
      1;  ///< a prediction is correct when the target is among the k best-scored classes
  std::string output_field = "output";
  std::string target_field = "target";
  std::string name = "accuracy";

  /// std::invalid_argument for top_k < 1.
  void validate() const {
    if (top_k < 1)
      throw std::invalid_argument("Accuracy: top_k must be >= 1, got " + std::to_string(top_k));
  }

  /// The batch's mean accuracy, a 0-dim float32 tensor on its device.
  torch::Tensor operator()(const Entry& entry) const {
    validate();
    detail::metric_scope scope;
    const auto& scores_in = entry.at(output_field);
    const auto& target = entry.at(target_field);
    if (scores_in.dim() < 2)
      throw std::invalid_argument("Accuracy: '" + output_field +
                                  "' must hold class scores along dimension 1, " +
                                  "shape (N, K, ...), got " + c10::str(scores_in.sizes()));
    auto expected = scores_in.sizes().vec();
    expected.erase(expected.begin() + 1);
    if (target.sizes().vec() != expected)
      throw std::invalid_argument("Accuracy: '" + target_field + "' must have the shape of '" +
                                  output_field + "' without dimension 1, " +
                                  c10::str(c10::IntArrayRef(expected)) + ", got " +
                                  c10::str(target.sizes()));
    if (c10::isFloatingType(target.scalar_type()) || c10::isComplexType(target.scalar_type()) ||
        target.scalar_type() == torch::kBool)
      throw std::invalid_argument("Accuracy: '" + target_field +
                                  "' must hold integer class indices, got " +
                                  std::string(c10::toString(target.scalar_type())));
    const auto classes = scores_in.size(1);
    if (top_k > classes)
      throw std::invalid_argument("Accuracy: top_k " + std::to_string(top_k) +
                                  " is more than the " + std::to_string(classes) + " classes of '" +
                                  output_field + "'");

    auto scores = scores_in.to(torch::kFloat);
    auto t = target.to(torch::kLong).unsqueeze(1);  // (N, 1, ...)
    auto target_score = scores.gather(1, t);        // (N, 1, ...)
    std::vector<std::int64_t> index_shape(scores.dim(), 1);
    index_shape[1] = classes;
    auto index = torch::arange(classes, t.options()).view(index_shape);  // (1, K, 1, ...)
    auto rank = (scores > target_score).sum(1) + ((scores == target_score) & (index < t)).sum(1);
    auto correct = (rank < top_k) & target_score.squeeze(1).isnan().logical_not();
    // Every sample has as many positions: the mean of the per-sample means is the mean.
    return correct.to(torch::kFloat).mean();
  }

  operator metric() const { return detail::make_metric(*this); }
};

}  // namespace hookforge
