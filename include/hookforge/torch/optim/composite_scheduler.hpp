// hookforge/torch/optim/composite_scheduler.hpp — what SequentialLR and ChainedScheduler share:
// schedules held together over one optimizer, their settings saved under "schedulers.<i>.".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"

namespace hookforge::detail {

class composite_scheduler : public closed_form_scheduler {
 public:
  using schedule_list = std::vector<std::shared_ptr<lr_scheduler>>;

  /// The held schedules' settings, each under "schedulers.<i>.<name>", beside the composite's.
  HOOKFORGE_INLINE hookforge::state_map settings() const override;

 protected:
  /// Takes the schedules, built on `optimizer` before the composite (as in PyTorch), and
  /// starts from the first one's base rates (PyTorch's group['initial_lr']). Throws
  /// std::invalid_argument naming `kind` and the index of a schedule that is missing, belongs
  /// to another optimizer, steps on a metric, or is itself a composite.
  HOOKFORGE_INLINE composite_scheduler(std::string_view kind, torch::optim::Optimizer& optimizer,
                                       const schedule_list& schedules);

  HOOKFORGE_INLINE std::vector<std::function<void()>> read_settings(
      const hookforge::state_map& state) override;

  std::vector<std::shared_ptr<closed_form_scheduler>> schedules_;
};

}  // namespace hookforge::detail

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/optim/composite_scheduler-inl.hpp"
#endif
