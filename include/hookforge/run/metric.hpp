// hookforge/run/metric.hpp — the metric kind: a score computed on each batch beside the loss.
//
//   validation_runner:
//     _target: ValidationEpochRunner
//     params:
//       metrics:
//         - {_target: PSNR}
//         - {_target: PSNR, params: {output_field: bicubic, name: bicubic_psnr}}
//
// A metric entry builds a `std::shared_ptr<hookforge::metric>` (torch/metrics/metric.hpp):
// its name and its function. The built-in metrics (PSNR, SSIM, MAE, MSE, Accuracy)
// register through `metric_of`, with their options; their options are checked when built.
#pragma once

#include <utility>

#include "hookforge/config/register.hpp"
#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge::run {

/// A built-in metric M (PSNR{...}) as a `hookforge::metric`.
template <class M>
struct metric_of : hookforge::metric {
  explicit metric_of(M m) : hookforge::metric(static_cast<hookforge::metric>(m)) {}
};

}  // namespace hookforge::run

HOOKFORGE_DECLARE_KIND(metric, hookforge::metric);
