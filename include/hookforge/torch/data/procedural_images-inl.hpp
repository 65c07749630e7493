// hookforge/torch/data/procedural_images-inl.hpp — the drawing of ProceduralImages and its
// get(): included by procedural_images.hpp header-only, compiled into
// hookforge::torch_compiled otherwise (core/build_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/nn/functional/upsampling.h>
#include <torch/types.h>

#include "hookforge/torch/data/collate.hpp"
#include "hookforge/torch/data/dataset.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/procedural_images.hpp"
#include "hookforge/torch/data/splitmix64.hpp"

namespace hookforge {

HOOKFORGE_INLINE void procedural_images_options::validate() const {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("ProceduralImages: " + what);
  };
  if (count < 1) fail("count must be >= 1, got " + std::to_string(count));
  if (scale < 2) fail("scale must be >= 2, got " + std::to_string(scale));
  if (size < scale || size % scale != 0)
    fail("size must be a positive multiple of scale " + std::to_string(scale) + ", got " +
         std::to_string(size));
}

namespace detail::procedural {

struct vec2 {
  double x = 0, y = 0;
};
inline vec2 operator-(vec2 a, vec2 b) { return {a.x - b.x, a.y - b.y}; }
inline vec2 operator*(vec2 a, double s) { return {a.x * s, a.y * s}; }
inline double dot(vec2 a, vec2 b) { return a.x * b.x + a.y * b.y; }
inline double length(vec2 a) { return std::sqrt(dot(a, a)); }
/// `p` in the frame of a shape centred at `c` and turned by the angle whose cosine and
/// sine are `cs`, `sn`.
inline vec2 to_local(vec2 p, vec2 c, double cs, double sn) {
  const vec2 d = p - c;
  return {cs * d.x + sn * d.y, -sn * d.x + cs * d.y};
}

/// How a shape is filled: its intensity at a point.
struct fill {
  enum kind_t { flat, grating, checker } kind = flat;
  double lo = 0, hi = 0;         // flat: lo; textures: between lo and hi
  double cs = 1, sn = 0;         // the texture's orientation
  double period = 8, phase = 0;  // in pixels; radians

  double operator()(vec2 p) const {
    constexpr double pi = 3.14159265358979323846;
    if (kind == flat) return lo;
    const double u = cs * p.x + sn * p.y, v = -sn * p.x + cs * p.y;
    if (kind == grating)
      return lo + (hi - lo) * (0.5 + 0.5 * std::sin(2 * pi * u / period + phase));
    // A checkerboard of period/2 cells whose edges ramp over about one pixel: sin's slope at
    // a zero crossing is 2 pi / period per pixel, so scaling by period / (2 pi) makes it one.
    auto square = [&](double t) {
      return std::clamp(std::sin(2 * pi * t / period + phase) * period / pi, -1.0, 1.0);
    };
    return lo + (hi - lo) * (0.5 + 0.5 * square(u) * square(v));
  }
};

/// Signed distance (pixels, negative inside) to a polygon, exact (Inigo Quilez's sdPolygon).
inline double polygon_distance(vec2 p, const std::vector<vec2>& v) {
  double d = dot(p - v[0], p - v[0]);
  double s = 1;
  for (std::size_t i = 0, j = v.size() - 1; i < v.size(); j = i, ++i) {
    const vec2 e = v[j] - v[i], w = p - v[i];
    const vec2 b = w - e * std::clamp(dot(w, e) / dot(e, e), 0.0, 1.0);
    d = std::min(d, dot(b, b));
    const bool c1 = p.y >= v[i].y, c2 = p.y<v[j].y, c3 = e.x * w.y> e.y * w.x;
    if ((c1 && c2 && c3) || (!c1 && !c2 && !c3)) s = -s;
  }
  return s * std::sqrt(d);
}

/// Distance from `p` to the segment [a, b].
inline double segment_distance(vec2 p, vec2 a, vec2 b) {
  const vec2 e = b - a, w = p - a;
  return length(w - e * std::clamp(dot(w, e) / std::max(dot(e, e), 1e-12), 0.0, 1.0));
}

class canvas {
 public:
  explicit canvas(int side) : side_(side), pixels_(static_cast<std::size_t>(side) * side) {}

