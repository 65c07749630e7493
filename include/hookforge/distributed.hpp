// hookforge/distributed.hpp — data-parallel training on LibTorch's c10d (target
// hookforge::distributed).
//
// Compile with -DUSE_C10D_GLOO (the CMake target defines it) and link LibTorch and Gloo.
// See docs/distributed.md.
#pragma once

#include "hookforge/distributed/agreement.hpp"
#include "hookforge/distributed/bucket.hpp"
#include "hookforge/distributed/buffer_sync.hpp"
#include "hookforge/distributed/data_parallel.hpp"
#include "hookforge/distributed/environment.hpp"
#include "hookforge/distributed/gradient_allreduce.hpp"
#include "hookforge/distributed/init.hpp"
#include "hookforge/distributed/process_group.hpp"
#include "hookforge/distributed/rank_zero.hpp"
#include "hookforge/distributed/score_allreduce.hpp"
#include "hookforge/distributed/slurm.hpp"
#include "hookforge/distributed/stop_agreement.hpp"
#include "hookforge/torch.hpp"  // sharded_sampler (torch/data/sampler.hpp) and the rest
