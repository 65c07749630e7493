// The 64 -> 64 -> 1 MLP the step benchmarks train (training_step.cpp on the CPU, gpu_step.cpp
// on a GPU): small enough that the framework around the step shows.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "hookforge/torch/data/entry.hpp"

namespace bench {

struct MlpImpl : torch::nn::Module {
  MlpImpl()
      : fc1(register_module("fc1", torch::nn::Linear(64, 64))),
        fc2(register_module("fc2", torch::nn::Linear(64, 1))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
  torch::Tensor forward(const hookforge::Entry& e) { return forward(e.at("input")); }
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Mlp);

}  // namespace bench
