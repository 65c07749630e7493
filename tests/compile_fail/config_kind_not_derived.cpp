// A class registered under an object kind that does not derive from the kind's base.
#include "hookforge/config/register.hpp"

struct Shape {
  virtual ~Shape() = default;
};
HOOKFORGE_DECLARE_KIND(shape, Shape);

#ifdef HOOKFORGE_SHOULD_FAIL
struct Circle {
#else
struct Circle : Shape {
#endif
  explicit Circle(double r) : radius(r) {}
  double radius;
};

HOOKFORGE_REGISTER(shape, Circle, hookforge::config::arg<double>("radius"));

int main() {}
