// An options<Opts>(...) given together with an arg<T>(...): options stand alone.
#include <string>

#include "hookforge/config/register.hpp"

struct Shape {
  virtual ~Shape() = default;
};
HOOKFORGE_DECLARE_KIND(shape, Shape);

struct circle_options {
  double radius = 1;
  std::string label = "c";
};
struct Circle : Shape {
  explicit Circle(circle_options o) : options(std::move(o)) {}
  Circle(std::string label, circle_options o) : options(std::move(o)) { options.label = std::move(label); }
  circle_options options;
};

namespace cfg = hookforge::config;
#ifdef HOOKFORGE_SHOULD_FAIL
HOOKFORGE_REGISTER(shape, Circle, cfg::arg<std::string>("label"),
                   cfg::options<circle_options>(cfg::field("radius", &circle_options::radius)));
#else
HOOKFORGE_REGISTER(shape, Circle,
                   cfg::options<circle_options>(cfg::field("label", &circle_options::label),
                                                cfg::field("radius", &circle_options::radius)));
#endif

int main() {}
