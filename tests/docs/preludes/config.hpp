// Prelude of docs/config.md's blocks (tests/docs/snippets.py): the torch-free config layer and
// the page's example classes: a runner of its own (TrainRunner), a component that owns one,
// a hook (Counter) and shapes (Shape, Square, Scaled, Tile).
#pragma once
#include <hookforge/config.hpp>
#include <hookforge/hookforge.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "tests/docs/preludes/counter.hpp"

namespace cfg = hookforge::config;
namespace points = hookforge::points;

struct TrainCtx {
  std::int64_t step = 0;
};
template <class... Hooks>
class TrainRunner {
 public:
  using hook_points = hookforge::point_list<points::on_post_step>;
  using Ctx = TrainCtx;
  explicit TrainRunner(Hooks... hooks) : hooks_(std::move(hooks)...) {}
  auto& hooks() { return hooks_; }

 private:
  hookforge::hook_pack<TrainRunner, Hooks...> hooks_;
};
namespace hookforge::config::kinds {
using hook = hook_kind<TrainCtx>;
}

struct Component {
  virtual ~Component() = default;
};
HOOKFORGE_DECLARE_KIND(component, Component);

struct Shape {
  virtual ~Shape() = default;
};
struct Square : Shape {
  explicit Square(double side) : side(side) {}
  double side;
};
struct Scaled : Shape {
  Scaled(std::shared_ptr<Shape> inner, double factor) : inner(std::move(inner)), factor(factor) {}
  std::shared_ptr<Shape> inner;
  double factor;
};
struct Tile : Shape {
  explicit Tile(double side) : side(side) {}
  double side;
};
