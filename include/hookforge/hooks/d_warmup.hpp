// hookforge/hooks/d_warmup.hpp — DWarmup: the first `batches` batches of a GAN run train
// the discriminator (D) only, so the generator (G) first meets a D that has learned something.
//
//   GANTrainingRunner runner{d_opt, g_opt, {}, hookforge::DWarmup{500}};
//   GANTrainingRunner runner{d_opt, g_opt, {}, hookforge::StepRatio{0.5}, hookforge::DWarmup{500}};
//
// At on_pre_step it clears ctx.run_g while ctx.global_step < batches. global_step counts the
// run's batches (not the epoch's) and is restored with the runner's state, so the warm-up
// spans epochs and ends at the same batch after a resume; the hook keeps no state. It only
// vetoes G: ctx.run_d is left as the runner (or StepRatio) set it. Its priority is
// ABOVE_NORMAL, after StepRatio (HIGH), whose schedule it overrides during the warm-up.
//
// Binds to on_pre_step of any context with run_g and global_step (GANContext, or a user's
// adversarial runner with those fields).
#pragma once

#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"

namespace hookforge {

struct d_warmup_options {
  std::int64_t batches =
      0;  ///< >= 0: the run's first `batches` batches update D only (0: no warm-up)
};

class DWarmup {
 public:
  static constexpr int priority = priority::ABOVE_NORMAL;

  explicit DWarmup(d_warmup_options options) : options_(options) {
    if (options_.batches < 0)
      throw std::invalid_argument(
          fmt::format("DWarmup: batches must be >= 0, got {}", options_.batches));
  }
  explicit DWarmup(std::int64_t batches) : DWarmup(d_warmup_options{.batches = batches}) {}

  /// What hold_generator reads and sets on a context: the first field it lacks ("" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    return gan_schedule_lacks<C>();
  }

  template <context_for<DWarmup> C>
  void hold_generator(C& ctx) {
    if (static_cast<std::int64_t>(ctx.global_step) < options_.batches) ctx.run_g = false;
  }

  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(hold_generator, points::on_pre_step));

  /// Is the run's batch `global_step` (0-based) still in the warm-up?
  bool warming_up(std::int64_t global_step) const { return global_step < options_.batches; }
  const d_warmup_options& options() const { return options_; }

 private:
  d_warmup_options options_;
};

}  // namespace hookforge
