// hookforge/torch/metrics/mae.hpp — mean absolute error, reported as a metric (not a loss).
//
//   MAE = mean over the batch's samples of mean over each sample's elements of |x - y|
//
// Every sample has as many elements, so this is the mean over all elements of the batch.
#pragma once

#include <string>

#include <torch/types.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge {

struct MAE {
  std::string output_field = "output";
  std::string target_field = "target";
  std::string name = "mae";

  void validate() const {}

  /// The batch's mean absolute error, a 0-dim float32 tensor on its device.
  torch::Tensor operator()(const Entry& entry) const;

  operator metric() const { return detail::make_metric(*this); }
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/metrics/mae-inl.hpp"
#endif
