// Tests of hookforge/torch/amp/grad_scaler.hpp on CPU params: scaling, exact
// unscaling, skipped steps on inf/NaN, backoff and growth of the scale, the
// call-order rules, the disabled pass-through and state round trips. Where
// ATen has fused AMP kernels for CPU (PyTorch >= 2.3) or a GPU is present, the
// plain-tensor fallback is also checked against them.
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

// torch before catch: Catch's CHECK must replace glog's (LibTorch 1.13 defines one), not the
// reverse.
#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include <torch/version.h>

#include "hookforge/torch/amp/grad_scaler.hpp"
#include "skip.hpp"

namespace {

using tfx::through_pickle;

using hookforge::grad_scaler_options;
using hookforge::GradScaler;

constexpr float inf = std::numeric_limits<float>::infinity();

/// Two params (float and double) and an SGD with lr 1, so a step is `w -= grad`.
struct model {
  torch::Tensor w = torch::tensor({0.5f, -1.25f, 3.0f, 0.1f}).requires_grad_();
  torch::Tensor v = torch::tensor({2.0, -0.3}, torch::kDouble).requires_grad_();
  torch::optim::SGD optimizer{std::vector<torch::Tensor>{w, v}, torch::optim::SGDOptions(1.0)};

  /// loss = sum(w * a) + sum(v * b), so dloss/dw = a, dloss/dv = b.
  torch::Tensor loss() const {
    return (w * torch::tensor({0.1f, -3.7f, 1e-3f, 12345.0f})).sum() +
           (v * torch::tensor({0.7, 1e-5}, torch::kDouble)).sum().to(torch::kFloat);
  }
  torch::Tensor grad_w() const { return torch::tensor({0.1f, -3.7f, 1e-3f, 12345.0f}); }
  torch::Tensor grad_v() const { return torch::tensor({0.7, 1e-5}, torch::kDouble); }
};

/// One iteration: zero_grad, backward of the scaled loss, optionally plant a
/// non-finite grad, step, update. Returns whether the optimizer stepped.
bool iteration(GradScaler& scaler, model& m, float planted = 0.0f) {
  m.optimizer.zero_grad();
  scaler.scale(m.loss()).backward();
  if (planted != 0.0f) {  // true for NaN too
    torch::NoGradGuard no_grad;
    m.w.mutable_grad()[1] = planted;
  }
  const bool stepped = scaler.step(m.optimizer);
  scaler.update();
  return stepped;
}

}  // namespace

TEST_CASE("GradScaler has Python's defaults and multiplies the loss by the scale", "[scaler]") {
  GradScaler scaler;
  CHECK(scaler.is_enabled());
  CHECK(scaler.get_scale() == 65536.0);
  CHECK(scaler.get_growth_factor() == 2.0);
  CHECK(scaler.get_backoff_factor() == 0.5);
  CHECK(scaler.get_growth_interval() == 2000);
  CHECK(scaler.get_growth_tracker() == 0);

  const auto scaled = scaler.scale(torch::tensor(3.0f));
  CHECK(scaled.item<float>() == 3.0f * 65536.0f);
  CHECK(scaler.get_scale() == 65536.0);
}

TEST_CASE("unscale_ divides the grads by the scale exactly", "[scaler]") {
  GradScaler scaler({.init_scale = 1024.0});
  model m;
  scaler.scale(m.loss()).backward();
  CHECK(torch::equal(m.w.grad(), m.grad_w() * 1024.0f));
  scaler.unscale_(m.optimizer);
  CHECK(torch::equal(m.w.grad(), m.grad_w()));
  CHECK(torch::equal(m.v.grad(), m.grad_v()));

  // step() does not unscale a second time: w -= grad.
  const auto w_before = m.w.detach().clone();
  const auto v_before = m.v.detach().clone();
  CHECK(scaler.step(m.optimizer));
  CHECK(torch::equal(m.w.detach(), w_before - m.grad_w()));
  CHECK(torch::equal(m.v.detach(), v_before - m.grad_v()));
  scaler.update();
  CHECK(scaler.get_scale() == 1024.0);
  CHECK(scaler.get_growth_tracker() == 1);
}

