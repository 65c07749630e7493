// Prelude of docs/gan.md's statement blocks (tests/docs/snippets.py): a block goes inside
// example(), where a generator, a discriminator, their criteria and a loader exist.
#pragma once
#include "tests/docs/preludes/torch.hpp"

struct GeneratorImpl : torch::nn::Module {
  GeneratorImpl() : shift(register_parameter("shift", torch::zeros({1}))) {}
  torch::Tensor forward(const Entry& e) { return e.at("input") + shift; }
  torch::Tensor shift;
};
TORCH_MODULE(Generator);
struct DiscriminatorImpl : torch::nn::Module {
  DiscriminatorImpl() : linear(register_module("linear", torch::nn::Linear(1, 1))) {}
  torch::Tensor forward(const Entry& e) { return linear(e.at("input")); }
  torch::nn::Linear linear;
};
TORCH_MODULE(Discriminator);

loss_terms d_criterion(const Entry& e);
torch::Tensor g_criterion(const Entry& e);

inline void example() {
  Generator generator;
  Discriminator discriminator;
  std::vector<Entry> loader, train_loader, val_loader;
  torch::optim::Adam d_opt(discriminator->parameters(), 2e-4), g_opt(generator->parameters(), 2e-4);
  ExponentialLR g_schedule(g_opt, 0.99);
  std::int64_t epochs = 10;
  {
    // snippet
  }
}
