// hookforge/torch/data/dataset-inl.hpp — tensor_dataset's checks and sample views: included by
// dataset.hpp header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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

HOOKFORGE_INLINE Entry detail::gather_rows(const Entry& fields,
                                           std::span<const std::size_t> indices, std::size_t rows,
                                           const char* who) {
  auto index = torch::empty({static_cast<std::int64_t>(indices.size())}, torch::kLong);
  auto* out = index.data_ptr<std::int64_t>();
  for (std::size_t i : indices) {
    if (i >= rows)
      throw std::out_of_range(std::string(who) + ": index " + std::to_string(i) +
                              " out of range for " + std::to_string(rows) + " samples");
    *out++ = static_cast<std::int64_t>(i);
  }
  Entry batch;
  for (const auto& [name, tensor] : fields)
    batch.set(name, tensor.index_select(0, tensor.is_cpu() ? index : index.to(tensor.device())));
  return batch;
}

}  // namespace hookforge
