// hookforge/torch/data/loader.hpp — batches of Entry from a dataset, shuffled per epoch,
// resumable mid-epoch, optionally prefetched by worker threads.
//
//   hookforge::tensor_dataset data{{"input", X}, {"target", Y}};
//   hookforge::DataLoader loader(data, {.batch_size = 32, .shuffle = true, .seed = 7});
//   for (std::int64_t epoch = 0; epoch < 10; ++epoch) {
//     loader.set_epoch(epoch);                         // the Trainer does this for you
//     runner.run_epoch(model, loader, epoch, criterion);
//   }
//
// A batch is the samples of the dataset (see dataset.hpp) at the next batch_size indices
// of the epoch's order, collated (collate.hpp): a field of shape S per sample is [B, S...]
// in the batch, gathered at once where the dataset serves whole batches (get_batch), else
// stacked from its samples. Stacked samples must have the same fields, and each field the
// same shape in every sample of a batch; otherwise iterating throws std::invalid_argument
// naming the field, the two samples and their shapes.
//
// size() is the number of batches per epoch (the last one smaller unless drop_last), so
// runners know num_batches and which batch is last. The order of an epoch comes from the
// sampler (sampler.hpp): sequential, or a permutation that depends only on (seed, epoch).
//
// Position. The loader counts the batches it has handed out in the current epoch; a
// batch counts once it is read (`*it`). Iterating goes on from there; after a full epoch
// the next iteration starts epoch+1, unless set_epoch chose another epoch. state_dict()
// saves (epoch, seed, batches yielded), so a loader restored in the middle of an epoch
// yields exactly the remaining batches of that epoch in the same order. set_epoch(e)
// with the epoch in progress keeps the position (the Trainer calls set_epoch(epoch)
// after restoring); any other epoch, or the same one after it finished, starts at its
// first batch. One iteration at a time: begin() ends any earlier one.
//
// Workers. With workers = 0 each batch is loaded when it is read. With workers > 0,
// LibTorch's torch::data::DataLoaderBase machinery (worker threads, job queue, ordered
// sequencer) loads up to 2 * workers batches ahead, in order: the batches are the same,
// bit for bit, as with workers = 0. dataset.get is then called from several threads.
//
// Pinned memory. With pin_memory = true and a CUDA device present, each batch is copied
// into page-locked host memory where it is made (in the worker threads when workers > 0),
// so the runners' copy to a `cuda` device is asynchronous (`non_blocking`) and the host
// does not wait for it. Without a CUDA device it does nothing, as PyTorch's DataLoader.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/data/dataloader/base.h>
#include <torch/data/worker_exception.h>
#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/collate.hpp"
#include "hookforge/torch/data/dataset.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/sampler.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

/// A DataLoader's settings; designated-initialiser friendly.
struct loader_options {
  std::int64_t batch_size = 1;  ///< samples per batch, >= 1
  bool shuffle = false;         ///< a new random order each epoch (default sampler only)
  std::uint64_t seed = 0;       ///< the shuffle's seed (default sampler only)
  bool drop_last = false;       ///< drop the last batch when it is smaller than batch_size
  std::int64_t workers = 0;     ///< threads prefetching batches; 0 loads on the caller's thread
  bool pin_memory = false;      ///< batches in page-locked memory (only where CUDA is present)
};

