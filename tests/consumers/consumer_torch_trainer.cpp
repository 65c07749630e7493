// The second TU of the torch consumers: a Trainer fits one epoch and round-trips its
// checkpoint. Header-only, two TUs that include <hookforge/torch.hpp> link only when every
// definition the headers hold is inline; with hookforge::torch_compiled, this links
// against the library's definitions (trainer, runner, scaler, Entry, checkpoint I/O).
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace {
/// A module whose forward takes the batch: the Trainer saves its weights and switches its mode.
struct Net : torch::nn::Module {
  torch::nn::Linear linear = register_module("linear", torch::nn::Linear(1, 1));
  torch::Tensor forward(const hookforge::Entry& e) { return linear(e.at("input")); }
};
}  // namespace

std::int64_t fit_and_checkpoint(const std::filesystem::path& file) {
  torch::manual_seed(0);
  Net model;
  torch::optim::SGD optimizer(model.parameters(), 0.1);
  auto criterion = [](const hookforge::Entry& e) {
    return torch::mse_loss(e.at("output"), e.at("target"));
  };
  std::vector<hookforge::Entry> data{
      {{"input", torch::ones({4, 1})}, {"target", torch::zeros({4, 1})}}};

  hookforge::TrainingEpochRunner train(optimizer, {});
  hookforge::Trainer trainer(model, train, hookforge::no_validation{}, {.epochs = 2});
  trainer.fit(data, criterion);
  trainer.save_checkpoint(file);
  hookforge::Trainer resumed(model, train, hookforge::no_validation{}, {.epochs = 2});
  resumed.load_checkpoint(file);
  return resumed.completed_epochs();
}
