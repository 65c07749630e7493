// Prelude of the docs' statement blocks on the torch layer (tests/docs/snippets.py): a block goes
// inside example(), where the names the pages' statements use exist: a model, optimisers,
// runners, a trainer, loaders, a criterion.
#pragma once
#include "tests/docs/preludes/torch.hpp"

inline void example() {
  Net net, model;
  torch::optim::SGD sgd(net->parameters(), 0.1);
  torch::optim::Adam adam(net->parameters(), 1e-3);
  torch::optim::Optimizer& optimizer = sgd;
  std::vector<Entry> loader, train_loader, val_loader;  // any range of Entry is a loader
  auto criterion = [](const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); };
  std::int64_t epochs = 10;
  TrainingEpochRunner train(sgd, {});
  auto& runner = train;
  ValidationEpochRunner val(inference_options{});
  trainer_options options{.epochs = 10};
  auto& validate = val;
  Trainer trainer(net, train, val, options);
  auto &train_data = train_loader, &val_data = val_loader;
  EMA ema{*net};
  IterTimer timer;
  StepLR scheduler(sgd, 30);
  std::int64_t step = 0;
  Entry batch{{"input", torch::zeros({1, 1, 8, 8})}};
  torch::Tensor low_res = batch.at("input");
  double val_loss = 0.0;
  tensor_dataset data{{"input", torch::zeros({8, 1})}, {"target", torch::zeros({8, 1})}};
  int rank = 0, world_size = 1;
  auto train_one_epoch = [] {};
  auto compute_loss_under_autocast = [](const Entry& e) { return e.at("input").sum(); };
  {
    // snippet
  }
}
