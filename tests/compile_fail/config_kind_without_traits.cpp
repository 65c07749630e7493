// A kind tag written by hand, without HOOKFORGE_DECLARE_KIND: its handle has no kind_traits.
#include "hookforge/config/register.hpp"

struct Shape {
  virtual ~Shape() = default;
};
#ifdef HOOKFORGE_SHOULD_FAIL
namespace hookforge::config::kinds {
struct shape {
  using handle = std::shared_ptr<Shape>;
};
}  // namespace hookforge::config::kinds
#else
HOOKFORGE_DECLARE_KIND(shape, Shape);
#endif

struct Circle : Shape {
  explicit Circle(double r) : radius(r) {}
  double radius;
};

HOOKFORGE_REGISTER(shape, Circle, hookforge::config::arg<double>("radius"));

int main() {}
