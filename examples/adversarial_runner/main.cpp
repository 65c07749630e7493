// A custom LibTorch runner with its own hook points: adversarial training (FGSM).
//
// The runner is a class template over its hooks, like the built-in ones, built on the
// runner kit (hookforge::runner_base: hooks(), counters, the epoch's start and end): it
// lists its points (two of them new: on_pre_attack, on_post_attack), defines its
// context, and fires the points from its loop. Nothing is registered anywhere. Hooks written
// for it bind to its points exactly as they bind to the built-in runners, and a hook
// attached to the wrong runner does not compile.
#include <hookforge/torch.hpp>
#include <torch/torch.h>

#include <fmt/core.h>

namespace pts = hookforge::points;
using hookforge::Entry;

// --- the runner -------------------------------------------------------------------------------
HOOKFORGE_POINT(on_pre_attack);
HOOKFORGE_POINT(on_post_attack);

struct AdversarialContext : hookforge::epoch_counters {
  Entry entry;                     // "input", "target" (class index); "adversarial" after the attack
  torch::optim::Optimizer* optimizer = nullptr;
  double epsilon = 0.0;            // hooks set it at on_pre_attack
  bool attack = true;              // hooks may turn the attack off for a batch
  std::int64_t fooled = 0;         // samples whose prediction the attack flipped, this batch
  hookforge::score_accumulator running_scores;
  hookforge::epoch_scores scores;  // at on_epoch_end
  bool stop_training = false;      // hooks may ask a trainer to stop
};

template <class... Hooks>
class AdversarialTrainingRunner
    : public hookforge::runner_base<AdversarialTrainingRunner<Hooks...>, Hooks...> {
  using base = hookforge::runner_base<AdversarialTrainingRunner, Hooks...>;

 public:
  using hook_points = hookforge::point_list<pts::on_epoch_start, pts::on_pre_step, on_pre_attack,
                                            on_post_attack, pts::on_post_step, pts::on_epoch_end>;
  using Ctx = AdversarialContext;

  AdversarialTrainingRunner(torch::optim::Optimizer& optimizer, Hooks... hooks)
      : base(std::move(hooks)...), optimizer_(&optimizer) {}

  template <class Model, class Loader, class Criterion>
  hookforge::epoch_result run_epoch(Model& model, Loader&& loader, std::int64_t epoch, Criterion&& criterion) {
    hookforge::set_training_mode(model, true);
    Ctx ctx;
    ctx.optimizer = optimizer_;
    this->start_epoch(ctx, epoch, loader);  // counters, on_epoch_start
    auto batches = this->training_batches(ctx, loader, [&](Entry&& batch, bool) {
      ctx.entry = std::move(batch);
      ctx.attack = true;
      ctx.fooled = 0;
      this->hooks_.template fire<pts::on_pre_step>(ctx);
      this->hooks_.template fire<on_pre_attack>(ctx);
      auto input = ctx.entry.at("input");
      auto target = ctx.entry.at("target");
      if (ctx.attack && ctx.epsilon > 0) {  // fast gradient sign method
        auto probe = input.detach().clone().requires_grad_(true);
        auto loss = criterion(model->forward(probe), target);
        auto grad = torch::autograd::grad({loss}, {probe})[0];
        auto adversarial = (probe + ctx.epsilon * grad.sign()).detach();
        ctx.entry.set("adversarial", adversarial);
        torch::NoGradGuard no_grad;
        ctx.fooled = (model->forward(adversarial).argmax(1) != model->forward(input).argmax(1)).sum().template item<std::int64_t>();
      }
      this->hooks_.template fire<on_post_attack>(ctx);

      optimizer_->zero_grad();
      auto clean = criterion(model->forward(input), target);
      auto loss = ctx.entry.contains("adversarial")
                      ? 0.5 * (clean + criterion(model->forward(ctx.entry.at("adversarial")), target))
                      : clean;
      loss.backward();
      optimizer_->step();
      ctx.running_scores.add({{"loss", loss.detach()}}, input.size(0));
      this->hooks_.template fire<pts::on_post_step>(ctx);
    });
    return this->finish_epoch(ctx, batches);  // ctx.scores, on_epoch_end
  }

 private:
  torch::optim::Optimizer* optimizer_;
};
template <class... H>
AdversarialTrainingRunner(torch::optim::Optimizer&, H...) -> AdversarialTrainingRunner<H...>;

// --- hooks -------------------------------------------------------------------------------------

/// Grows the attack strength over the first epochs (binds to the runner's own point).
struct EpsilonRamp {
  double max_epsilon;
  std::int64_t ramp_epochs;
  void set(AdversarialContext& ctx) {
    ctx.epsilon = max_epsilon * std::min<double>(1.0, double(ctx.epoch + 1) / double(ramp_epochs));
  }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(set, on_pre_attack));
};

/// Counts fooled samples (binds to the runner's other new point).
struct FoolingRate {
  std::int64_t fooled = 0, seen = 0;
  void count(AdversarialContext& ctx) {
    fooled += ctx.fooled;
    seen += ctx.entry.at("input").size(0);
  }
  void report(AdversarialContext& ctx) {
    fmt::print("epoch {}: loss {:.4f}, epsilon {:.2f}, attack flipped {:.1f}% of predictions\n", ctx.epoch,
               ctx.scores.at("loss"), ctx.epsilon, 100.0 * double(fooled) / double(std::max<std::int64_t>(seen, 1)));
    fooled = seen = 0;
  }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, on_post_attack),
                                                       HOOKFORGE_HOOKS_INTO(report, pts::on_epoch_end));
};

/// Counts batches on any runner: one generic method, bound to a point every runner has.
/// One instance is shared (hookforge::ref) by the custom runner and a built-in one.
struct BatchCounter {
  std::int64_t batches = 0;
  void count(auto&) { ++batches; }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(count, pts::on_post_step));
};

// --- a classifier on two interleaved moons of points ------------------------------------------
struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl()
      : net(register_module("net", torch::nn::Sequential(torch::nn::Linear(2, 32), torch::nn::ReLU(),
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
    auto x = torch::stack({torch::cos(angle) + label.to(torch::kFloat), sign * torch::sin(angle) - 0.3 * sign}, 1);
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

  BatchCounter counter;
  AdversarialTrainingRunner runner(adam, EpsilonRamp{0.3, 3}, FoolingRate{}, hookforge::ref(counter));
  hookforge::ValidationEpochRunner validate(hookforge::inference_options{}, hookforge::ref(counter));
  auto accuracy = [](const Entry& e) {
    return hookforge::loss_terms{{"accuracy", (e.at("output").argmax(1) == e.at("target")).to(torch::kFloat).mean()},
                                 {"xent", torch::nn::functional::cross_entropy(e.at("output"), e.at("target"))}};
  };
  for (int epoch = 0; epoch < 6; ++epoch) runner.run_epoch(model, train, epoch, cross_entropy);
  auto scores = validate.run_epoch(model, test, 0, accuracy).scores;
  fmt::print("clean test accuracy {:.1f}%; the shared counter saw {} batches on two runners\n",
             100 * scores.at("accuracy"), counter.batches);
  return scores.at("accuracy") > 0.85 ? 0 : 1;
}
