// hookforge/images/image_folder.hpp — a dataset of the PNG and JPEG files under a folder,
// optionally as super-resolution pairs cut into random, augmented patches.
//
//   hookforge::ImageFolder train({.root = "photos/train", .color = hookforge::image_color::y,
//                                 .scale = 2, .patch = 96, .flip = true, .rotate = true,
//                                 .cache = true, .seed = 1});
//   hookforge::ImageFolder val({.root = "photos/val", .color = hookforge::image_color::y,
//                               .scale = 2});                 // whole images: batches of one
//   hookforge::DataLoader loader(train, {.batch_size = 16, .shuffle = true, .workers = 2});
//
// Files: every .png, .jpg and .jpeg under `root` (recursively, sorted by their path under it),
// or the `files` named, in that order. Each is read with read_image (image_file.hpp), scaled
// to [0, 1] by its bit depth and put in `color` (color.hpp). Sample i is file i % files().size():
// with `repeat` r the dataset has r samples per file (r patches of each image an epoch).
//
// Samples. With scale 1, {"input": image}. With scale s >= 2, the image is cut at the bottom
// and right to a multiple of s and becomes the high-resolution target, and
//   "target"   [C, H, W]      the image (HR);
//   "input"    [C, H/s, W/s]  HR reduced by antialiased bicubic (resize.hpp), rounded to the
//                             file's bit depth as a saved LR file would be (LR);
//   "bicubic"  [C, H, W]      LR enlarged back by bicubic: the baseline a model must beat;
//                             not made with `bicubic` false (training reads input and target).
// With `lr_root`, "input" is read instead (paired data, as DIV2K's LR folders): the file at
// the same path under lr_root whose stem is the HR file's plus `lr_suffix` ("x2"), with the
// HR file's extension or .png, .jpg, .jpeg; it must be HR's size divided by s (rounded down).
// With `patch` p > 0 every field is cut to a random square, p x p in HR and p/s x p/s in LR at
// the same place; `flip` then flips it left-right and up-down, each with probability 1/2, and
// `rotate` transposes it with probability 1/2 (with the flips, the 8 rotations and reflections).
//
// Randomness is a function of (seed, epoch, index) alone: get(i, epoch) draws the same patch
// whichever thread asks and whatever was drawn before, so a resumed run sees the samples a
// straight one saw; get(i) is epoch 0's. The DataLoader passes each batch's epoch.
//
// Files are listed with links followed (folder_listing.hpp): a link that leads nowhere or
// into a loop is skipped with a warning (hookforge::warn; warnings() keeps them). Named files
// lie under root (unless files_outside_root), none twice.
//
// Errors. Options out of range, a missing root, a folder without images, a named file or an
// LR file that is missing, more samples than an int64 counts: std::invalid_argument from the
// constructor. The constructor reads every file's header (with `cache`, every file whole), so
// a file that is not an image, has another bit depth than `bit_depth`, is smaller than the
// patch, claims more than max_pixels pixels or more memory than memory_limit, or is an LR file
// of the wrong size is an image_error naming it before training starts, and before anything is
// allocated for it; a truncated file not cached is an image_error from get, and memory that
// runs out while a file is prepared an out_of_memory naming it.
//
// `cache` keeps every prepared image (HR, LR and bicubic, float32) in memory; without it each
// get decodes its file again, in the loader's worker threads when it has workers. With
// `bicubic` false there is no baseline to make, keep or cut: almost half the cache, and no
// bicubic enlargement of the whole image for each uncached patch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/images/color.hpp"
#include "hookforge/images/detail/folder_listing.hpp"
#include "hookforge/images/detail/prepared_memory.hpp"
#include "hookforge/images/image_file.hpp"
#include "hookforge/images/image_folder_options.hpp"
#include "hookforge/images/image_limits.hpp"
#include "hookforge/images/resize.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/splitmix64.hpp"

namespace hookforge {

/// A field's size in a sample, and the file it was cut from (empty for a patch).
struct image_extent {
  std::filesystem::path file;
  std::int64_t width = 0;
  std::int64_t height = 0;
};

/// See the top of this file. Satisfies `hookforge::epoch_dataset`; cheap to copy.
class ImageFolder {
 public:
  explicit ImageFolder(image_folder_options options)
      : shared_(std::make_shared<shared>(std::move(options))) {}

