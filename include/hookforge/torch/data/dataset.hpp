// hookforge/torch/data/dataset.hpp — a dataset is "a size and one sample per index".
//
//   hookforge::tensor_dataset data{{"input", X}, {"target", Y}};  // X: [N, ...], Y: [N, ...]
//   hookforge::Entry sample = data.get(3);     // {"input": X[3], "target": Y[3]}, views
//   hookforge::subset train(data, {0, 2, 4});  // a view of three samples
//
// A `dataset` is any type with
//   size() const   -> the number of samples (convertible to std::size_t)
//   get(i) const   -> the sample at index i in [0, size()), as an Entry of ONE sample:
//                     no batch dimension (the loader stacks samples into a batch).
// `get` is const and, when a DataLoader runs worker threads, called from several threads
// at once: a dataset that reads files or decodes images must do so without shared
// mutable state (or guard it). Datasets are copied into loaders and subsets, so make them
// cheap to copy (hold tensors, which share storage, or a std::shared_ptr to the rest).
//
// A dataset whose samples change from epoch to epoch (random crops, flips) also defines
//   get(i, epoch) const -> sample i as drawn in `epoch`, a function of (i, epoch) alone
// (`epoch_dataset`); the loader calls it with the epoch it is loading, so that a resumed
// run draws the same samples as a straight one. `sample_of(data, i, epoch)` calls whichever
// the dataset has.
//
// A dataset that can hand out a whole batch at once, cheaper than one sample at a time,
// also defines
//   get_batch(indices) const        -> the samples at `indices` (a std::span of indices),
//                                      each field [B, ...]: what stacking get(i) for each
//                                      index gives, bit for bit (`batch_dataset`);
//   get_batch(indices, epoch) const -> the same for an epoch_dataset (`epoch_batch_dataset`).
// The loader then calls it instead of get() per sample (collate.hpp). tensor_dataset and
// ProceduralImages' cache gather each field's rows with one index_select.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

/// See the top of this file.
template <class D>
concept dataset = requires(const D& d, std::size_t index) {
  { d.size() } -> std::convertible_to<std::size_t>;
  { d.get(index) } -> std::convertible_to<Entry>;
};

/// A dataset whose sample i may differ per epoch: get(i, epoch), pure in (i, epoch).
template <class D>
concept epoch_dataset = dataset<D> && requires(const D& d, std::size_t index, std::int64_t epoch) {
  { d.get(index, epoch) } -> std::convertible_to<Entry>;
};

/// A dataset that serves a batch of indices at once: get_batch(indices), see the top of this file.
template <class D>
concept batch_dataset = dataset<D> && requires(const D& d, std::span<const std::size_t> indices) {
  { d.get_batch(indices) } -> std::convertible_to<Entry>;
};

/// An epoch_dataset that serves a batch of indices at once: get_batch(indices, epoch).
template <class D>
concept epoch_batch_dataset =
    epoch_dataset<D> &&
    requires(const D& d, std::span<const std::size_t> indices, std::int64_t epoch) {
      { d.get_batch(indices, epoch) } -> std::convertible_to<Entry>;
    };

namespace detail {

/// D has one member named get_batch, whatever its signature.
template <class D>
concept names_get_batch = requires { &D::get_batch; };

/// A get_batch the loader can call, or none: one of another signature would be passed over
/// in silence, and the batches stacked sample by sample.
template <class D>
constexpr bool checked_get_batch() {
  static_assert(
      !names_get_batch<D> || (batch_dataset<D> && !epoch_dataset<D>) || epoch_batch_dataset<D>,
      "hookforge: the dataset's get_batch cannot serve the loader: declare it "
      "`Entry get_batch(std::span<const std::size_t> indices) const`, or, for a "
      "dataset with get(i, epoch), `Entry get_batch(std::span<const std::size_t> "
      "indices, std::int64_t epoch) const`");
  return true;
}

/// Rows `indices` of every field of `fields` (dim 0, `rows` long), one index_select per
/// field, in the fields' order. std::out_of_range naming `who` for an index past `rows`.
HOOKFORGE_INLINE Entry gather_rows(const Entry& fields, std::span<const std::size_t> indices,
                                   std::size_t rows, const char* who);

}  // namespace detail

/// Sample `index` of `data` in `epoch`: get(index, epoch) for an epoch_dataset, else get(index).
template <dataset D>
Entry sample_of(const D& data, std::size_t index, std::int64_t epoch) {
  if constexpr (epoch_dataset<D>)
    return data.get(index, epoch);
  else
    return data.get(index);
}

