// Prelude of docs/config.md's registration block (tests/docs/snippets.py): the run layer's
// kinds (kinds::hook for the built-in runners' contexts), the built-in hooks, and the page's
// example classes: a hook (Counter) and shapes (Shape, Tile).
#pragma once
#include <hookforge/run.hpp>

#include "tests/docs/preludes/torch.hpp"

#include <memory>
#include <string>

#include "tests/docs/preludes/counter.hpp"

struct Shape {
  virtual ~Shape() = default;
};
struct Tile : Shape {
  explicit Tile(double side) : side(side) {}
  double side;
};
HOOKFORGE_DECLARE_KIND(shape, Shape);
