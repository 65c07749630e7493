// hookforge/torch/io/checkpoint_optimizer.hpp — the "optimizer" section kind: an
// optimiser's per-parameter state through its own save(), its type, every param group's
// size, parameter shapes and options, and the defaults; the check and the load of it.
//
//   kind      "optimizer"
//   type      the optimiser's class ("torch::optim::Adam")
//   torch     Optimizer::save()'s archive
//   groups    {count, "0": {size, shapes: {"0": [..], ...}, options, options.lr}, ...}
//   defaults  the default options (and defaults.lr)
#pragma once

#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "hookforge/core/build_mode.hpp"
#include "hookforge/torch/io/checkpoint_section.hpp"

namespace hookforge::detail::ckpt {

HOOKFORGE_INLINE void encode_optimizer(torch::serialize::OutputArchive& section,
                                       const torch::optim::Optimizer& optimizer);

// The saved param groups of `section`, once checked against `optimizer`: the same type,
// the same number of groups, each with the same parameter shapes. Throws naming each
// mismatch; `optimizer` is left as it is.
HOOKFORGE_INLINE std::vector<torch::serialize::InputArchive> matching_groups(
    const stored_section& section, const torch::optim::Optimizer& optimizer);

// What matching_groups checks, then the per-parameter state exactly, every param group's
// options (lr, momentum, betas, weight decay, ...) and the defaults.
HOOKFORGE_INLINE void decode_optimizer(const stored_section& section,
                                       torch::optim::Optimizer& optimizer);

}  // namespace hookforge::detail::ckpt

#if HOOKFORGE_HEADER_ONLY
#include "hookforge/torch/io/checkpoint_optimizer-inl.hpp"
#endif
