// Prelude of docs/config.md's registration block (tests/docs/snippets.py): the run layer's
// kinds (kinds::hook for the built-in runners' contexts), the built-in hooks, and the page's
// example classes: a hook (Counter) and shapes (Shape, Tile).
#pragma once
#include <hookforge/run.hpp>

#include "tests/docs/preludes/torch.hpp"

#include <memory>
#include <string>

struct Counter {
  Counter(int start, std::string label = "") : count(start), label(std::move(label)) {}
  void tick(auto&) { ++count; }
  int count;
  std::string label;
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(tick, points::on_post_step));
};
struct Shape {
  virtual ~Shape() = default;
};
struct Tile : Shape {
  explicit Tile(double side) : side(side) {}
  double side;
};
HOOKFORGE_DECLARE_KIND(shape, Shape);
