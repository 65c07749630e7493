// hookforge/torch/metrics/mse.hpp — mean squared error, reported as a metric (not a loss;
// that is MSELoss, losses/mse.hpp).
//
//   MSE = mean over the batch's samples of mean over each sample's elements of (x - y)^2
//
// Options output_field, target_field and name ("mse"); see mean_error_metric in metric.hpp.
#pragma once

#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge {

using MSE = mean_error_metric<element_error::squared>;

}  // namespace hookforge