  /// Paint `fill` where `distance` (signed, pixels) is inside, with `opacity`, over the
  /// pixels within `reach` of `centre`; a pixel's coverage is 0.5 - distance, in [0, 1].
  template <class Distance, class Fill>
  void paint(vec2 centre, double reach, Distance distance, const Fill& fill, double opacity) {
    const int x0 = std::max(0, static_cast<int>(std::floor(centre.x - reach - 1)));
    const int y0 = std::max(0, static_cast<int>(std::floor(centre.y - reach - 1)));
    const int x1 = std::min(side_, static_cast<int>(std::ceil(centre.x + reach + 1)));
    const int y1 = std::min(side_, static_cast<int>(std::ceil(centre.y + reach + 1)));
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        const vec2 p{x + 0.5, y + 0.5};
        const double coverage = std::clamp(0.5 - distance(p), 0.0, 1.0);
        if (coverage <= 0) continue;
        float& pixel = pixels_[static_cast<std::size_t>(y) * side_ + x];
        pixel = static_cast<float>(pixel + opacity * coverage * (fill(p) - pixel));
      }
  }

  float* data() { return pixels_.data(); }
  int side() const { return side_; }

 private:
  int side_;
  std::vector<float> pixels_;
};

inline fill random_fill(splitmix64& rng, double flat_share) {
  fill f;
  const double pick = rng.uniform();
  f.kind = pick < flat_share                          ? fill::flat
           : pick < flat_share + (1 - flat_share) / 2 ? fill::grating
                                                      : fill::checker;
  f.lo = rng.uniform();
  f.hi = f.kind == fill::flat ? f.lo : rng.uniform();
  const double angle = rng.uniform(0, 3.14159265358979323846);
  f.cs = std::cos(angle);
  f.sn = std::sin(angle);
  f.period = rng.uniform(4, 14);
  f.phase = rng.uniform(0, 6.28318530717958647692);
  return f;
}

/// Image `index` of `seed`, side x side pixels, row-major, values in [0, 1].
inline std::vector<float> draw(std::uint64_t seed, std::uint64_t index, int side) {
  constexpr double pi = 3.14159265358979323846;
  splitmix64 rng(detail::mix64(detail::mix64(seed) ^ index));
  canvas image(side);
  const double s = side;
  const vec2 middle{s / 2, s / 2};

  // Background: a linear gradient, sometimes with a faint grating over it.
  {
    const double base = rng.uniform(0.25, 0.75), slope = rng.uniform(-0.5, 0.5);
    const double angle = rng.uniform(0, 2 * pi), cs = std::cos(angle), sn = std::sin(angle);
    fill grating = random_fill(rng, 0);
    grating.kind = fill::grating;
    const double amplitude = rng.uniform() < 0.5 ? rng.uniform(0.03, 0.12) : 0.0;
    float* px = image.data();
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        const vec2 p{x + 0.5, y + 0.5};
        const vec2 d = p - middle;
        const double wave = std::sin(
            2 * pi * (grating.cs * p.x + grating.sn * p.y) / grating.period + grating.phase);
        px[y * side + x] =
            static_cast<float>(base + slope * (cs * d.x + sn * d.y) / s + amplitude * wave);
      }
  }

  // Shapes.
  const int shapes = 3 + rng.below(5);
  for (int k = 0; k < shapes; ++k) {
    const int type = rng.below(4);
    const fill f = random_fill(rng, 0.5);
    const double opacity = rng.uniform() < 0.75 ? 1.0 : rng.uniform(0.5, 1.0);
    const vec2 c{rng.uniform(-0.1, 1.1) * s, rng.uniform(-0.1, 1.1) * s};
    const double angle = rng.uniform(0, pi), cs = std::cos(angle), sn = std::sin(angle);
    const double a = rng.uniform(0.06, 0.3) * s, b = rng.uniform(0.06, 0.3) * s;
    if (type == 0) {  // rotated rectangle, half-sides a and b
      image.paint(
          c, std::hypot(a, b),
          [&](vec2 p) {
            const vec2 q = to_local(p, c, cs, sn);
            const double qx = std::abs(q.x) - a, qy = std::abs(q.y) - b;
            return std::hypot(std::max(qx, 0.0), std::max(qy, 0.0)) +
                   std::min(std::max(qx, qy), 0.0);
          },
          f, opacity);
    } else if (type == 1) {  // rotated ellipse, radii a and b: first-order distance g / |grad g|
      image.paint(
          c, std::max(a, b),
          [&](vec2 p) {
            const vec2 q = to_local(p, c, cs, sn);
            const double ux = q.x / a, uy = q.y / b, r = std::hypot(ux, uy);
            if (r < 1e-9) return -std::min(a, b);
            const double grad = std::hypot(ux / a, uy / b) / r;
            return (r - 1) / grad;
          },
          f, opacity);
    } else {  // triangle, or a star-shaped polygon of 5 to 7 vertices
      const int n = type == 2 ? 3 : 5 + rng.below(3);
      std::vector<vec2> vertices;
      double reach = 0;
      for (int i = 0; i < n; ++i) {
        const double t = angle + 2 * pi * (i + rng.uniform(-0.3, 0.3)) / n;
        const double r =
            std::max(a, b) * (type == 2 ? rng.uniform(0.7, 1.0) : rng.uniform(0.45, 1.0));
        vertices.push_back({c.x + r * std::cos(t), c.y + r * std::sin(t)});
        reach = std::max(reach, r);
      }
      image.paint(c, reach, [&](vec2 p) { return polygon_distance(p, vertices); }, f, opacity);
    }
  }

  // Lines.
  const int lines = 1 + rng.below(4);
  for (int k = 0; k < lines; ++k) {
    const fill f{.kind = fill::flat, .lo = rng.uniform()};
    const vec2 p0{rng.uniform() * s, rng.uniform() * s}, p1{rng.uniform() * s, rng.uniform() * s};
    const double half_width = rng.uniform(0.5, 1.25);
    const vec2 c{(p0.x + p1.x) / 2, (p0.y + p1.y) / 2};
    image.paint(
        c, length(p1 - p0) / 2 + half_width,
        [&](vec2 p) { return segment_distance(p, p0, p1) - half_width; }, f, 1.0);
  }

  std::vector<float> out(image.data(), image.data() + static_cast<std::size_t>(side) * side);
  for (float& v : out) v = std::clamp(v, 0.0f, 1.0f);
  return out;
}

}  // namespace detail::procedural