/// Named tensors sliced along dim 0: sample i is {name: tensor[i]} for each field, in
/// the order given. Every tensor needs at least one dimension and the same size(0).
class tensor_dataset {
 public:
  tensor_dataset(std::initializer_list<std::pair<std::string, torch::Tensor>> fields)
      : tensor_dataset(Entry(fields)) {}
  /// std::invalid_argument for no fields, a field without dim 0, or fields of other sizes.
  explicit tensor_dataset(Entry fields);

  std::size_t size() const noexcept { return static_cast<std::size_t>(size_); }

  /// Views of each field's row `index` (no copy). Throws std::out_of_range past the end.
  Entry get(std::size_t index) const;
  /// Rows `indices` of each field, gathered (copies). Throws std::out_of_range past the end.
  Entry get_batch(std::span<const std::size_t> indices) const {
    return detail::gather_rows(fields_, indices, size(), "tensor_dataset::get_batch");
  }

  /// The whole tensors, as given.
  const Entry& fields() const noexcept { return fields_; }
  /// The fields of every sample, for the checks made before training.
  std::vector<std::string> field_names() const { return fields_.names(); }

 private:
  Entry fields_;
  std::int64_t size_ = 0;
};

/// A view of `dataset` through a list of indices: sample i is dataset.get(indices[i]).
/// The dataset is shared (std::shared_ptr), so subsets of one dataset (random_split's)
/// hold it once.
template <dataset Dataset>
class subset {
 public:
  using dataset_type = Dataset;

  subset(Dataset data, std::vector<std::size_t> indices)
      : subset(std::make_shared<const Dataset>(std::move(data)), std::move(indices)) {}
  /// Throws std::invalid_argument for a null dataset or an index past its end.
  subset(std::shared_ptr<const Dataset> data, std::vector<std::size_t> indices)
      : data_(std::move(data)), indices_(std::move(indices)) {
    if (!data_) throw std::invalid_argument("subset: dataset must not be null");
    const std::size_t n = data_->size();
    for (std::size_t i = 0; i < indices_.size(); ++i)
      if (indices_[i] >= n)
        throw std::invalid_argument("subset: indices[" + std::to_string(i) + "] must be < " +
                                    std::to_string(n) + " (the dataset's size), got " +
                                    std::to_string(indices_[i]));
  }

  std::size_t size() const noexcept { return indices_.size(); }

  /// Throws std::out_of_range past the end.
  Entry get(std::size_t index) const { return data_->get(checked(index)); }
  /// Sample `index` in `epoch`, where the underlying dataset's samples depend on the epoch.
  Entry get(std::size_t index, std::int64_t epoch) const
    requires epoch_dataset<Dataset>
  {
    return data_->get(checked(index), epoch);
  }

  /// The samples at `indices`, gathered by the underlying dataset's get_batch.
  Entry get_batch(std::span<const std::size_t> indices) const
    requires batch_dataset<Dataset>
  {
    return data_->get_batch(mapped(indices));
  }
  Entry get_batch(std::span<const std::size_t> indices, std::int64_t epoch) const
    requires epoch_batch_dataset<Dataset>
  {
    return data_->get_batch(mapped(indices), epoch);
  }

  /// Indices into the underlying dataset, in this subset's order.
  const std::vector<std::size_t>& indices() const noexcept { return indices_; }
  const Dataset& underlying() const noexcept { return *data_; }

 private:
  std::size_t checked(std::size_t index) const {
    if (index >= indices_.size())
      throw std::out_of_range("subset::get: index " + std::to_string(index) + " out of range for " +
                              std::to_string(indices_.size()) + " samples");
    return indices_[index];
  }
  std::vector<std::size_t> mapped(std::span<const std::size_t> indices) const {
    std::vector<std::size_t> out;
    out.reserve(indices.size());
    for (std::size_t i : indices) out.push_back(checked(i));
    return out;
  }

  std::shared_ptr<const Dataset> data_;
  std::vector<std::size_t> indices_;
};

template <class Dataset>
subset(Dataset, std::vector<std::size_t>) -> subset<Dataset>;
template <class Dataset>
subset(std::shared_ptr<const Dataset>, std::vector<std::size_t>) -> subset<Dataset>;
template <class Dataset>
subset(std::shared_ptr<Dataset>, std::vector<std::size_t>) -> subset<Dataset>;

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/dataset-inl.hpp"
#endif
