// hookforge/torch/data/sampler-inl.hpp — the samplers' orders: included by sampler.hpp
// header-only, compiled into hookforge::torch_compiled otherwise (core/config.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
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

}  // namespace detail

HOOKFORGE_INLINE std::vector<std::size_t> sequential_sampler::indices(
    std::int64_t /*epoch*/) const {
  std::vector<std::size_t> out(size_);
  std::iota(out.begin(), out.end(), std::size_t{0});
  return out;
}

}  // namespace hookforge
