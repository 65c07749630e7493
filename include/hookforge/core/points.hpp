// hookforge/core/points.hpp — the built-in hook points (names follow SR-Forge).
//
// Which component fires which point:
//   Trainer                 on_training_began, on_trainer_step_finished,
//                           on_trainer_validation_finished, on_trainer_epoch_finished,
//                           on_training_finished, on_training_failed,
//                           on_before_save_checkpoint, on_after_save_checkpoint,
//                           on_after_load_checkpoint
//   TrainingEpochRunner     on_epoch_start, on_pre_step, on_post_forward, on_post_backward,
//                           on_post_step, on_epoch_end
//   Inference/Validation/
//   BenchmarkRunner         on_epoch_start, on_post_step, on_epoch_end
//   GANTrainingRunner       on_epoch_start, on_pre_step, on_pre_d_forward, on_post_d_forward,
//                           on_post_d_backward, on_pre_g_forward, on_post_g_forward,
//                           on_post_g_backward, on_post_step, on_epoch_end
#pragma once

#include "hookforge/core/point.hpp"

namespace hookforge::points {

// Trainer
HOOKFORGE_POINT(on_training_began);
HOOKFORGE_POINT(on_trainer_step_finished);
HOOKFORGE_POINT(on_trainer_validation_finished);
HOOKFORGE_POINT(on_trainer_epoch_finished);
HOOKFORGE_POINT(on_training_finished);
HOOKFORGE_POINT(on_training_failed);  // an exception ends fit(): TrainerContext::error says which
HOOKFORGE_POINT(on_before_save_checkpoint);
HOOKFORGE_POINT(on_after_save_checkpoint);
HOOKFORGE_POINT(on_after_load_checkpoint);

// Epoch runners
HOOKFORGE_POINT(on_epoch_start);
HOOKFORGE_POINT(on_pre_step);
HOOKFORGE_POINT(on_post_forward);
HOOKFORGE_POINT(on_post_backward);
HOOKFORGE_POINT(on_post_step);
HOOKFORGE_POINT(on_epoch_end);

// GAN runner
HOOKFORGE_POINT(on_pre_d_forward);
HOOKFORGE_POINT(on_post_d_forward);
HOOKFORGE_POINT(on_post_d_backward);
HOOKFORGE_POINT(on_pre_g_forward);
HOOKFORGE_POINT(on_post_g_forward);
HOOKFORGE_POINT(on_post_g_backward);

/// Every built-in point (runtime binding checks tell them from misspelled names).
using builtin =
    point_list<on_training_began, on_trainer_step_finished, on_trainer_validation_finished,
               on_trainer_epoch_finished, on_training_finished, on_before_save_checkpoint,
               on_after_save_checkpoint, on_after_load_checkpoint, on_epoch_start, on_pre_step,
               on_post_forward, on_post_backward, on_post_step, on_epoch_end, on_pre_d_forward,
               on_post_d_forward, on_post_d_backward, on_pre_g_forward, on_post_g_forward,
               on_post_g_backward>;

}  // namespace hookforge::points
