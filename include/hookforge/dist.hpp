// hookforge/dist.hpp — data-parallel training on LibTorch's c10d (target hookforge::dist).
//
// Compile with -DUSE_C10D_GLOO (the CMake target defines it) and link LibTorch and Gloo.
// See docs/distributed.md.
#pragma once

#include "hookforge/dist/bucket.hpp"
#include "hookforge/dist/buffer_sync.hpp"
#include "hookforge/dist/data_parallel.hpp"
#include "hookforge/dist/environment.hpp"
#include "hookforge/dist/gradient_allreduce.hpp"
#include "hookforge/dist/init.hpp"
#include "hookforge/dist/process_group.hpp"
#include "hookforge/dist/rank_zero.hpp"
#include "hookforge/dist/score_allreduce.hpp"
#include "hookforge/dist/stop_agreement.hpp"
#include "hookforge/torch.hpp"  // sharded_sampler (torch/data/sampler.hpp) and the rest