namespace detail {

/// `batch` with its CPU tensors copied into page-locked memory.
HOOKFORGE_INLINE Entry pinned(Entry&& batch);

/// Whether pin_memory can take effect: a CUDA device is present.
HOOKFORGE_INLINE bool can_pin_memory();

/// The batch of the samples at `indices` as drawn in `epoch` (batch_of), pinned when `pin`.
template <class Dataset>
Entry load_batch(const Dataset& data, std::span<const std::size_t> indices, std::int64_t epoch,
                 bool pin) {
  auto batch = batch_of(data, indices, epoch);
  return pin ? pinned(std::move(batch)) : batch;
}

/// One batch for a worker thread to load: its samples' indices and their epoch.
struct batch_request {
  std::vector<std::size_t> indices;
  std::int64_t epoch = 0;
};

/// What torch::data's worker threads call: a batch request -> a collated Entry.
template <class Dataset>
struct batch_source {
  std::shared_ptr<const Dataset> data;
  bool pin = false;
  Entry get_batch(batch_request request) const {
    return load_batch(*data, request.indices, request.epoch, pin);
  }
};

/// Worker threads loading the batches of one pass ahead of the reader, in order: LibTorch's
/// DataLoaderBase (job queue, ordered sequencer, worker exceptions) fed with our plan.
template <class Dataset>
class prefetcher final
    : public torch::data::DataLoaderBase<batch_source<Dataset>, Entry, batch_request> {
  using base = torch::data::DataLoaderBase<batch_source<Dataset>, Entry, batch_request>;

 public:
  prefetcher(std::shared_ptr<const Dataset> data, std::size_t workers, bool pin)
      : base(torch::data::DataLoaderOptions().workers(workers)) {
    for (std::size_t w = 0; w < workers; ++w)
      this->workers_.emplace_back([this, source = batch_source<Dataset>{data, pin}]() mutable {
        this->worker_thread(source);
      });
  }
  prefetcher(const prefetcher&) = delete;
  prefetcher& operator=(const prefetcher&) = delete;
  ~prefetcher() override { this->join(); }

  /// Discards what an earlier pass left in flight, then queues batches [first, last) of
  /// `order` (epoch `epoch`'s) cut in batch_size pieces.
  void start(std::shared_ptr<const std::vector<std::size_t>> order, std::int64_t epoch,
             std::size_t batch_size, std::int64_t first, std::int64_t last) {
    order_ = std::move(order);
    epoch_ = epoch;
    batch_size_ = batch_size;
    next_ = first;
    last_ = last;
    base::reset();
  }

  /// The next batch of the pass; worker exceptions are rethrown as they were thrown.
  std::optional<Entry> next_batch() {
    try {
      auto batch = this->next();
      if (!batch) return std::nullopt;
      return std::move(*batch);
    } catch (const torch::data::WorkerException& e) {
      std::rethrow_exception(e.original_exception);
    }
  }

 private:
  torch::optional<batch_request> get_batch_request() override {
    if (!order_ || next_ >= last_) return torch::nullopt;
    const std::size_t begin = static_cast<std::size_t>(next_++) * batch_size_;
    const std::size_t end = std::min(begin + batch_size_, order_->size());
    return batch_request{{order_->begin() + begin, order_->begin() + end}, epoch_};
  }

  std::shared_ptr<const std::vector<std::size_t>> order_;
  std::int64_t epoch_ = 0;
  std::size_t batch_size_ = 1;
  std::int64_t next_ = 0;
  std::int64_t last_ = 0;
};

}  // namespace detail

/// See the top of this file. Move-only (it may own worker threads).
template <dataset Dataset, index_sampler Sampler = default_sampler>
class DataLoader {
  static_assert(detail::checked_get_batch<Dataset>());

 public:
  using dataset_type = Dataset;
  using sampler_type = Sampler;

  /// The order comes from `options.shuffle` and `options.seed` (default_sampler).
  DataLoader(Dataset data, loader_options options = {})
    requires std::same_as<Sampler, default_sampler>
      : data_(std::make_shared<const Dataset>(std::move(data))),
        sampler_(data_->size(), options.shuffle, options.seed),
        options_(options) {
    check_options();
  }

  /// The order comes from `sampler` (e.g. a sharded sampler); options.shuffle must be
  /// false and options.seed is not used.
  DataLoader(Dataset data, Sampler sampler, loader_options options = {})
      : data_(std::make_shared<const Dataset>(std::move(data))),
        sampler_(std::move(sampler)),
        options_(options) {
    if (options_.shuffle)
      throw std::invalid_argument(
          "DataLoader: shuffle must be false when a sampler is given (the sampler decides the "
          "order), got true");
    check_options();
  }

  DataLoader(DataLoader&&) noexcept = default;
  DataLoader& operator=(DataLoader&&) noexcept = default;
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;
  ~DataLoader() = default;

