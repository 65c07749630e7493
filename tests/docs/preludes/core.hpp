// Prelude of the docs' blocks on hookforge's core (tests/docs/snippets.py, DEVELOPERS.md "Doc
// snippets"): what a block names without including it.
#pragma once
#include <hookforge/hookforge.hpp>

#include <cstdint>
#include <string_view>

namespace points = hookforge::points;
namespace pts = hookforge::points;
