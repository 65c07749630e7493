// The object kind the config layer's compile-fail cases register into: `shape`, whose base is
// Shape, and Circle, a shape built from its radius.
#pragma once

#include "hookforge/config/register.hpp"

struct Shape {
  virtual ~Shape() = default;
};
HOOKFORGE_DECLARE_KIND(shape, Shape);

struct Circle : Shape {
  explicit Circle(double r) : radius(r) {}
  double radius;
};