TEST_CASE("step unscales when unscale_ was not called", "[scaler]") {
  GradScaler scaler({.init_scale = 8.0});
  model m;
  const auto w_before = m.w.detach().clone();
  CHECK(iteration(scaler, m));
  CHECK(torch::equal(m.w.detach(), w_before - m.grad_w()));
}

TEST_CASE("an inf or NaN grad skips the step and backs the scale off", "[scaler]") {
  for (float planted : {inf, -inf, std::numeric_limits<float>::quiet_NaN()}) {
    INFO("planted " << planted);
    GradScaler scaler({.init_scale = 1024.0, .growth_interval = 3});
    model m;
    CHECK(iteration(scaler, m));  // one clean step first: the tracker counts 1
    CHECK(scaler.get_growth_tracker() == 1);

    const auto w_before = m.w.detach().clone();
    const auto v_before = m.v.detach().clone();
    CHECK_FALSE(iteration(scaler, m, planted));
    CHECK(torch::equal(m.w.detach(), w_before));  // params unchanged, the double one too
    CHECK(torch::equal(m.v.detach(), v_before));
    CHECK(scaler.get_scale() == 512.0);
    CHECK(scaler.get_growth_tracker() == 0);
  }
}

TEST_CASE("growth_interval clean steps double the scale", "[scaler]") {
  GradScaler scaler({.init_scale = 8.0, .growth_interval = 3});
  model m;
  std::vector<double> scales;
  std::vector<std::int64_t> trackers;
  for (int i = 0; i < 7; ++i) {
    CHECK(iteration(scaler, m));
    scales.push_back(scaler.get_scale());
    trackers.push_back(scaler.get_growth_tracker());
  }
  CHECK(scales == std::vector<double>{8, 8, 16, 16, 16, 32, 32});
  CHECK(trackers == std::vector<std::int64_t>{1, 2, 0, 1, 2, 0, 1});

  CHECK_FALSE(iteration(scaler, m, inf));  // backoff resets the count
  CHECK(scaler.get_scale() == 16.0);
  CHECK(scaler.get_growth_tracker() == 0);
}

TEST_CASE("the scale does not grow to inf", "[scaler]") {
  const double big = std::ldexp(1.0, 127);  // 2^128 overflows float
  GradScaler scaler({.init_scale = big, .growth_interval = 1});
  model m;
  scaler.scale(m.loss());
  m.optimizer.zero_grad();
  for (auto* p : {&m.w, &m.v}) p->mutable_grad() = torch::zeros_like(*p);
  CHECK(scaler.step(m.optimizer));
  scaler.update();
  CHECK(scaler.get_scale() == big);
  CHECK(scaler.get_growth_tracker() == 0);
}

TEST_CASE("an inf in one of two optimizers skips only that one, and backs off once", "[scaler]") {
  GradScaler scaler({.init_scale = 64.0});
  model a;
  model b;
  const auto a_before = a.w.detach().clone();
  const auto b_before = b.w.detach().clone();
  (scaler.scale(a.loss()) + scaler.scale(b.loss())).backward();
  {
    torch::NoGradGuard no_grad;
    b.w.mutable_grad()[0] = inf;
  }
  CHECK(scaler.step(a.optimizer));
  CHECK_FALSE(scaler.step(b.optimizer));
  scaler.update();
  CHECK_FALSE(torch::equal(a.w.detach(), a_before));
  CHECK(torch::equal(b.w.detach(), b_before));
  CHECK(scaler.get_scale() == 32.0);
}