  /// files() times `repeat`.
  std::size_t size() const noexcept {
    return shared_->files.size() * static_cast<std::size_t>(shared_->options.repeat);
  }

  /// Sample `index` as drawn in epoch 0.
  Entry get(std::size_t index) const { return get(index, 0); }

  /// Sample `index` as drawn in `epoch`: see "Samples" and "Randomness" above.
  Entry get(std::size_t index, std::int64_t epoch) const {
    if (index >= size())
      throw std::out_of_range("ImageFolder::get: index " + std::to_string(index) +
                              " out of range for " + std::to_string(size()) + " samples");
    const auto& o = shared_->options;
    const std::size_t file = index % shared_->files.size();
    const prepared image = shared_->cached.empty() ? shared_->prepare(file) : shared_->cached[file];
    if (o.patch == 0) return image.entry(o.scale, /*copy=*/!shared_->cached.empty());

    detail::splitmix64 rng(detail::mix64(
        detail::mix64(detail::mix64(o.seed) ^ static_cast<std::uint64_t>(epoch)) ^ index));
    const auto lr_patch = o.patch / o.scale;
    const auto& lr = image.low();
    const auto y = rng.below(static_cast<int>(lr.size(-2) - lr_patch + 1));
    const auto x = rng.below(static_cast<int>(lr.size(-1) - lr_patch + 1));
    const bool left_right = o.flip && rng.below(2) == 1;
    const bool up_down = o.flip && rng.below(2) == 1;
    const bool transpose = o.rotate && rng.below(2) == 1;
    auto cut = [&](const torch::Tensor& t, std::int64_t s) {
      auto p = t.narrow(-2, y * s, lr_patch * s).narrow(-1, x * s, lr_patch * s);
      if (left_right) p = p.flip({-1});
      if (up_down) p = p.flip({-2});
      if (transpose) p = p.transpose(-2, -1);
      return p.clone(torch::MemoryFormat::Contiguous);  // never a view of a cached image
    };
    if (o.scale == 1) return {{"input", cut(image.high, 1)}};
    Entry sample{{"input", cut(image.lr, 1)}, {"target", cut(image.high, o.scale)}};
    if (image.bicubic.defined()) sample.set("bicubic", cut(image.bicubic, o.scale));
    return sample;
  }

  /// The fields of every sample (see the top of this file), for the checks made before
  /// training.
  std::vector<std::string> field_names() const {
    if (shared_->options.scale == 1) return {"input"};
    if (!shared_->options.bicubic) return {"input", "target"};
    return {"input", "target", "bicubic"};
  }

  /// The files, in the dataset's order.
  const std::vector<std::filesystem::path>& files() const noexcept { return shared_->files; }
  const image_folder_options& options() const noexcept { return shared_->options; }
  /// The links skipped while listing root (each also given to hookforge::warn).
  const std::vector<std::string>& warnings() const noexcept { return shared_->warnings; }

  /// The smallest extent `field` ("input", "target", "bicubic") has in a sample, by its
  /// shorter side, and the file it comes from (none with `patch`: every sample is a patch);
  /// nullopt for a field the samples do not have. From the headers: nothing is decoded.
  std::optional<image_extent> smallest(std::string_view field) const;

 private:
  /// One image ready to cut: HR, and with scale >= 2 its LR and (unless options.bicubic is
  /// false) its bicubic baseline.
  struct prepared {
    torch::Tensor high, lr, bicubic;
    const torch::Tensor& low() const { return lr.defined() ? lr : high; }
    Entry entry(std::int64_t scale, bool copy) const {
      auto out = [copy](const torch::Tensor& t) { return copy ? t.clone() : t; };
      if (scale == 1) return {{"input", out(high)}};
      Entry sample{{"input", out(lr)}, {"target", out(high)}};
      if (bicubic.defined()) sample.set("bicubic", out(bicubic));
      return sample;
    }
  };

  struct shared {
    image_folder_options options;
    std::vector<std::filesystem::path> files;
    std::vector<std::filesystem::path> lr_files;  ///< with lr_root: each file's LR image
    std::vector<image_info> infos;                ///< each file's header
    std::vector<std::string> warnings;
    std::vector<prepared> cached;

