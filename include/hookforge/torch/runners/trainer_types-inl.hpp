// hookforge/torch/runners/trainer_types-inl.hpp — TrainerContext's actions: included by
// trainer_types.hpp header-only, compiled into hookforge::torch_compiled otherwise
// (core/build_mode.hpp).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hookforge/torch/runners/trainer_types.hpp"

namespace hookforge {

HOOKFORGE_INLINE void TrainerContext::request_stop(std::string reason) {
  stop_training = true;
  stop_reason = std::move(reason);
}

HOOKFORGE_INLINE void TrainerContext::save_checkpoint(const std::filesystem::path& path,
                                                      checkpoint_content content) const {
  if (trainer == nullptr)
    throw std::logic_error(
        "TrainerContext::save_checkpoint: this context was not made by a Trainer");
  trainer->save_checkpoint(path, content);
}

HOOKFORGE_INLINE std::vector<std::pair<std::string, torch::nn::Module*>>
TrainerContext::model_modules() const {
  if (trainer == nullptr)
    throw std::logic_error("TrainerContext::model_modules: this context was not made by a Trainer");
  return trainer->model_modules();
}

}  // namespace hookforge
