// A custom LibTorch runner with its own hook points: adversarial training (FGSM).
//
// The runner is a class template over its hooks, like the built-in ones, built on the
// runner kit: hookforge::training_runner_base gives hooks(), the counters, the epoch's
// start and end, its optimiser and the global step's checkpoint state, so the runner
// meets what the Trainer needs (hookforge::training_runner) with its run_epoch alone. It
// lists its points (two of them new: on_pre_attack, on_post_attack), defines its context,
// and fires the points from its loop. Nothing is registered anywhere. Hooks written for it
// bind to its points exactly as they bind to the built-in runners, and a hook attached to
// the wrong runner does not compile.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include <hookforge/torch.hpp>
#include <torch/torch.h>

HOOKFORGE_POINT(on_pre_attack);
HOOKFORGE_POINT(on_post_attack);

struct AdversarialContext : hookforge::epoch_counters {
  hookforge::Entry entry;  // "input", "target" (class index); "adversarial" after the attack
  torch::optim::Optimizer* optimizer = nullptr;
  double epsilon = 0.0;     // hooks set it at on_pre_attack
  bool attack = true;       // hooks may turn the attack off for a batch
  std::int64_t fooled = 0;  // samples whose prediction the attack flipped, this batch
  torch::Tensor loss;       // the batch's loss, after the update (progress bar, logger)
  hookforge::score_accumulator running_scores;
  hookforge::epoch_scores scores;  // at on_epoch_end
  bool stop_training = false;      // hooks may ask a trainer to stop
};

/// Trains a classifier on clean and FGSM-perturbed inputs. The criterion takes the
/// logits and the target (criterion(logits, target) -> loss).
template <class... Hooks>
class AdversarialTrainingRunner
    : public hookforge::training_runner_base<AdversarialTrainingRunner<Hooks...>, Hooks...> {
  using base = hookforge::training_runner_base<AdversarialTrainingRunner, Hooks...>;

 public:
  using hook_points =
      hookforge::point_list<hookforge::points::on_epoch_start, hookforge::points::on_pre_step,
                            on_pre_attack, on_post_attack, hookforge::points::on_post_step,
                            hookforge::points::on_epoch_end>;
  using Ctx = AdversarialContext;

  AdversarialTrainingRunner(torch::optim::Optimizer& optimizer, Hooks... hooks)
      : base(optimizer, std::move(hooks)...) {}

  template <class Model, class Loader, class Criterion>
  hookforge::epoch_result run_epoch(Model& model, Loader&& loader, std::int64_t epoch,
                                    Criterion&& criterion) {
    namespace pts = hookforge::points;
    hookforge::set_training_mode(model, true);
    Ctx ctx;
    ctx.optimizer = this->optimizer_;
    this->start_epoch(ctx, epoch, loader);  // counters, on_epoch_start
    auto batches = this->training_batches(ctx, loader, [&](hookforge::Entry&& batch, bool) {
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
        ctx.fooled = (model->forward(adversarial).argmax(1) != model->forward(input).argmax(1))
                         .sum()
                         .template item<std::int64_t>();
      }
      this->hooks_.template fire<on_post_attack>(ctx);

      this->optimizer_->zero_grad();
      auto clean = criterion(model->forward(input), target);
      auto loss =
          ctx.entry.contains("adversarial")
              ? 0.5 * (clean + criterion(model->forward(ctx.entry.at("adversarial")), target))
              : clean;
      loss.backward();
      this->optimizer_->step();
      ctx.loss = loss.detach();
      ctx.running_scores.add({{"loss", ctx.loss}}, input.size(0));
      this->hooks_.template fire<pts::on_post_step>(ctx);
    });
    return this->finish_epoch(ctx, batches);  // ctx.scores, on_epoch_end
  }
};
template <class... H>
AdversarialTrainingRunner(torch::optim::Optimizer&, H...) -> AdversarialTrainingRunner<H...>;

/// Grows the attack strength over the first epochs (binds to the runner's own point).
struct EpsilonRamp {
  double max_epsilon;
  std::int64_t ramp_epochs;
  void set(AdversarialContext& ctx) {
    ctx.epsilon = max_epsilon * std::min<double>(1.0, double(ctx.epoch + 1) / double(ramp_epochs));
  }
  static constexpr auto bindings = hookforge::bindings(HOOKFORGE_HOOKS_INTO(set, on_pre_attack));
};
