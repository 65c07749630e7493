// hookforge/hooks/batch_image_saver.hpp — BatchImageSaver: saves the images of selected
// batches (predictions, and optionally inputs and targets) as PNG files.
//
// Needs libpng (Debian: libpng-dev). The hookforge::torch CMake target links PNG::PNG when
// CMake finds libpng; without CMake, link with -lpng.
//
//   ValidationEpochRunner val{{}, hookforge::BatchImageSaver{{.out_dir = "run/images"}}};
//   hookforge::BatchImageSaver{{.out_dir = "run/images", .fields = {"input", "output", "target"},
//                               .batches = {0, 7}, .max_images = 4, .value_range = {-1, 1}}};
//
// At on_post_step of a selected batch it writes, for each of `fields` and each of the
// batch's first `max_images` samples (all when 0),
//   <out_dir>/<epoch>/<batch>_<i>_<field>.png          epoch, batch (ctx.batch_idx), i: 0-based
// creating the directories. A batch is selected when its index is in `batches`, or, with
// `batches` empty, when batch_idx % every == 0 (every = 1: all batches). Event filters
// (hookforge::when(saver, every(n)), once(...)) compose with these.
//
// A field is a batch of images: [N, C, H, W] with C = 1 (8-bit gray) or 3 (8-bit RGB), or
// [N, H, W] (gray). Values are clamped to `value_range` [low, high] (NaN and -inf to low,
// +inf to high) and mapped linearly to 0…255, rounding to nearest. The conversion runs on
// the tensor's device; the one host read is the copy of those uint8 pixels (one per field of
// a selected batch, counted by hookforge::host_reads()); unselected batches cost nothing.
// Each file is written atomically (a temp file renamed over the target, see
// torch/io/atomic_file.hpp), so a reader never sees half a PNG; an existing file of the same
// name (the same epoch run again) is replaced.
//
// Runners: the inference runners (InferenceRunner, ValidationEpochRunner, BenchmarkRunner),
// whose on_post_step sees the model's output; also the training runners (any context with
// entry, epoch and batch_idx). The hook keeps no state (which batches it saves follows from
// the counters).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/hooks/detail/image_pixels.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"

namespace hookforge {

struct batch_image_saver_options {
  std::filesystem::path out_dir;                 ///< required: the images go to <out_dir>/<epoch>/
                                                 ///< (<epoch>/<set>/ for several validation sets)
  std::vector<std::string> fields = {"output"};  ///< non-empty: the entry's image fields to save
  std::vector<std::int64_t> batches = {};  ///< batch indices (>= 0) to save; empty: use `every`
  std::int64_t every = 1;                  ///< >= 1: with `batches` empty, batch_idx % every == 0
  std::int64_t max_images = 0;             ///< >= 0: samples saved per batch (0: all)
  std::pair<double, double> value_range = {0.0, 1.0};  ///< [low, high], low < high: mapped to 0…255
};

class BatchImageSaver {
 public:
  static constexpr int priority = priority::NORMAL;

  explicit BatchImageSaver(batch_image_saver_options options) : options_(std::move(options)) {
    if (options_.out_dir.empty())
      throw std::invalid_argument("BatchImageSaver: out_dir must be a directory path, got \"\"");
    if (options_.fields.empty())
      throw std::invalid_argument("BatchImageSaver: fields must name at least one field, got none");
    for (const auto& f : options_.fields)
      if (f.empty())
        throw std::invalid_argument("BatchImageSaver: fields must be field names, got \"\"");
    for (auto b : options_.batches)
      if (b < 0)
        throw std::invalid_argument(
            fmt::format("BatchImageSaver: batches must be >= 0, got {}", b));
    if (options_.every < 1)
      throw std::invalid_argument(
          fmt::format("BatchImageSaver: every must be >= 1, got {}", options_.every));
    if (!options_.batches.empty() && options_.every != 1)
      throw std::invalid_argument(
          fmt::format("BatchImageSaver: batches and every select batches two ways; give one, got "
                      "{} batches and every {}",
                      options_.batches.size(), options_.every));
    if (options_.max_images < 0)
      throw std::invalid_argument(fmt::format(
          "BatchImageSaver: max_images must be >= 0 (0: all), got {}", options_.max_images));
    if (auto problem = detail::hooks::value_range_problem(options_.value_range); !problem.empty())
      throw std::invalid_argument("BatchImageSaver: " + problem);
  }

  /// What save_batch reads from a context: the first field it lacks ("" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    if constexpr (!requires(C& c) { static_cast<const Entry&>(c.entry); })
      return "entry (an Entry)";
    if constexpr (!requires(C& c) { std::int64_t(c.epoch); }) return "epoch";
    if constexpr (!requires(C& c) { std::int64_t(c.batch_idx); }) return "batch_idx";
    return "";
  }

  template <context_for<BatchImageSaver> C>
  void save_batch(C& ctx) {
    const auto batch = static_cast<std::int64_t>(ctx.batch_idx);
    if (!selected(batch)) return;
    auto dir = options_.out_dir / std::to_string(static_cast<std::int64_t>(ctx.epoch));
    if (const std::string_view set = validation_set_of(ctx); !set.empty())
      dir /= set;  // several sets
    std::filesystem::create_directories(dir);
    for (const auto& field : options_.fields) {
      const auto pixels = detail::hooks::host_pixels("BatchImageSaver", field, ctx.entry.at(field),
                                                     options_.max_images, options_.value_range);
      for (std::int64_t i = 0; i < pixels.size(0); ++i) {
        const auto path = dir / fmt::format("{}_{}_{}.png", batch, i, field);
        write_file_atomically(path, detail::hooks::encode_png("BatchImageSaver", pixels[i]));
        ++saved_;
      }
    }
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(save_batch, points::on_post_step));

  /// Is batch `batch_idx` of an epoch one to save?
  bool selected(std::int64_t batch_idx) const {
    if (!options_.batches.empty())
      return std::find(options_.batches.begin(), options_.batches.end(), batch_idx) !=
             options_.batches.end();
    return batch_idx % options_.every == 0;
  }
  /// PNG files written so far.
  std::int64_t images_saved() const { return saved_; }
  const batch_image_saver_options& options() const { return options_; }

 private:
  batch_image_saver_options options_;
  std::int64_t saved_ = 0;
};

}  // namespace hookforge
