// An options<Opts>(...) registration given a field of another aggregate: every field must
// be a member of Opts.
#include "hookforge/config/register.hpp"

struct Shape {
  virtual ~Shape() = default;
};
HOOKFORGE_DECLARE_KIND(shape, Shape);

struct circle_options {
  double radius = 1;
};
struct square_options {
  double side = 1;
};
struct Circle : Shape {
  explicit Circle(circle_options o) : radius(o.radius) {}
  double radius;
};

HOOKFORGE_REGISTER(shape, Circle,
                   hookforge::config::options<circle_options>(
#ifdef HOOKFORGE_SHOULD_FAIL
                       hookforge::config::field("radius", &square_options::side)
#else
                       hookforge::config::field("radius", &circle_options::radius)
#endif
                           ));

int main() {}
