// What the scheduler tests share: optimizers with a param group per lr, the lr sequence a
// scheduler gives, and the exact-resume check through a pickled state_dict.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

#include "hookforge/torch/optim/schedulers.hpp"

namespace sched_testing {

using hookforge::lr_scheduler;
using tfx::through_pickle;

/// An SGD optimizer with one param group per lr.
inline std::unique_ptr<torch::optim::SGD> make_sgd(const std::vector<double>& lrs) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (double lr : lrs) {
    groups.emplace_back(std::vector<torch::Tensor>{torch::zeros({2}, torch::requires_grad())},
                        std::make_unique<torch::optim::SGDOptions>(lr));
  }
  return std::make_unique<torch::optim::SGD>(std::move(groups),
                                             torch::optim::SGDOptions(lrs.front()));
}

inline std::vector<double> group_lrs(const torch::optim::Optimizer& optimizer) {
  std::vector<double> lrs;
  for (const auto& group : optimizer.param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

/// The lr of param group `group` at epochs 0 (after construction) .. epochs-1;
/// checks on the way that last_lr() is what the optimizer holds.
inline std::vector<double> lr_sequence(lr_scheduler& scheduler,
                                       const torch::optim::Optimizer& optimizer, int epochs,
                                       std::size_t group = 0) {
  std::vector<double> lrs;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    if (epoch > 0) scheduler.step();
    REQUIRE(scheduler.last_epoch() == epoch);
    REQUIRE(scheduler.last_lr() == group_lrs(optimizer));
    lrs.push_back(scheduler.last_lr().at(group));
  }
  return lrs;
}

using make_scheduler = std::function<std::unique_ptr<lr_scheduler>(torch::optim::Optimizer&)>;

/// Steps one scheduler 10 times; steps another 3 times, saves it, loads the
/// state into a third (built with other settings) on a fresh optimizer and
/// steps that 7 times. The two sequences must be identical.
inline void check_resume(const make_scheduler& make, const make_scheduler& make_other,
                         const std::vector<double>& metrics) {
  REQUIRE(metrics.size() == 10);
  auto optimizer_a = make_sgd({1.0, 0.1});
  auto straight = make(*optimizer_a);
  std::vector<std::vector<double>> expected;
  for (double metric : metrics) {
    straight->step(metric);
    expected.push_back(straight->last_lr());
  }

  auto optimizer_b = make_sgd({1.0, 0.1});
  auto first = make(*optimizer_b);
  std::vector<std::vector<double>> resumed;
  for (std::size_t i = 0; i < 3; ++i) {
    first->step(metrics[i]);
    resumed.push_back(first->last_lr());
  }
  const auto saved = through_pickle(first->state_dict());
  REQUIRE(saved == first->state_dict());

  auto optimizer_c = make_sgd({1.0, 0.1});
  auto second = make_other(*optimizer_c);
  second->load_state_dict(saved);
  CHECK(second->last_epoch() == first->last_epoch());
  CHECK(second->base_lrs() == first->base_lrs());
  CHECK(group_lrs(*optimizer_c) == resumed.back());  // load writes the lrs back
  for (std::size_t i = 3; i < metrics.size(); ++i) {
    second->step(metrics[i]);
    resumed.push_back(second->last_lr());
    REQUIRE(group_lrs(*optimizer_c) == second->last_lr());
  }
  CHECK(resumed == expected);
  CHECK(second->state_dict() == straight->state_dict());
}

}  // namespace sched_testing
