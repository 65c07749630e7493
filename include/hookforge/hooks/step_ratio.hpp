// hookforge/hooks/step_ratio.hpp — StepRatio: how often the generator (G) and the
// discriminator (D) of a GAN are updated, as a ratio of G updates to D updates.
//
//   GANTrainingRunner runner{d_opt, g_opt, {}, hookforge::StepRatio{0.5}};   // G every other batch
//   hookforge::StepRatio{2.0}        // G on every batch, D on every other one (D first)
//   hookforge::StepRatio{{.ratio = 1.5}}   // per 3 batches: G 3 times, D 2 times
//
// At on_pre_step it sets ctx.run_d and ctx.run_g from the run's batch counter
// (ctx.global_step, restored with the runner's state), so the schedule is deterministic,
// needs no state of its own and continues exactly across epochs and a resume. A batch
// takes at most one D and one G update, so with ratio r, over the run's first n batches:
//   r <= 1   D on every batch (n updates), G on floor(n * r) of them: batch s (0-based)
//            updates G when floor((s + 1) r) > floor(s r), i.e. G comes after the D steps
//            of its period. r = 1/k is exactly gan_options::step_ratio = k: G when
//            (s + 1) % k == 0.
//   r >= 1   G on every batch, D on ceil(n / r) of them: batch s updates D when
//            ceil((s + 1) / r) > ceil(s / r), i.e. D comes first in its period (batch 0
//            always trains D).
// so G updates / D updates = r, exactly at the end of each period. The ratio is taken as
// the fraction p/q nearest to it with q <= 1'000'000 (0.1 is 1/10, 1.0/3 is 1/3), so the
// pattern repeats exactly every q (r <= 1) or p (r >= 1) batches, with no float drift.
//
// It assigns both flags (it replaces the runner's step_ratio schedule): leave
// gan_options::step_ratio at 1 with it. Its priority is HIGH, so hooks that veto a phase
// at on_pre_step at the default priority (DWarmup, a user's) run after it and win.
// Vetoes by the runner's other points (on_post_d_backward …) are not counted: the schedule
// is in batches, not in updates taken.
//
// Binds to on_pre_step of any context with run_d, run_g and global_step (GANContext, or a
// user's adversarial runner with those fields).
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <string_view>

#include <fmt/format.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"

namespace hookforge {

namespace detail::hooks {

/// The fraction p/q closest to x > 0 with q <= max_denominator (Python's
/// Fraction.limit_denominator: continued fractions, then the better of the last
/// convergent and the best semiconvergent).
inline std::pair<std::int64_t, std::int64_t> nearest_fraction(double x,
                                                              std::int64_t max_denominator) {
  std::int64_t p0 = 0, q0 = 1, p1 = 1, q1 = 0;  // convergents h(-2)/k(-2), h(-1)/k(-1)
  double rest = x;
  for (int i = 0; i < 64; ++i) {
    const double a_real = std::floor(rest);
    if (a_real > 4e12) break;  // x is (nearly) this convergent; the next would overflow
    const auto a = static_cast<std::int64_t>(a_real);
    const std::int64_t q2 = q0 + a * q1;
    if (q2 > max_denominator) break;
    const std::int64_t p2 = p0 + a * p1;
    p0 = p1, q0 = q1, p1 = p2, q1 = q2;
    const double frac = rest - a_real;
    if (frac <= 0 || static_cast<double>(p1) / static_cast<double>(q1) == x) return {p1, q1};
    rest = 1.0 / frac;
  }
  // Semiconvergent with the largest denominator allowed.
  const std::int64_t k = q1 == 0 ? 0 : (max_denominator - q0) / q1;
  const std::int64_t ps = p0 + k * p1, qs = q0 + k * q1;
  const double err_conv = std::abs(static_cast<double>(p1) / static_cast<double>(q1) - x);
  const double err_semi =
      qs > 0 ? std::abs(static_cast<double>(ps) / static_cast<double>(qs) - x) : err_conv;
  if (qs > 0 && ps > 0 && err_semi < err_conv) return {ps, qs};
  return {p1, q1};
}

}  // namespace detail::hooks

struct step_ratio_options {
  /// G updates per D update, on average; in [1e-6, 1e6]. 1: both on every batch.
  double ratio = 1.0;
};

class StepRatio {
 public:
  static constexpr int priority = priority::HIGH;
  static constexpr std::int64_t max_denominator = 1'000'000;

  explicit StepRatio(step_ratio_options options) : options_(options) {
    const double r = options_.ratio;
    if (!(r >= 1e-6 && r <= 1e6))
      throw std::invalid_argument(fmt::format(
          "StepRatio: ratio must be a number in [1e-6, 1e6] (G updates per D update), got {}", r));
    std::tie(numerator_, denominator_) = detail::hooks::nearest_fraction(r, max_denominator);
  }
  explicit StepRatio(double ratio) : StepRatio(step_ratio_options{.ratio = ratio}) {}

  /// What set_phases reads and sets on a context: the first field it lacks ("" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    return gan_schedule_lacks<C>();
  }

  template <context_for<StepRatio> C>
  void set_phases(C& ctx) {
    const auto step = static_cast<std::int64_t>(ctx.global_step);
    ctx.run_d = d_due(step);
    ctx.run_g = g_due(step);
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(set_phases, points::on_pre_step));

  /// Does the run's batch `global_step` (0-based) update D? (r < 1: always.)
  bool d_due(std::int64_t global_step) const {
    if (numerator_ <= denominator_) return true;
    // D count after batches 0..s is ceil((s + 1) q / p); the pattern repeats every p batches.
    const std::int64_t t = global_step % numerator_;
    return ceil_div((t + 1) * denominator_, numerator_) > ceil_div(t * denominator_, numerator_);
  }
  /// Does the run's batch `global_step` (0-based) update G? (r > 1: always.)
  bool g_due(std::int64_t global_step) const {
    if (numerator_ >= denominator_) return true;
    // G count after batches 0..s is floor((s + 1) p / q); the pattern repeats every q batches.
    const std::int64_t t = global_step % denominator_;
    return (t + 1) * numerator_ / denominator_ > t * numerator_ / denominator_;
  }

  /// The ratio as the fraction used: numerator() G updates per denominator() D updates.
  std::int64_t numerator() const { return numerator_; }
  std::int64_t denominator() const { return denominator_; }
  const step_ratio_options& options() const { return options_; }

 private:
  static std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

  step_ratio_options options_;
  std::int64_t numerator_ = 1;
  std::int64_t denominator_ = 1;
};

}  // namespace hookforge
