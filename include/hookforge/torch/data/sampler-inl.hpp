// hookforge/torch/data/sampler-inl.hpp — the samplers' orders: included by sampler.hpp
// header-only, compiled into hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>

#include "hookforge/torch/data/sampler.hpp"

namespace hookforge {

namespace detail {

HOOKFORGE_INLINE std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed) {
  auto generator = at::detail::createCPUGenerator(seed);
  auto perm = torch::randperm(static_cast<std::int64_t>(n), generator, torch::kLong);
  const auto* p = perm.data_ptr<std::int64_t>();
  return std::vector<std::size_t>(p, p + n);
}

HOOKFORGE_INLINE void check_shard(std::int64_t rank, std::int64_t world_size) {
  if (world_size < 1)
    throw std::invalid_argument("sharded_sampler: world_size must be >= 1, got " +
                                std::to_string(world_size));
  if (rank < 0 || rank >= world_size)
    throw std::invalid_argument("sharded_sampler: rank must be in [0, " +
                                std::to_string(world_size) + "), got " + std::to_string(rank));
}

HOOKFORGE_INLINE std::vector<std::size_t> shard(std::vector<std::size_t> order, std::int64_t rank,
                                                std::int64_t world_size, std::size_t per_rank) {
  const auto world = static_cast<std::size_t>(world_size);
  const std::size_t total = per_rank * world;
  if (order.empty() || per_rank == 0) return {};
  if (order.size() < total) {  // pad with the order's first indices, repeated as needed
    const std::size_t n = order.size();
    order.reserve(total);
    for (std::size_t i = 0; order.size() < total; ++i) order.push_back(order[i % n]);
  }
  std::vector<std::size_t> out;
  out.reserve(per_rank);
  for (std::size_t i = static_cast<std::size_t>(rank); i < total; i += world)
    out.push_back(order[i]);
  return out;
}

}  // namespace detail

HOOKFORGE_INLINE std::vector<std::size_t> sequential_sampler::indices(
    std::int64_t /*epoch*/) const {
  std::vector<std::size_t> out(size_);
  std::iota(out.begin(), out.end(), std::size_t{0});
  return out;
}

}  // namespace hookforge
