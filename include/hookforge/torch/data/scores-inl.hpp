// hookforge/torch/data/scores-inl.hpp — score_accumulator's definitions: included by
// scores.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "hookforge/torch/data/scores.hpp"

namespace hookforge {

HOOKFORGE_INLINE void score_accumulator::add(const std::map<std::string, torch::Tensor>& scores,
                                             std::int64_t batch_size) {
  for (const auto& [name, value] : scores) {
    auto& s = series_[name];
    s.values.push_back(value.dim() == 0 ? value : value.mean());
    s.weights.push_back(static_cast<double>(batch_size));
    if (s.values.size() == fold_every) fold(s);
  }
}

HOOKFORGE_INLINE epoch_scores score_accumulator::means() const {
  epoch_scores out;
  for (auto [name, s] : series_) {  // a copy: folding must not change *this
    fold(s);
    out[name] = s.weight > 0 ? s.sum.item<double>() / s.weight : 0.0;
  }
  return out;
}

HOOKFORGE_INLINE void score_accumulator::fold(series& s) {
  if (s.values.empty()) return;
  auto values = torch::stack(s.values).to(torch::kDouble).flatten();
  auto weights = torch::tensor(s.weights, torch::kDouble).to(values.device());
  auto partial = (values * weights).sum();
  s.sum = s.sum.defined() ? s.sum + partial : partial;
  for (double w : s.weights) s.weight += w;
  s.values.clear();
  s.weights.clear();
}

}  // namespace hookforge