TEST_CASE("GradScaler enforces Python's call order", "[scaler]") {
  GradScaler scaler;
  model m;
  CHECK_THROWS_AS(scaler.unscale_(m.optimizer), std::logic_error);  // before scale()
  CHECK_THROWS_AS(scaler.step(m.optimizer), std::logic_error);
  CHECK_THROWS_AS(scaler.update(), std::logic_error);

  scaler.scale(m.loss()).backward();
  scaler.unscale_(m.optimizer);
  CHECK_THROWS_AS(scaler.unscale_(m.optimizer), std::logic_error);  // twice
  scaler.step(m.optimizer);
  CHECK_THROWS_AS(scaler.step(m.optimizer), std::logic_error);      // twice
  CHECK_THROWS_AS(scaler.unscale_(m.optimizer), std::logic_error);  // after step
  scaler.update();
  CHECK_THROWS_AS(scaler.update(), std::logic_error);  // nothing recorded since

  torch::Tensor no_grad_param = torch::zeros({1}, torch::requires_grad());
  torch::optim::SGD no_grads({no_grad_param}, torch::optim::SGDOptions(1.0));
  CHECK_THROWS_AS(scaler.step(no_grads), std::logic_error);  // no inf checks recorded

  torch::Tensor half = torch::zeros({1}, torch::kHalf).requires_grad_();
  half.mutable_grad() = torch::ones({1}, torch::kHalf);
  torch::optim::SGD half_optimizer({half}, torch::optim::SGDOptions(1.0));
  CHECK_THROWS_AS(scaler.unscale_(half_optimizer), std::logic_error);  // FP16 grads

  CHECK_THROWS_AS(GradScaler({.growth_factor = 1.0}), std::invalid_argument);
  CHECK_THROWS_AS(GradScaler({.backoff_factor = 1.0}), std::invalid_argument);
}

TEST_CASE("update(new_scale) sets the scale", "[scaler]") {
  GradScaler scaler({.init_scale = 8.0});
  model m;
  iteration(scaler, m);
  scaler.update(3.0);
  CHECK(scaler.get_scale() == 3.0);
  CHECK(scaler.get_growth_tracker() == 1);
}

TEST_CASE("a disabled GradScaler passes everything through", "[scaler]") {
  GradScaler scaler(
      {.growth_factor = 0.5, .enabled = false});  // settings are not checked when disabled
  CHECK_FALSE(scaler.is_enabled());
  model m;
  const auto loss = m.loss();
  const auto scaled = scaler.scale(loss);
  CHECK(scaled.is_same(loss));
  scaled.backward();
  scaler.unscale_(m.optimizer);
  CHECK(torch::equal(m.w.grad(), m.grad_w()));
  const auto w_before = m.w.detach().clone();
  CHECK(scaler.step(m.optimizer));
  CHECK(torch::equal(m.w.detach(), w_before - m.grad_w()));
  scaler.update();
  CHECK(scaler.get_scale() == 1.0);
  CHECK(scaler.state_dict().empty());
  scaler.load_state_dict({});  // ignored

  m.optimizer.zero_grad();
  m.loss().backward();
  {
    torch::NoGradGuard no_grad;
    m.w.mutable_grad()[0] = inf;
  }
  CHECK(scaler.step(m.optimizer));  // no inf check when disabled
}

