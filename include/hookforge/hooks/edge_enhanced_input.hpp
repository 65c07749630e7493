// hookforge/hooks/edge_enhanced_input.hpp — EdgeEnhancedInput: appends a Sobel edge-magnitude
// channel to an image field before the model sees it.
//
//   TrainingEpochRunner train{optimizer, {}, hookforge::EdgeEnhancedInput{}};       // "input": C
//   -> C + 1 GANTrainingRunner gan{d_opt, g_opt, {}, hookforge::EdgeEnhancedInput{{.field =
//   "lr"}}};
//
// At on_pre_step (after the batch is on the device, before the forward) the field, a
// floating-point [N, C, H, W] batch, becomes cat({field, edges}, dim 1), where
//   gray   = mean of the field over its channels                    [N, 1, H, W]
//   gx, gy = 3x3 Sobel cross-correlations of gray, with replicate padding (size kept):
//            gx kernel [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], gy its transpose
//   edges  = sqrt(gx^2 + gy^2 + eps)
// computed on the field's device in its dtype, without a host read and without cutting the
// autograd graph. The hook keeps no state.
//
// Runners: TrainingEpochRunner and GANTrainingRunner (their on_pre_step). The inference
// runners (InferenceRunner, ValidationEpochRunner, BenchmarkRunner) have no point before
// their forward, so a model trained with this hook must get the channel there another way:
// call hookforge::append_edge_channel(batch, "input") in the dataset or a wrapper of the
// model (the same function the hook calls), or sobel_edge_magnitude() on a tensor.
#pragma once

#include <cmath>
#include <concepts>
#include <stdexcept>
#include <string>
#include <utility>
#include <string_view>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/data/entry.hpp"

namespace hookforge {

/// sqrt(gx^2 + gy^2 + eps) of the channel mean of `images` ([N, C, H, W], floating point):
/// 3x3 Sobel, replicate padding, so the result is [N, 1, H, W] on the same device and dtype.
inline torch::Tensor sobel_edge_magnitude(const torch::Tensor& images, double eps = 1e-6) {
  if (!images.defined() || images.dim() != 4 || !images.is_floating_point())
    throw std::invalid_argument(fmt::format(
        "sobel_edge_magnitude: the images must be a floating-point [N, C, H, W] tensor, got {}",
        images.defined()
            ? fmt::format("a {}-d {} tensor", images.dim(), c10::toString(images.scalar_type()))
            : std::string("an undefined tensor")));
  auto gray = images.mean(1, /*keepdim=*/true);
  auto padded = torch::replication_pad2d(gray, {1, 1, 1, 1});
  auto kx =
      torch::tensor({-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0},
                    torch::TensorOptions().dtype(images.scalar_type()).device(images.device()))
          .view({1, 1, 3, 3});
  auto kernels = torch::cat({kx, kx.transpose(2, 3)}, 0);  // [2, 1, 3, 3]: gx, gy
  auto g = torch::conv2d(padded, kernels);                 // [N, 2, H, W]
  return (g.pow(2).sum(1, /*keepdim=*/true) + eps).sqrt();
}

/// Replaces batch[field] ([N, C, H, W]) by cat({field, sobel_edge_magnitude(field, eps)}, 1).
inline void append_edge_channel(Entry& batch, const std::string& field, double eps = 1e-6) {
  auto& images = batch.at(field);
  images = torch::cat({images, sobel_edge_magnitude(images, eps)}, 1);
}

struct edge_enhanced_input_options {
  std::string field = "input";  ///< the image field (non-empty) that gains the edge channel
  double eps = 1e-6;            ///< >= 0, finite: added under the square root
};

class EdgeEnhancedInput {
 public:
  static constexpr int priority = priority::NORMAL;

  explicit EdgeEnhancedInput(edge_enhanced_input_options options = {})
      : options_(std::move(options)) {
    if (options_.field.empty())
      throw std::invalid_argument("EdgeEnhancedInput: field must be a field name, got \"\"");
    if (!(options_.eps >= 0) || !std::isfinite(options_.eps))
      throw std::invalid_argument(
          fmt::format("EdgeEnhancedInput: eps must be a finite number >= 0, got {}", options_.eps));
  }

  /// What append_edges reads from a context: its `entry` ("" when it has one).
  template <class C>
  static consteval std::string_view context_lacks() {
    if constexpr (!requires(C& c) { static_cast<Entry&>(c.entry); }) return "entry (an Entry)";
    return "";
  }

  template <context_for<EdgeEnhancedInput> C>
  void append_edges(C& ctx) {
    try {
      append_edge_channel(ctx.entry, options_.field, options_.eps);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(
          fmt::format("EdgeEnhancedInput: field '{}': {}", options_.field, e.what()));
    }
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(append_edges, points::on_pre_step));

  const edge_enhanced_input_options& options() const { return options_; }

 private:
  edge_enhanced_input_options options_;
};

}  // namespace hookforge
