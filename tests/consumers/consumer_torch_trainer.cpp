// The second TU of the torch consumers: a Trainer fits one epoch and round-trips its
// checkpoint. Header-only, two TUs that include <hookforge/torch.hpp> link only when every
// definition the headers hold is inline; with hookforge::torch_compiled, this links
// against the library's definitions (trainer, runner, scaler, Entry, checkpoint I/O).
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <vector>

std::int64_t fit_and_checkpoint(const std::filesystem::path& file) {
  torch::manual_seed(0);
  torch::nn::Linear net(1, 1);
  torch::optim::SGD optimizer(net->parameters(), 0.1);
  auto model = [&](const hookforge::Entry& e) { return net->forward(e.at("input")); };
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
