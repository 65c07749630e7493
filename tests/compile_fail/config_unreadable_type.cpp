// Reading a type the config layer cannot read: no value_traits<T> for it.
#include "hookforge/config/builder.hpp"

struct Point {
  double x = 0, y = 0;
};

#ifndef HOOKFORGE_SHOULD_FAIL
template <>
struct hookforge::config::value_traits<Point> {
  static std::string expected() { return "a point [x, y]"; }
  template <class B>
  static Point read(B& b, const value& v) {
    auto xy = b.template read<std::vector<double>>(v);
    if (xy.size() != 2) detail::wrong(v, expected());
    return {xy[0], xy[1]};
  }
};
#endif

Point origin(hookforge::config::builder& b) { return b.get<Point>("plot.origin"); }

int main() {}
