// What the exact-resume tests share: the bit-for-bit comparison of two runs' parameters and
// Adam state (ShuffledLoader and same_adam_state live in fixtures.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "fixtures.hpp"  // torch before Catch: glog defines CHECK too

#include <catch2/catch.hpp>

namespace tfx {

/// Two runs' parameters, Adam state (parameter by parameter) and learning rate are
/// bit-identical.
inline void check_same_training(torch::nn::Module& ma, torch::optim::Adam& a, torch::nn::Module& mb,
                                torch::optim::Adam& b) {
  auto pa = ma.parameters(), pb = mb.parameters();
  REQUIRE(pa.size() == pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) CHECK(torch::equal(pa[i], pb[i]));
  CHECK(same_adam_state(a, b));
}

}  // namespace tfx
