// hookforge/images/image_folder_options.hpp — what an ImageFolder (image_folder.hpp) reads and
// how it cuts its samples: the options, designated-initialiser friendly, and their ranges.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "hookforge/images/color.hpp"
#include "hookforge/images/image_limits.hpp"

namespace hookforge {

struct image_folder_options {
  std::filesystem::path root;            ///< required: the folder the images are under
  std::vector<std::string> files = {};   ///< paths under root to take, in order; empty: all
  image_color color = image_color::rgb;  ///< rgb (3 channels), gray or y (1 channel)
  std::int64_t repeat = 1;               ///< >= 1: samples per file and epoch (patches)
  std::int64_t scale = 1;                ///< >= 1; from 2, super-resolution pairs
  bool bicubic = true;                   ///< from scale 2, samples carry the "bicubic" baseline
  std::int64_t patch = 0;         ///< side of the HR patches, a multiple of scale; 0: whole images
  bool flip = false;              ///< random left-right and up-down flips of the patches
  bool rotate = false;            ///< random transposition of the patches (90-degree rotations)
  bool cache = false;             ///< keep the decoded images in memory
  std::int64_t bit_depth = 0;     ///< 8 or 16: every file must have it; 0: either
  std::uint64_t seed = 0;         ///< patches and flips are a function of (seed, epoch, index)
  std::string missing_hint = {};  ///< added to the message when root does not exist
  std::filesystem::path lr_root = {};  ///< paired LR files, matched by name; empty: reduce HR
  std::string lr_suffix = {};          ///< an LR file's stem is its HR file's plus this ("x2")
  std::int64_t max_pixels = default_max_pixels;  ///< width x height of a file, at most
  double memory_limit = 0;  ///< bytes an image (prepared) and the cache may take; 0: unchecked
  bool files_outside_root = false;  ///< `files` may name paths outside root

  /// std::invalid_argument naming the first option out of range.
  void validate() const {
    auto fail = [](const std::string& what) {
      throw std::invalid_argument("ImageFolder: " + what);
    };
    if (root.empty()) fail("root must be given");
    if (repeat < 1) fail("repeat must be >= 1, got " + std::to_string(repeat));
    if (scale < 1) fail("scale must be >= 1, got " + std::to_string(scale));
    if (patch < 0 || patch % scale != 0)
      fail("patch must be 0 (whole images) or a positive multiple of scale " +
           std::to_string(scale) + ", got " + std::to_string(patch));
    if (bit_depth != 0 && bit_depth != 8 && bit_depth != 16)
      fail("bit_depth must be 0 (any), 8 or 16, got " + std::to_string(bit_depth));
    if ((flip || rotate) && patch == 0)
      fail("flip and rotate need patch > 0 (whole images are evaluated as they are)");
    if (max_pixels < 1) fail("max_pixels must be >= 1, got " + std::to_string(max_pixels));
    if (!(memory_limit >= 0)) fail("memory_limit must be >= 0 bytes (0: unchecked)");
    if (!lr_root.empty() && scale < 2)
      fail("lr_root needs scale >= 2 (the factor between its images and root's), got " +
           std::to_string(scale));
  }
};

}  // namespace hookforge
