// Two factories in one registration: at most one, and first.
#include "config_shapes.hpp"

namespace cfg = hookforge::config;
HOOKFORGE_REGISTER(shape, Circle, cfg::factory([](double diameter) { return Circle(diameter / 2); }),
#ifdef HOOKFORGE_SHOULD_FAIL
                   cfg::factory([](double radius) { return Circle(radius); }),
#endif
                   cfg::arg<double>("diameter"));

int main() {}
