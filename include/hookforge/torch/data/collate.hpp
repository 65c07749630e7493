// hookforge/torch/data/collate.hpp — the samples at a list of indices, as one batch.
//
//   hookforge::Entry batch = hookforge::batch_of(data, indices, epoch);
//
// A batch's field of shape S per sample is [B, S...]: the samples' tensors stacked along a
// new dim 0, in the order of `indices`. batch_of asks the dataset for the whole batch where
// it can serve one (`get_batch`, dataset.hpp: an in-memory dataset gathers each field's rows
// with one index_select) and otherwise reads the samples one by one and stacks them
// (`detail::collate`). Both give the same batch, bit for bit: the loader's batches, its
// resume and its workers do not depend on which path a dataset takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/dataset.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

namespace detail {

/// A tensor's shape as text, "[2, 3]".
HOOKFORGE_INLINE std::string shape_string(const torch::Tensor& t);

/// Stacks `samples` (dataset indices `indices`, for messages) field by field, in the
/// first sample's field order. std::invalid_argument naming the field and the samples when
/// they disagree on the fields or a field's shape.
HOOKFORGE_INLINE Entry collate(const std::vector<Entry>& samples,
                               std::span<const std::size_t> indices);

/// sample(i) for each of `indices`, collated.
template <class Sample>
Entry stack_samples(std::span<const std::size_t> indices, Sample&& sample) {
  std::vector<Entry> samples;
  samples.reserve(indices.size());
  for (std::size_t i : indices) samples.emplace_back(sample(i));
  return collate(samples, indices);
}

}  // namespace detail

/// The samples of `data` at `indices` as drawn in `epoch`, collated: the dataset's
/// get_batch where it has one for this kind of dataset, else sample_of per index, stacked.
template <dataset D>
Entry batch_of(const D& data, std::span<const std::size_t> indices, std::int64_t epoch) {
  if constexpr (epoch_batch_dataset<D>) {
    return data.get_batch(indices, epoch);
  } else if constexpr (batch_dataset<D> && !epoch_dataset<D>) {
    return data.get_batch(indices);
  } else {
    return detail::stack_samples(indices, [&](std::size_t i) { return sample_of(data, i, epoch); });
  }
}

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/collate-inl.hpp"
#endif
