// A custom LibTorch runner with its own hook points, trained through the Trainer:
// adversarial training (FGSM). The runner is in adversarial_runner.hpp; this file adds
// hooks for it, a classifier and its data, and trains with validation. The default hooks
// (progress bars, epoch summary, metrics files, checkpoints) attach to it as to the built-in
// runners: they bind to the points it shares with them and read the fields its context has.
#include "adversarial_runner.hpp"

#include <hookforge/hooks/default_hooks.hpp>

#include <filesystem>

#include <fmt/core.h>

namespace pts = hookforge::points;
using hookforge::Entry;

/// Counts fooled samples (binds to the runner's other new point).
struct FoolingRate {
  std::int64_t fooled = 0, seen = 0;
  void count(AdversarialContext& ctx) {
    fooled += ctx.fooled;
    seen += ctx.entry.at("input").size(0);
  }
  void report(AdversarialContext& ctx) {
    fmt::print("epoch {}: loss {:.4f}, epsilon {:.2f}, attack flipped {:.1f}% of predictions\n",
               ctx.epoch + 1, ctx.scores.at("loss"), ctx.epsilon,
               100.0 * double(fooled) / double(std::max<std::int64_t>(seen, 1)));
    fooled = seen = 0;
  }
  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(count, on_post_attack), HOOKFORGE_HOOKS_INTO(report, pts::on_epoch_end));
};

/// Counts batches on any runner: one generic method, bound to a point every runner has.
/// One instance is shared (hookforge::ref) by the custom runner and a built-in one.
struct BatchCounter {
  std::int64_t batches = 0;
  void count(auto&) { ++batches; }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

// --- a classifier on two interleaved moons of points ------------------------------------------
struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl()
      : net(register_module("net",
                            torch::nn::Sequential(torch::nn::Linear(2, 32), torch::nn::ReLU(),
                                                  torch::nn::Linear(32, 2)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return net->forward(x); }
  torch::Tensor forward(const Entry& e) { return forward(e.at("input")); }
  torch::nn::Sequential net;
};
TORCH_MODULE(Classifier);

std::vector<Entry> moons(int batches, int size) {
  std::vector<Entry> data;
  for (int b = 0; b < batches; ++b) {
    auto label = torch::randint(0, 2, {size}, torch::kLong);
    auto angle = torch::rand({size}) * M_PI;
    auto sign = 1 - 2 * label.to(torch::kFloat);  // +1 upper moon, -1 lower moon
    auto x = torch::stack(
        {torch::cos(angle) + label.to(torch::kFloat), sign * torch::sin(angle) - 0.3 * sign}, 1);
    data.push_back(Entry{{"input", x + 0.1 * torch::randn({size, 2})}, {"target", label}});
  }
  return data;
}

int main() {
  torch::manual_seed(0);
  torch::set_num_threads(1);
  auto train = moons(20, 32), test = moons(4, 128);
  Classifier model;
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(0.01));
  auto cross_entropy = [](const torch::Tensor& logits, const torch::Tensor& target) {
    return torch::nn::functional::cross_entropy(logits, target);
  };
  auto validation_loss = [&](const Entry& e) {
    return cross_entropy(e.at("output"), e.at("target"));
  };

  // The default hooks work on the custom runner too: they bind to the points it shares
  // with the built-in runners (progress bars, the epoch summary, metrics files, checkpoints).
  hookforge::default_hooks defaults;
  BatchCounter counter;
  AdversarialTrainingRunner runner(adam, EpsilonRamp{0.3, 3}, FoolingRate{},
                                   hookforge::ref(counter), defaults.training());
  hookforge::ValidationEpochRunner validate(
      hookforge::inference_options{.metrics = {hookforge::Accuracy{}}}, hookforge::ref(counter),
      defaults.validation());
  const auto work_dir = std::filesystem::temp_directory_path() / "hookforge-adversarial";
  std::filesystem::remove_all(work_dir);
  hookforge::Trainer trainer(model, runner, validate,
                             {.epochs = 6, .val_interval = 6, .work_dir = work_dir},
                             defaults.trainer());
  // The runner's criterion takes (logits, target); validation's takes the batch.
  auto result = trainer.fit(train, test, cross_entropy, validation_loss);
  const double accuracy_value = result.val_scores.at("accuracy");
  fmt::print(
      "clean test accuracy {:.1f}%; the shared counter saw {} batches on two runners; last "
      "checkpoint {}\n",
      100 * accuracy_value, counter.batches,
      hookforge::latest_checkpoint(work_dir).value().string());
  std::filesystem::remove_all(work_dir);
  return accuracy_value > 0.85 ? 0 : 1;
}
