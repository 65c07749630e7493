// hookforge/run/data_checks.hpp — a run's settings checked against its data once both are
// built, before training: what would otherwise fail only after a whole training epoch.
//
//   run::check_metrics_fit(val_dataset, validation_runner.metrics());   // std::invalid_argument
//   run::refuse_dataset_warnings(dataset, at);                          // --strict: config_error
//
// A PSNR or SSIM whose crop_border (and SSIM's 11 x 11 window) leaves nothing of the
// smallest validation image is refused naming the image and its size, width first; the
// sizes come from the dataset's headers (Dataset::smallest), so nothing is decoded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "hookforge/config/error.hpp"
#include "hookforge/config/value.hpp"
#include "hookforge/run/dataset.hpp"
#include "hookforge/run/runners.hpp"
#include "hookforge/torch/metrics/psnr.hpp"
#include "hookforge/torch/metrics/ssim.hpp"

namespace hookforge::run {

namespace detail {

/// What an image metric needs of the images it compares.
struct image_need {
  std::string metric;     ///< "PSNR 'psnr'"
  std::string field;      ///< the target field it compares
  std::int64_t side = 0;  ///< the shortest side it takes
  std::string why;        ///< "crop_border 8 leaves nothing"
};

/// What `m` needs, when it is a built-in PSNR or SSIM (its options are its function's).
inline std::optional<image_need> image_need_of(const hookforge::metric& m) {
  if (const auto* psnr = m.compute.target<PSNR>())
    return image_need{fmt::format("PSNR '{}'", psnr->name), psnr->target_field,
                      2 * psnr->crop_border + 1,
                      fmt::format("crop_border {} leaves nothing", psnr->crop_border)};
  if (const auto* ssim = m.compute.target<SSIM>())
    return image_need{fmt::format("SSIM '{}'", ssim->name), ssim->target_field,
                      2 * ssim->crop_border + SSIM::window_size,
                      fmt::format("crop_border {} leaves less than its {} x {} window",
                                  ssim->crop_border, SSIM::window_size, SSIM::window_size)};
  return std::nullopt;
}

}  // namespace detail

/// std::invalid_argument when a metric of `metrics` cannot score the smallest image of
/// `data` (see the top of this file).
inline void check_metrics_fit(const Dataset& data, const metric_list& metrics) {
  for (const auto& m : metrics) {
    const auto need = m ? detail::image_need_of(*m) : std::nullopt;
    if (!need) continue;
    const auto smallest = data.smallest(need->field);
    if (!smallest || std::min(smallest->width, smallest->height) >= need->side) continue;
    const auto size = fmt::format("{} x {}", smallest->width, smallest->height);
    const auto what =
        smallest->source.empty()
            ? fmt::format("the '{}' patches, {}", need->field, size)
            : fmt::format("'{}', whose '{}' is {}", smallest->source, need->field, size);
    throw std::invalid_argument(
        fmt::format("{}: {} of the validation image {} pixels (it takes at least {} x {})",
                    need->metric, need->why, what, need->side, need->side));
  }
}

/// Under --strict: a config_error at `at` (the loader that holds `data`) for the first
/// warning `data` gave while it was built.
inline void refuse_dataset_warnings(const Dataset& data, const config::value& at) {
  const auto warnings = data.warnings();
  if (warnings.empty()) return;
  throw config::config_error(at.where(), at.key(), "a dataset built without warnings (--strict)",
                             warnings.front());
}

}  // namespace hookforge::run
