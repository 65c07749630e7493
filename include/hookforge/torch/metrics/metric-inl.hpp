// hookforge/torch/metrics/metric-inl.hpp — the metrics' checks and recording, and MAE's and
// MSE's mean error: included by metric.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <charconv>
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

#include "hookforge/torch/data/ycbcr.hpp"
#include "hookforge/torch/metrics/metric.hpp"

namespace hookforge {

HOOKFORGE_INLINE void check_metrics(const std::vector<metric>& metrics, std::string_view runner,
                                    std::initializer_list<std::string_view> reserved,
                                    std::initializer_list<std::string_view> reserved_prefixes) {
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

HOOKFORGE_INLINE void record_metrics(const std::vector<metric>& metrics, const Entry& entry,
                                     std::map<std::string, torch::Tensor>& scores,
                                     std::string_view runner) {
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

HOOKFORGE_INLINE std::pair<torch::Tensor, torch::Tensor> compared_fields(
    const Entry& entry, std::string_view who, const std::string& output_field,
    const std::string& target_field, image_comparison how, std::int64_t min_dims) {
  const auto crop_border = how.crop_border;
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
  if (how.y_channel) {
    if (x.dim() != 4 || x.size(1) != 3)
      throw std::invalid_argument(name + ": y_channel compares RGB images, (N, 3, H, W), but '" +
                                  output_field + "' has shape " + c10::str(x.sizes()));
    x = bt601_y(x.to(torch::kFloat), 1, how.data_range);
    y = bt601_y(y.to(torch::kFloat), 1, how.data_range);
  }
  if (crop_border > 0) {
    const auto h = x.size(-2), w = x.size(-1);
    if (h <= 2 * crop_border || w <= 2 * crop_border)
      throw std::invalid_argument(name + ": crop_border " + std::to_string(crop_border) +
                                  " leaves nothing of a " + std::to_string(w) + " x " +
                                  std::to_string(h) + " image (width x height)");
    x = x.slice(-2, crop_border, h - crop_border).slice(-1, crop_border, w - crop_border);
    y = y.slice(-2, crop_border, h - crop_border).slice(-1, crop_border, w - crop_border);
  }
  return {x.to(torch::kFloat), y.to(torch::kFloat)};
}

HOOKFORGE_INLINE torch::Tensor mean_error(const Entry& entry, element_error error,
                                          const std::string& output_field,
                                          const std::string& target_field) {
  metric_scope scope;
  const bool absolute = error == element_error::absolute;
  auto [x, y] = compared_fields(entry, absolute ? "MAE" : "MSE", output_field, target_field, {}, 1);
  auto diff = x - y;
  return (absolute ? diff.abs() : diff.square()).mean();
}

HOOKFORGE_INLINE void check_image_options(std::string_view who, double data_range,
                                          std::int64_t crop_border) {
  if (!(data_range > 0)) {
    char value[32];  // the shortest text that reads back as data_range, as {fmt}'s "{}"
    const auto written = std::to_chars(value, value + sizeof value, data_range).ptr;
    throw std::invalid_argument(std::string(who) + ": data_range must be > 0, got " +
                                std::string(value, written));
  }
  if (crop_border < 0)
    throw std::invalid_argument(std::string(who) + ": crop_border must be >= 0, got " +
                                std::to_string(crop_border));
}

}  // namespace detail

}  // namespace hookforge