TEST_CASE("GradScaler state round-trips exactly", "[scaler]") {
  const grad_scaler_options options{
      .init_scale = 1024.0, .growth_factor = 3.0, .backoff_factor = 0.25, .growth_interval = 4};
  GradScaler straight(options);
  GradScaler first(options);
  model m1;
  model m2;
  const std::vector<float> planted{0, 0, inf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  std::vector<double> expected;
  for (float p : planted) {
    iteration(straight, m1, p);
    expected.push_back(straight.get_scale());
  }

  std::vector<double> resumed;
  for (std::size_t i = 0; i < 4; ++i) {
    iteration(first, m2, planted[i]);
    resumed.push_back(first.get_scale());
  }
  const auto state = through_pickle(first.state_dict());
  CHECK(state.at("scale").isDouble());
  CHECK(state.at("growth_tracker").isInt());
  CHECK(state.at("growth_tracker").toInt() == 1);
  CHECK(state.at("growth_interval").isInt());
  CHECK(state == first.state_dict());

  GradScaler second;  // defaults; the state carries the settings
  second.load_state_dict(state);
  CHECK(second.state_dict() == first.state_dict());
  for (std::size_t i = 4; i < planted.size(); ++i) {
    iteration(second, m2, planted[i]);
    resumed.push_back(second.get_scale());
  }
  CHECK(resumed == expected);
  CHECK(second.state_dict() == straight.state_dict());

  // Loading into a scaler that already has its scale tensor overwrites it.
  GradScaler third;
  model m3;
  iteration(third, m3);
  third.load_state_dict(state);
  CHECK(third.state_dict() == state);

  GradScaler enabled;
  CHECK_THROWS_AS(enabled.load_state_dict({}), std::invalid_argument);
}

TEST_CASE("the fused AMP kernels run on CPU exactly where LibTorch has them", "[scaler]") {
  CHECK(hookforge::detail::amp::fused_unscale_runs_on(torch::kCPU) ==
        hookforge::compat::has_cpu_fused_amp);
  CHECK(hookforge::detail::amp::fused_update_runs_on(torch::kCPU) ==
        hookforge::compat::has_cpu_fused_amp);
}

TEST_CASE("the fallback of the fused AMP kernels matches them on CPU", "[scaler]") {
  if (!hookforge::compat::has_cpu_fused_amp)
    HOOKFORGE_SKIP("LibTorch " TORCH_VERSION
                   " has no CPU kernels of the fused AMP ops to compare the fallback with");
  // Both paths on the same inputs must agree bit for bit.
  auto grads =
      std::vector<torch::Tensor>{torch::tensor({1.5f, -2.0f, 1e30f}), torch::tensor({0.25, 8.0})};
  auto fused_grads = std::vector<torch::Tensor>{grads[0].clone(), grads[1].clone()};
  const auto inv_scale = torch::tensor(1.0f / 3.0f).reshape({});
  auto found = torch::zeros({});
  auto fused_found = torch::zeros({});
  for (auto& g : grads) {
    std::vector<torch::Tensor> one{g};
    hookforge::detail::amp::non_finite_check_and_unscale_fallback_(one, found, inv_scale);
  }
  for (auto& g : fused_grads) {
    std::vector<torch::Tensor> one{g};
    at::_amp_foreach_non_finite_check_and_unscale_(one, fused_found, inv_scale);
  }
  CHECK(torch::equal(grads[0], fused_grads[0]));
  CHECK(torch::equal(grads[1], fused_grads[1]));
  CHECK(torch::equal(found, fused_found));

  for (float flag : {0.0f, 1.0f}) {
    auto scale = torch::tensor(3.0f).reshape({});
    auto tracker = torch::tensor(2, torch::kInt).reshape({});
    auto fused_scale = scale.clone();
    auto fused_tracker = tracker.clone();
    const auto found_inf = torch::tensor(flag).reshape({});
    hookforge::detail::amp::update_scale_fallback_(scale, tracker, found_inf, 1.7, 0.3, 3);
    at::_amp_update_scale_(fused_scale, fused_tracker, found_inf, 1.7, 0.3, 3);
    CHECK(torch::equal(scale, fused_scale));
    CHECK(torch::equal(tracker, fused_tracker));
  }
}

TEST_CASE("CUDA: GradScaler on CUDA matches GradScaler on CPU", "[scaler][cuda]") {
  HOOKFORGE_REQUIRE_CUDA();
  const auto run = [](torch::Device device) {
    GradScaler scaler(
        {.init_scale = 1024.0, .growth_factor = 1.7, .backoff_factor = 0.3, .growth_interval = 2});
    auto w =
        torch::tensor({0.5f, -1.25f, 3.0f}, torch::TensorOptions().device(device)).requires_grad_();
    torch::optim::SGD optimizer({w}, torch::optim::SGDOptions(0.1));
    std::vector<double> scales;
    for (float planted : {0.0f, 0.0f, inf, 0.0f, 0.0f, 0.0f}) {
      optimizer.zero_grad();
      scaler.scale((w * w).sum()).backward();
      if (planted != 0.0f) {
        torch::NoGradGuard no_grad;
        w.mutable_grad()[0] = planted;
      }
      scaler.step(optimizer);
      scaler.update();
      scales.push_back(scaler.get_scale());
    }
    return std::pair{scales, w.detach().cpu()};
  };
  const auto [cpu_scales, cpu_w] = run(torch::kCPU);
  const auto [cuda_scales, cuda_w] = run(torch::kCUDA);
  CHECK(cpu_scales == cuda_scales);
  CHECK(torch::allclose(cpu_w, cuda_w));
}

// --- FusedAdam, FusedAdamW: the step a GradScaler skips on the device -----------------------

namespace {

/// A linear regression trained by a LibTorch optimiser and by its fused twin from the same
/// start, on the same batches, each under its own GradScaler.
template <class Reference, class Fused, class Options>
struct twin_runs {
  torch::Tensor X = torch::randn({64, 8}), Y = torch::randn({64, 3});
  torch::Tensor w0 = torch::randn({8, 3}), b0 = torch::randn({3});
  torch::Tensor w_ref = w0.clone().requires_grad_(), b_ref = b0.clone().requires_grad_();
  torch::Tensor w_fused = w0.clone().requires_grad_(), b_fused = b0.clone().requires_grad_();
  Reference reference;
  Fused fused;
  GradScaler scaler_ref, scaler_fused;

  explicit twin_runs(Options options)
      : reference({w_ref, b_ref}, options), fused({w_fused, b_fused}, options) {}

  /// One iteration of each; `planted` (inf, NaN) goes into one gradient of both.
  void iteration(float planted = 0.0f) {
    for (auto [opt, scaler, w, b] :
         {std::tuple<torch::optim::Optimizer*, GradScaler*, torch::Tensor, torch::Tensor>{
              &reference, &scaler_ref, w_ref, b_ref},
          {&fused, &scaler_fused, w_fused, b_fused}}) {
      opt->zero_grad();
      scaler->scale((X.matmul(w) + b - Y).pow(2).mean()).backward();
      if (planted != 0.0f) {
        torch::NoGradGuard no_grad;
        w.mutable_grad()[0][0] = planted;
      }
      scaler->step(*opt);
      scaler->update();
    }
  }
  /// Both set to `lr`, as a scheduler does.
  void set_lr(double lr) {
    reference.param_groups()[0].options().set_lr(lr);
    fused.param_groups()[0].options().set_lr(lr);
  }
  double distance() const {
    return std::max((w_ref - w_fused).abs().max().item<double>(),
                    (b_ref - b_fused).abs().max().item<double>());
  }
};

bool cpu_has_fused_adam() {
  return hookforge::compat::has_kernel("aten::_fused_adam_", torch::kCPU);
}

}  // namespace

TEST_CASE("FusedAdam and FusedAdamW follow LibTorch's Adam and AdamW to 1e-6 over 100 steps",
          "[scaler][fused]") {
  if (!cpu_has_fused_adam())
    HOOKFORGE_SKIP("LibTorch " TORCH_VERSION " has no CPU kernel of _fused_adam_ (CPU from 2.4)");
  CHECK(hookforge::compat::has_cpu_fused_adam);
  torch::manual_seed(0);
  const auto follow = [](auto& runs) {
    for (int i = 0; i < 100; ++i) {
      runs.iteration();
      if (i % 25 == 24) runs.set_lr(runs.reference.param_groups()[0].options().get_lr() * 0.5);
    }
    CHECK(runs.distance() < 1e-6);
    CHECK(runs.distance() <
          (runs.w0 - runs.w_ref).abs().max().template item<double>() / 100);  // it moved
  };
  using torch::optim::AdamOptions;
  using torch::optim::AdamWOptions;
  SECTION("Adam") {
    twin_runs<torch::optim::Adam, hookforge::FusedAdam, AdamOptions> runs(AdamOptions(1e-2));
    follow(runs);
  }
  SECTION("Adam with L2 weight decay and amsgrad") {
    twin_runs<torch::optim::Adam, hookforge::FusedAdam, AdamOptions> runs(
        AdamOptions(1e-2).weight_decay(0.05).amsgrad(true).betas({0.8, 0.99}).eps(1e-6));
    follow(runs);
  }
  SECTION("AdamW") {
    twin_runs<torch::optim::AdamW, hookforge::FusedAdamW, AdamWOptions> runs(
        AdamWOptions(1e-2).weight_decay(0.1));
    follow(runs);
  }
  SECTION("AdamW with amsgrad") {
    twin_runs<torch::optim::AdamW, hookforge::FusedAdamW, AdamWOptions> runs(
        AdamWOptions(1e-2).weight_decay(0.1).amsgrad(true));
    follow(runs);
  }
}

TEST_CASE("under a GradScaler, FusedAdam skips an inf step on the device, as Adam on the host",
          "[scaler][fused]") {
  if (!cpu_has_fused_adam())
    HOOKFORGE_SKIP("LibTorch " TORCH_VERSION " has no CPU kernel of _fused_adam_ (CPU from 2.4)");
  torch::manual_seed(1);
  using torch::optim::AdamWOptions;
  twin_runs<torch::optim::AdamW, hookforge::FusedAdamW, AdamWOptions> runs(
      AdamWOptions(1e-2).weight_decay(0.1));
  for (int i = 0; i < 5; ++i) runs.iteration();
  const auto w_before = runs.w_fused.detach().clone();
  auto& state = static_cast<hookforge::FusedAdamParamState&>(
      *runs.fused.state().at(hookforge::compat::optimizer_state_key(runs.w_fused)));
  const auto exp_avg_before = state.exp_avg().clone();
  const double scale_before = runs.scaler_fused.get_scale();

  runs.iteration(inf);  // skipped by both: the weights, the moments and the step count stay
  CHECK(torch::equal(runs.w_fused, w_before));
  CHECK(torch::equal(state.exp_avg(), exp_avg_before));
  CHECK(state.step().item<double>() == 5.0);
  CHECK(runs.scaler_fused.get_scale() == scale_before / 2);
  runs.iteration(std::numeric_limits<float>::quiet_NaN());
  CHECK(state.step().item<double>() == 5.0);

  for (int i = 0; i < 30; ++i) runs.iteration();
  CHECK(state.step().item<double>() == 35.0);
  CHECK(runs.distance() < 1e-6);
  CHECK(runs.scaler_fused.get_scale() == runs.scaler_ref.get_scale());
}

TEST_CASE("FusedAdam's state saves and loads: the loaded one goes on bit for bit",
          "[scaler][fused]") {
  if (!cpu_has_fused_adam())
    HOOKFORGE_SKIP("LibTorch " TORCH_VERSION " has no CPU kernel of _fused_adam_ (CPU from 2.4)");
  torch::manual_seed(2);
  auto X = torch::randn({32, 4}), Y = torch::randn({32, 1});
  auto w = torch::randn({4, 1}).requires_grad_();
  hookforge::FusedAdam adam({w}, torch::optim::AdamOptions(1e-2).amsgrad(true));
  const auto train = [&](torch::Tensor& weight, torch::optim::Optimizer& opt, int steps) {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      (X.matmul(weight) - Y).pow(2).mean().backward();
      opt.step();
    }
  };
  train(w, adam, 7);
  std::stringstream saved;
  torch::serialize::OutputArchive out;
  adam.save(out);
  out.save_to(saved);

  auto w2 = w.detach().clone().requires_grad_();
  hookforge::FusedAdam restored({w2}, torch::optim::AdamOptions(1e-2).amsgrad(true));
  torch::serialize::InputArchive in;
  in.load_from(saved);
  restored.load(in);
  auto& state = static_cast<hookforge::FusedAdamParamState&>(
      *restored.state().at(hookforge::compat::optimizer_state_key(w2)));
  CHECK(state.step().item<double>() == 7.0);
  CHECK(state.max_exp_avg_sq().defined());

  train(w, adam, 5);
  train(w2, restored, 5);
  CHECK(torch::equal(w, w2));
}

