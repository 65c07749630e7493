// hookforge/torch/optim/schedulers.hpp — every learning-rate scheduler (PyTorch's semantics).
#pragma once

#include "hookforge/torch/optim/chained_scheduler.hpp"
#include "hookforge/torch/optim/constant_lr.hpp"
#include "hookforge/torch/optim/cosine_annealing_lr.hpp"
#include "hookforge/torch/optim/cosine_annealing_warm_restarts.hpp"
#include "hookforge/torch/optim/exponential_lr.hpp"
#include "hookforge/torch/optim/lambda_lr.hpp"
#include "hookforge/torch/optim/linear_lr.hpp"
#include "hookforge/torch/optim/lr_scheduler.hpp"
#include "hookforge/torch/optim/multi_step_lr.hpp"
#include "hookforge/torch/optim/one_cycle_lr.hpp"
#include "hookforge/torch/optim/polynomial_lr.hpp"
#include "hookforge/torch/optim/reduce_lr_on_plateau.hpp"
#include "hookforge/torch/optim/sequential_lr.hpp"
#include "hookforge/torch/optim/step_lr.hpp"
