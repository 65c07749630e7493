// hookforge/hooks/check_invalid_loss.hpp — CheckInvalidLoss: stop at a NaN or infinite loss.
//
//   TrainingEpochRunner train{optimizer, {}, hookforge::CheckInvalidLoss{}};  // every 50 steps
//   hookforge::CheckInvalidLoss{{.interval = 1, .action = hookforge::invalid_loss_action::stop}}
//
// Every `interval` training steps (when (global_step + 1) % interval == 0, counted over
// the run, so it keeps its rhythm across a resume) the loss is read on the host once
// (hookforge::host_read) and checked. A NaN or infinite loss then, by `action`:
//   raise  (default, as MMEngine's CheckInvalidLossHook) throws std::runtime_error naming
//          the loss, its value, the epoch and the batch
//   stop   skips this and every later update of the epoch, sets ctx.stop_training (the
//          trainer stops after the epoch) and reports the message through hookforge::warn
//
// Where it binds: the loss does not exist yet at on_post_forward (the runner evaluates the
// criterion after that point, so that hooks there can add extra losses), and at
// on_post_step the update has already been applied. At on_post_backward (and
// on_post_d_backward / on_post_g_backward on the GAN runner, for d_loss and g_loss) the
// loss exists and the optimiser has not stepped: raising there, or skipping the update,
// leaves the parameters as they were before the bad batch.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>
#include <torch/types.h>

#include "hookforge/core/binding.hpp"
#include "hookforge/core/hook_traits.hpp"
#include "hookforge/core/points.hpp"
#include "hookforge/core/priority.hpp"
#include "hookforge/core/runtime/warning.hpp"
#include "hookforge/torch/runners/context_concepts.hpp"
#include "hookforge/torch/data/host_read.hpp"

namespace hookforge {

/// What CheckInvalidLoss does on a NaN or infinite loss.
enum class invalid_loss_action { raise, stop };

struct check_invalid_loss_options {
  std::int64_t interval = 50;  ///< check every N training steps (>= 1)
  invalid_loss_action action = invalid_loss_action::raise;
};

class CheckInvalidLoss {
 public:
  /// Before GradientClip and the other gradient hooks (NORMAL): the loss is the first thing
  /// to report when a batch goes wrong.
  static constexpr int priority = priority::HIGH;

  explicit CheckInvalidLoss(check_invalid_loss_options options = {}) : options_(options) {
    if (options_.interval < 1)
      throw std::invalid_argument("CheckInvalidLoss: interval must be >= 1, got " +
                                  std::to_string(options_.interval));
  }

  /// What the handlers read from a context: the first field it lacks ("" for none).
  template <class C>
  static consteval std::string_view context_lacks() {
    if (auto lacks = training_lacks<C>(); !lacks.empty()) return lacks;
    if (auto lacks = update_veto_lacks<C>(); !lacks.empty()) return lacks;
    if constexpr (!requires(C& c) { c.global_step; }) return "global_step";
    if constexpr (!requires(C& c) { c.stop_training = true; }) return "stop_training";
    if constexpr (gan_training_context<C>) {
      if constexpr (!requires(C& c) { torch::Tensor(c.d_loss); }) return "d_loss";
      if constexpr (!requires(C& c) { torch::Tensor(c.g_loss); }) return "g_loss";
    } else if constexpr (!requires(C& c) { torch::Tensor(c.loss); }) {
      return "loss";
    }
    return "";
  }

  template <context_for<CheckInvalidLoss> C>
  void reset(C&) {
    tripped_ = false;
  }

  template <context_for<CheckInvalidLoss> C, class Point>
  void check(C& ctx, Point) {
    if (tripped_) {  // stopping: no more updates this epoch
      skip_update(ctx);
      return;
    }
    if ((ctx.global_step + 1) % options_.interval != 0) return;
    if constexpr (single_training_context<C>) {
      inspect(ctx, "loss", ctx.loss);
    } else if constexpr (std::is_same_v<Point, points::on_post_g_backward>) {
      inspect(ctx, "g_loss", ctx.g_loss);
    } else {
      inspect(ctx, "d_loss", ctx.d_loss);
    }
  }

  static constexpr auto bindings = hookforge::bindings(
      HOOKFORGE_HOOKS_INTO(reset, points::on_epoch_start),
      HOOKFORGE_HOOKS_INTO(check, points::on_post_backward, points::on_post_d_backward,
                           points::on_post_g_backward));

  /// The message of the last invalid loss found (empty when none).
  const std::string& last_message() const { return message_; }
  const check_invalid_loss_options& options() const { return options_; }

 private:
  template <class C>
  void inspect(C& ctx, const char* name, const torch::Tensor& loss) {
    if (!loss.defined()) return;
    const double value = host_read(loss.detach());
    if (std::isfinite(value)) return;
    message_ = fmt::format("CheckInvalidLoss: {} is {} at {}", name, value, context_position(ctx));
    if (options_.action == invalid_loss_action::raise) throw std::runtime_error(message_);
    tripped_ = true;
    skip_update(ctx);
    ctx.stop_training = true;
    warn(message_ + "; the update was skipped and training stops after this epoch");
  }

  check_invalid_loss_options options_;
  bool tripped_ = false;
  std::string message_;
};

}  // namespace hookforge
