// src/torch.cpp — hookforge::torch_compiled: the non-template code of the LibTorch layer
// (and the binding-table formatting of the core), compiled once.
//
// Built with HOOKFORGE_SEPARATE_COMPILATION (the target defines it, PUBLIC), so the
// headers only declare these functions and each `-inl.hpp` below defines them here,
// out of line. Users of hookforge::torch_compiled get the macro too: their TUs neither
// parse these bodies nor generate their code (core/build_mode.hpp). Every `-inl.hpp` of the
// include tree must be listed here; CMake checks it at configure time.
#ifndef HOOKFORGE_SEPARATE_COMPILATION
#error "src/torch.cpp is hookforge::torch_compiled: build it with HOOKFORGE_SEPARATE_COMPILATION"
#endif

#include "hookforge/torch.hpp"

#include "hookforge/core/binding_table-inl.hpp"
#include "hookforge/torch/amp/autocast-inl.hpp"
#include "hookforge/torch/amp/grad_scaler-inl.hpp"
#include "hookforge/torch/data/criterion-inl.hpp"
#include "hookforge/torch/data/dataset-inl.hpp"
#include "hookforge/torch/data/entry-inl.hpp"
#include "hookforge/torch/data/loader-inl.hpp"
#include "hookforge/torch/data/procedural_images-inl.hpp"
#include "hookforge/torch/data/sampler-inl.hpp"
#include "hookforge/torch/data/scores-inl.hpp"
#include "hookforge/torch/data/sine-inl.hpp"
#include "hookforge/torch/io/atomic_file-inl.hpp"
#include "hookforge/torch/io/checkpoint-inl.hpp"
#include "hookforge/torch/io/checkpoint_format-inl.hpp"
#include "hookforge/torch/io/crc32-inl.hpp"
#include "hookforge/torch/io/file_descriptor-inl.hpp"
#include "hookforge/torch/io/persistence-inl.hpp"
#include "hookforge/torch/io/state_map-inl.hpp"
#include "hookforge/torch/losses/adversarial-inl.hpp"
#include "hookforge/torch/losses/charbonnier-inl.hpp"
#include "hookforge/torch/losses/pixel_loss-inl.hpp"
#include "hookforge/torch/losses/weighted_sum-inl.hpp"
#include "hookforge/torch/metrics/accuracy-inl.hpp"
#include "hookforge/torch/metrics/mae-inl.hpp"
#include "hookforge/torch/metrics/metric-inl.hpp"
#include "hookforge/torch/metrics/mse-inl.hpp"
#include "hookforge/torch/metrics/psnr-inl.hpp"
#include "hookforge/torch/metrics/ssim-inl.hpp"
#include "hookforge/torch/models/espcn-inl.hpp"
#include "hookforge/torch/models/mlp-inl.hpp"
#include "hookforge/torch/models/patch_discriminator-inl.hpp"
#include "hookforge/torch/optim/constant_lr-inl.hpp"
#include "hookforge/torch/optim/cosine_annealing_lr-inl.hpp"
#include "hookforge/torch/optim/exponential_lr-inl.hpp"
#include "hookforge/torch/optim/fused_adam-inl.hpp"
#include "hookforge/torch/optim/linear_lr-inl.hpp"
#include "hookforge/torch/optim/lr_scheduler-inl.hpp"
#include "hookforge/torch/optim/multi_step_lr-inl.hpp"
#include "hookforge/torch/optim/reduce_lr_on_plateau-inl.hpp"
#include "hookforge/torch/optim/step_lr-inl.hpp"
#include "hookforge/torch/optim/stop_condition-inl.hpp"
#include "hookforge/torch/runners/epoch-inl.hpp"
#include "hookforge/torch/runners/gan_runner-inl.hpp"
#include "hookforge/torch/runners/inference_runner-inl.hpp"
#include "hookforge/torch/runners/trainer-inl.hpp"
#include "hookforge/torch/runners/training_epoch_runner-inl.hpp"