TEST_CASE("FusedAdam where LibTorch has no fused kernel for the device is a clear error",
          "[scaler][fused]") {
  if (cpu_has_fused_adam())
    HOOKFORGE_SKIP("LibTorch " TORCH_VERSION
                   " has a CPU kernel of _fused_adam_: nothing to refuse");
  auto w = torch::ones({3}).requires_grad_();
  hookforge::FusedAdam adam({w});
  (w * w).sum().backward();
  CHECK_THROWS_WITH(adam.step(), Catch::Contains("FusedAdam: this LibTorch") &&
                                     Catch::Contains("no fused Adam kernel for cpu") &&
                                     Catch::Contains("torch::optim::Adam"));
  CHECK(torch::equal(w, torch::ones({3})));  // nothing was changed before the refusal
}

TEST_CASE("FusedAdam checks its options as Adam does", "[scaler][fused]") {
  auto w = torch::ones({3}).requires_grad_();
  CHECK_THROWS_WITH(hookforge::FusedAdam({w}, torch::optim::AdamOptions(-1.0)),
                    "FusedAdam: lr must be >= 0, got -1");
  CHECK_THROWS_WITH(hookforge::FusedAdamW({w}, torch::optim::AdamWOptions(1e-3).betas({0.9, 1.0})),
                    "FusedAdamW: betas[1] must be in [0, 1), got 1");
}
