// Tests of hookforge/torch/optim/schedulers.hpp: each schedule's lr sequence against
// numbers worked out by hand from Python's formulas, ReduceLROnPlateau's rule
// (patience, threshold, cooldown, min_lr, eps), and exact resumption from a state_dict.
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

// torch before catch: Catch's CHECK must replace glog's (LibTorch 1.13 defines one), not the
// reverse.
#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "scheduler_testing.hpp"

namespace {

using hookforge::lr_scheduler;
using namespace sched_testing;

/// The lr of every group after each step(metric).
std::vector<std::vector<double>> plateau_sequence(lr_scheduler& scheduler,
                                                  const std::vector<double>& metrics) {
  std::vector<std::vector<double>> lrs;
  for (double metric : metrics) {
    scheduler.step(metric);
    lrs.push_back(scheduler.last_lr());
  }
  return lrs;
}

std::vector<double> first_group(const std::vector<std::vector<double>>& lrs) {
  std::vector<double> first;
  for (const auto& step : lrs) first.push_back(step.at(0));
  return first;
}

}  // namespace

TEST_CASE("StepLR decays every step_size epochs, in every param group", "[sched]") {
  auto optimizer = make_sgd({1.0, 0.1});
  hookforge::StepLR scheduler(*optimizer, /*step_size=*/3, /*gamma=*/0.5);
  CHECK(scheduler.base_lrs() == std::vector<double>{1.0, 0.1});
  CHECK_FALSE(scheduler.wants_metric());
  // lr = base * 0.5^(epoch / 3)
  CHECK(lr_sequence(scheduler, *optimizer, 10) ==
        std::vector<double>{1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125});

  auto optimizer2 = make_sgd({1.0, 0.1});
  hookforge::StepLR scheduler2(*optimizer2, 3, 0.5);
  CHECK(lr_sequence(scheduler2, *optimizer2, 10, 1) ==
        std::vector<double>{0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125});
}

TEST_CASE("StepLR decays at the same epoch as Python's (not LibTorch's)", "[sched]") {
  // Python: StepLR(step_size=1, gamma=0.5) gives 1.0 at epoch 0 and 0.5 after the first step().
  auto optimizer = make_sgd({1.0});
  hookforge::StepLR scheduler(*optimizer, 1, 0.5);
  CHECK(group_lrs(*optimizer) == std::vector<double>{1.0});
  scheduler.step();
  CHECK(group_lrs(*optimizer) == std::vector<double>{0.5});
}

TEST_CASE("step(metric) is step() for the epoch schedules", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::StepLR scheduler(*optimizer, 1, 0.5);
  lr_scheduler& any = scheduler;
  any.step(123.0);
  CHECK(any.last_lr() == std::vector<double>{0.5});
  CHECK(any.last_epoch() == 1);
}

TEST_CASE("MultiStepLR decays at each milestone, twice at a repeated one", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::MultiStepLR scheduler(*optimizer, {5, 2, 8, 5}, 0.5);
  // lr = 0.5^(number of milestones <= epoch); milestones sorted: 2, 5, 5, 8
  CHECK(lr_sequence(scheduler, *optimizer, 10) ==
        std::vector<double>{1.0, 1.0, 0.5, 0.5, 0.5, 0.125, 0.125, 0.125, 0.0625, 0.0625});
}