HOOKFORGE_INLINE ProceduralImages::ProceduralImages(procedural_images_options options)
    : options_(options) {
  options_.validate();
  if (!options_.cache) return;
  // Allocated whole before anything is drawn (memory that is not there fails at once),
  // then filled in place.
  const Entry first = draw(0);
  Entry kept;
  for (const auto& [field, tensor] : first) {
    auto sizes = tensor.sizes().vec();
    sizes.insert(sizes.begin(), static_cast<std::int64_t>(size()));
    kept.set(field, torch::empty(sizes, tensor.options()));
  }
  for (std::size_t i = 0; i < size(); ++i) {
    const Entry sample = i == 0 ? first : draw(i);
    for (const auto& [field, all] : kept) all[static_cast<std::int64_t>(i)].copy_(sample.at(field));
  }
  cached_ = std::make_shared<const Entry>(std::move(kept));
}

HOOKFORGE_INLINE Entry ProceduralImages::get(std::size_t index) const {
  if (index >= size())
    throw std::out_of_range("ProceduralImages::get: index " + std::to_string(index) +
                            " out of range for " + std::to_string(size()) + " samples");
  if (!cached_) return draw(index);
  Entry sample;
  for (const auto& [field, all] : *cached_)
    sample.set(field, all[static_cast<std::int64_t>(index)]);
  return sample;
}

HOOKFORGE_INLINE Entry ProceduralImages::get_batch(std::span<const std::size_t> indices) const {
  if (cached_) return detail::gather_rows(*cached_, indices, size(), "ProceduralImages::get_batch");
  return detail::stack_samples(indices, [this](std::size_t i) { return get(i); });
}

HOOKFORGE_INLINE Entry ProceduralImages::draw(std::size_t index) const {
  const auto side = options_.size, scale = options_.scale;
  const auto pixels = detail::procedural::draw(options_.seed, index, static_cast<int>(side));
  auto target =
      torch::from_blob(const_cast<float*>(pixels.data()), {1, side, side}, torch::kFloat).clone();
  auto input = torch::avg_pool2d(target, {scale, scale});
  if (!options_.bicubic) return Entry{{"input", input}, {"target", target}};
  namespace F = torch::nn::functional;
  auto bicubic = F::interpolate(input.unsqueeze(0), F::InterpolateFuncOptions()
                                                        .size(std::vector<std::int64_t>{side, side})
                                                        .mode(torch::kBicubic)
                                                        .align_corners(false))
                     .squeeze(0)
                     .clamp(0.0, 1.0);
  return Entry{{"input", input}, {"target", target}, {"bicubic", bicubic}};
}

}  // namespace hookforge
