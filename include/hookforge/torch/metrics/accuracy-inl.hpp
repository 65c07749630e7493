// hookforge/torch/metrics/accuracy-inl.hpp — Accuracy's validate and operator(): included by
// accuracy.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hookforge/torch/metrics/accuracy.hpp"

namespace hookforge {

HOOKFORGE_INLINE void Accuracy::validate() const {
  if (top_k < 1)
    throw std::invalid_argument("Accuracy: top_k must be >= 1, got " + std::to_string(top_k));
}

HOOKFORGE_INLINE torch::Tensor Accuracy::operator()(const Entry& entry) const {
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
    throw std::invalid_argument("Accuracy: top_k " + std::to_string(top_k) + " is more than the " +
                                std::to_string(classes) + " classes of '" + output_field + "'");

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

}  // namespace hookforge
