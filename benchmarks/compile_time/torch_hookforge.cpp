// The step of torch_plain.cpp run by hookforge: a Trainer driving a TrainingEpochRunner
// and a ValidationEpochRunner for one epoch of one batch, with five static hooks
// (three on the training runner, two on the trainer). Measured by
// `benchmarks/compile_time.sh --torch` against torch_plain.cpp.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <cstdio>

namespace pts = hookforge::points;
using hookforge::Entry;

struct NetImpl : torch::nn::Module {
  NetImpl()
      : body(register_module("body",
                             torch::nn::Sequential(torch::nn::Linear(1, 64), torch::nn::Tanh(),
                                                   torch::nn::Linear(64, 1)))) {}
  torch::Tensor forward(const Entry& batch) { return body->forward(batch.at("input")); }
  torch::nn::Sequential body;
};
TORCH_MODULE(Net);

struct ClipGradients {
  double max_norm;
  void clip(hookforge::TrainingContext& ctx) {
    torch::nn::utils::clip_grad_norm_(ctx.parameters(), max_norm);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(clip, pts::on_post_backward));
};

struct Warmup {
  std::int64_t steps;
  double target_lr;
  void adjust(hookforge::TrainingContext& ctx) {
    if (ctx.optimizer_steps >= steps) return;
    double lr =
        target_lr * static_cast<double>(ctx.optimizer_steps + 1) / static_cast<double>(steps);
    for (auto& group : ctx.optimizer->param_groups()) group.options().set_lr(lr);
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(adjust, pts::on_pre_step));
};

struct LossSum {
  double sum = 0;
  void add(hookforge::TrainingContext& ctx) { sum += ctx.loss.item<double>(); }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(add, pts::on_post_step));
};

struct EpochLog {
  void print(hookforge::TrainerContext& ctx) {
    std::printf("epoch %lld loss %.4f\n", static_cast<long long>(ctx.completed_epochs),
                ctx.train_scores.at("loss"));
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(print, pts::on_trainer_epoch_finished));
};

struct Announce {
  void begin(hookforge::TrainerContext& ctx) {
    std::printf("training %lld epoch(s)\n", static_cast<long long>(ctx.total_epochs));
  }
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(begin, pts::on_training_began));
};

int main() {
  torch::manual_seed(0);
  auto x = torch::rand({32, 1});
  std::vector<Entry> data{Entry{{"input", x}, {"target", torch::sin(3 * x)}}};
  auto criterion = [](const Entry& e) { return torch::mse_loss(e.at("output"), e.at("target")); };
  Net net;
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(0.01));

  hookforge::TrainingEpochRunner train(adam, {}, Warmup{20, 0.01}, ClipGradients{1.0}, LossSum{});
  hookforge::ValidationEpochRunner validate(hookforge::inference_options{});
  hookforge::Trainer trainer(net, train, validate, {.epochs = 1}, EpochLog{}, Announce{});
  auto result = trainer.fit(data, data, criterion);
  std::printf("loss %.4f\n", result.val_scores.at("loss"));
}
