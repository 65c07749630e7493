// hookforge/hooks/r1_gradient_penalty.hpp — R1GradientPenalty: the R1 regulariser of a
// GAN's discriminator (Mescheder et al. 2018), a gradient penalty on real samples.
//
//   GANTrainingRunner runner{d_opt, g_opt, {}, hookforge::R1GradientPenalty{10.0}};
//   hookforge::R1GradientPenalty{{.weight = 10, .interval = 16}}   // StyleGAN2's lazy R1
//   hookforge::R1GradientPenalty{{.weight = 1, .reduction = hookforge::r1_reduction::mean}}
//
// At on_post_d_forward it adds to ctx.d_extra_losses (under `name`, default "r1"; scored
// as "d.r1"):
//   weight / 2 * E_batch[ ||grad_x D(x)||^2 ]        x: the real sample (ctx.real_field)
// weight is the γ of the papers. ||.||^2 sums the squared input gradient over each sample's
// elements (reduction sum, the paper's definition) or averages it (reduction mean, SR-Forge's
// choice: the weight then does not depend on the resolution); E is the mean over the batch.
//
// D is run again for this, on a detached copy of the real sample that requires grad,
// through ctx.discriminate (the runner's own call: the sample as "input" plus the batch's
// discriminator_fields), and the input gradient is taken with create_graph, so the D loss's
// backward reaches D's parameters through it. D runs in train mode as in the D phase (a
// BatchNorm in D sees one more batch; use it with care). The penalty is computed wherever
// the runner fires on_post_d_forward (inside autocast under mixed precision); the squared
// gradient is summed in float32.
//
// Lazy regularisation (`interval` k > 1, StyleGAN2): the penalty is computed on the D
// phases 0, k, 2k, … that this hook sees, multiplied by k, so its average weight stays
// `weight` while D's extra forward and double backward run k times less often. The count
// of D phases is the hook's state (state_dict {"d_phases"}, key "R1GradientPenalty"), so
// the schedule continues exactly after a resume. No host read.
//
// Binds to on_post_d_forward of any context with entry, real_field, discriminate and
// d_extra_losses (GANContext's fields).
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <torch/autograd.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/io/state_map.hpp"

namespace hookforge {

/// How R1GradientPenalty reduces a sample's squared input gradient.
enum class r1_reduction {
  sum,   ///< sum over the sample's elements: ||grad||^2 (the paper's R1)
  mean,  ///< mean over them: independent of the resolution
};

struct r1_options {
  double weight = 10.0;       ///< γ (> 0): the penalty is weight / 2 * E||grad_x D(x)||^2
  std::int64_t interval = 1;  ///< >= 1: computed every `interval` D phases, scaled by it
  r1_reduction reduction = r1_reduction::sum;
  std::string name = "r1";  ///< the term's name in ctx.d_extra_losses (non-empty)
};

class R1GradientPenalty {
 public:
  static constexpr std::string_view state_key = "R1GradientPenalty";
  static constexpr int priority = priority::NORMAL;

  explicit R1GradientPenalty(r1_options options) : options_(std::move(options)) {
    if (!(options_.weight > 0) || options_.weight == std::numeric_limits<double>::infinity())
      throw std::invalid_argument(fmt::format(
          "R1GradientPenalty: weight must be a finite number > 0, got {}", options_.weight));
    if (options_.interval < 1)
      throw std::invalid_argument(
          fmt::format("R1GradientPenalty: interval must be >= 1, got {}", options_.interval));
    if (options_.name.empty())
      throw std::invalid_argument("R1GradientPenalty: name must be non-empty, got \"\"");
  }
  explicit R1GradientPenalty(double weight = 10.0, std::int64_t interval = 1)
      : R1GradientPenalty(r1_options{.weight = weight, .interval = interval}) {}

  /// What add_penalty reads and calls on a context: the first member it lacks ("" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    if constexpr (!requires(C& c) { c.entry.at(std::string()); }) return "entry";
    if constexpr (!requires(C& c) { c.entry.at(c.real_field); }) return "real_field";
    if constexpr (!requires(C& c, torch::Tensor t) { torch::Tensor(c.discriminate(t)); })
      return "discriminate(tensor)";
    if constexpr (!requires(C& c, torch::Tensor t) { c.d_extra_losses.emplace(std::string(), t); })
      return "d_extra_losses";
    return "";
  }

  template <context_for<R1GradientPenalty> C>
  void add_penalty(C& ctx) {
    const bool due = d_phases_ % options_.interval == 0;
    ++d_phases_;
    if (!due) return;
    if (!static_cast<bool>(ctx.discriminate))
      throw std::logic_error(
          "R1GradientPenalty: the context's discriminate function is empty; the runner "
          "must set it to run D on a real sample");
    last_penalty_ = penalty(ctx.discriminate, ctx.entry.at(ctx.real_field));
    if (!ctx.d_extra_losses.emplace(options_.name, last_penalty_).second)
      throw std::invalid_argument(
          fmt::format("R1GradientPenalty: the D extra losses already have a term '{}'; give this "
                      "hook another name "
                      "(r1_options::name)",
                      options_.name));
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(add_penalty, points::on_post_d_forward));

  /// The penalty term for the discriminator `d` (a sample -> its scores) on `real`:
  /// interval * weight / 2 * mean over the batch of the reduced squared input gradient,
  /// with the graph to d's parameters (create_graph).
  template <class D>
  torch::Tensor penalty(D&& d, const torch::Tensor& real) const {
    if (!real.defined() || !real.is_floating_point())
      throw std::invalid_argument(
          fmt::format("R1GradientPenalty: the real sample must be a floating-point tensor, got {}",
                      real.defined() ? std::string(c10::toString(real.scalar_type()))
                                     : std::string("an undefined tensor")));
    auto x = real.detach().requires_grad_(true);
    torch::Tensor scores;
    {
      torch::AutoGradMode enable_grad(true);
      scores = d(x);
    }
    auto grad =
        torch::autograd::grad({scores.sum()}, {x}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                              /*create_graph=*/true)[0];
    auto squared = grad.to(torch::kFloat).pow(2).reshape({grad.size(0), -1});
    auto per_sample = options_.reduction == r1_reduction::sum ? squared.sum(1) : squared.mean(1);
    return per_sample.mean() * (options_.weight / 2.0 * static_cast<double>(options_.interval));
  }

  /// {"d_phases": the D phases seen so far}.
  state_map state_dict() const { return {{"d_phases", d_phases_}}; }
  void load_state_dict(const state_map& state) { d_phases_ = state.at("d_phases").toInt(); }

  /// D phases seen so far (the penalty was computed on those with index % interval == 0).
  std::int64_t d_phases() const { return d_phases_; }
  /// The last penalty added (undefined before the first).
  const torch::Tensor& last_penalty() const { return last_penalty_; }
  const r1_options& options() const { return options_; }

 private:
  r1_options options_;
  std::int64_t d_phases_ = 0;
  torch::Tensor last_penalty_;
};

}  // namespace hookforge