    explicit shared(image_folder_options o) : options(std::move(o)) {
      options.validate();
      list_files();
      check_sample_count();
      if (!options.lr_root.empty()) pair_files();
      double cache_bytes = 0;
      for (std::size_t i = 0; i < files.size(); ++i) {
        infos.push_back(read_image_info(files[i]));
        check(files[i], infos[i]);
        if (!lr_files.empty()) check_pair(i, infos[i], read_image_info(lr_files[i]));
        cache_bytes +=
            detail::images::cached_bytes(infos[i], channels(), options.scale, options.bicubic);
      }
      if (options.cache) cache_all(cache_bytes);
    }

    std::int64_t channels() const { return options.color == image_color::rgb ? 3 : 1; }

    void list_files() {
      const auto& root = options.root;
      std::error_code ec;
      if (!std::filesystem::exists(root, ec)) {
        std::string message = "ImageFolder: root '" + root.string() + "' does not exist";
        if (!options.missing_hint.empty()) message += "; " + options.missing_hint;
        throw std::invalid_argument(message);
      }
      if (!std::filesystem::is_directory(root, ec))
        throw std::invalid_argument("ImageFolder: root '" + root.string() + "' is not a folder");
      if (options.files.empty()) {
        auto listing = detail::images::image_files_under(root);
        for (const auto& note : listing.notes) warn(note);
        warnings = std::move(listing.notes);
        files = std::move(listing.files);
        if (files.empty())
          throw std::invalid_argument("ImageFolder: no PNG or JPEG file under '" + root.string() +
                                      "'");
        return;
      }
      for (const auto& name : options.files) {
        auto file = detail::images::named_file(root, name, options.files_outside_root);
        if (!std::filesystem::is_regular_file(file, ec))
          throw detail::images::no_such_file(root, name);
        files.push_back(std::move(file));
      }
      detail::images::refuse_duplicates(options.files, files);
    }

    /// files x repeat samples must be counted by the loader's int64 indices.
    void check_sample_count() const {
      const auto most = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
      if (static_cast<std::size_t>(options.repeat) > most / files.size())
        throw std::invalid_argument("ImageFolder: repeat " + std::to_string(options.repeat) +
                                    " times " + std::to_string(files.size()) +
                                    " files is more samples than an int64 counts (" +
                                    std::to_string(most) + ")");
    }

    /// Every image prepared now, once their sum (from the headers) fits memory_limit.
    void cache_all(double bytes) {
      if (options.memory_limit > 0 && bytes > options.memory_limit)
        throw std::invalid_argument(
            "ImageFolder: the cache of " + std::to_string(files.size()) + " images needs " +
            detail::images::gib_text(bytes) + ", more than memory_limit (" +
            detail::images::gib_text(options.memory_limit) + "); set cache: false");
      for (std::size_t i = 0; i < files.size(); ++i) cached.push_back(prepare(i));
    }

    /// Each file's LR image: the same path under lr_root, its stem + lr_suffix, with the
    /// file's extension or another image one.
    void pair_files() {
      std::error_code ec;
      if (!std::filesystem::is_directory(options.lr_root, ec))
        throw std::invalid_argument("ImageFolder: lr_root '" + options.lr_root.string() +
                                    "' is not a folder");
      for (const auto& file : files) {
        const auto relative = file.lexically_relative(options.root);
        const auto stem = relative.parent_path() / (relative.stem().string() + options.lr_suffix);
        std::filesystem::path found;
        for (const auto& ext : {relative.extension().string(), std::string(".png"),
                                std::string(".jpg"), std::string(".jpeg")}) {
          auto candidate = options.lr_root / stem;
          candidate += ext;
          if (std::filesystem::is_regular_file(candidate, ec)) {
            found = std::move(candidate);
            break;
          }
        }
        if (found.empty())
          throw std::invalid_argument("ImageFolder: no LR image '" + stem.string() +
                                      ".{png,jpg,jpeg}' under lr_root '" +
                                      options.lr_root.string() + "' for '" + file.string() + "'");
        lr_files.push_back(std::move(found));
      }
    }

