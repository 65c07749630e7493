// hookforge/torch/data/sampler.hpp — the order in which a loader visits a dataset, per epoch.
//
// An `index_sampler` is any type with
//   size() const          -> how many indices an epoch has (std::size_t)
//   indices(epoch) const  -> those indices, in the order of epoch `epoch` (a std::vector
//                            of size() dataset indices)
// and, when it is random, `seed() const` and `set_seed(std::uint64_t)` so a DataLoader
// can save and restore it.
//
// `indices(epoch)` is a PURE function of (settings, epoch): the order of epoch e does not
// depend on which epochs ran before or on any global RNG. That is what makes resume
// exact: a loader restored at epoch e, batch k recomputes epoch e's order and goes on.
//
// Distributed training: `sharded_sampler` wraps another sampler with a rank and a
// world_size and returns every world_size-th index of the epoch's order starting at rank,
// padded (or cut, with drop_last) so that every rank gets the same count, as PyTorch's
// DistributedSampler. Every rank computes the same epoch order from the same seed, so the
// shards of an epoch are disjoint (but for the padding) and cover the dataset, and the
// Trainer's loader.set_epoch(epoch) reshuffles them together. Nothing else in the loader
// changes: it only calls size() and indices(epoch).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/splitmix64.hpp"

namespace hookforge {

/// See the top of this file.
template <class S>
concept index_sampler = requires(const S& s, std::int64_t epoch) {
  { s.size() } -> std::convertible_to<std::size_t>;
  { s.indices(epoch) } -> std::convertible_to<std::vector<std::size_t>>;
};

/// A sampler with a seed a loader saves in its state and restores.
template <class S>
concept seeded_sampler = index_sampler<S> && requires(S& s, std::uint64_t seed) {
  { std::as_const(s).seed() } -> std::convertible_to<std::uint64_t>;
  s.set_seed(seed);
};

namespace detail {
/// A random permutation of [0, n) from a CPU generator seeded with `seed` (torch.randperm's).
HOOKFORGE_INLINE std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed);

/// sharded_sampler's checks: std::invalid_argument unless world_size >= 1 and rank is in
/// [0, world_size).
HOOKFORGE_INLINE void check_shard(std::int64_t rank, std::int64_t world_size);

/// Rank `rank`'s `per_rank` indices of `order`: padded with its first indices (repeated)
/// to per_rank * world_size, or cut to it, then every world_size-th from `rank`.
HOOKFORGE_INLINE std::vector<std::size_t> shard(std::vector<std::size_t> order, std::int64_t rank,
                                                std::int64_t world_size, std::size_t per_rank);
}  // namespace detail

/// 0, 1, …, size-1 every epoch.
class sequential_sampler {
 public:
  explicit sequential_sampler(std::size_t size) noexcept : size_(size) {}
  std::size_t size() const noexcept { return size_; }
  std::vector<std::size_t> indices(std::int64_t epoch) const;

 private:
  std::size_t size_;
};

/// A permutation of [0, size) per epoch, from a CPU torch::Generator seeded with a mix of
/// (seed, epoch): the same (seed, epoch) always gives the same order, and each epoch's
/// order is independent of the others.
class random_sampler {
 public:
  random_sampler(std::size_t size, std::uint64_t seed) noexcept : size_(size), seed_(seed) {}
  std::size_t size() const noexcept { return size_; }
  std::vector<std::size_t> indices(std::int64_t epoch) const {
    return detail::permutation(size_, epoch_seed(seed_, epoch));
  }
  std::uint64_t seed() const noexcept { return seed_; }
  void set_seed(std::uint64_t seed) noexcept { seed_ = seed; }

  /// The generator seed of `epoch` under `seed`.
  static constexpr std::uint64_t epoch_seed(std::uint64_t seed, std::int64_t epoch) noexcept {
    return detail::mix64(seed ^ detail::mix64(static_cast<std::uint64_t>(epoch)));
  }

 private:
  std::size_t size_;
  std::uint64_t seed_;
};

/// What a DataLoader builds from its options: random_sampler(size, seed) when `shuffle`,
/// else sequential_sampler(size). Keeps the seed either way, so state always has one.
class default_sampler {
 public:
  default_sampler(std::size_t size, bool shuffle, std::uint64_t seed) noexcept
      : random_(size, seed), shuffle_(shuffle) {}
  std::size_t size() const noexcept { return random_.size(); }
  std::vector<std::size_t> indices(std::int64_t epoch) const {
    return shuffle_ ? random_.indices(epoch) : sequential_sampler(random_.size()).indices(epoch);
  }
  bool shuffle() const noexcept { return shuffle_; }
  std::uint64_t seed() const noexcept { return random_.seed(); }
  void set_seed(std::uint64_t seed) noexcept { random_.set_seed(seed); }

 private:
  random_sampler random_;
  bool shuffle_;
};

/// sharded_sampler's options.
struct shard_options {
  /// false (default): pad the epoch's order by repeating its first indices until its length
  /// divides by world_size; true: drop its last indices instead (each rank gets floor(n / world)).
  bool drop_last = false;
};

/// Rank `rank`'s shard of another sampler's epoch: the indices at positions rank,
/// rank + world_size, rank + 2 world_size, … of the inner order after padding (or cutting)
/// it to a multiple of world_size. Every rank has size() = ceil(n / world_size) indices
/// (floor with drop_last), so every rank runs the same number of batches and no collective
/// waits for a rank that ran out. Padding repeats the first indices of the epoch's order,
/// as torch.utils.data.DistributedSampler does: with n = 10 and 4 ranks, two samples are
/// seen twice per epoch. A pure function of (inner sampler, rank, world_size, epoch), so
/// resume stays exact; the seed of a seeded inner sampler is its seed.
///
///   hookforge::sharded_sampler shard(hookforge::random_sampler(data.size(), seed), rank, world);
///   hookforge::DataLoader loader(data, shard, {.batch_size = 16});
template <index_sampler Inner>
class sharded_sampler {
 public:
  sharded_sampler(Inner inner, std::int64_t rank, std::int64_t world_size,
                  shard_options options = {})
      : inner_(std::move(inner)), rank_(rank), world_(world_size), options_(options) {
    detail::check_shard(rank_, world_);
  }

  /// Indices per epoch on this rank: ceil(n / world_size), or floor with drop_last.
  std::size_t size() const {
    const std::size_t n = static_cast<std::size_t>(inner_.size());
    const auto w = static_cast<std::size_t>(world_);
    return options_.drop_last ? n / w : (n + w - 1) / w;
  }

  std::vector<std::size_t> indices(std::int64_t epoch) const {
    return detail::shard(inner_.indices(epoch), rank_, world_, size());
  }

  std::uint64_t seed() const
    requires seeded_sampler<Inner>
  {
    return inner_.seed();
  }
  void set_seed(std::uint64_t seed)
    requires seeded_sampler<Inner>
  {
    inner_.set_seed(seed);
  }

  std::int64_t rank() const noexcept { return rank_; }
  std::int64_t world_size() const noexcept { return world_; }
  const Inner& inner() const noexcept { return inner_; }
  const shard_options& options() const noexcept { return options_; }

 private:
  Inner inner_;
  std::int64_t rank_;
  std::int64_t world_;
  shard_options options_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/sampler-inl.hpp"
#endif
