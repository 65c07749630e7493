// hookforge/torch/data/dataset-inl.hpp — tensor_dataset's checks and sample views: included by
// dataset.hpp header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "hookforge/torch/data/dataset.hpp"

namespace hookforge {

HOOKFORGE_INLINE tensor_dataset::tensor_dataset(Entry fields) : fields_(std::move(fields)) {
  if (fields_.empty()) throw std::invalid_argument("tensor_dataset: fields must not be empty");
  const std::string* first = nullptr;
  for (const auto& [name, tensor] : fields_) {
    if (!tensor.defined() || tensor.dim() == 0)
      throw std::invalid_argument(
          "tensor_dataset: field '" + name + "' must have a sample dimension (dim 0), got " +
          (tensor.defined() ? "a 0-dimensional tensor" : "an undefined tensor"));
    if (first == nullptr) {
      first = &name;
      size_ = tensor.size(0);
    } else if (tensor.size(0) != size_) {
      throw std::invalid_argument(
          "tensor_dataset: fields must agree on the number of samples (dim 0), got " +
          std::to_string(size_) + " for '" + *first + "' and " + std::to_string(tensor.size(0)) +
          " for '" + name + "'");
    }
  }
}

HOOKFORGE_INLINE Entry tensor_dataset::get(std::size_t index) const {
  if (index >= size())
    throw std::out_of_range("tensor_dataset::get: index " + std::to_string(index) +
                            " out of range for " + std::to_string(size()) + " samples");
  Entry sample;
  for (const auto& [name, tensor] : fields_)
    sample.set(name, tensor.select(0, static_cast<std::int64_t>(index)));
  return sample;
}

}  // namespace hookforge
