// hookforge/torch/metrics/mae.hpp — mean absolute error, reported as a metric (not a loss).
//
//   MAE = mean over the batch's samples of mean over each sample's elements of |x - y|
//
// Options output_field, target_field and name ("mae"); the body is MSE's with |x - y|
// for (x - y)^2 (mean_error_metric, metric.hpp).
#pragma once

#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge {

using MAE = mean_error_metric<element_error::absolute>;

}  // namespace hookforge