  /// Batches per epoch.
  std::size_t size() const noexcept {
    const std::size_t n = sampler_.size();
    const auto b = static_cast<std::size_t>(options_.batch_size);
    return options_.drop_last ? n / b : (n + b - 1) / b;
  }

  /// The epoch in progress (or the last one run).
  std::int64_t epoch() const noexcept { return epoch_; }
  /// Batches handed out in that epoch.
  std::int64_t batches_yielded() const noexcept { return yielded_; }

  /// Run `epoch` next (its own order). The epoch in progress keeps its position; any
  /// other epoch, or the same one once finished, starts at its first batch.
  void set_epoch(std::int64_t epoch) {
    if (epoch < 0)
      throw std::invalid_argument("DataLoader: epoch must be >= 0, got " + std::to_string(epoch));
    if (epoch != epoch_ || finished()) {
      epoch_ = epoch;
      yielded_ = 0;
    }
  }

  /// The sampler's seed (0 for a sampler without one).
  std::uint64_t seed() const noexcept {
    if constexpr (seeded_sampler<Sampler>)
      return sampler_.seed();
    else
      return 0;
  }

  /// epoch, batches_yielded, seed, and num_samples / batch_size to check a restore against.
  state_map state_dict() const {
    return {{"epoch", epoch_},
            {"batches_yielded", yielded_},
            {"seed", static_cast<std::int64_t>(seed())},
            {"num_samples", static_cast<std::int64_t>(sampler_.size())},
            {"batch_size", options_.batch_size}};
  }

  /// Restores the position (and the seed, for a seeded sampler); the next iteration yields
  /// the remaining batches of the saved epoch. Throws std::invalid_argument for a state of
  /// another sample count or batch size, or a missing or malformed entry.
  void load_state_dict(const state_map& state) {
    const std::int64_t epoch = state_value<std::int64_t>(state, "DataLoader", "epoch");
    const std::int64_t yielded = state_value<std::int64_t>(state, "DataLoader", "batches_yielded");
    const std::int64_t seed = state_value<std::int64_t>(state, "DataLoader", "seed");
    const std::int64_t samples = state_value<std::int64_t>(state, "DataLoader", "num_samples");
    const std::int64_t batch_size = state_value<std::int64_t>(state, "DataLoader", "batch_size");
    if (samples != static_cast<std::int64_t>(sampler_.size()) || batch_size != options_.batch_size)
      throw std::invalid_argument("DataLoader::load_state_dict: the state is for " +
                                  std::to_string(samples) + " samples in batches of " +
                                  std::to_string(batch_size) + ", this loader has " +
                                  std::to_string(sampler_.size()) + " in batches of " +
                                  std::to_string(options_.batch_size));
    if (epoch < 0)
      throw std::invalid_argument("DataLoader::load_state_dict: epoch must be >= 0, got " +
                                  std::to_string(epoch));
    if (yielded < 0 || yielded > static_cast<std::int64_t>(size()))
      throw std::invalid_argument("DataLoader::load_state_dict: batches_yielded must be in [0, " +
                                  std::to_string(size()) + "], got " + std::to_string(yielded));
    if constexpr (seeded_sampler<Sampler>) {
      sampler_.set_seed(static_cast<std::uint64_t>(seed));
      order_.reset();
    }
    epoch_ = epoch;
    yielded_ = yielded;
  }

  class iterator {
   public:
    using iterator_concept = std::input_iterator_tag;
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    using reference = const Entry&;

    iterator() = default;
    reference operator*() const {
      if (!current_) current_ = loader_->fetch(batch_);
      return *current_;
    }
    iterator& operator++() {
      if (!current_) (void)**this;  // a skipped batch still counts, and keeps workers in step
      current_.reset();
      ++batch_;
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& it, std::default_sentinel_t) noexcept {
      return it.batch_ >= it.end_;
    }

   private:
    friend class DataLoader;
    iterator(DataLoader* loader, std::int64_t batch, std::int64_t end)
        : loader_(loader), batch_(batch), end_(end) {}
    DataLoader* loader_ = nullptr;
    std::int64_t batch_ = 0;
    std::int64_t end_ = 0;
    mutable std::optional<Entry> current_;
  };

