// hookforge/torch.hpp — the core plus the LibTorch layer (target hookforge::torch).
#pragma once

// checks.hpp first: a failed attach check is then reported one "included from" line sooner.
#include "hookforge/core/checks.hpp"
#include "hookforge/hookforge.hpp"
#include "hookforge/torch/amp/autocast.hpp"
#include "hookforge/torch/amp/grad_scaler.hpp"
#include "hookforge/torch/data/batches.hpp"
#include "hookforge/torch/data/criterion.hpp"
#include "hookforge/torch/data/entry.hpp"
#include "hookforge/torch/data/model.hpp"
#include "hookforge/torch/data/scores.hpp"
#include "hookforge/torch/io/atomic_file.hpp"
#include "hookforge/torch/io/checkpoint.hpp"
#include "hookforge/torch/io/persistence.hpp"
#include "hookforge/torch/io/state_map.hpp"
#include "hookforge/torch/optim/schedulers.hpp"
#include "hookforge/torch/optim/stop_condition.hpp"
#include "hookforge/torch/runners/epoch.hpp"
#include "hookforge/torch/runners/gan_runner.hpp"
#include "hookforge/torch/runners/inference_runner.hpp"
#include "hookforge/torch/runners/trainer.hpp"
#include "hookforge/torch/runners/training_runner.hpp"
