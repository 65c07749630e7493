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
// torch::NoGradGuard with autocast off, in float32 whatever the batch's dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/types.h>
#include <torch/utils.h>

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
inline void check_metrics(const std::vector<metric>& metrics, std::string_view runner,
                          std::initializer_list<std::string_view> reserved = {"loss"},
                          std::initializer_list<std::string_view> reserved_prefixes = {}) {
  const std::string who(runner);
  std::set<std::string, std::less<>> seen;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const auto& m = metrics[i];
    if (m.name.empty())
      throw std::invalid_argument(who + ": metrics[" + std::to_string(i) + "] has an empty name");
    if (!m.compute)
      throw std::invalid_argument(who + ": metric '" + m.name + "' has no compute function");
    if (!seen.insert(m.name).second)
      throw std::invalid_argument(who + ": metric name '" + m.name +
                                  "' is given twice; give each metric its own");
    for (auto r : reserved)
      if (m.name == r)
        throw std::invalid_argument(who + ": metric '" + m.name +
                                    "' has the name of a loss score; rename the metric");
    for (auto p : reserved_prefixes)
      if (std::string_view(m.name).starts_with(p))
        throw std::invalid_argument(who + ": metric '" + m.name + "' starts with '" +
                                    std::string(p) +
                                    "', which names loss terms; rename the metric");
  }
}

/// Add each metric's value on `entry` to `scores` under its name: detached, reduced to
/// its mean when it has elements, on the device it was computed on (no host read).
/// A name already in `scores` (a loss term's) is std::invalid_argument naming `runner`.
inline void record_metrics(const std::vector<metric>& metrics, const Entry& entry,
                           std::map<std::string, torch::Tensor>& scores, std::string_view runner) {
  if (metrics.empty()) return;
  torch::NoGradGuard no_grad;
  no_autocast_guard no_autocast;
  for (const auto& m : metrics) {
    auto value = m.compute(entry);
    if (!value.defined())
      throw std::invalid_argument(std::string(runner) + ": metric '" + m.name +
                                  "' returned an undefined tensor");
    if (value.dim() != 0) value = value.mean();
    if (!scores.emplace(m.name, value.detach()).second)
      throw std::invalid_argument(std::string(runner) + ": metric '" + m.name +
                                  "' has the name of a loss term; rename the metric or the term");
  }
}

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

/// `entry`'s prediction and target fields as float32, checked to have the same shape and
/// at least `min_dims` dimensions (dimension 0 is the batch), with `crop_border` elements
/// removed from each edge of the last two dimensions. `who` names the metric in errors.
inline std::pair<torch::Tensor, torch::Tensor> compared_fields(
    const Entry& entry, std::string_view who, const std::string& output_field,
    const std::string& target_field, std::int64_t crop_border, std::int64_t min_dims) {
  auto x = entry.at(output_field);
  auto y = entry.at(target_field);
  const std::string name(who);
  if (x.sizes() != y.sizes())
    throw std::invalid_argument(name + ": '" + output_field + "' and '" + target_field +
                                "' differ in shape (" + c10::str(x.sizes()) + " vs " +
                                c10::str(y.sizes()) + ")");
  if (x.dim() < min_dims)
    throw std::invalid_argument(name + ": '" + output_field + "' needs at least " +
                                std::to_string(min_dims) +
                                " dimensions (the batch first), got shape " + c10::str(x.sizes()));
  if (crop_border > 0) {
    const auto h = x.size(-2), w = x.size(-1);
    if (h <= 2 * crop_border || w <= 2 * crop_border)
      throw std::invalid_argument(name + ": crop_border " + std::to_string(crop_border) +
                                  " leaves nothing of a " + std::to_string(h) + "x" +
                                  std::to_string(w) + " image");
    x = x.slice(-2, crop_border, h - crop_border).slice(-1, crop_border, w - crop_border);
    y = y.slice(-2, crop_border, h - crop_border).slice(-1, crop_border, w - crop_border);
  }
  return {x.to(torch::kFloat), y.to(torch::kFloat)};
}

inline void check_data_range(std::string_view who, double data_range) {
  if (!(data_range > 0))
    throw std::invalid_argument(fmt::format("{}: data_range must be > 0, got {}", who, data_range));
}

inline void check_crop_border(std::string_view who, std::int64_t crop_border) {
  if (crop_border < 0)
    throw std::invalid_argument(std::string(who) + ": crop_border must be >= 0, got " +
                                std::to_string(crop_border));
}

}  // namespace detail

}  // namespace hookforge