  /// Starts (or goes on with) an epoch: see "Position" at the top of this file.
  iterator begin() {
    if (finished()) {
      ++epoch_;
      yielded_ = 0;
    }
    const auto end = static_cast<std::int64_t>(size());
    if (options_.workers > 0) {
      if (!prefetcher_)
        prefetcher_ = std::make_unique<detail::prefetcher<Dataset>>(
            data_, static_cast<std::size_t>(options_.workers), pins());
      prefetcher_->start(order(), epoch_, static_cast<std::size_t>(options_.batch_size), yielded_,
                         end);
    }
    return iterator(this, yielded_, end);
  }
  std::default_sentinel_t end() const noexcept { return {}; }

  const Dataset& dataset() const noexcept { return *data_; }
  const Sampler& sampler() const noexcept { return sampler_; }
  const loader_options& options() const noexcept { return options_; }

 private:
  void check_options() const {
    if (options_.batch_size < 1)
      throw std::invalid_argument("DataLoader: batch_size must be >= 1, got " +
                                  std::to_string(options_.batch_size));
    if (options_.workers < 0)
      throw std::invalid_argument("DataLoader: workers must be >= 0, got " +
                                  std::to_string(options_.workers));
  }

  bool pins() const { return options_.pin_memory && detail::can_pin_memory(); }

  bool finished() const noexcept {
    return size() > 0 && yielded_ >= static_cast<std::int64_t>(size());
  }

  /// The order of epoch_, computed once per epoch (and seed).
  std::shared_ptr<const std::vector<std::size_t>> order() {
    if (order_ && order_epoch_ == epoch_) return order_;
    auto indices = std::make_shared<std::vector<std::size_t>>(sampler_.indices(epoch_));
    if (indices->size() != sampler_.size())
      throw std::invalid_argument("DataLoader: the sampler's indices(" + std::to_string(epoch_) +
                                  ") must have " + std::to_string(sampler_.size()) +
                                  " indices (its size()), got " + std::to_string(indices->size()));
    const std::size_t n = data_->size();
    for (std::size_t i : *indices)
      if (i >= n)
        throw std::invalid_argument("DataLoader: the sampler's indices must be < " +
                                    std::to_string(n) + " (the dataset's size), got " +
                                    std::to_string(i));
    order_ = std::move(indices);
    order_epoch_ = epoch_;
    return order_;
  }

  /// Batch `batch` of the epoch in progress; it counts as yielded once loaded.
  Entry fetch(std::int64_t batch) {
    Entry loaded;
    if (prefetcher_ && options_.workers > 0) {
      auto next = prefetcher_->next_batch();
      if (!next)
        throw std::logic_error(
            "DataLoader: the worker threads ran out of batches before the epoch's end");
      loaded = std::move(*next);
    } else {
      const auto& indices = *order();
      const std::size_t first =
          static_cast<std::size_t>(batch) * static_cast<std::size_t>(options_.batch_size);
      const std::size_t last =
          std::min(first + static_cast<std::size_t>(options_.batch_size), indices.size());
      loaded = detail::load_batch(
          *data_, std::span<const std::size_t>(indices.data() + first, last - first), epoch_,
          pins());
    }
    yielded_ = std::max(yielded_, batch + 1);
    return loaded;
  }

  std::shared_ptr<const Dataset> data_;
  Sampler sampler_;
  loader_options options_;
  std::int64_t epoch_ = 0;
  std::int64_t yielded_ = 0;
  std::shared_ptr<const std::vector<std::size_t>> order_;
  std::int64_t order_epoch_ = -1;
  std::unique_ptr<detail::prefetcher<Dataset>> prefetcher_;
};

template <class Dataset>
DataLoader(Dataset, loader_options) -> DataLoader<Dataset, default_sampler>;
template <class Dataset>
DataLoader(Dataset) -> DataLoader<Dataset, default_sampler>;
template <class Dataset, index_sampler Sampler>
DataLoader(Dataset, Sampler, loader_options) -> DataLoader<Dataset, Sampler>;
template <class Dataset, index_sampler Sampler>
DataLoader(Dataset, Sampler) -> DataLoader<Dataset, Sampler>;

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/loader-inl.hpp"
#endif
