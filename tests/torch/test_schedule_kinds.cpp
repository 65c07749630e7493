// Tests of the schedules beyond the epoch eight (PolynomialLR, CosineAnnealingWarmRestarts,
// LambdaLR, OneCycleLR) and the composites (SequentialLR, ChainedScheduler): their lr
// against numbers worked out by hand from PyTorch's formulas (tests/peers/parity.py compares
// them with PyTorch itself), what they refuse, their interval, and exact resumption.
#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <vector>

#include "scheduler_testing.hpp"

namespace {

using namespace sched_testing;
using Catch::Contains;
using hookforge::schedule_interval;

double cosine(double t, double period) { return (1 + std::cos(std::numbers::pi * t / period)) / 2; }

}  // namespace

TEST_CASE("PolynomialLR decays to 0 over total_iters by the power", "[sched]") {
  auto sgd = make_sgd({1.0});
  hookforge::PolynomialLR s(*sgd, /*total_iters=*/4, /*power=*/2.0);
  CHECK(lr_sequence(s, *sgd, 6) == std::vector<double>{1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0});
  CHECK_THROWS_WITH(hookforge::PolynomialLR(*sgd, 0), Contains("total_iters > 0"));
}

TEST_CASE("CosineAnnealingWarmRestarts restarts every T_i epochs, T_mult times longer each time",
          "[sched]") {
  auto sgd = make_sgd({1.0});
  hookforge::CosineAnnealingWarmRestarts s(*sgd, /*T_0=*/2, /*T_mult=*/2);
  const auto lrs = lr_sequence(s, *sgd, 7);
  const std::vector<double> want{1.0,          cosine(1, 2), 1.0, cosine(1, 4),
                                 cosine(2, 4), cosine(3, 4), 1.0};
  REQUIRE(lrs.size() == want.size());
  for (std::size_t e = 0; e < want.size(); ++e) CHECK(lrs[e] == Approx(want[e]).epsilon(1e-15));
  CHECK_THROWS_WITH(hookforge::CosineAnnealingWarmRestarts(*sgd, 2, 0), Contains("T_mult >= 1"));
}

TEST_CASE("LambdaLR scales the base lr by the callable's value", "[sched]") {
  auto sgd = make_sgd({2.0, 0.5});
  hookforge::LambdaLR s(*sgd, [](std::int64_t e) { return 1.0 / static_cast<double>(e + 1); });
  s.step();
  s.step();
  CHECK(s.last_lr() == std::vector<double>{2.0 / 3.0, 0.5 / 3.0});
}