    /// An LR image must be its HR image's size divided by scale (rounded down).
    void check_pair(std::size_t index, const image_info& high, const image_info& low) const {
      check_depth(lr_files[index], low);
      const auto s = options.scale;
      if (low.width != high.width / s || low.height != high.height / s)
        throw image_error(lr_files[index],
                          "is " + std::to_string(low.width) + " x " + std::to_string(low.height) +
                              " pixels, but its HR image '" + files[index].string() + "' is " +
                              std::to_string(high.width) + " x " + std::to_string(high.height) +
                              ": expected " + std::to_string(high.width / s) + " x " +
                              std::to_string(high.height / s) + " at scale " + std::to_string(s));
    }

    void check_depth(const std::filesystem::path& file, const image_info& info) const {
      if (options.bit_depth != 0 && info.bit_depth != options.bit_depth)
        throw image_error(file, "has " + std::to_string(info.bit_depth) +
                                    " bits per sample, but bit_depth is " +
                                    std::to_string(options.bit_depth));
    }

    /// `file`'s header against the options: bit depth, size (at least the patch, at most
    /// max_pixels) and the memory preparing it takes.
    void check(const std::filesystem::path& file, const image_info& info) const {
      check_depth(file, info);
      detail::images::check_image_size(file, info.width, info.height, limits());
      const auto size = detail::images::size_text(info);
      const auto need = std::max(options.patch, options.scale);
      const auto h = info.height / options.scale * options.scale;
      const auto w = info.width / options.scale * options.scale;
      if (h < need || w < need)
        throw image_error(file, "is " + size + " pixels, smaller than " +
                                    (options.patch > 0 ? "the patch, " : "the scale, ") +
                                    std::to_string(need) + " x " + std::to_string(need));
      const double bytes =
          detail::images::working_bytes(info, channels(), options.scale, options.bicubic);
      if (options.memory_limit > 0 && bytes > options.memory_limit)
        throw image_error(file, "is " + size + " pixels, which take " +
                                    detail::images::gib_text(bytes) +
                                    " to prepare, more than memory_limit (" +
                                    detail::images::gib_text(options.memory_limit) + ")");
    }

    image_limits limits() const { return {.max_pixels = options.max_pixels}; }

    /// Image `index` read, checked and made ready to cut; whatever fails names the file.
    prepared prepare(std::size_t index) const {
      const auto& file = files[index];
      const auto doing = "preparing it, " + detail::images::size_text(infos[index]) + " pixels";
      return detail::images::naming_file(file, doing, [&] { return prepare_image(index); });
    }

    /// HR, and with scale >= 2 its LR (lr_root's file, or HR reduced) and, with
    /// options.bicubic, its bicubic baseline.
    prepared prepare_image(std::size_t index) const {
      image_info info;
      const auto pixels = read_image(files[index], &info, limits());
      check(files[index], info);  // the file may have changed since the constructor read it
      prepared p;
      auto image = to_color(to_unit_range(pixels, info.bit_depth), options.color);
      if (options.scale == 1) {
        p.high = image.contiguous();
        return p;
      }
      p.high = crop_to_multiple(image, options.scale).contiguous();
      if (lr_files.empty()) {
        p.lr = quantize(bicubic_downscale(p.high, options.scale), info.bit_depth);
      } else {
        image_info low;
        const auto lr_pixels = read_image(lr_files[index], &low, limits());
        check_pair(index, info, low);
        p.lr = to_color(to_unit_range(lr_pixels, low.bit_depth), options.color).contiguous();
      }
      if (options.bicubic) p.bicubic = bicubic_upscale(p.lr, options.scale);
      return p;
    }
  };

  std::shared_ptr<const shared> shared_;
};

inline std::optional<image_extent> ImageFolder::smallest(std::string_view field) const {
  const auto& o = shared_->options;
  const bool low = field == "input";
  const bool high = field == "target" || (field == "bicubic" && o.bicubic);
  if (!low && (o.scale == 1 || !high)) return std::nullopt;
  const auto divide = low ? o.scale : 1;
  if (o.patch > 0) return image_extent{{}, o.patch / divide, o.patch / divide};
  std::optional<image_extent> best;
  for (std::size_t i = 0; i < shared_->files.size(); ++i) {
    const auto& info = shared_->infos[i];
    const auto w = info.width / o.scale * o.scale / divide;
    const auto h = info.height / o.scale * o.scale / divide;
    if (!best || std::min(w, h) < std::min(best->width, best->height))
      best = image_extent{shared_->files[i], w, h};
  }
  return best;
}

}  // namespace hookforge
