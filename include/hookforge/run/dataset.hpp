// hookforge/run/dataset.hpp — the dataset kind: samples built from a config, type-erased.
//
//   data:
//     train: {_target: Sine, params: {count: 512, seed: 1}}
//
// A dataset entry builds a `std::shared_ptr<hookforge::run::Dataset>`: size() and get(i),
// as any hookforge::dataset (torch/data/dataset.hpp), and the fields its samples have where
// the class says them (`field_names()`), for the checks made before training. `any_dataset` is the
// cheap-to-copy handle a DataLoader holds. Register a dataset class with `dataset_of`:
//
//   HOOKFORGE_REGISTER_AS(dataset, "ProceduralImages",
//   hookforge::run::dataset_of<hookforge::ProceduralImages>,
//                         hookforge::config::options<hookforge::procedural_images_options>(...));
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/register.hpp"
#include "hookforge/run/machine.hpp"
#include "hookforge/torch/data/collate.hpp"
#include "hookforge/torch/data/dataset.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge::run {

/// A field's smallest size in a dataset's samples, and where it comes from (a file; ""
/// where every sample has it, as patches do).
struct sample_extent {
  std::string source;
  std::int64_t width = 0;
  std::int64_t height = 0;
};

/// What a dataset entry builds. get() may be called from several threads at once (loader workers).
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::size_t size() const = 0;
  virtual Entry get(std::size_t index) const = 0;
  /// Sample `index` as drawn in `epoch` (random crops, flips): get(index) unless overridden.
  virtual Entry sample(std::size_t index, std::int64_t /*epoch*/) const { return get(index); }
  /// The samples at `indices` as drawn in `epoch`, collated (torch/data/collate.hpp): sample()
  /// for each, stacked, unless overridden with a cheaper path that gives the same batch.
  virtual Entry batch(std::span<const std::size_t> indices, std::int64_t epoch) const {
    return hookforge::detail::stack_samples(indices,
                                            [&](std::size_t i) { return sample(i, epoch); });
  }
  /// The smallest extent of `field` in a sample, by its shorter side, for the checks made
  /// before training (a metric's crop_border); nullopt where the dataset cannot tell
  /// without drawing its samples.
  virtual std::optional<sample_extent> smallest(std::string_view /*field*/) const {
    return std::nullopt;
  }
  /// What the dataset warned of while it was built (ImageFolder: a dangling link), for
  /// --strict to refuse.
  virtual std::vector<std::string> warnings() const { return {}; }
  /// The fields every sample has, for the field checks made before training (field_flow.hpp);
  /// nullopt where the dataset does not say.
  virtual std::optional<std::vector<std::string>> fields() const { return std::nullopt; }
};

namespace detail {

/// Options that say how much memory their dataset keeps (procedural_images_options' cache).
template <class O>
concept counts_cached_bytes = requires(const O& o) {
  { o.cached_bytes() } -> std::convertible_to<double>;
};

/// std::invalid_argument when the one options argument has cached_bytes() and the dataset
/// would keep more than half this machine's memory: refused before anything is drawn.
template <class... A>
void refuse_unaffordable_cache(const A&... args) {
  if constexpr (sizeof...(A) == 1 && (counts_cached_bytes<A> && ...)) {
    const double bytes = (static_cast<double>(args.cached_bytes()), ...);
    if (!affordable(bytes))
      throw std::invalid_argument(
          fmt::format("its cache needs {}, more than half this machine's memory ({}); "
                      "set cache: false, or fewer or smaller samples",
                      gibibytes(bytes), gibibytes(allocation_budget())));
  }
}

}  // namespace detail

/// A hookforge::dataset D as a Dataset. Options with cached_bytes() are checked first.
template <hookforge::dataset D>
class dataset_of final : public Dataset {
  static_assert(hookforge::detail::checked_get_batch<D>());

 public:
  template <class... A>
    requires(std::constructible_from<D, A...> &&
             !(sizeof...(A) == 1 && (std::is_same_v<std::remove_cvref_t<A>, dataset_of> && ...)))
  explicit dataset_of(A&&... args)
      : data_((detail::refuse_unaffordable_cache(args...), D(std::forward<A>(args)...))) {}
  std::size_t size() const override { return static_cast<std::size_t>(data_.size()); }
  Entry get(std::size_t index) const override { return data_.get(index); }
  Entry sample(std::size_t index, std::int64_t epoch) const override {
    return sample_of(data_, index, epoch);
  }
  /// D's get_batch where it has one (batch_of).
  Entry batch(std::span<const std::size_t> indices, std::int64_t epoch) const override {
    return batch_of(data_, indices, epoch);
  }
  std::optional<sample_extent> smallest(std::string_view field) const override {
    if constexpr (requires { data_.smallest(field); }) {
      const auto e = data_.smallest(field);
      if (e) return sample_extent{e->file.string(), e->width, e->height};
    }
    return std::nullopt;
  }
  std::vector<std::string> warnings() const override {
    if constexpr (requires { data_.warnings(); })
      return {data_.warnings().begin(), data_.warnings().end()};
    return {};
  }
  /// D's field_names(), where it says them.
  std::optional<std::vector<std::string>> fields() const override {
    if constexpr (requires { data_.field_names(); })
      return std::vector<std::string>(data_.field_names());
    return std::nullopt;
  }
  const D& data() const { return data_; }

 private:
  D data_;
};

/// A shared Dataset as a hookforge::dataset (copies share it).
class any_dataset {
 public:
  explicit any_dataset(std::shared_ptr<const Dataset> data) : data_(std::move(data)) {
    if (!data_) throw std::invalid_argument("any_dataset: the dataset is null");
  }
  std::size_t size() const { return data_->size(); }
  Entry get(std::size_t index) const { return data_->get(index); }
  Entry get(std::size_t index, std::int64_t epoch) const { return data_->sample(index, epoch); }
  Entry get_batch(std::span<const std::size_t> indices, std::int64_t epoch) const {
    return data_->batch(indices, epoch);
  }
  const Dataset& underlying() const { return *data_; }
  /// The fields its samples have, where the class says them (the checks before training).
  std::optional<std::vector<std::string>> field_names() const { return data_->fields(); }

 private:
  std::shared_ptr<const Dataset> data_;
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(dataset, hookforge::run::Dataset);
