// What the exact-resume tests share: a loader that reshuffles with the torch RNG, and the
// bit-for-bit comparison of two runs' parameters and Adam state.
#pragma once

#include <cstdint>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

namespace tfx {

/// Reshuffles its batches with the torch RNG at every pass, as a real loader would.
struct ShuffledLoader {
  std::vector<Entry> data;
  std::vector<Entry> order;
  std::vector<Entry>::iterator begin() {
    auto perm = torch::randperm(static_cast<std::int64_t>(data.size()), torch::kLong);
    order.clear();
    for (std::int64_t i = 0; i < perm.size(0); ++i)
      order.push_back(data[perm[i].item<std::int64_t>()]);
    return order.begin();
  }
  std::vector<Entry>::iterator end() { return order.end(); }
};

/// Two runs' parameters, Adam state (parameter by parameter) and learning rate are
/// bit-identical.
inline void check_same_training(torch::nn::Module& ma, torch::optim::Adam& a, torch::nn::Module& mb,
                                torch::optim::Adam& b) {
  auto pa = ma.parameters(), pb = mb.parameters();
  REQUIRE(pa.size() == pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(torch::equal(pa[i], pb[i]));
  auto key = [](const torch::Tensor& p) { return c10::guts::to_string(p.unsafeGetTensorImpl()); };
  for (std::size_t i = 0; i < pa.size(); ++i) {
    auto& sa = static_cast<torch::optim::AdamParamState&>(*a.state().at(key(pa[i])));
    auto& sb = static_cast<torch::optim::AdamParamState&>(*b.state().at(key(pb[i])));
    CHECK(sa.step() == sb.step());
    CHECK(torch::equal(sa.exp_avg(), sb.exp_avg()));
    CHECK(torch::equal(sa.exp_avg_sq(), sb.exp_avg_sq()));
  }
  CHECK(a.param_groups()[0].options().get_lr() == b.param_groups()[0].options().get_lr());
}

}  // namespace tfx
