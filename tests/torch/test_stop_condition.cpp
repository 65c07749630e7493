// Tests of hookforge/torch/optim/stop_condition.hpp: NoCondition never stops;
// ValidationLossDidNotImprove stops after `patience` validations in a row
// without an improvement of more than `min_delta`, and resumes exactly from its state.
#include <limits>
#include <memory>
#include <vector>

// torch before catch: Catch's CHECK must replace glog's (LibTorch 1.13 defines one), not the
// reverse.
#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "fixtures.hpp"

#include "hookforge/torch/optim/stop_condition.hpp"

namespace {

using tfx::through_pickle;

using hookforge::ValidationLossDidNotImprove;

std::vector<bool> decisions(hookforge::stop_condition& condition,
                            const std::vector<double>& losses) {
  std::vector<bool> stops;
  for (double loss : losses) stops.push_back(condition.should_stop(loss));
  return stops;
}

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("NoCondition never stops", "[stop]") {
  std::unique_ptr<hookforge::stop_condition> condition = std::make_unique<hookforge::NoCondition>();
  CHECK(decisions(*condition, {1, 2, 3, 4, 5, not_a_number, 1e9}) == std::vector<bool>(7, false));
  CHECK(condition->state_dict().empty());
  condition->load_state_dict({});
}

TEST_CASE("ValidationLossDidNotImprove stops after patience validations without improvement",
          "[stop]") {
  ValidationLossDidNotImprove condition(/*patience=*/2);
  // 1.0 best; 0.9 best; 0.95 bad 1; 0.8 best (count reset);
  // 0.85 bad 1; 0.81 bad 2 -> stop; 0.9 bad 3 -> stop.
  CHECK(decisions(condition, {1.0, 0.9, 0.95, 0.8, 0.85, 0.81, 0.9}) ==
        std::vector<bool>{false, false, false, false, false, true, true});
  CHECK(condition.best() == 0.8);
  CHECK(condition.validations_without_improvement() == 3);
  // An improvement after a stop resets the count.
  CHECK_FALSE(condition.should_stop(0.5));
  CHECK(condition.validations_without_improvement() == 0);
}

TEST_CASE("ValidationLossDidNotImprove needs an improvement of more than min_delta", "[stop]") {
  ValidationLossDidNotImprove condition(/*patience=*/1, /*min_delta=*/0.1);
  // 1.0 best; 0.85 improves by 0.15 > 0.1: best; 0.8 improves by 0.05 only: bad 1 -> stop.
  CHECK(decisions(condition, {1.0, 0.85, 0.8}) == std::vector<bool>{false, false, true});
  CHECK(condition.best() == 0.85);  // 0.8 did not become the best

  ValidationLossDidNotImprove exact(/*patience=*/1, /*min_delta=*/0.5);
  // 1.0 - 0.5 == min_delta exactly: not more than it.
  CHECK(decisions(exact, {1.0, 0.5}) == std::vector<bool>{false, true});
}

TEST_CASE("ValidationLossDidNotImprove with patience 0 stops at the first non-improvement",
          "[stop]") {
  ValidationLossDidNotImprove condition(0);
  CHECK(decisions(condition, {3, 2, 1, 1}) == std::vector<bool>{false, false, false, true});
}

TEST_CASE("a NaN validation loss is no improvement", "[stop]") {
  ValidationLossDidNotImprove condition(2);
  CHECK(decisions(condition, {not_a_number, 1.0, not_a_number, not_a_number}) ==
        std::vector<bool>{false, false, false, true});
  CHECK(condition.best() == 1.0);
}

TEST_CASE("ValidationLossDidNotImprove rejects bad settings", "[stop]") {
  CHECK_THROWS_AS(ValidationLossDidNotImprove(-1), std::invalid_argument);
  CHECK_THROWS_AS(ValidationLossDidNotImprove(1, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(ValidationLossDidNotImprove(1, not_a_number), std::invalid_argument);
}

TEST_CASE("ValidationLossDidNotImprove resumes exactly from its state_dict", "[stop]") {
  const std::vector<double> losses{1.0, 0.7, 0.75, 0.69, 0.72, 0.71, 0.70, 0.5, 0.6, 0.6};
  ValidationLossDidNotImprove straight(3, 0.005);
  const auto expected = decisions(straight, losses);

  ValidationLossDidNotImprove first(3, 0.005);
  auto resumed = decisions(first, {losses.begin(), losses.begin() + 3});
  const auto state = through_pickle(first.state_dict());
  CHECK(state == first.state_dict());
  CHECK(state.at("best").isDouble());
  CHECK(state.at("validations_without_improvement").isInt());

  ValidationLossDidNotImprove second(99, 0.5);  // the state carries the settings
  second.load_state_dict(state);
  CHECK(second.patience() == 3);
  CHECK(second.min_delta() == 0.005);
  const auto rest = decisions(second, {losses.begin() + 3, losses.end()});
  resumed.insert(resumed.end(), rest.begin(), rest.end());
  CHECK(resumed == expected);
  CHECK(second.state_dict() == straight.state_dict());
  CHECK_THROWS_AS(second.load_state_dict({}), std::invalid_argument);

  // A fresh condition's state round-trips too, +inf best included.
  ValidationLossDidNotImprove fresh(2);
  ValidationLossDidNotImprove loaded(5);
  loaded.load_state_dict(through_pickle(fresh.state_dict()));
  CHECK(loaded.best() == std::numeric_limits<double>::infinity());
  CHECK(loaded.state_dict() == fresh.state_dict());
}
