// Prelude of docs/distributed.md's statement blocks (tests/docs/snippets.py): torch_body's
// names, the data-parallel layer, and what the page's blocks share.
#pragma once
#include <hookforge/distributed.hpp>

#include <stop_token>

#include "tests/docs/preludes/torch.hpp"

inline void example(tensor_dataset& train_data, tensor_dataset& val_data) {
  Net net, model;
  torch::optim::SGD optimizer(net->parameters(), 0.1);
  TrainingEpochRunner train_runner(optimizer, {});
  ValidationEpochRunner val_runner(inference_options{});
  std::stop_source stop;
  auto criterion = [](const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); };
  {
    // snippet
  }
}
