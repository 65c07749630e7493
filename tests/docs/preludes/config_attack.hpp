// Prelude of docs/config.md's block on registering hooks for a runner of one's own
// (tests/docs/snippets.py): docs/concepts.md's AttackRunner hooks, the config layer and the
// built-in hooks.
#pragma once
#include "tests/docs/preludes/attack.hpp"
#include "tests/docs/preludes/torch.hpp"

#include <hookforge/config.hpp>
