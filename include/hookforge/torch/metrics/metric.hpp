// hookforge/torch/metrics/metric.hpp — a named value computed on each batch beside the loss,
// never added to it (PSNR, SSIM, MAE, MSE, accuracy, or a function of your own).
//
//   training_options{.metrics = {PSNR{.data_range = 255.0, .crop_border = 4}, SSIM{}}}
//   inference_options{.metrics = {Accuracy{.top_k = 5, .name = "top5"}}}
//   metric{"max_error", [](const Entry& e) { return (e.at("output") - e.at("target")).abs().amax();
//   }}
//
// A metric is a name and a function of the batch (with the model's output merged in) that
// returns one value for the batch: the mean of its per-sample values, a 0-dim tensor on
// the batch's device. The runners record it in ctx.batch_scores under its name, next to
// the loss terms, so it reaches ctx.scores, epoch_result::scores, the trainer's `monitor`
// and every hook that reads scores; the score accumulator weighs each batch by its size,
// so the epoch's value is the mean over the epoch's samples. Nothing is read on the host
// per step: a metric is tensor operations only.
//
// The built-in metrics (one header each) convert to `metric` implicitly; their name is a
// field that defaults to "psnr", "ssim", "mae", "mse", "accuracy". They compute under
// torch::NoGradGuard with autocast off, in float32 whatever the batch's dtype. MAE and MSE
// are the one template below, mean_error_metric, differing only in an element's error.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <torch/types.h>
#include <torch/utils.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/amp/autocast.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

/// A named metric: `compute` returns the batch's value (the mean of its per-sample values).
struct metric {
  std::string name;
  std::function<torch::Tensor(const Entry&)> compute;
};

/// Check a runner's metrics at its construction: each has a name and a function, no name
/// appears twice, and none is one of the runner's own score names (`reserved`) or starts
/// with one of `reserved_prefixes`. Throws std::invalid_argument naming `runner` and the metric.
HOOKFORGE_INLINE void check_metrics(const std::vector<metric>& metrics, std::string_view runner,
                                    std::initializer_list<std::string_view> reserved = {"loss"},
                                    std::initializer_list<std::string_view> reserved_prefixes = {});

/// Add each metric's value on `entry` to `scores` under its name: detached, reduced to
/// its mean when it has elements, on the device it was computed on (no host read).
/// A name already in `scores` (a loss term's) is std::invalid_argument naming `runner`.
HOOKFORGE_INLINE void record_metrics(const std::vector<metric>& metrics, const Entry& entry,
                                     std::map<std::string, torch::Tensor>& scores,
                                     std::string_view runner);

namespace detail {

/// The scope a built-in metric computes in: no autograd graph, no autocast.
struct metric_scope {
  torch::NoGradGuard no_grad;
  no_autocast_guard no_autocast;
};

/// A built-in metric `M` as a `metric`, its options checked first.
template <class M>
metric make_metric(const M& m) {
  m.validate();
  return metric{m.name, m};
}

}  // namespace detail

/// The members every built-in metric has after its own options: the two fields it compares,
/// its score name, its conversion to `metric`. A macro rather than a base class because
/// designated initializers name only direct members: Accuracy{.top_k = 5, .name = "top5"}.
#define HOOKFORGE_METRIC_FIELDS(default_name) \
  std::string output_field = "output";        \
  std::string target_field = "target";        \
  std::string name = default_name;            \
                                              \
  operator metric() const { return detail::make_metric(*this); }

/// How a per-element error metric measures an element's error: |x - y| (MAE) or (x - y)^2 (MSE).
enum class element_error { absolute, squared };

namespace detail {

/// The mean of `error` over all elements of the batch's compared fields, float32.
HOOKFORGE_INLINE torch::Tensor mean_error(const Entry& entry, element_error error,
                                          const std::string& output_field,
                                          const std::string& target_field);

/// How an image metric compares its fields: the options PSNR and SSIM share.
struct image_comparison {
  std::int64_t crop_border = 0;  ///< elements removed from each edge of the last two dimensions
  bool y_channel = false;        ///< compare the BT.601 Y of (N, 3, H, W) RGB images
  double data_range = 1.0;       ///< the values' range, for the Y conversion
};

/// `entry`'s prediction and target fields as float32, checked to have the same shape and
/// at least `min_dims` dimensions (dimension 0 is the batch), converted to their Y and
/// cropped as `how` says. `who` names the metric in errors.
HOOKFORGE_INLINE std::pair<torch::Tensor, torch::Tensor> compared_fields(
    const Entry& entry, std::string_view who, const std::string& output_field,
    const std::string& target_field, image_comparison how, std::int64_t min_dims);

/// PSNR's and SSIM's options: std::invalid_argument naming `who` unless data_range > 0
/// and crop_border >= 0.
HOOKFORGE_INLINE void check_image_options(std::string_view who, double data_range,
                                          std::int64_t crop_border);

}  // namespace detail

/// MAE and MSE (mae.hpp, mse.hpp): the mean of an element's error over the batch. Every
/// sample has as many elements, so this is also the mean of the per-sample means.
template <element_error E>
struct mean_error_metric {
  HOOKFORGE_METRIC_FIELDS(E == element_error::absolute ? "mae" : "mse")

  void validate() const {}

  /// The batch's mean error, a 0-dim float32 tensor on its device.
  torch::Tensor operator()(const Entry& entry) const {
    return detail::mean_error(entry, E, output_field, target_field);
  }
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/metrics/metric-inl.hpp"
#endif
