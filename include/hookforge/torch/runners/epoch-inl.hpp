// hookforge/torch/runners/epoch-inl.hpp — the epoch runners' shared non-template steps:
// included by epoch.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hookforge/torch/runners/epoch.hpp"

namespace hookforge {

HOOKFORGE_INLINE std::vector<torch::Tensor> optimizer_parameters(
    const torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> params;
  for (const auto& group : optimizer.param_groups())
    params.insert(params.end(), group.params().begin(), group.params().end());
  return params;
}

HOOKFORGE_INLINE Entry on_device(Entry&& batch, torch::Device device) {
  for (const auto& [name, tensor] : batch)
    if (tensor.defined() && tensor.device() != device)
      return batch.to(device, /*non_blocking=*/device.is_cuda());
  return std::move(batch);
}

HOOKFORGE_INLINE void record_scores(const loss_terms& terms, const torch::Tensor& total,
                                    std::map<std::string, torch::Tensor>& scores) {
  for (const auto& [name, value] : terms)
    if (name != "loss") scores[name] = value.detach();
  scores["loss"] = total.detach();
}

}  // namespace hookforge
