// hookforge/torch/data/scores-inl.hpp — score_accumulator's definitions: included by
// scores.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>

#include "hookforge/torch/data/scores.hpp"

namespace hookforge {

HOOKFORGE_INLINE void score_accumulator::add(const std::map<std::string, torch::Tensor>& scores,
                                             std::int64_t batch_size) {
  for (const auto& [name, value] : scores) {
    auto& s = series_[name];
    if (loaded_) move_to(s, value.device());
    s.values.push_back(value.dim() == 0 ? value : value.mean());
    s.weights.push_back(static_cast<double>(batch_size));
    if (s.values.size() == fold_every) fold(s);
  }
  loaded_ = false;
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

HOOKFORGE_INLINE state_map score_accumulator::state_dict() const {
  // Per score i: its name, its kept values (stacked, as fold() stacks them), their weights,
  // and the folded sum (each absent when there is none).
  state_map state;
  std::vector<std::string> names;
  for (const auto& [name, s] : series_) {
    const std::string key = "score" + std::to_string(names.size());
    names.push_back(name);
    if (!s.values.empty()) state[key + ".values"] = torch::stack(s.values);
    state[key + ".weights"] = c10::List<double>(s.weights);
    state[key + ".weight"] = s.weight;
    if (s.sum.defined()) state[key + ".sum"] = s.sum;
  }
  state["names"] = string_list(names);
  return state;
}

HOOKFORGE_INLINE void score_accumulator::load_state_dict(const state_map& state) {
  constexpr const char* owner = "score_accumulator";
  std::map<std::string, series> loaded;
  const auto names = state_value<std::vector<std::string>>(state, owner, "names");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string key = "score" + std::to_string(i);
    series s;
    if (state.count(key + ".values"))
      s.values = state_value<torch::Tensor>(state, owner, key + ".values").unbind(0);
    s.weights = state_value<std::vector<double>>(state, owner, key + ".weights");
    if (s.values.size() != s.weights.size())
      throw std::invalid_argument("score_accumulator: the saved state of '" + names[i] + "' has " +
                                  std::to_string(s.values.size()) + " scores and " +
                                  std::to_string(s.weights.size()) + " weights");
    s.weight = state_value<double>(state, owner, key + ".weight");
    if (state.count(key + ".sum")) s.sum = state_value<torch::Tensor>(state, owner, key + ".sum");
    loaded.emplace(names[i], std::move(s));
  }
  series_ = std::move(loaded);
  loaded_ = true;
}

HOOKFORGE_INLINE void score_accumulator::move_to(series& s, torch::Device device) {
  for (auto& v : s.values) v = v.to(device);
  if (s.sum.defined()) s.sum = s.sum.to(device);
}

}  // namespace hookforge
