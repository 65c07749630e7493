// hookforge/torch/data/split.hpp — a dataset cut into random, disjoint subsets
// (train / validation / test), the same cut for the same seed.
//
//   auto parts = hookforge::random_split(data, {0.8, 0.2}, /*seed=*/42);   // fractions
//   auto parts = hookforge::random_split(data, {800, 200}, /*seed=*/42);   // counts
//   hookforge::DataLoader train(parts[0], {.batch_size = 32, .shuffle = true});
//
// As torch.utils.data.random_split: one permutation of [0, size) from a CPU generator
// seeded with `seed` (torch.randperm's), cut into consecutive pieces. Fractions must be
// in [0, 1] and sum to 1; each piece gets floor(fraction * size) samples and the
// remainder goes one by one to the first pieces, so the pieces cover the dataset.
// Counts may sum to less than the size (the rest is left out) but not more.
// The subsets share the dataset (one std::shared_ptr).
#pragma once

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hookforge/torch/data/dataset.hpp"
#include "hookforge/torch/data/sampler.hpp"

namespace hookforge {

namespace detail {

template <class T>
concept split_length = std::is_arithmetic_v<T> && !std::same_as<T, bool>;

/// The sample count of each piece of a dataset of `size` samples.
template <class T>
std::vector<std::size_t> split_counts(std::size_t size, std::span<const T> lengths) {
  if (lengths.empty()) throw std::invalid_argument("random_split: lengths must not be empty");
  std::vector<std::size_t> counts;
  counts.reserve(lengths.size());
  if constexpr (std::is_floating_point_v<T>) {
    double sum = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      const double f = static_cast<double>(lengths[i]);
      if (!(f >= 0.0 && f <= 1.0))
        throw std::invalid_argument("random_split: fractions[" + std::to_string(i) +
                                    "] must be in [0, 1], got " + std::to_string(f));
      sum += f;
    }
    if (std::abs(sum - 1.0) > 1e-6)
      throw std::invalid_argument("random_split: fractions must sum to 1, got " +
                                  std::to_string(sum));
    std::size_t given = 0;
    for (const T f : lengths) {
      counts.push_back(
          static_cast<std::size_t>(std::floor(static_cast<double>(f) * static_cast<double>(size))));
      given += counts.back();
    }
    for (std::size_t i = 0; given < size; i = (i + 1) % counts.size(), ++given) ++counts[i];
  } else {
    std::size_t sum = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      if constexpr (std::is_signed_v<T>)
        if (lengths[i] < 0)
          throw std::invalid_argument("random_split: counts[" + std::to_string(i) +
                                      "] must be >= 0, got " + std::to_string(lengths[i]));
      counts.push_back(static_cast<std::size_t>(lengths[i]));
      sum += counts.back();
    }
    if (sum > size)
      throw std::invalid_argument("random_split: counts must sum to at most the dataset's size " +
                                  std::to_string(size) + ", got " + std::to_string(sum));
  }
  return counts;
}

template <class Dataset, class T>
std::vector<subset<Dataset>> random_split(const Dataset& data, std::span<const T> lengths,
                                          std::uint64_t seed) {
  const std::size_t n = data.size();
  const auto counts = split_counts(n, lengths);
  const auto perm = permutation(n, seed);
  auto shared = std::make_shared<const Dataset>(data);
  std::vector<subset<Dataset>> parts;
  parts.reserve(counts.size());
  std::size_t at = 0;
  for (std::size_t count : counts) {
    parts.emplace_back(shared,
                       std::vector<std::size_t>(perm.begin() + at, perm.begin() + at + count));
    at += count;
  }
  return parts;
}

}  // namespace detail

/// Fractions ({0.8, 0.2}) or counts ({800, 200}); see the top of this file. Throws
/// std::invalid_argument for fractions outside [0, 1] or not summing to 1, negative
/// counts, or counts summing to more than the dataset's size.
template <dataset Dataset, detail::split_length T>
std::vector<subset<Dataset>> random_split(const Dataset& data, std::initializer_list<T> lengths,
                                          std::uint64_t seed) {
  return detail::random_split(data, std::span<const T>(lengths.begin(), lengths.size()), seed);
}
template <dataset Dataset, detail::split_length T>
std::vector<subset<Dataset>> random_split(const Dataset& data, const std::vector<T>& lengths,
                                          std::uint64_t seed) {
  return detail::random_split(data, std::span<const T>(lengths), seed);
}

}  // namespace hookforge