TEST_CASE("OneCycleLR rises to max_lr, anneals below the start and cycles the momentum",
          "[sched]") {
  auto sgd = make_sgd({1.0});
  hookforge::OneCycleLR s(*sgd, {.max_lr = 0.5, .total_steps = 11, .pct_start = 0.5});
  CHECK(s.interval() == schedule_interval::step);  // a schedule of updates
  auto momentum = [&] {
    return static_cast<const torch::optim::SGDOptions&>(sgd->param_groups()[0].options())
        .momentum();
  };
  CHECK(s.last_lr().at(0) == Approx(0.5 / 25));
  CHECK(momentum() == Approx(0.95));
  for (int i = 0; i < 4; ++i) s.step();  // the rise ends at pct_start * 11 - 1 = 4.5
  CHECK(s.last_lr().at(0) == Approx(0.5 - (0.5 - 0.02) * cosine(4, 4.5)).epsilon(1e-12));
  CHECK(momentum() == Approx(0.85 + 0.1 * cosine(4, 4.5)).epsilon(1e-12));
  for (int i = 0; i < 6; ++i) s.step();  // step 10 = total_steps - 1: the final lr
  CHECK(s.last_lr().at(0) == Approx(0.5 / 25 / 1e4).epsilon(1e-12));
  CHECK(momentum() == Approx(0.95));
  s.step();  // step 11 = total_steps: PyTorch allows it
  CHECK_THROWS_WITH(s.step(), Contains("past its total_steps 11"));

  auto adam_param = torch::zeros({1}, torch::requires_grad());
  torch::optim::Adam adam({adam_param}, torch::optim::AdamOptions(0.1).betas({0.9, 0.99}));
  hookforge::OneCycleLR on_adam(adam, {.max_lr = 0.1, .epochs = 2, .steps_per_epoch = 5});
  const auto& betas =
      static_cast<const torch::optim::AdamOptions&>(adam.param_groups()[0].options()).betas();
  CHECK(std::get<0>(betas) == Approx(0.95));
  CHECK(std::get<1>(betas) == 0.99);

  torch::optim::Adagrad adagrad({adam_param}, 0.1);
  CHECK_THROWS_WITH(hookforge::OneCycleLR(adagrad, {.max_lr = 0.1, .total_steps = 10}),
                    Contains("set cycle_momentum to false"));
  CHECK_NOTHROW(
      hookforge::OneCycleLR(adagrad, {.max_lr = 0.1, .total_steps = 10, .cycle_momentum = false}));
  CHECK_THROWS_WITH(hookforge::OneCycleLR(*sgd, {.max_lr = 0.1}),
                    Contains("total_steps, or epochs and steps_per_epoch"));
  CHECK_THROWS_WITH(
      hookforge::OneCycleLR(*sgd, {.max_lr = 0.1, .total_steps = 10, .anneal_strategy = "cosine"}),
      Contains("'cos' or 'linear', got 'cosine'"));
}

TEST_CASE("SequentialLR runs each schedule from its start at its milestone, on the first's base",
          "[sched]") {
  auto sgd = make_sgd({1.0});
  auto warmup = std::make_shared<hookforge::LinearLR>(*sgd, 0.5, 1.0, 2);
  auto decay = std::make_shared<hookforge::ExponentialLR>(*sgd, 0.5);
  hookforge::SequentialLR s(*sgd, {warmup, decay}, {2});
  // The decay starts from the base 1.0, not from the lr the warm-up left when it was built.
  CHECK(lr_sequence(s, *sgd, 5) == std::vector<double>{0.5, 0.75, 1.0, 0.5, 0.25});

  CHECK_THROWS_WITH(hookforge::SequentialLR(*sgd, {warmup, decay}, {}),
                    Contains("one milestone fewer than schedulers"));
  CHECK_THROWS_WITH(hookforge::SequentialLR(*sgd, {warmup, decay, decay}, {3, 3}),
                    Contains("positive and increasing"));
  auto other = make_sgd({1.0});
  auto elsewhere = std::make_shared<hookforge::StepLR>(*other, 2);
  CHECK_THROWS_WITH(hookforge::SequentialLR(*sgd, {warmup, elsewhere}, {2}),
                    Contains("schedulers[1] belongs to another optimizer"));
  auto plateau = std::make_shared<hookforge::ReduceLROnPlateau>(*sgd);
  CHECK_THROWS_WITH(hookforge::SequentialLR(*sgd, {plateau, decay}, {2}),
                    Contains("schedulers[0] steps on a validation score"));
  auto nested = std::make_shared<hookforge::SequentialLR>(
      *sgd, hookforge::SequentialLR::schedule_list{warmup, decay}, std::vector<std::int64_t>{2});
  CHECK_THROWS_WITH(hookforge::SequentialLR(*sgd, {warmup, nested}, {2}),
                    Contains("schedulers[1] is a composite itself"));
}

TEST_CASE("ChainedScheduler multiplies the factors of schedules that scale the lr", "[sched]") {
  auto sgd = make_sgd({1.0});
  auto constant = std::make_shared<hookforge::ConstantLR>(*sgd, 0.5, 2);
  auto decay = std::make_shared<hookforge::ExponentialLR>(*sgd, 0.5);
  hookforge::ChainedScheduler s(*sgd, {constant, decay});
  CHECK(lr_sequence(s, *sgd, 4) == std::vector<double>{0.5, 0.25, 0.25, 0.125});

  auto restarts = std::make_shared<hookforge::CosineAnnealingWarmRestarts>(*sgd, 3);
  CHECK_THROWS_WITH(hookforge::ChainedScheduler(*sgd, {constant, restarts}),
                    Contains("schedulers[1] sets the lr rather than scaling it"));
  auto floor = std::make_shared<hookforge::CosineAnnealingLR>(*sgd, 10, 0.01);
  CHECK_THROWS_WITH(hookforge::ChainedScheduler(*sgd, {floor}), Contains("does not chain"));
}