TEST_CASE("ExponentialLR multiplies by gamma every epoch", "[sched]") {
  auto optimizer = make_sgd({2.0});
  hookforge::ExponentialLR scheduler(*optimizer, 0.5);
  // lr = 2 * 0.5^epoch
  CHECK(lr_sequence(scheduler, *optimizer, 10) == std::vector<double>{2.0, 1.0, 0.5, 0.25, 0.125,
                                                                      0.0625, 0.03125, 0.015625,
                                                                      0.0078125, 0.00390625});

  auto optimizer2 = make_sgd({1.0});
  hookforge::ExponentialLR scheduler2(*optimizer2, 0.9);
  const auto lrs = lr_sequence(scheduler2, *optimizer2, 5);
  // lr = 0.9^epoch
  const std::vector<double> expected{1.0, 0.9, 0.81, 0.729, 0.6561};
  for (std::size_t i = 0; i < expected.size(); ++i)
    CHECK(lrs[i] == Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("CosineAnnealingLR follows Python's closed form", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::CosineAnnealingLR scheduler(*optimizer, /*T_max=*/10, /*eta_min=*/0.2);
  const auto lrs = lr_sequence(scheduler, *optimizer, 13);
  // lr = 0.2 + (1 - 0.2) * (1 + cos(pi * epoch / 10)) / 2; past T_max the cosine goes back up.
  const std::vector<double> expected{1.0,
                                     0.9804226065180615,
                                     0.9236067977499791,
                                     0.8351141009169893,
                                     0.7236067977499789,
                                     0.6000000000000001,
                                     0.4763932022500211,
                                     0.36488589908301083,
                                     0.27639320225002106,
                                     0.2195773934819386,
                                     0.2,
                                     0.2195773934819385,
                                     0.276393202250021};
  REQUIRE(lrs.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("epoch " << i);
    CHECK(lrs[i] == Approx(expected[i]).epsilon(1e-14));
  }
  CHECK(lrs[0] == 1.0);
  CHECK(lrs[10] == 0.2);  // cos(pi) == -1 exactly: eta_min exactly
}

TEST_CASE("LinearLR warms up linearly over total_iters, then holds", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::LinearLR scheduler(*optimizer, /*start_factor=*/0.25, /*end_factor=*/1.0,
                                /*total_iters=*/4);
  // lr = 0.25 + 0.75 * min(epoch, 4) / 4
  CHECK(lr_sequence(scheduler, *optimizer, 10) ==
        std::vector<double>{0.25, 0.4375, 0.625, 0.8125, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0});
}

TEST_CASE("ConstantLR scales by factor for total_iters epochs", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::ConstantLR scheduler(*optimizer, /*factor=*/0.5, /*total_iters=*/4);
  // lr = 0.5 while epoch < 4, then 1
  CHECK(lr_sequence(scheduler, *optimizer, 10) ==
        std::vector<double>{0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0});
}

// Python accepts total_iters = 0, but its step() then runs at base * factor forever while
// its closed form runs at base: hookforge rejects the setting rather than pick one.
TEST_CASE("ConstantLR rejects total_iters <= 0", "[sched]") {
  auto optimizer = make_sgd({0.1});
  CHECK_THROWS_WITH(hookforge::ConstantLR(*optimizer, 0.5, 0),
                    Catch::Contains("ConstantLR needs total_iters >= 1, got 0"));
  CHECK_THROWS_AS(hookforge::ConstantLR(*optimizer, 0.5, -3), std::invalid_argument);
  CHECK(optimizer->param_groups()[0].options().get_lr() == 0.1);  // nothing was written
  hookforge::ConstantLR one(*optimizer, 0.5, 1);
  CHECK(lr_sequence(one, *optimizer, 3) == std::vector<double>{0.05, 0.1, 0.1});
}

TEST_CASE("schedulers reject settings Python rejects", "[sched]") {
  auto optimizer = make_sgd({1.0});
  CHECK_THROWS_AS(hookforge::StepLR(*optimizer, 0), std::invalid_argument);
  CHECK_THROWS_AS(hookforge::CosineAnnealingLR(*optimizer, 0), std::invalid_argument);
  CHECK_THROWS_AS(hookforge::LinearLR(*optimizer, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(hookforge::LinearLR(*optimizer, 0.5, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(hookforge::ConstantLR(*optimizer, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(hookforge::ReduceLROnPlateau(*optimizer, {.factor = 1.0}), std::invalid_argument);
  CHECK_THROWS_AS(hookforge::ReduceLROnPlateau(*optimizer, {.min_lrs = {0.1, 0.2}}),
                  std::invalid_argument);
}

TEST_CASE("ReduceLROnPlateau reduces after patience bad epochs", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::ReduceLROnPlateau scheduler(*optimizer,
                                         {.factor = 0.5, .patience = 2, .threshold = 0.0});
  CHECK(scheduler.wants_metric());
  CHECK(scheduler.last_epoch() == 0);
  CHECK(scheduler.best() == std::numeric_limits<double>::infinity());
  // 10: best; 10, 10: bad 1, 2 (tolerated); 10: bad 3 > patience -> 0.5.
  // 9: best; 9, 9: bad 1, 2; 9: bad 3 -> 0.25.
  const auto lrs = plateau_sequence(scheduler, {10, 10, 10, 10, 9, 9, 9, 9});
  CHECK(first_group(lrs) == std::vector<double>{1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25});
  CHECK(scheduler.best() == 9.0);
  CHECK(scheduler.num_bad_epochs() == 0);
  CHECK(scheduler.last_epoch() == 8);
  CHECK_THROWS_AS(scheduler.step(), std::logic_error);
}

TEST_CASE("ReduceLROnPlateau ignores bad epochs during cooldown", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::ReduceLROnPlateau scheduler(
      *optimizer, {.factor = 0.5, .patience = 0, .threshold = 0.0, .cooldown = 2});
  // 1: best. 2: bad -> 0.5, cooldown 2. 2: cooldown 1. 2: cooldown 0.
  // 2: bad -> 0.25, cooldown 2. 2: cooldown 1.
  const auto lrs = plateau_sequence(scheduler, {1, 2, 2, 2, 2, 2});
  CHECK(first_group(lrs) == std::vector<double>{1.0, 0.5, 0.5, 0.5, 0.25, 0.25});
  CHECK(scheduler.in_cooldown());
  CHECK(scheduler.cooldown_counter() == 1);
}

TEST_CASE("ReduceLROnPlateau stops at min_lr and skips reductions below eps", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::ReduceLROnPlateau scheduler(*optimizer,
                                         {.factor = 0.1, .patience = 0, .min_lr = 0.05});
  // 1: best. then lr = max(lr * 0.1, 0.05): 0.1, 0.05, 0.05.
  CHECK(first_group(plateau_sequence(scheduler, {1, 1, 1, 1})) ==
        std::vector<double>{1.0, 0.1, 0.05, 0.05});

  auto tiny = make_sgd({1e-8});
  hookforge::ReduceLROnPlateau tiny_scheduler(*tiny, {.factor = 0.5, .patience = 0, .eps = 1e-8});
  // 1e-8 - 5e-9 is not > eps = 1e-8: the lr stays.
  CHECK(first_group(plateau_sequence(tiny_scheduler, {1, 1, 1})) ==
        std::vector<double>{1e-8, 1e-8, 1e-8});

  auto two = make_sgd({1.0, 0.5});
  hookforge::ReduceLROnPlateau per_group(*two,
                                         {.factor = 0.1, .patience = 0, .min_lrs = {0.5, 0.0}});
  // group 0: max(1 * 0.1, 0.5) = 0.5, then stays; group 1: 0.5 * 0.1, then * 0.1 again.
  const auto lrs = plateau_sequence(per_group, {1, 1, 1});
  CHECK(lrs ==
        std::vector<std::vector<double>>{{1.0, 0.5}, {0.5, 0.5 * 0.1}, {0.5, 0.5 * 0.1 * 0.1}});
}

TEST_CASE("ReduceLROnPlateau's thresholds: max mode, abs and rel", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::ReduceLROnPlateau max_abs(*optimizer,
                                       {.mode = hookforge::plateau_mode::max,
                                        .factor = 0.5,
                                        .patience = 0,
                                        .threshold = 0.5,
                                        .threshold_mode = hookforge::plateau_threshold_mode::abs});
  // better means > best + 0.5. 1: best. 1.4: bad -> 0.5. 2.0: best. 2.4: bad -> 0.25.
  CHECK(first_group(plateau_sequence(max_abs, {1.0, 1.4, 2.0, 2.4})) ==
        std::vector<double>{1.0, 0.5, 0.5, 0.25});
  CHECK(max_abs.best() == 2.0);

  auto optimizer2 = make_sgd({1.0});
  hookforge::ReduceLROnPlateau min_rel(*optimizer2,
                                       {.factor = 0.5, .patience = 0, .threshold = 0.1});
  // better means < best * (1 - 0.1). 1: best. 0.95: bad -> 0.5. 0.85: best.
  CHECK(first_group(plateau_sequence(min_rel, {1.0, 0.95, 0.85})) ==
        std::vector<double>{1.0, 0.5, 0.5});
  CHECK(min_rel.best() == 0.85);
}

TEST_CASE("ReduceLROnPlateau's thresholds on the boundary round as PyTorch's", "[sched]") {
  // Scores one rounding away from best -/+ threshold, where PyTorch's `current < best -
  // threshold` and Lightning's `current + threshold < best` (hookforge::is_better) disagree.
  // Expected lrs and best from torch 2.11's ReduceLROnPlateau (factor 0.5, patience 0).
  const auto abs_mode = hookforge::plateau_threshold_mode::abs;
  const auto max_mode = hookforge::plateau_mode::max;

  // min, abs: 0.2 - 0.1 == 0.1, one ulp below it is better; yet c + 0.1 rounds to 0.2.
  const double below = 0.09999999999999999;
  REQUIRE(below == std::nextafter(0.1, 0.0));
  REQUIRE(below < 0.2 - 0.1);
  REQUIRE_FALSE(below + 0.1 < 0.2);
  auto o1 = make_sgd({1.0});
  hookforge::ReduceLROnPlateau min_abs(
      *o1, {.factor = 0.5, .patience = 0, .threshold = 0.1, .threshold_mode = abs_mode});
  CHECK(first_group(plateau_sequence(min_abs, {0.2, below})) == std::vector<double>{1.0, 1.0});
  CHECK(min_abs.best() == below);

  // max, abs: 0.2 + 0.1 == 0.30000000000000004 is not beyond itself; yet c - 0.1 > 0.2.
  const double above = 0.30000000000000004;
  REQUIRE(above == 0.2 + 0.1);
  REQUIRE(above - 0.1 > 0.2);
  auto o2 = make_sgd({1.0});
  hookforge::ReduceLROnPlateau max_abs(*o2, {.mode = max_mode,
                                             .factor = 0.5,
                                             .patience = 0,
                                             .threshold = 0.1,
                                             .threshold_mode = abs_mode});
  CHECK(first_group(plateau_sequence(max_abs, {0.2, above})) == std::vector<double>{1.0, 0.5});
  CHECK(max_abs.best() == 0.2);

  // rel: best * (1 - t) and best * (t + 1), not best -/+ best * t (which round the other way).
  REQUIRE(0.1 * (1.0 - 0.1) != 0.1 - 0.1 * 0.1);
  REQUIRE(0.3 * (0.1 + 1.0) != 0.3 + 0.3 * 0.1);
  auto o3 = make_sgd({1.0});
  hookforge::ReduceLROnPlateau min_rel(*o3, {.factor = 0.5, .patience = 0, .threshold = 0.1});
  CHECK(first_group(plateau_sequence(min_rel, {0.1, 0.09})) == std::vector<double>{1.0, 1.0});
  CHECK(min_rel.best() == 0.09);
  auto o4 = make_sgd({1.0});
  hookforge::ReduceLROnPlateau max_rel(
      *o4, {.mode = max_mode, .factor = 0.5, .patience = 0, .threshold = 0.1});
  CHECK(first_group(plateau_sequence(max_rel, {0.3, 0.33})) == std::vector<double>{1.0, 0.5});
  CHECK(max_rel.best() == 0.3);

  // EarlyStopping's form stays Lightning's: the same scores read the other way.
  CHECK_FALSE(hookforge::is_better(hookforge::metric_rule::less, below, 0.2, 0.1));
  CHECK(hookforge::is_better(hookforge::metric_rule::greater, above, 0.2, 0.1));
  CHECK(hookforge::is_better_absolute(hookforge::metric_rule::less, below, 0.2, 0.1));
  CHECK_FALSE(hookforge::is_better_absolute(hookforge::metric_rule::greater, above, 0.2, 0.1));
}

TEST_CASE("ReduceLROnPlateau reads the group's current lr", "[sched]") {
  auto optimizer = make_sgd({1.0});
  hookforge::ReduceLROnPlateau scheduler(*optimizer, {.factor = 0.5, .patience = 0});
  scheduler.step(1.0);
  optimizer->param_groups()[0].options().set_lr(0.25);  // changed by hand
  scheduler.step(1.0);
  CHECK(scheduler.last_lr() == std::vector<double>{0.125});
}

TEST_CASE("state_dict holds typed values", "[sched]") {
  auto optimizer = make_sgd({1.0, 0.1});
  hookforge::MultiStepLR scheduler(*optimizer, {2, 4}, 0.5);
  scheduler.step();
  const auto state = scheduler.state_dict();
  CHECK(state.at("last_epoch").isInt());
  CHECK(state.at("last_epoch").toInt() == 1);
  CHECK(state.at("base_lrs").isDoubleList());
  CHECK(state.at("base_lrs").toDoubleVector() == std::vector<double>{1.0, 0.1});
  CHECK(state.at("last_lr").isDoubleList());
  CHECK(state.at("milestones").toIntVector() == std::vector<std::int64_t>{2, 4});
  CHECK(state.at("gamma").isDouble());

  auto other = make_sgd({1.0});
  hookforge::MultiStepLR mismatched(*other, {2}, 0.5);
  CHECK_THROWS_AS(mismatched.load_state_dict(state), std::invalid_argument);
  CHECK_THROWS_AS(mismatched.load_state_dict({}), std::invalid_argument);
}

TEST_CASE("every scheduler resumes exactly from its state_dict", "[sched]") {
  using hookforge::plateau_options;
  const std::vector<double> ignored(10, 0.0);
  const auto wrap = [](auto make) -> make_scheduler {
    return [make](torch::optim::Optimizer& optimizer) -> std::unique_ptr<lr_scheduler> {
      return make(optimizer);
    };
  };

  SECTION("StepLR") {
    check_resume(wrap([](auto& o) { return std::make_unique<hookforge::StepLR>(o, 2, 0.3); }),
                 wrap([](auto& o) { return std::make_unique<hookforge::StepLR>(o, 7, 0.9); }),
                 ignored);
  }
  SECTION("MultiStepLR") {
    check_resume(
        wrap([](auto& o) {
          return std::make_unique<hookforge::MultiStepLR>(o, std::vector<std::int64_t>{2, 5}, 0.3);
        }),
        wrap([](auto& o) {
          return std::make_unique<hookforge::MultiStepLR>(o, std::vector<std::int64_t>{1}, 0.9);
        }),
        ignored);
  }
  SECTION("ExponentialLR") {
    check_resume(wrap([](auto& o) { return std::make_unique<hookforge::ExponentialLR>(o, 0.9); }),
                 wrap([](auto& o) { return std::make_unique<hookforge::ExponentialLR>(o, 0.5); }),
                 ignored);
  }
  SECTION("CosineAnnealingLR") {
    check_resume(
        wrap([](auto& o) { return std::make_unique<hookforge::CosineAnnealingLR>(o, 7, 0.01); }),
        wrap([](auto& o) { return std::make_unique<hookforge::CosineAnnealingLR>(o, 100); }),
        ignored);
  }
  SECTION("LinearLR") {
    check_resume(
        wrap([](auto& o) { return std::make_unique<hookforge::LinearLR>(o, 0.1, 0.9, 6); }),
        wrap([](auto& o) { return std::make_unique<hookforge::LinearLR>(o); }), ignored);
  }
  SECTION("ConstantLR") {
    check_resume(wrap([](auto& o) { return std::make_unique<hookforge::ConstantLR>(o, 0.3, 5); }),
                 wrap([](auto& o) { return std::make_unique<hookforge::ConstantLR>(o); }), ignored);
  }
  SECTION("ReduceLROnPlateau") {
    // patience 1, cooldown 1: reductions at epochs 4 and 8, one bad epoch pending at the save.
    const std::vector<double> metrics{5, 4, 4, 4, 4, 3, 3, 3, 3, 3};
    check_resume(wrap([](auto& o) {
                   return std::make_unique<hookforge::ReduceLROnPlateau>(
                       o, plateau_options{.factor = 0.5,
                                          .patience = 1,
                                          .threshold = 0.0,
                                          .cooldown = 1,
                                          .min_lrs = {0.0, 0.04}});
                 }),
                 wrap([](auto& o) { return std::make_unique<hookforge::ReduceLROnPlateau>(o); }),
                 metrics);
  }
}

TEST_CASE("a resumed run keeps the configured settings, from the epoch the checkpoint reached",
          "[sched][resume]") {
  // A 2-epoch cosine run, saved; the config now says 3 epochs (T_max 3).
  auto first_optimizer = make_sgd({1.0});
  hookforge::CosineAnnealingLR first(*first_optimizer, /*T_max=*/2, /*eta_min=*/0.2);
  first.step();
  first.step();
  CHECK(first.last_lr().at(0) == 0.2);  // the 2-epoch schedule ends at eta_min
  const auto saved = first.state_dict();

  auto optimizer = make_sgd({1.0});
  hookforge::CosineAnnealingLR scheduler(*optimizer, /*T_max=*/3, /*eta_min=*/0.2);
  const auto configured = scheduler.settings();
  CHECK(configured.size() == 2);  // T_max, eta_min
  scheduler.load_state_dict(saved);
  CHECK(scheduler.state_dict().at("T_max").toInt() == 2);  // load_state_dict: PyTorch's meaning
  const auto changes = hookforge::keep_configured_settings(scheduler, configured);
  CHECK(changes == std::vector<std::string>{"T_max 3 (the checkpoint's: 2)"});
  CHECK(scheduler.last_epoch() == 2);
  // Epoch 3 of a 3-epoch schedule: 0.2 + 0.8 (1 + cos(2 pi / 3)) / 2 = 0.4.
  CHECK(optimizer->param_groups()[0].options().get_lr() == Approx(0.4).epsilon(1e-14));
  CHECK(scheduler.last_lr().at(0) == optimizer->param_groups()[0].options().get_lr());

  // The same settings: nothing is said and nothing changes.
  auto same_optimizer = make_sgd({1.0});
  hookforge::CosineAnnealingLR same(*same_optimizer, 2, 0.2);
  const auto same_settings = same.settings();
  same.load_state_dict(saved);
  CHECK(hookforge::keep_configured_settings(same, same_settings).empty());
  CHECK(same.last_lr().at(0) == 0.2);

  // ReduceLROnPlateau has no settings apart from its state: it loads as saved.
  auto plateau_optimizer = make_sgd({1.0});
  hookforge::ReduceLROnPlateau plateau(*plateau_optimizer);
  CHECK(plateau.settings().empty());
}
