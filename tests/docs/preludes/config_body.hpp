// Prelude of docs/config.md's statement blocks (tests/docs/snippets.py): a block goes inside
// example().
#pragma once
#include "tests/docs/preludes/config.hpp"

inline void example() {
  // snippet
}
