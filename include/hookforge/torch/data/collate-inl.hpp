// hookforge/torch/data/collate-inl.hpp — stacking samples into a batch: included by collate.hpp
// header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "hookforge/torch/data/collate.hpp"

namespace hookforge::detail {

HOOKFORGE_INLINE std::string shape_string(const torch::Tensor& t) {
  std::string out = "[";
  for (std::int64_t d = 0; d < t.dim(); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
  return out + "]";
}

HOOKFORGE_INLINE Entry collate(const std::vector<Entry>& samples,
                               std::span<const std::size_t> indices) {
  Entry batch;
  if (samples.empty()) return batch;
  const Entry& first = samples.front();
  const auto sample = [&](std::size_t i) { return "sample " + std::to_string(indices[i]); };
  for (std::size_t i = 1; i < samples.size(); ++i) {
    for (const auto& [name, tensor] : first)
      if (!samples[i].contains(name))
        throw std::invalid_argument("DataLoader: field '" + name + "' is in " + sample(0) +
                                    " but not in " + sample(i));
    for (const auto& [name, tensor] : samples[i])
      if (!first.contains(name))
        throw std::invalid_argument("DataLoader: field '" + name + "' is in " + sample(i) +
                                    " but not in " + sample(0));
  }
  std::vector<torch::Tensor> column;
  column.reserve(samples.size());
  for (const auto& [name, reference] : first) {
    column.clear();
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const torch::Tensor& t = samples[i].at(name);
      if (!t.defined())
        throw std::invalid_argument("DataLoader: field '" + name + "' is undefined in " +
                                    sample(i));
      if (!column.empty() && t.sizes() != column.front().sizes())
        throw std::invalid_argument("DataLoader: field '" + name + "' has shape " +
                                    shape_string(column.front()) + " in " + sample(0) + " but " +
                                    shape_string(t) + " in " + sample(i) +
                                    "; the samples of a batch must agree on each field's shape");
      column.push_back(t);
    }
    batch.set(name, torch::stack(column));
  }
  return batch;
}

}  // namespace hookforge::detail
