// hookforge/torch/data/procedural_images.hpp — a super-resolution dataset drawn on the fly:
// grayscale images in [0, 1] made of a background gradient, filled shapes, lines and
// textures, each a function of (seed, index) alone.
//
//   hookforge::ProceduralImages data({.count = 512, .size = 48, .scale = 2, .seed = 1});
//   hookforge::Entry sample = data.get(7);
//   sample.at("target");    // [1, 48, 48]  the high-resolution image (HR)
//   sample.at("input");     // [1, 24, 24]  HR downscaled by `scale`: the mean of each
//                           //              scale x scale block (box / area downscaling)
//   sample.at("bicubic");   // [1, 48, 48]  the input upscaled back to HR size, bicubic
//                           //              (torch, align_corners = false), clamped to [0, 1]
//
// "bicubic" is the baseline validation measures a model against; training reads only input and
// target, so a training set can leave it out (`.bicubic = false`): nothing is drawn, kept or
// gathered for it, and the checks made before training name it if something reads it.
//
// Sample i is drawn with a splitmix64 generator seeded from (seed, i) — never torch's global
// generator — so get(i) gives the same tensors whatever was drawn before and is safe to
// call from several threads at once (a DataLoader's workers). Each image, drawn at HR:
//   - a linear gradient in a random direction, sometimes with a faint sinusoidal grating;
//   - 3 to 7 filled shapes, painted in order: rotated rectangles, ellipses, triangles and
//     star-shaped polygons, each filled with one intensity, a sinusoidal grating or a
//     checkerboard (periods of 4 to 14 pixels), mostly opaque;
//   - 1 to 4 line segments, 1 to 2.5 pixels wide.
// Edges are anti-aliased by coverage (the signed distance to the edge, clamped to one pixel
// of ramp), so the images have sharp but not aliased detail that bicubic upscaling blurs.
// An image takes about a quarter of a millisecond to draw at 48 x 48, so by default it is
// drawn again at each get() and nothing is kept. With `cache`, every sample is drawn once,
// when the dataset is built, and kept (input, target and bicubic: 2.25 size^2 floats per
// sample, 85 MB for 4096 samples of 48 x 48; 47 MB without bicubic); get() then returns views of
// the kept images, as tensor_dataset does, and writing into a sample writes into the
// dataset. The loader gathers a batch from the kept images at once (get_batch): one copy,
// one index_select per field. Without the cache, the default job spends about a fifth of
// each epoch drawing (docs/benchmarks.md, "The whole job").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

struct procedural_images_options {
  std::int64_t count = 256;  ///< number of samples, >= 1
  std::int64_t size = 48;    ///< side of the HR image in pixels, a multiple of scale
  std::int64_t scale = 2;    ///< downscaling factor from HR to the input, >= 2
  std::uint64_t seed = 0;    ///< the samples are a function of (seed, index) only
  bool cache = false;        ///< draw every sample once, at construction, and keep it
  bool bicubic = true;       ///< samples carry "bicubic", the baseline (false: input, target)

  /// std::invalid_argument naming the first option out of range.
  void validate() const;

  /// The bytes `cache` keeps (0 without it): every sample's fields, float32. A double: a
  /// config may ask for more than a size_t holds.
  double cached_bytes() const {
    if (!cache) return 0;
    const double side = static_cast<double>(size), low = side / static_cast<double>(scale);
    const double high_images = bicubic ? 2 : 1;  // target, and bicubic
    return static_cast<double>(count) * (high_images * side * side + low * low) * sizeof(float);
  }
};

/// See the top of this file. Satisfies `hookforge::dataset`.
class ProceduralImages {
 public:
  /// Draws every sample here when options.cache is set.
  explicit ProceduralImages(procedural_images_options options = {});

  std::size_t size() const noexcept { return static_cast<std::size_t>(options_.count); }

  /// {"input": [1, size/scale, size/scale], "target": [1, size, size], "bicubic": [1, size,
  /// size] (unless options.bicubic is false)}, float32 on the CPU, in [0, 1]. Throws
  /// std::out_of_range past the end.
  Entry get(std::size_t index) const;
  /// The samples at `indices`, each field [B, 1, ...]: gathered from the cache with one
  /// index_select per field, or drawn and stacked without it. std::out_of_range past the end.
  Entry get_batch(std::span<const std::size_t> indices) const;
  /// The fields of every sample, for the checks made before training.
  std::vector<std::string> field_names() const {
    if (!options_.bicubic) return {"input", "target"};
    return {"input", "target", "bicubic"};
  }

  const procedural_images_options& options() const noexcept { return options_; }

 private:
  Entry draw(std::size_t index) const;

  procedural_images_options options_;
  /// With options.cache: every sample's fields stacked, [count, 1, side, side]; shared by
  /// copies of the dataset (it never changes after construction).
  std::shared_ptr<const Entry> cached_;
};

}  // namespace hookforge

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/data/procedural_images-inl.hpp"
#endif