TEST_CASE("a scheduler that steps on a score cannot step per update", "[sched]") {
  auto sgd = make_sgd({1.0});
  hookforge::ReduceLROnPlateau plateau(*sgd);
  CHECK_THROWS_WITH(plateau.set_interval(schedule_interval::step), Contains("per epoch"));
  hookforge::StepLR step(*sgd, 2);
  CHECK(step.interval() == schedule_interval::epoch);
  step.set_interval(schedule_interval::step);
  CHECK(step.interval() == schedule_interval::step);
}

TEST_CASE("the new schedules and the composites resume exactly from their state_dict",
          "[sched][resume]") {
  const std::vector<double> ignored(10, 0.0);
  auto make = [](auto build) -> make_scheduler {
    return
        [build](torch::optim::Optimizer& o) -> std::unique_ptr<lr_scheduler> { return build(o); };
  };
  SECTION("PolynomialLR") {
    check_resume(make([](auto& o) { return std::make_unique<hookforge::PolynomialLR>(o, 8, 1.5); }),
                 make([](auto& o) { return std::make_unique<hookforge::PolynomialLR>(o); }),
                 ignored);
  }
  SECTION("CosineAnnealingWarmRestarts") {
    check_resume(make([](auto& o) {
                   return std::make_unique<hookforge::CosineAnnealingWarmRestarts>(o, 2, 2, 0.01);
                 }),
                 make([](auto& o) {
                   return std::make_unique<hookforge::CosineAnnealingWarmRestarts>(o, 5);
                 }),
                 ignored);
  }
  SECTION("OneCycleLR") {
    check_resume(make([](auto& o) {
                   return std::make_unique<hookforge::OneCycleLR>(
                       o, hookforge::one_cycle_options{.max_lr = 0.4,
                                                       .total_steps = 12,
                                                       .anneal_strategy = "linear",
                                                       .three_phase = true});
                 }),
                 make([](auto& o) {
                   return std::make_unique<hookforge::OneCycleLR>(
                       o, hookforge::one_cycle_options{.max_lr = 1.0, .total_steps = 50});
                 }),
                 ignored);
  }
  SECTION("SequentialLR") {
    auto sequential = [](double start, std::int64_t t_max, std::int64_t milestone) {
      return [=](torch::optim::Optimizer& o) -> std::unique_ptr<lr_scheduler> {
        auto warmup = std::make_shared<hookforge::LinearLR>(o, start, 1.0, milestone);
        auto cosine = std::make_shared<hookforge::CosineAnnealingLR>(o, t_max);
        return std::make_unique<hookforge::SequentialLR>(
            o, hookforge::SequentialLR::schedule_list{warmup, cosine},
            std::vector<std::int64_t>{milestone});
      };
    };
    check_resume(sequential(0.2, 6, 2), sequential(0.9, 100, 7), ignored);
  }
  SECTION("ChainedScheduler") {
    auto chained = [](double factor, double gamma) {
      return [=](torch::optim::Optimizer& o) -> std::unique_ptr<lr_scheduler> {
        auto constant = std::make_shared<hookforge::ConstantLR>(o, factor, 4);
        auto decay = std::make_shared<hookforge::ExponentialLR>(o, gamma);
        return std::make_unique<hookforge::ChainedScheduler>(
            o, hookforge::ChainedScheduler::schedule_list{constant, decay});
      };
    };
    check_resume(chained(0.3, 0.8), chained(0.9, 0.5), ignored);
  }
}
