// Prelude of the docs' blocks on the torch layer and the built-in hooks (tests/docs/snippets.py):
// the headers, and hookforge's names unqualified, as the pages write the built-in hooks.
#pragma once
#include <hookforge/hooks.hpp>
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <vector>

using namespace hookforge;
namespace points = hookforge::points;

// A model as the runners take it: a module whose forward reads the batch.
struct NetImpl : torch::nn::Module {
  NetImpl() : body(register_module("body", torch::nn::Linear(1, 1))) {}
  torch::Tensor forward(const Entry& batch) { return body(batch.at("input")); }
  torch::nn::Linear body;
};
TORCH_MODULE(Net);
