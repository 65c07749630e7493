// hookforge/distributed/bucket.hpp — many tensors as a few flat ones, for collectives.
//
// A collective per parameter would pay the network's latency hundreds of times per step;
// one over everything would need a copy as large as the model. Buckets sit between, as in
// PyTorch's DistributedDataParallel: tensors of one dtype and device, in their order, are
// packed into flat 1-D tensors of at most `bucket_bytes` (a tensor larger than that gets a
// bucket of its own). Gloo's allreduce(std::vector<Tensor>) treats its vector as replicas of
// ONE tensor on one rank, so each collective gets one flat bucket.
//
// The plan depends only on the tensors' dtypes, devices and sizes, in order, so every rank
// with the same model makes the same plan.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include <torch/types.h>
#include <torch/utils.h>

namespace hookforge::distributed {

/// Some of a list of tensors, packed together.
struct bucket {
  std::vector<std::size_t> members;  ///< positions in the list, in order
  std::int64_t numel = 0;            ///< their elements, added up
  torch::ScalarType dtype = torch::kFloat;
  torch::Device device = torch::kCPU;
};

/// Buckets of at most `bucket_bytes` over `tensors` (undefined ones are left out), grouped by
/// dtype and device in order of first appearance.
inline std::vector<bucket> plan_buckets(const std::vector<torch::Tensor>& tensors,
                                        std::size_t bucket_bytes) {
  std::vector<bucket> done;
  std::vector<bucket> open;  // one per (dtype, device), in order of first appearance
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (!t.defined()) continue;
    auto it = std::find_if(open.begin(), open.end(), [&](const bucket& b) {
      return b.dtype == t.scalar_type() && b.device == t.device();
    });
    if (it == open.end()) {
      open.push_back({{}, 0, t.scalar_type(), t.device()});
      it = std::prev(open.end());
    }
    const auto bytes = static_cast<std::size_t>(t.numel()) * t.element_size();
    const auto held = static_cast<std::size_t>(it->numel) * t.element_size();
    if (!it->members.empty() && held + bytes > bucket_bytes) {
      done.push_back(std::move(*it));
      *it = bucket{{}, 0, t.scalar_type(), t.device()};
    }
    it->members.push_back(i);
    it->numel += t.numel();
  }
  for (auto& b : open)
    if (!b.members.empty()) done.push_back(std::move(b));
  return done;
}

/// The members of `b` in one contiguous 1-D tensor, followed by `extra` (of b's dtype) when given.
inline torch::Tensor flatten(const std::vector<torch::Tensor>& tensors, const bucket& b,
                             const torch::Tensor& extra = {}) {
  std::vector<torch::Tensor> parts;
  parts.reserve(b.members.size() + 1);
  for (std::size_t i : b.members) parts.push_back(tensors[i].detach().reshape({-1}));
  if (extra.defined()) parts.push_back(extra.to(b.device, b.dtype).reshape({-1}));
  return torch::cat(parts);
}

/// Copy the slices of `flat` back into the members of `b` (inverse of flatten).
inline void unflatten_into(const torch::Tensor& flat, std::vector<torch::Tensor>& tensors,
                           const bucket& b) {
  torch::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (std::size_t i : b.members) {
    auto& t = tensors[i];
    const auto n = t.numel();
    t.copy_(flat.narrow(0, offset, n).view_as(t));
    offset += n;
  }
}

}  // namespace hookforge::distributed
