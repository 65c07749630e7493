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
// Distributed training (a later issue) adds a sharded sampler here: it wraps another
// sampler (or a size and seed) with a rank and world_size and returns every world_size-th
// index of the epoch's order starting at rank (padding so every rank gets the same
// count), so each process loads its own shard of the same shuffled epoch. Nothing else
// in the loader needs to change: it only calls size() and indices(epoch).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hookforge/core/config.hpp"

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
/// SplitMix64's finaliser: a bijective mix, so distinct inputs give distinct seeds.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// A random permutation of [0, n) from a CPU generator seeded with `seed` (torch.randperm's).
HOOKFORGE_INLINE std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed);
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

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/sampler-inl.hpp"
#endif
